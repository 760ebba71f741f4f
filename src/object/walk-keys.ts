/**
 * Walks one drive's copy of a bucket in S3 key order (UTF-8 byte order), yielding objects with
 * their raw xl.meta and, when a '/' delimiter is given, common prefixes without descending.
 *
 * On a drive, object `a` lives in directory `a/` next to the subtree of keys `a/...`, but key
 * order puts `a` before `a-b` before `a/b`. So each directory entry contributes two items, the
 * possible object `P+name` and the subtree `P+name/`, and the items are sorted before they are
 * visited. Names are decoded as paths.ts encodes them. A name the encoding never writes is either
 * a data directory (a UUID inside an object directory) or a key segment the older layout stored
 * raw: a UUID-named directory that none of the xl.meta beside it names as a data directory, and
 * that holds an xl.meta or a directory of its own, is such a key. A key may thus have two
 * directories (encoded and raw); the walk takes the union, the encoded one first.
 */
import { isSvcError } from '../errors/index.js';
import type { Drive } from '../drive/index.js';
import { decodeXlMeta } from '../format/xl-meta.js';
import { compareKeys } from '../util/merge.js';
import { decodeName, directoryObjectSuffix, isUuid, xlMetaName } from './paths.js';

export type WalkEntry = { kind: 'object'; key: string; metaBytes: Uint8Array } | { kind: 'prefix'; key: string };

export interface WalkOptions {
  prefix: string;
  /** Only keys strictly after this one. */
  startAfter?: string;
  /** Only '/' is handled here (others are grouped by the caller from full keys). */
  delimiter?: string;
}

interface Item {
  key: string;
  kind: 'object' | 'subtree';
  /** The directories holding it: the encoded one first, then a raw one of the older layout. */
  dirs: string[];
}

/** xl.meta bytes already read in a directory, so its data directories are known without reading it again. */
type KnownMeta = Map<string, Uint8Array>;

export async function* walkKeys(drive: Drive, bucket: string, options: WalkOptions): AsyncGenerator<WalkEntry> {
  let lastPrefix: string | undefined;
  for await (const entry of walkDirs(drive, [bucket], '', options, new Map())) {
    if (entry.kind === 'prefix') {
      if (entry.key === lastPrefix) continue;
      lastPrefix = entry.key;
    }
    yield entry;
  }
}

async function* walkDirs(drive: Drive, dirs: string[], keyPrefix: string, options: WalkOptions, known: KnownMeta): AsyncGenerator<WalkEntry> {
  const items = new Map<string, Item>();
  for (const dir of dirs) {
    const entries = await listOrNothing(drive, dir);
    if (entries) for (const item of await itemsOf(drive, entries, dir, keyPrefix, known.get(dir))) addItem(items, item);
  }
  const ownMeta: KnownMeta = new Map();
  const sorted = [...items.values()].sort((a, b) => compareKeys(a.key, b.key) || (a.kind === 'object' ? -1 : 1));
  for (const item of sorted) {
    const passedDown: KnownMeta = new Map();
    if (item.kind === 'subtree') for (const dir of item.dirs) if (ownMeta.has(dir)) passedDown.set(dir, ownMeta.get(dir)!), ownMeta.delete(dir);
    if (!wanted(item, options)) continue;
    if (item.kind === 'object') {
      const found = await readFirstMeta(drive, item.dirs);
      if (!found) continue;
      ownMeta.set(found.dir, found.metaBytes);
      if (options.delimiter === '/' && item.key.indexOf('/', options.prefix.length) >= 0) {
        const commonPrefix = commonPrefixOf(item.key, options);
        if (commonPrefix) yield commonPrefix;
        continue;
      }
      yield { kind: 'object', key: item.key, metaBytes: found.metaBytes };
    } else if (options.delimiter === '/' && item.key.length > options.prefix.length && item.key.startsWith(options.prefix)) {
      const commonPrefix = commonPrefixOf(item.key, options);
      if (commonPrefix && (await hasAnyObject(drive, item.dirs))) yield commonPrefix;
    } else {
      yield* walkDirs(drive, item.dirs, item.key, options, passedDown);
    }
  }
}

function addItem(items: Map<string, Item>, item: Item & { raw: boolean }): void {
  const id = `${item.kind}:${item.key}`;
  const existing = items.get(id);
  if (!existing) items.set(id, { key: item.key, kind: item.kind, dirs: item.dirs });
  else if (item.raw) existing.dirs.push(...item.dirs);
  else existing.dirs.unshift(...item.dirs);
}

/** The common prefix a key rolls up into, unless it was already passed (continuation). */
function commonPrefixOf(key: string, options: WalkOptions): WalkEntry | undefined {
  const prefixKey = key.slice(0, key.indexOf('/', options.prefix.length) + 1);
  if (options.startAfter !== undefined && compareKeys(prefixKey, options.startAfter) <= 0) return undefined;
  return { kind: 'prefix', key: prefixKey };
}

