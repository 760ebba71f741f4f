/**
 * Everything the object operations of one erasure set need, injected: drives in slot order,
 * identity, locks, clock, id source, storage-class parities, logger and the repair hook.
 */
import type { Drive } from '../drive/index.js';
import type { StorageClass } from '../format/xl-meta-types.js';
import type { Clock } from '../util/clock.js';
import { SvcError } from '../errors/index.js';
import { writeQuorum, readQuorum, deleteQuorum } from '../erasure/geometry.js';
import type { NamespaceLocker } from './locks.js';
import type { BlockCoding } from './coding/coding.js';
import type { RestoredCopyRecorder, TierGateway } from './tier-gateway.js';
import type { ShardReadStats } from './shard-hedge.js';

export interface SetLogger {
  warn(fields: Record<string, unknown>, message: string): void;
  debug(fields: Record<string, unknown>, message: string): void;
}

export type ListQuorumMode = 'disk' | 'reduced' | 'optimal' | 'auto' | 'strict';

export interface RepairRequest {
  bucket: string;
  key: string;
  versionId?: string;
  reason: 'read-missing-shards' | 'read-corrupt-shards' | 'write-partial' | 'rollback-incomplete';
  slots: number[];
}

export interface SetConfig {
  poolIndex: number;
  setIndex: number;
  /** Drives in slot order; `undefined` marks a slot whose drive is not connected. */
  drives: (Drive | undefined)[];
  deploymentId: string;
  locker: NamespaceLocker;
  clock: Clock;
  newId: () => string;
  standardParity: number;
  rrsParity: number;
  inlineBlockOverrideBytes?: number;
  blockSizeBytes: number;
  /** Where blocks are coded (coding threads or the event loop); the event loop when unset. */
  coding?: BlockCoding;
  listQuorum: ListQuorumMode;
  logger?: SetLogger;
  onRepairNeeded?: (request: RepairRequest) => void;
  /** Remote tiers (lifecycle transitions); without it a transitioned version cannot be read. */
  tiers?: TierGateway;
  /** Where the set notes its restored copies before making them (their end then needs no walk). */
  restores?: RestoredCopyRecorder;
  /** The node's record of its drives' shard reads (hedged reads); a set without it keeps its own. */
  shardReads?: ShardReadStats;
}

export interface Geometry {
  dataShards: number;
  parityShards: number;
  readQuorum: number;
  writeQuorum: number;
}

export function geometryForClass(config: SetConfig, storageClass: StorageClass): Geometry {
  const setDriveCount = config.drives.length;
  const parityShards = storageClass === 'REDUCED_REDUNDANCY' ? config.rrsParity : config.standardParity;
  const dataShards = setDriveCount - parityShards;
  return {
    dataShards,
    parityShards,
    readQuorum: readQuorum(dataShards, parityShards),
    writeQuorum: writeQuorum(dataShards, parityShards),
  };
}

export function majority(config: SetConfig): number {
  return deleteQuorum(config.drives.length);
}

/** Slots with a connected drive. */
export function onlineSlots(config: SetConfig): number[] {
  const slots: number[] = [];
  config.drives.forEach((drive, slot) => {
    if (drive) slots.push(slot);
  });
  return slots;
}

export function requireQuorum(succeeded: number, needed: number, kind: 'read' | 'write', details: Record<string, unknown>): void {
  if (succeeded >= needed) return;
  throw new SvcError(kind === 'write' ? 'ErasureWriteQuorum' : 'ErasureReadQuorum', undefined, { ...details, succeeded, needed });
}
