/**
 * How the object browser looks at a folder: the total of its entries (counted up to a cap), and
 * pages sorted by name, size or date. Sorted by name, ascending, a page starts after a key (the
 * listing's own order, any number of keys); sorted otherwise, the folder's entries are read, up
 * to the cap, sorted, and a page starts at an offset. Folders come first in every order.
 */
import { SvcError } from '../errors/index.js';
import type { ObjectInfo, ObjectLayer } from '../object/index.js';
import { limits } from '../util/limits.js';

export type SortField = 'name' | 'size' | 'modified';

export interface ListView {
  sort: SortField;
  descending: boolean;
  /** Entries skipped before the page (sorted views only). */
  offset: number;
}

export interface FolderWalk {
  prefix: string;
  withDeleted: boolean;
}

const sortFields: readonly SortField[] = ['name', 'size', 'modified'];

/** `sort`, `order` and `offset` of the list query, each refused by name when it is not one of its values. */
export function listViewOf(query: Record<string, string | undefined>): ListView {
  const sort = query.sort ?? 'name';
  if (!sortFields.includes(sort as SortField)) throw new SvcError('InvalidArgument', `sort must be one of ${sortFields.join(', ')}`, { field: 'sort' });
  const order = query.order ?? 'asc';
  if (order !== 'asc' && order !== 'desc') throw new SvcError('InvalidArgument', 'order must be asc or desc', { field: 'order' });
  const offsetText = query.offset ?? '0';
  if (!/^\d{1,9}$/.test(offsetText)) throw new SvcError('InvalidArgument', 'offset must be a whole number of entries', { field: 'offset' });
  return { sort: sort as SortField, descending: order === 'desc', offset: Number(offsetText) };
}

/** The listing's own order: pages follow a cursor key. */
export function isKeyOrder(view: ListView): boolean {
  return view.sort === 'name' && !view.descending;
}

/** The empty `<folder>/` object that makes a folder (the console's Create folder): shown as the folder, not as an object in it. */
export function isFolderMarker(entry: { kind: 'prefix' | 'object'; key: string }, prefix: string): boolean {
  return entry.kind === 'object' && prefix.endsWith('/') && entry.key === prefix;
}

type Entry = { kind: 'prefix'; key: string } | { kind: 'object'; key: string; latest: ObjectInfo };

/** The folder's entries (folders and the newest version of each key), at most `max`; `more` when there are others. */
async function entriesOf(objects: ObjectLayer, bucket: string, walk: FolderWalk, max: number): Promise<{ entries: Entry[]; more: boolean }> {
  const entries: Entry[] = [];
  for await (const entry of objects.list(bucket, { prefix: walk.prefix, delimiter: '/', livePrefixesOnly: !walk.withDeleted })) {
    if (entry.kind === 'object' && entry.versions[0]!.deleteMarker && !walk.withDeleted) continue;
    if (isFolderMarker(entry, walk.prefix)) continue;
    if (entries.length >= max) return { entries, more: true };
    entries.push(entry.kind === 'prefix' ? { kind: 'prefix', key: entry.key } : { kind: 'object', key: entry.key, latest: entry.versions[0]! });
  }
  return { entries, more: false };
}

/** How many entries the folder shows, counted up to the cap (`capped` when it holds more). */
export async function countEntries(objects: ObjectLayer, bucket: string, walk: FolderWalk): Promise<{ total: number; capped: boolean }> {
  const { entries, more } = await entriesOf(objects, bucket, walk, limits.consoleListSortMax);
  return { total: entries.length, capped: more };
}

/**
 * A page of the folder in a sorted view: folders first (by name), then objects by the field,
 * ties by key. A folder of more entries than the cap is refused (its order would be a guess).
 */
export async function sortedPage(objects: ObjectLayer, bucket: string, walk: FolderWalk, view: ListView, limit: number): Promise<{ folders: string[]; objects: ObjectInfo[]; total: number; more: boolean }> {
  const { entries, more } = await entriesOf(objects, bucket, walk, limits.consoleListSortMax);
  if (more) throw new SvcError('InvalidArgument', `sorting by ${view.sort} is offered for folders of at most ${limits.consoleListSortMax} entries; this one holds more: sort by name`, { field: 'sort' });
  const sign = view.descending ? -1 : 1;
  const byKey = (a: Entry, b: Entry) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  const folders = entries.filter((entry) => entry.kind === 'prefix').sort((a, b) => (view.sort === 'name' ? sign : 1) * byKey(a, b));
  const files = entries.filter((entry): entry is Extract<Entry, { kind: 'object' }> => entry.kind === 'object');
  const field = (entry: Extract<Entry, { kind: 'object' }>) => (view.sort === 'size' ? (entry.latest.deleteMarker ? -1 : entry.latest.sizeBytes) : entry.latest.modTimeMs);
  files.sort((a, b) => (view.sort === 'name' ? sign * byKey(a, b) : sign * (field(a) - field(b)) || byKey(a, b)));
  const ordered: Entry[] = [...folders, ...files];
  const page = ordered.slice(view.offset, view.offset + limit);
  return {
    folders: page.filter((entry) => entry.kind === 'prefix').map((entry) => entry.key),
    objects: page.flatMap((entry) => (entry.kind === 'object' ? [entry.latest] : [])),
    total: ordered.length,
    more: view.offset + limit < ordered.length,
  };
}
