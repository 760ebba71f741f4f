/**
 * From launch arguments to pools and erasure sets (SPEC "Launch and layout rules"). Pure: every
 * rule is checked here before any disk is touched, and a broken rule is an InvalidLayout error
 * whose `details.rule` names it and whose message names the offending argument.
 *
 * Each argument is one pool. A single argument without an ellipsis that names one local path is
 * the single-drive layout; with more than one argument, every argument must use an ellipsis.
 */
import { SvcError } from '../errors/index.js';
import { limits } from '../util/limits.js';
import { expandEllipsis, hasEllipsis } from '../util/ellipsis.js';
import { endpointIdentity, hostOf, parseEndpoint, type Endpoint } from './endpoints.js';

export interface PoolLayout {
  index: number;
  /** The argument exactly as given: the pool's name in the admin API. */
  pattern: string;
  endpoints: Endpoint[];
  setDriveCount: number;
  setCount: number;
  sets: Endpoint[][];
}

export interface DeploymentLayout {
  /** One argument without an ellipsis (decommission and rebalance are not available). */
  legacy: boolean;
  singleDrive: boolean;
  pools: PoolLayout[];
}

export type LayoutRule =
  | 'no-endpoints'
  | 'multi-pool-needs-ellipsis'
  | 'min-two-drives'
  | 'single-drive-in-multi-pool'
  | 'duplicate-endpoint'
  | 'no-valid-set-width'
  | 'set-drive-count-invalid'
  | 'mixed-endpoint-kinds'
  | 'single-drive-needs-local-path';

export function layoutError(rule: LayoutRule, message: string, argument?: string): SvcError {
  return new SvcError('InvalidLayout', `${message} [rule: ${rule}]`, { rule, ...(argument !== undefined ? { argument } : {}) });
}

export function planLayout(args: string[], options: { setDriveCount?: number } = {}): DeploymentLayout {
  if (args.length === 0) throw layoutError('no-endpoints', 'no drive endpoints given (pass them as arguments or in SVC_VOLUMES)');
  if (args.length > 1) {
    const plain = args.find((argument) => !hasEllipsis(argument));
    if (plain !== undefined) throw layoutError('multi-pool-needs-ellipsis', `with more than one pool every argument must use an ellipsis range; '${plain}' has none`, plain);
  }
  const expanded = args.map((argument) => ({ argument, endpoints: expandEllipsis(argument).map((raw) => parseEndpoint(raw, argument)) }));
  checkDuplicates(expanded);
  const singleDrive = args.length === 1 && !hasEllipsis(args[0]!) && expanded[0]!.endpoints.length === 1;
  if (singleDrive && expanded[0]!.endpoints[0]!.kind !== 'local') {
    throw layoutError('single-drive-needs-local-path', `'${args[0]}' is a single remote endpoint; a single local path is the only single-drive layout`, args[0]);
  }
  for (const { argument, endpoints } of expanded) {
    checkKinds(argument, endpoints);
    if (singleDrive || endpoints.length >= 2) continue;
    if (args.length > 1) throw layoutError('single-drive-in-multi-pool', `pool '${argument}' has a single drive; a single-drive pool cannot join a multi-pool deployment`, argument);
    throw layoutError('min-two-drives', `pool '${argument}' expands to ${endpoints.length} drive endpoint; a pool needs at least 2 distinct drives`, argument);
  }
  const pools = expanded.map(({ argument, endpoints }, index) =>
    poolOf(index, argument, endpoints, singleDrive ? 1 : chooseSetWidth(argument, endpoints, options.setDriveCount)),
  );
  return { legacy: args.length === 1 && !hasEllipsis(args[0]!), singleDrive, pools };
}

function checkDuplicates(pools: { argument: string; endpoints: Endpoint[] }[]): void {
  const seen = new Map<string, string>();
  for (const { argument, endpoints } of pools) {
    for (const endpoint of endpoints) {
      const identity = endpointIdentity(endpoint);
      const previous = seen.get(identity);
      if (previous !== undefined) {
        throw layoutError('duplicate-endpoint', `endpoint '${endpoint.raw}' of '${argument}' appears more than once${previous === argument ? '' : ` (also in '${previous}')`}`, argument);
      }
      seen.set(identity, argument);
    }
  }
}

function checkKinds(argument: string, endpoints: Endpoint[]): void {
  if (new Set(endpoints.map((endpoint) => endpoint.kind)).size > 1) {
    throw layoutError('mixed-endpoint-kinds', `pool '${argument}' mixes local paths and URL endpoints`, argument);
  }
}

