/**
 * The launch's validation and layout, offline: what `svc server` would do with these arguments
 * and this environment, from the same code. `planLaunch` calls `readServerConfig` (the first
 * thing a server does) and takes the warnings from `configWarnings` and `redundancyWarnings`,
 * which the server logs through the same functions; no drive is touched.
 */
import { isSvcError } from '../errors/index.js';
import { fateOf } from '../erasure/fate.js';
import { hostOf } from './endpoints.js';
import { hostFailureWarning, hostsSetMayLose, type DeploymentLayout } from './layout.js';
import { readServerConfig, type ServerConfig } from './server-config.js';
import type { ResolvedStorageClass } from './storage-class-config.js';

/** One warning line the server logs at startup: pino fields and message. */
export interface StartupWarning {
  fields: Record<string, unknown>;
  message: string;
}

/** Logged before drives are opened: legacy-name conflicts and development credentials. */
export function configWarnings(config: ServerConfig): StartupWarning[] {
  const warnings: StartupWarning[] = config.notices.map((notice) => ({ fields: { conflict: notice }, message: 'both a SVC_ and a legacy variable are set; the SVC_ value is used' }));
  if (config.credentialsFromDefault) {
    warnings.push({
      fields: { accessKey: config.accessKey, secretKey: config.secretKey },
      message: `SVC_ACCESS_KEY/SVC_SECRET_KEY are not set: using the development credentials ${config.accessKey} / ${config.secretKey}; set your own before storing real data`,
    });
  }
  return warnings;
}

/**
 * Logged once storage is ready, from the storage classes in force: zero automatic parity, an
 * inline block above 128 KiB, and `host_failure_data_unavailable` for every multi-drive pool.
 */
export function redundancyWarnings(layout: DeploymentLayout, storageClass: ResolvedStorageClass): StartupWarning[] {
  const warnings: StartupWarning[] = storageClass.warnings.map((message) => ({ fields: {}, message }));
  for (const pool of layout.pools) {
    const warning = hostFailureWarning(pool, { standard: storageClass.standardParity(pool.index), rrs: storageClass.rrsParity(pool.index) });
    if (warning) warnings.push({ fields: { pool: pool.index, warning: 'host_failure_data_unavailable', hosts: warning.hosts, hostsMayLose: warning.hostsMayLose }, message: warning.message });
  }
  return warnings;
}

export interface ClassPlan {
  storageClass: 'STANDARD' | 'REDUCED_REDUNDANCY';
  parity: number;
  dataShards: number;
  /** K / N: the share of raw capacity that holds data. */
  usableFraction: number;
  usableBytes?: number;
  /** Per set: drives that may fail with reads (and writes) still working; hosts that may fail with every set still readable. */
  tolerates: { readDrives: number; writeDrives: number; readHosts: number };
}

export interface PoolPlan {
  index: number;
  pattern: string;
  drives: number;
  setDriveCount: number;
  setCount: number;
  hosts: number;
  sets: { set: number; hosts: { host: string; drives: number }[] }[];
  classes: ClassPlan[];
}

export type LaunchPlan =
  | { accepted: true; singleDrive: boolean; pools: PoolPlan[]; rawBytes?: number; usableBytes?: number; warnings: { message: string; fields: Record<string, unknown> }[] }
  | { accepted: false; rejection: { code: string; rule?: string; variable?: string; message: string; line: string } };

/** What `svc server <args>` with `env` would do, without starting it. `driveSizeBytes`: each drive's size, for usable bytes. */
export function planLaunch(args: string[], env: Record<string, string | undefined>, options: { driveSizeBytes?: number } = {}): LaunchPlan {
  let config: ServerConfig;
  try {
    config = readServerConfig(args, env);
  } catch (error) {
    return { accepted: false, rejection: rejectionOf(error) };
  }
  const pools = config.layout.pools.map((pool): PoolPlan => {
    const classes = ([['STANDARD', config.storageClass.standardParity(pool.index)], ['REDUCED_REDUNDANCY', config.storageClass.rrsParity(pool.index)]] as const).map(([storageClass, parity]): ClassPlan => {
      const fate = fateOf(pool.setDriveCount, parity, 0);
      const dataShards = pool.setDriveCount - parity;
      const usableFraction = dataShards / pool.setDriveCount;
      return {
        storageClass,
        parity,
        dataShards,
        usableFraction,
        ...(options.driveSizeBytes !== undefined ? { usableBytes: Math.floor(pool.endpoints.length * options.driveSizeBytes * usableFraction) } : {}),
        tolerates: { readDrives: fate.moreFailuresTolerated.read, writeDrives: fate.moreFailuresTolerated.write, readHosts: Math.min(...pool.sets.map((set) => hostsSetMayLose(set, parity))) },
      };
    });
    return {
      index: pool.index,
      pattern: pool.pattern,
      drives: pool.endpoints.length,
      setDriveCount: pool.setDriveCount,
      setCount: pool.setCount,
      hosts: new Set(pool.endpoints.map(hostOf)).size,
      sets: pool.sets.map((set, index) => ({ set: index, hosts: hostsOf(set.map(hostOf)) })),
      classes,
    };
  });
  const warnings = [...configWarnings(config), ...redundancyWarnings(config.layout, config.storageClass)];
  const size = options.driveSizeBytes;
  return {
    accepted: true,
    singleDrive: config.layout.singleDrive,
    pools,
    ...(size !== undefined
      ? { rawBytes: pools.reduce((sum, pool) => sum + pool.drives * size, 0), usableBytes: pools.reduce((sum, pool) => sum + pool.classes[0]!.usableBytes!, 0) }
      : {}),
    warnings,
  };
}

function hostsOf(hosts: string[]): { host: string; drives: number }[] {
  const counts = new Map<string, number>();
  for (const host of hosts) counts.set(host, (counts.get(host) ?? 0) + 1);
  return [...counts].map(([host, drives]) => ({ host, drives }));
}

/** The rejection as `svc server` reports it: its exit line `svc: <code>: <message>`, and the rule. */
function rejectionOf(error: unknown): { code: string; rule?: string; variable?: string; message: string; line: string } {
  const code = isSvcError(error) ? error.code : 'StartupFailed';
  const message = error instanceof Error ? error.message : String(error);
  const details = isSvcError(error) ? error.details : {};
  return {
    code,
    ...(typeof details.rule === 'string' ? { rule: details.rule } : {}),
    ...(typeof details.variable === 'string' ? { variable: details.variable } : {}),
    message,
    line: startupFailureLine(error),
  };
}

/** The line `svc server` prints (to stderr) when startup fails, before it exits 1; it names the broken rule. */
export function startupFailureLine(error: unknown): string {
  const code = isSvcError(error) ? error.code : 'StartupFailed';
  const message = error instanceof Error ? error.message : String(error);
  const rule = isSvcError(error) && typeof error.details.rule === 'string' && !message.includes('[rule: ') ? ` [rule: ${error.details.rule}]` : '';
  return `svc: ${code}: ${message}${rule}`;
}
