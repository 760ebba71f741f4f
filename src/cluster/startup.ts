/**
 * Startup after configuration: format quorum for every pool, persisted storage-class settings,
 * the unclean-shutdown marker, and the object layer built from the drives that are usable.
 */
import { randomUUID } from 'node:crypto';
import { isSvcError, SvcError } from '../errors/index.js';
import { systemDir, type Drive } from '../drive/index.js';
import { ErasureSet, ObjectLayer, type BlockCoding, type NamespaceLocker, type RepairRequest, type SetLogger, type ShardReadStats } from '../object/index.js';
import { encodeFormatJson } from '../format/format-json.js';
import type { Clock } from '../util/clock.js';
import { limits } from '../util/limits.js';
import { establishPoolFormat, formatPath, FormatPending, readFormats, type PoolFormatResult } from './format-bootstrap.js';
import { startDriveMonitor, type DriveMonitor, type PendingSlot } from './drive-monitor.js';
import type { DeploymentLayout } from './layout.js';
import { validateStorageClass, type ResolvedStorageClass, type StorageClassSettings } from './storage-class-config.js';
import type { ServerConfig } from './server-config.js';
import { decodeStorageClassFile, encodeStorageClassFile } from './storage-class-file.js';
import { readStateFile, StateFileQuarantine } from './state-quarantine.js';

export const uncleanMarkerPath = `${systemDir}/unclean-shutdown`;
export const storageClassConfigPath = `${systemDir}/config/storage-class.json`;