/** The keys one directory's entries stand for. */
async function itemsOf(drive: Drive, entries: string[], dirPath: string, keyPrefix: string, knownMeta: Uint8Array | undefined): Promise<(Item & { raw: boolean })[]> {
  const items: (Item & { raw: boolean })[] = [];
  let dataDirs: Set<string> | undefined;
  for (const entry of entries) {
    if (!entry.endsWith('/')) continue;
    const name = entry.slice(0, -1);
    const dir = `${dirPath}/${name}`;
    const decoded = decodeName(name);
    if (decoded.kind === 'segment') {
      items.push({ key: keyPrefix + decoded.segment, kind: 'object', dirs: [dir], raw: false });
      // Below a directory object's own directory there are only keys the older layout stored with a
      // raw middle segment ending in the directory suffix.
      if (decoded.directoryObject) items.push({ key: `${keyPrefix}${name}/`, kind: 'subtree', dirs: [dir], raw: true });
      else items.push({ key: `${keyPrefix}${decoded.segment}/`, kind: 'subtree', dirs: [dir], raw: false });
      continue;
    }
    if (isUuid(name)) {
      dataDirs ??= entries.includes(xlMetaName) ? await dataDirsOf(drive, dirPath, knownMeta) : new Set();
      if (dataDirs.has(name) || !(await holdsKeys(drive, dir))) continue;
    }
    // The older layout's directory object `<segment>/` (a UUID, say) was `<segment>__XLDIR__`.
    if (name.endsWith(directoryObjectSuffix)) items.push({ key: `${keyPrefix}${name.slice(0, -directoryObjectSuffix.length)}/`, kind: 'object', dirs: [dir], raw: true });
    else items.push({ key: keyPrefix + name, kind: 'object', dirs: [dir], raw: true });
    items.push({ key: `${keyPrefix}${name}/`, kind: 'subtree', dirs: [dir], raw: true });
  }
  return items;
}

/** The data directories the xl.meta in `dirPath` names (none when it cannot be read). */
async function dataDirsOf(drive: Drive, dirPath: string, knownMeta: Uint8Array | undefined): Promise<Set<string>> {
  try {
    const bytes = knownMeta ?? (await drive.readFile(`${dirPath}/${xlMetaName}`));
    return new Set(decodeXlMeta(bytes).versions.flatMap((version) => (version.dataDir ? [version.dataDir] : [])));
  } catch {
    return new Set();
  }
}

/** Does a UUID-named directory hold a key (its xl.meta, or a directory below), not just shard files? */
async function holdsKeys(drive: Drive, dir: string): Promise<boolean> {
  const entries = (await listOrNothing(drive, dir)) ?? [];
  return entries.some((entry) => entry === xlMetaName || entry.endsWith('/'));
}

function wanted(item: Item, options: WalkOptions): boolean {
  const { prefix, startAfter } = options;
  if (item.kind === 'object') {
    return item.key.startsWith(prefix) && (startAfter === undefined || compareKeys(item.key, startAfter) > 0);
  }
  const overlapsPrefix = item.key.startsWith(prefix) || prefix.startsWith(item.key);
  const afterStart = startAfter === undefined || compareKeys(item.key, startAfter) > 0 || startAfter.startsWith(item.key);
  return overlapsPrefix && afterStart;
}

async function listOrNothing(drive: Drive, dir: string): Promise<string[] | undefined> {
  try {
    return await drive.listDir(dir);
  } catch (error) {
    if (isSvcError(error, 'FileNotFound') || isSvcError(error, 'NotADirectory')) return undefined;
    throw error;
  }
}

async function readFirstMeta(drive: Drive, dirs: string[]): Promise<{ dir: string; metaBytes: Uint8Array } | undefined> {
  for (const dir of dirs) {
    const metaBytes = await readMeta(drive, `${dir}/${xlMetaName}`);
    if (metaBytes) return { dir, metaBytes };
  }
  return undefined;
}

async function readMeta(drive: Drive, path: string): Promise<Uint8Array | undefined> {
  try {
    return await drive.readFile(path);
  } catch (error) {
    if (isSvcError(error, 'FileNotFound') || isSvcError(error, 'NotADirectory') || isSvcError(error, 'IsADirectory')) return undefined;
    throw error;
  }
}

/**
 * True when one of the subtree's directories holds at least one object below the directory
 * itself (an object's own xl.meta and data dirs, or left-over empty directories, make no prefix).
 */
async function hasAnyObject(drive: Drive, dirs: string[]): Promise<boolean> {
  for (const dirPath of dirs) {
    const own = `${dirPath}/${xlMetaName}`;
    for await (const path of drive.walk(dirPath)) {
      if (path !== own && path.endsWith(`/${xlMetaName}`)) return true;
    }
  }
  return false;
}