/**
 * The widest width in 2..16 that divides the pool evenly, preferring widths that spread each set
 * evenly over the pool's hosts. A pinned SVC_ERASURE_SET_DRIVE_COUNT must itself be valid.
 */
export function chooseSetWidth(argument: string, endpoints: Endpoint[], pinned?: number): number {
  const count = endpoints.length;
  if (pinned !== undefined) {
    const valid = Number.isInteger(pinned) && pinned >= limits.minSetDriveCount && pinned <= limits.maxSetDriveCount && count % pinned === 0;
    if (!valid) {
      throw layoutError('set-drive-count-invalid', `SVC_ERASURE_SET_DRIVE_COUNT=${pinned} must be from 2 to 16 and divide the ${count} drives of '${argument}' evenly`, argument);
    }
    return pinned;
  }
  const widths: number[] = [];
  for (let width = limits.maxSetDriveCount; width >= limits.minSetDriveCount; width -= 1) if (count % width === 0) widths.push(width);
  if (widths.length === 0) {
    throw layoutError('no-valid-set-width', `the ${count} drives of '${argument}' cannot be divided into equal sets of 2 to 16 drives`, argument);
  }
  const hosts = new Set(endpoints.map(hostOf)).size;
  return widths.find((width) => width % hosts === 0 || hosts % width === 0) ?? widths[0]!;
}

function poolOf(index: number, pattern: string, endpoints: Endpoint[], width: number): PoolLayout {
  const sets: Endpoint[][] = [];
  for (let start = 0; start < endpoints.length; start += width) sets.push(endpoints.slice(start, start + width));
  return { index, pattern, endpoints, setDriveCount: width, setCount: sets.length, sets };
}

/**
 * How many of a pool's hosts may be lost with every set still readable at `parity`: in each set,
 * the largest h for which the h hosts holding the most of its shards hold at most `parity`; the
 * pool's is the smallest over its sets. Zero when one host holds more shards of a set than parity.
 */
export function hostsPoolMayLose(pool: PoolLayout, parity: number): number {
  return Math.min(...pool.sets.map((set) => hostsSetMayLose(set, parity)));
}

/** How many hosts of one set may be lost with its objects at `parity` still readable. */
export function hostsSetMayLose(set: Endpoint[], parity: number): number {
  const shardsPerHost = new Map<string, number>();
  for (const endpoint of set) shardsPerHost.set(hostOf(endpoint), (shardsPerHost.get(hostOf(endpoint)) ?? 0) + 1);
  let lostShards = 0;
  let lostHosts = 0;
  for (const shards of [...shardsPerHost.values()].sort((a, b) => b - a)) {
    if (lostShards + shards > parity) break;
    lostShards += shards;
    lostHosts += 1;
  }
  return lostHosts;
}

/**
 * The `host_failure_data_unavailable` warning every multi-drive pool logs at startup (none for the
 * single-drive layout): how many hosts the pool spans and how many it may lose, per storage class.
 */
export function hostFailureWarning(pool: PoolLayout, parities: { standard: number; rrs: number }): { hosts: number; hostsMayLose: { standard: number; rrs: number }; message: string } | undefined {
  if (pool.endpoints.length < 2) return undefined;
  const hosts = new Set(pool.endpoints.map(hostOf)).size;
  const hostsMayLose = { standard: hostsPoolMayLose(pool, parities.standard), rrs: hostsPoolMayLose(pool, parities.rrs) };
  const may = (count: number, parity: number, name: string) =>
    count === 0 ? `none for ${name} EC:${parity} (one host holds more shards of a set than that parity)` : `${count} for ${name} EC:${parity}`;
  const message = `host_failure_data_unavailable: pool ${pool.index} spans ${hosts} host(s); hosts it may lose and keep data readable: ` +
    `${may(hostsMayLose.standard, parities.standard, 'STANDARD')}, ${may(hostsMayLose.rrs, parities.rrs, 'REDUCED_REDUNDANCY')}; losing more makes that data unavailable`;
  return { hosts, hostsMayLose, message };
}

export function describeLayout(layout: DeploymentLayout, parities: { standard: number; rrs: number }[]): string {
  const lines = [`${layout.pools.length} pool(s)${layout.singleDrive ? ', single-drive layout (no redundancy)' : ''}`];
  for (const pool of layout.pools) {
    const parity = parities[pool.index];
    lines.push(
      `pool ${pool.index}: ${pool.pattern}`,
      `  ${pool.endpoints.length} drive(s) in ${pool.setCount} set(s) of ${pool.setDriveCount}` +
        (parity ? `, STANDARD EC:${parity.standard} (K=${pool.setDriveCount - parity.standard}), RRS EC:${parity.rrs}` : ''),
    );
  }
  return lines.join('\n');
}