export interface StartupLogger extends SetLogger {
  info(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export interface StartedStorage {
  deploymentId: string;
  objects: ObjectLayer;
  storageClass: ResolvedStorageClass;
  formats: PoolFormatResult[];
  lastShutdownUnclean: boolean;
  /** Drives per pool, set and slot as the erasure sets use them; undefined where not online. */
  setDrives: (Drive | undefined)[][][];
  /** Re-checks slots that were not online at startup and brings them in. */
  driveMonitor: DriveMonitor;
  /** Is this drive one of this node's own? */
  isLocal(drive: Drive): boolean;
  /** Where the node's refused state files go (storage-class.json here; pool.bin, iam.bin and the others in the services). */
  quarantine: StateFileQuarantine;
  /** Where reads and writes that found missing or corrupt shards report them (the MRF queue). */
  onRepairNeeded(handler: (pool: number, set: number, request: RepairRequest) => void): void;
  /** Writes format.json onto a replaced (empty) drive in its original slot and brings it online. */
  formatReplacedDrive(pool: number, set: number, slot: number): Promise<void>;
  markShutdownClean(): Promise<void>;
  stop(): void;
}

export async function startStorage(
  config: ServerConfig,
  drives: (Drive | undefined)[][],
  options: { locker: NamespaceLocker; clock: Clock; logger: StartupLogger; newId?: () => string; mayFormat?: boolean; driveCheckIntervalMs?: number; isLocal?: (drive: Drive) => boolean; coding?: BlockCoding; shardReads?: ShardReadStats },
): Promise<StartedStorage> {
  const newId = options.newId ?? randomUUID;
  const formats = await waitForFormat(config.layout, drives, newId, options.mayFormat ?? true, options.logger);
  const deploymentId = formats[0]!.deploymentId;
  if (formats.some((format) => format.deploymentId !== deploymentId)) {
    throw new SvcError('PoolTopologyMismatch', 'pools belong to different deployments (their format.json deployment ids differ)');
  }
  const usable = drives.map((poolDrives, pool) => poolDrives.map((drive, index) => (formats[pool]!.driveStates[index] === 'ok' ? drive : undefined)));
  logDriveStates(config, formats, options.logger);
  const quarantine = new StateFileQuarantine(options.logger);
  const storageClass = await applyPersistedStorageClass(config, usable, options.logger, quarantine);
  // Each node marks only its own drives: a peer's marker says nothing about this node's last stop.
  const isLocal = options.isLocal ?? (() => true);
  const ownDrives = usable.flat().filter((drive): drive is Drive => drive !== undefined && isLocal(drive));
  const lastShutdownUnclean = await writeUncleanMarkers(ownDrives);
  if (lastShutdownUnclean) options.logger.warn({}, 'the last shutdown was unclean (marker found); objects written then are repaired by heal');
  const setDrives = config.layout.pools.map((pool) =>
    Array.from({ length: pool.setCount }, (_, setIndex) => usable[pool.index]!.slice(setIndex * pool.setDriveCount, (setIndex + 1) * pool.setDriveCount)),
  );
  const pending: PendingSlot[] = config.layout.pools.flatMap((pool) =>
    drives[pool.index]!.flatMap((drive, index) => {
      const state = formats[pool.index]!.driveStates[index];
      if (!drive || state === 'ok' || state === 'refused') return [];
      const set = Math.floor(index / pool.setDriveCount);
      const slot = index % pool.setDriveCount;
      return [{ pool: pool.index, set, slots: setDrives[pool.index]![set]!, slot, drive, expectedDriveId: formats[pool.index]!.sets[set]![slot]!, reason: state === 'unformatted' ? ('unformatted' as const) : ('offline' as const) }];
    }),
  );
  let repairHandler: ((pool: number, set: number, request: RepairRequest) => void) | undefined;
  const pools = config.layout.pools.map((pool) => ({
    index: pool.index,
    sets: Array.from({ length: pool.setCount }, (_, setIndex) =>
      new ErasureSet({
        poolIndex: pool.index,
        setIndex,
        drives: setDrives[pool.index]![setIndex]!,
        deploymentId,
        locker: options.locker,
        clock: options.clock,
        newId,
        standardParity: storageClass.standardParity(pool.index),
        rrsParity: storageClass.rrsParity(pool.index),
        ...(storageClass.inlineBlockBytes !== undefined ? { inlineBlockOverrideBytes: storageClass.inlineBlockBytes } : {}),
        blockSizeBytes: limits.erasureBlockSizeBytes,
        ...(options.coding ? { coding: options.coding } : {}),
        ...(options.shardReads ? { shardReads: options.shardReads } : {}),
        listQuorum: config.listQuorum,
        logger: options.logger,
        onRepairNeeded: (request) => repairHandler?.(pool.index, setIndex, request),
      }),
    ),
  }));
  const objects = new ObjectLayer({ deploymentId, pools, clock: options.clock });
  const repaired = await objects.syncBuckets();
  if (repaired.length > 0) options.logger.info({ buckets: repaired }, 'created existing buckets on pools that lacked them');
  const driveMonitor = startDriveMonitor({ pending, deploymentId, intervalMs: options.driveCheckIntervalMs ?? limits.driveCheckIntervalMs, logger: options.logger });
  return {
    deploymentId,
    objects,
    storageClass,
    formats,
    lastShutdownUnclean,
    setDrives,
    driveMonitor,
    isLocal,
    quarantine,
    onRepairNeeded: (handler) => {
      repairHandler = handler;
    },
    formatReplacedDrive: async (pool, set, slot) => {
      const entry = driveMonitor.pendingSlots().find((pending) => pending.pool === pool && pending.set === set && pending.slot === slot);
      if (!entry) return; // online already
      const format = formats[pool]!;
      const bytes = encodeFormatJson({
        version: 1,
        layout: config.layout.singleDrive ? 'single' : 'erasure',
        deploymentId,
        poolIndex: format.storedPoolIndex,
        driveId: entry.expectedDriveId,
        sets: format.sets,
        distributionAlgorithm: 'xxh64-deployment-id',
      });
      // Only an empty drive is formatted: a drive holding any other format.json is never overwritten.
      const existing = await entry.drive.readFile(formatPath).then(() => true, (error: unknown) => (isSvcError(error, 'FileNotFound') ? false : Promise.reject(error)));
      if (!existing) await entry.drive.writeFileAtomic(formatPath, bytes);
      await driveMonitor.checkNow();
    },
    markShutdownClean: async () => {
      await Promise.all(ownDrives.map((drive) => drive.deleteFile(uncleanMarkerPath).catch(() => undefined)));
    },
    stop: () => driveMonitor.stop(),
  };
}

/**
 * Retries format quorum until it is reached, logging how long it has waited and why; fails at
 * once on a permanent error (topology mismatch). Only the node holding the deployment's first
 * endpoint formats fresh drives, so nodes starting together agree on one deployment id.
 */
async function waitForFormat(layout: DeploymentLayout, drives: (Drive | undefined)[][], newId: () => string, mayFormat: boolean, logger: StartupLogger): Promise<PoolFormatResult[]> {
  const started = Date.now();
  let lastLogMs = 0;
  let quorumSince: number | undefined;
  for (;;) {
    try {
      const result = await formatPools(layout, drives, newId, mayFormat);
      // Peers starting together settle within moments (the first node may still be writing
      // format.json to this node's drives): a degraded start waits briefly before going ahead.
      const degraded = result.some((pool) => pool.driveStates.some((state) => state !== 'ok'));
      quorumSince ??= Date.now();
      if (!degraded || Date.now() - quorumSince >= limits.formatSettleMs) return result;
      await new Promise((resolve) => setTimeout(resolve, limits.formatSettlePollMs));
    } catch (error) {
      if (!(error instanceof FormatPending)) throw error;
      const waitedSeconds = Math.round((Date.now() - started) / 1000);
      if (Date.now() - lastLogMs >= limits.formatPendingLogIntervalMs) {
        logger.warn({ waitedSeconds, reason: error.message }, `waiting for format quorum (${waitedSeconds}s so far): ${error.message}`);
        lastLogMs = Date.now();
      }
      await new Promise((resolve) => setTimeout(resolve, limits.formatPendingRetryMs));
    }
  }
}

async function formatPools(layout: DeploymentLayout, drives: (Drive | undefined)[][], newId: () => string, mayFormat: boolean): Promise<PoolFormatResult[]> {
  const states = await Promise.all(drives.map((poolDrives) => readFormats(poolDrives)));
  // A peer refusing this node's launch arguments: the odd node out exits. The node holding the
  // first endpoint is the reference and keeps waiting (the refusing peer's drives count as offline).
  const refusal = states.flat().find((state) => state.state === 'offline' && isSvcError(state.error, 'InvalidConfiguration'));
  if (refusal?.state === 'offline') {
    if (!mayFormat) throw refusal.error;
    throw new FormatPending(`a peer refuses this node's launch arguments (${(refusal.error as Error).message}); that peer must be restarted with the same arguments`);
  }
  const existing = states.flat().find((state) => state.state === 'formatted');
  const deploymentId = existing?.state === 'formatted' ? existing.format.deploymentId : newId();
  const results: PoolFormatResult[] = [];
  for (const pool of layout.pools) {
    const storedIndexFloor = results.length === 0 ? 0 : results.at(-1)!.storedPoolIndex + 1;
    results.push(
      await establishPoolFormat(
        { poolIndex: pool.index, setCount: pool.setCount, setDriveCount: pool.setDriveCount, drives: drives[pool.index]!, singleDrive: layout.singleDrive, storedIndexFloor },
        states[pool.index]!,
        { deploymentId, newId, mayFormat },
      ),
    );
  }
  return results;
}

function logDriveStates(config: ServerConfig, formats: PoolFormatResult[], logger: StartupLogger): void {
  formats.forEach((format, pool) => {
    format.driveStates.forEach((state, index) => {
      if (state === 'ok') return;
      const endpoint = config.layout.pools[pool]!.endpoints[index]!.raw;
      const reason = state === 'refused' ? 'its format.json claims an identity this slot does not expect (a copied or foreign drive); refused' : state === 'unformatted' ? 'unformatted (a replaced drive waits for heal)' : 'offline';
      logger.warn({ pool, endpoint, state }, `drive ${endpoint}: ${reason}`);
    });
  });
}

/** The first readable copy of the persisted settings; a refused copy is quarantined and the next drive asked. */
async function readPersistedStorageClass(first: Drive[], quarantine: StateFileQuarantine): Promise<StorageClassSettings> {
  for (const drive of first) {
    try {
      const bytes = await readStateFile(drive, storageClassConfigPath, limits.maxStorageClassFileBytes);
      if (bytes !== undefined) return decodeStorageClassFile(bytes);
    } catch (error) {
      await quarantine.moveAside(drive, storageClassConfigPath, 'storage-class', error);
    }
  }
  return {};
}

async function applyPersistedStorageClass(config: ServerConfig, drives: (Drive | undefined)[][], logger: StartupLogger, quarantine: StateFileQuarantine): Promise<ResolvedStorageClass> {
  const first = drives[0]!.filter((drive): drive is Drive => drive !== undefined);
  const persisted = await readPersistedStorageClass(first, quarantine);
  const resolved = validateStorageClass(config.storageClassSettings, config.layout.pools.map((pool) => pool.setDriveCount), persisted);
  const bytes = encodeStorageClassFile(resolved.settings);
  await Promise.all(first.map((drive) => drive.writeFileAtomic(storageClassConfigPath, bytes).catch((error: unknown) => logger.warn({ endpoint: drive.endpoint, error: String(error) }, 'could not persist the storage-class settings on this drive'))));
  return resolved;
}

/** Writes the marker on every drive; true when any drive still had one (an unclean last stop). */
async function writeUncleanMarkers(drives: (Drive | undefined)[]): Promise<boolean> {
  const found = await Promise.all(
    drives.map(async (drive) => {
      if (!drive) return false;
      const existed = await drive.stat(uncleanMarkerPath).then(() => true, () => false);
      await drive.writeFileAtomic(uncleanMarkerPath, Buffer.from(`${new Date().toISOString()} pid ${process.pid}\n`)).catch(() => undefined);
      return existed;
    }),
  );
  return found.some(Boolean);
}
