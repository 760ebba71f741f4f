/**
 * The object list's view in the address (`#/browse/<bucket>/<prefix>?after=&page=&size=&sort=&order=&filter=`),
 * so a reload or a shared link shows the same page, and its pager (shown above and below the
 * list) with the folder's total, the page size and the sort order.
 */
import { useEffect, useState } from 'preact/hooks';

export type SortField = 'name' | 'size' | 'modified';
export type SortOrder = 'asc' | 'desc';

export interface ListAddress {
  /** The cursor of a page in name order (the last key of the page before). */
  after?: string | undefined;
  page: number;
  size: number;
  sort: SortField;
  order: SortOrder;
  filter: string;
}

export const pageSizes = [50, 100, 200];
const defaultSize = 100;
const sortFields: SortField[] = ['name', 'size', 'modified'];
export const sortLabels: Record<SortField, string> = { name: 'Name', size: 'Size', modified: 'Last modified' };

/** The page's settings after the `?` of the address, so a reload keeps the page. */
export function useHashQuery(): URLSearchParams {
  const read = () => new URLSearchParams(location.hash.split('?')[1] ?? '');
  const [query, setQuery] = useState(read);
  useEffect(() => {
    const changed = () => setQuery(read());
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return query;
}

export function readListAddress(query: URLSearchParams): ListAddress {
  const size = Number(query.get('size'));
  const sort = query.get('sort') as SortField | null;
  return {
    after: query.get('after') ?? undefined,
    page: Math.max(1, Math.floor(Number(query.get('page'))) || 1),
    size: pageSizes.includes(size) ? size : defaultSize,
    sort: sort !== null && sortFields.includes(sort) ? sort : 'name',
    order: query.get('order') === 'desc' ? 'desc' : 'asc',
    filter: query.get('filter') ?? '',
  };
}

/** Name order, ascending: the listing's own order, paged by cursor; every other order pages by offset. */
export function isKeyOrder(address: Pick<ListAddress, 'sort' | 'order'>): boolean {
  return address.sort === 'name' && address.order === 'asc';
}

/** The address of a view of the folder at `base` (`/browse/<bucket>/<prefix>`); defaults are left out. */
export function listHash(base: string, address: ListAddress): string {
  const settings = new URLSearchParams();
  if (address.after !== undefined) settings.set('after', address.after);
  if (address.page > 1) settings.set('page', String(address.page));
  if (address.size !== defaultSize) settings.set('size', String(address.size));
  if (address.sort !== 'name') settings.set('sort', address.sort);
  if (address.order !== 'asc') settings.set('order', address.order);
  if (address.filter !== '') settings.set('filter', address.filter);
  const text = settings.toString();
  return `${base}${text ? `?${text}` : ''}`;
}

export interface PagerProps {
  /** Which pager: the one above the list carries the sort order too. */
  place: 'above' | 'below';
  first: number;
  count: number | undefined;
  total: { count: number; capped: boolean } | undefined;
  failed: boolean;
  address: ListAddress;
  /** Why sorting by size or date is not offered (a folder too large to sort). */
  sortReason: string | undefined;
  onView: (next: Partial<ListAddress>) => void;
  onPrevious: (() => void) | undefined;
  onNext: (() => void) | undefined;
}

function itemsText(props: PagerProps): string {
  if (props.failed) return 'Nothing to show: the listing failed (see above).';
  if (props.count === undefined) return 'Loading…';
  if (props.count === 0) return 'No items';
  const of = props.total ? ` of ${props.total.count.toLocaleString('en')}${props.total.capped ? '+' : ''}` : '';
  return `Items ${props.first}–${props.first + props.count - 1}${of}`;
}

export function Pager(props: PagerProps) {
  const { address, place } = props;
  const id = (name: string) => `${name}-${place}`;
  return (
    <div class={`pager pager-${place}`} role="group" aria-label={`Paging, ${place} the list`}>
      {place === 'above' ? (
        <label class="field compact inline">
          <span>Sort by</span>
          <select
            value={`${address.sort}:${address.order}`}
            aria-describedby={props.sortReason ? id('sort-why') : undefined}
            onChange={(event) => {
              const [sort, order] = (event.target as HTMLSelectElement).value.split(':') as [SortField, SortOrder];
              props.onView({ sort, order });
            }}
          >
            {sortFields.flatMap((field) =>
              (['asc', 'desc'] as SortOrder[]).map((order) => (
                <option key={`${field}:${order}`} value={`${field}:${order}`} disabled={field !== 'name' && props.sortReason !== undefined}>
                  {sortLabels[field]} {order === 'asc' ? (field === 'name' ? 'A–Z' : field === 'size' ? 'smallest first' : 'oldest first') : field === 'name' ? 'Z–A' : field === 'size' ? 'largest first' : 'newest first'}
                </option>
              )),
            )}
          </select>
        </label>
      ) : null}
      <label class="field compact inline">
        <span>Page size</span>
        <select value={String(address.size)} onChange={(event) => props.onView({ size: Number((event.target as HTMLSelectElement).value) })}>
          {pageSizes.map((size) => (
            <option key={size} value={String(size)}>
              {size}
            </option>
          ))}
        </select>
      </label>
      <span class="muted small pager-items" aria-live={place === 'below' ? 'polite' : undefined}>
        {itemsText(props)}
      </span>
      {props.sortReason && place === 'above' ? (
        <span class="reason" id={id('sort-why')}>
          {props.sortReason}
        </span>
      ) : null}
      <button class="button small" type="button" disabled={!props.onPrevious} onClick={props.onPrevious}>
        Previous page
      </button>
      <button class="button small" type="button" disabled={!props.onNext} onClick={props.onNext}>
        Next page
      </button>
    </div>
  );
}

/** A sortable column's header: a button that sorts by it (again: the other way), its order told to screen readers. */
export function SortHeader(props: { field: SortField; address: ListAddress; class?: string; disabled?: boolean; onView: (next: Partial<ListAddress>) => void }) {
  const { field, address } = props;
  const active = address.sort === field;
  const next: SortOrder = active && address.order === 'asc' ? 'desc' : active ? 'asc' : field === 'name' ? 'asc' : 'desc';
  return (
    <th class={props.class} aria-sort={active ? (address.order === 'asc' ? 'ascending' : 'descending') : 'none'}>
      <button class="link sort-head" type="button" disabled={props.disabled && field !== 'name'} onClick={() => props.onView({ sort: field, order: next })}>
        {sortLabels[field]}
        <span aria-hidden="true" class="sort-mark">
          {active ? (address.order === 'asc' ? ' ▲' : ' ▼') : ''}
        </span>
      </button>
    </th>
  );
}
