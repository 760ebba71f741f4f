/**
 * Admin query rules (SPEC "Endpoints"), checked first by each route's schema and again here, so a
 * handler keeps them however it is called: status (GET) queries ignore unknown parameters; mutation
 * queries reject unknown or duplicate parameters and a `by-id` other than `true`/`false`;
 * rebalance start/stop take no query at all. `pool` names a pool by its launch pattern, or by
 * zero-based index with `by-id=true`.
 */
import { SvcError } from '../../errors/index.js';

export type Query = Map<string, string>;

/** A mutation's query: only `allowed` names, each at most once. */
export function mutationQuery(rawQuery: string, allowed: string[]): Query {
  const query: Query = new Map();
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    if (!allowed.includes(name)) throw new SvcError('InvalidQueryParameter', `unknown query parameter '${name}' (allowed: ${allowed.join(', ') || 'none'})`, { parameter: name });
    if (query.has(name)) throw new SvcError('InvalidQueryParameter', `query parameter '${name}' given more than once`, { parameter: name });
    query.set(name, value);
  }
  byIdOf(query);
  return query;
}

/** A status query: unknown parameters are ignored (the route schema has already refused a known one given twice). */
export function statusQuery(rawQuery: string): Query {
  const query: Query = new Map();
  for (const [name, value] of new URLSearchParams(rawQuery)) if (!query.has(name)) query.set(name, value);
  return query;
}

/** No query string at all: a bare `?` (an empty query) is refused too. */
export function noQuery(request: { rawQuery: string; queryGiven: boolean }): void {
  if (request.queryGiven || request.rawQuery !== '') throw new SvcError('InvalidQueryParameter', 'this operation takes no query string (not even a bare ?)', { query: request.rawQuery });
}

export function byIdOf(query: Query): boolean {
  const value = query.get('by-id');
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw new SvcError('InvalidQueryParameter', `by-id must be true or false, not '${value}'`, { parameter: 'by-id' });
}

/** Resolves one pool name (a launch pattern, or an index with by-id). */
export function resolvePool(name: string, byId: boolean, patterns: string[]): number {
  if (byId) {
    if (!/^\d+$/.test(name) || Number(name) >= patterns.length) throw new SvcError('NoSuchPool', `no pool with index '${name}' (${patterns.length} pool(s), zero-based)`, { pool: name });
    return Number(name);
  }
  const index = patterns.indexOf(name);
  if (index < 0) throw new SvcError('NoSuchPool', `no pool launched as '${name}'`, { pool: name });
  return index;
}

export function requiredPool(query: Query): string {
  const pool = query.get('pool');
  if (pool === undefined || pool === '') throw new SvcError('InvalidQueryParameter', 'the pool parameter is required', { parameter: 'pool' });
  return pool;
}

/** A request's JSON body; `{}` when it has none. */
export function jsonBody(request: { body: Buffer }, what: string): unknown {
  if (request.body.length === 0) return {};
  try {
    return JSON.parse(request.body.toString('utf8'));
  } catch {
    throw new SvcError('InvalidArgument', `${what} is not JSON`);
  }
}
