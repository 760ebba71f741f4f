/**
 * Geometry rules as pure functions (SPEC "Erasure set and object geometry" and "Limits"):
 * default parities, quorums and the inline budget.
 */
import { SvcError } from '../errors/index.js';
import { limits } from '../util/limits.js';

/** Default STANDARD parity by set width: 1 -> 0, 2-3 -> 1, 4-5 -> 2, 6-7 -> 3, 8-16 -> 4. */
export function defaultStandardParity(setDriveCount: number): number {
  if (setDriveCount <= 1) return 0;
  if (setDriveCount <= 3) return 1;
  if (setDriveCount <= 5) return 2;
  if (setDriveCount <= 7) return 3;
  return 4;
}

/** Default REDUCED_REDUNDANCY parity: 1, or 0 on a single drive. */
export function defaultRrsParity(setDriveCount: number): number {
  return setDriveCount <= 1 ? 0 : 1;
}

export function maxParity(setDriveCount: number): number {
  return Math.floor(setDriveCount / 2);
}

/** Shards needed to read: K (with zero parity every one of the N = K drives). */
export function readQuorum(dataShards: number, parityShards: number): number {
  void parityShards;
  return dataShards;
}

/** Shards needed to commit a write: K, or K + 1 when K equals M (so two writes cannot both win). */
export function writeQuorum(dataShards: number, parityShards: number): number {
  return dataShards === parityShards ? dataShards + 1 : dataShards;
}

/** Delete markers and version deletes: a majority of the set, N/2 + 1. */
export function deleteQuorum(setDriveCount: number): number {
  return Math.floor(setDriveCount / 2) + 1;
}

/** Internal metadata under .svc.sys is always written with parity N/2. */
export function systemMetadataParity(setDriveCount: number): number {
  return Math.floor(setDriveCount / 2);
}

/**
 * Per-shard inline budget: min(256 KiB / K, 128 KiB), or the configured override, divided by 8
 * on a versioned bucket.
 */
export function inlineShardBudgetBytes(options: { dataShards: number; versioned: boolean; inlineBlockOverrideBytes?: number | undefined }): number {
  const base = options.inlineBlockOverrideBytes ?? Math.min(Math.floor(limits.inlineBudgetTotalBytes / options.dataShards), limits.inlineShardCapBytes);
  return Math.floor(base / (options.versioned ? limits.inlineVersionedDivisor : 1));
}

/** An object is inline when every shard of it (ceil(size / K)) fits the per-shard budget. */
export function isInline(objectSizeBytes: number, dataShards: number, shardBudgetBytes: number): boolean {
  return Math.ceil(objectSizeBytes / dataShards) <= shardBudgetBytes;
}

export function inlineOverrideWarning(inlineBlockBytes: number): string | undefined {
  return inlineBlockBytes > limits.inlineShardCapBytes
    ? `SVC_STORAGE_CLASS_INLINE_BLOCK (set now or persisted) of ${inlineBlockBytes} bytes is above 128 KiB: large inline objects make every xl.meta read heavy`
    : undefined;
}

export interface SetGeometry {
  setDriveCount: number;
  dataShards: number;
  parityShards: number;
  readQuorum: number;
  writeQuorum: number;
  deleteQuorum: number;
}

export function geometryFor(setDriveCount: number, parity: number): SetGeometry {
  if (!Number.isInteger(setDriveCount) || setDriveCount < 1 || setDriveCount > limits.maxSetDriveCount) {
    throw new SvcError('InvalidArgument', `set width ${setDriveCount} is outside 1..${limits.maxSetDriveCount}`);
  }
  if (!Number.isInteger(parity) || parity < 0 || parity > maxParity(setDriveCount)) {
    throw new SvcError('InvalidArgument', `parity ${parity} is outside 0..${maxParity(setDriveCount)} for a set of ${setDriveCount}`);
  }
  const dataShards = setDriveCount - parity;
  return {
    setDriveCount,
    dataShards,
    parityShards: parity,
    readQuorum: readQuorum(dataShards, parity),
    writeQuorum: writeQuorum(dataShards, parity),
    deleteQuorum: deleteQuorum(setDriveCount),
  };
}
