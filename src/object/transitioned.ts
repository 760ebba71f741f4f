/**
 * The metadata side of lifecycle transitions in one erasure set. The caller (the lifecycle
 * scanner, data movement, RestoreObject) holds the object's write lock; the tier's bytes are its
 * business (src/ops/tier/), these functions only change xl.meta:
 *
 * - recordTransition: a version whose bytes the tier now holds keeps its metadata and names the
 *   tier's object; its local shards are freed once the change reached write quorum. Written
 *   only after the tier's copy is complete, so a crash leaves the local data, or both.
 * - writeTransitionedCopy: data movement puts a transitioned version's metadata into another set
 *   (never its bytes: they stay on the tier).
 * - restoreCopy / dropRestoredCopy: RestoreObject's local copy, and its end.
 */
import { SvcError } from '../errors/index.js';
import type { ObjectVersion, TransitionInfo, XlMeta } from '../format/xl-meta-types.js';
import { findVersion, upsertVersion } from '../format/xl-meta.js';
import { distributionFor } from '../erasure/layout.js';
import { writeQuorum } from '../erasure/geometry.js';
import { resolveForRead } from './get-object.js';
import { tmpDir, type Drive } from '../drive/index.js';
import { BlockReader } from './erasure-stream.js';
import { removeTmp, shardStreamPlan, streamShardFiles } from './put-object.js';
import { hasLocalData } from './tier-gateway.js';
import { ByteSlices } from '../util/byte-slices.js';
import { changeMeta } from './meta-io.js';
import { toObjectInfo } from './object-info.js';
import { geometryForClass, onlineSlots, type SetConfig } from './set-context.js';
import type { ObjectInfo } from './types.js';

/** The stored record of one version (as the drives' vote gives it), for data movement and transitions. */
export async function versionRecord(config: SetConfig, bucket: string, key: string, versionId: string): Promise<ObjectVersion> {
  return (await resolveForRead(config, bucket, key, versionId)).version;
}

/** What the caller read before it uploaded the bytes: the change is refused when the version changed since. */
export interface ExpectedVersion {
  versionId: string;
  modTimeMs: number;
  etag: string;
  /** The tier the version's data was on when it was read (absent: on the drives). */
  fromTier?: string;
}

/**
 * Rewrites one version as transitioned (its local data, a restored copy included, freed after the
 * commit). A version on another tier moves on to this one; the object layer then releases the
 * other tier's object.
 */
export async function recordTransition(config: SetConfig, bucket: string, key: string, expected: ExpectedVersion, transition: TransitionInfo): Promise<ObjectInfo> {
  const target = await versionRecord(config, bucket, key, expected.versionId);
  if (target.modTimeMs !== expected.modTimeMs || target.etag !== expected.etag || target.transition?.tier !== expected.fromTier || transition.tier === expected.fromTier) {
    throw new SvcError('InvalidObjectState', 'The version changed while its data was being moved to the tier.', { bucket, key, versionId: expected.versionId });
  }
  const moved = withoutLocalData({ ...target, transition });
  await changeVersion(config, bucket, key, target, (own) => ({ version: withoutLocalData({ ...own, transition }), garbage: own.dataDir }));
  return toObjectInfo(bucket, key, moved, true);
}

/** Writes a transitioned version's metadata into this set (data movement): no bytes move. */
export async function writeTransitionedCopy(config: SetConfig, bucket: string, key: string, version: ObjectVersion): Promise<void> {
  if (!version.transition) throw new SvcError('InternalError', 'only a transitioned version moves as metadata alone');
  const geometry = geometryForClass(config, version.storageClass);
  const distribution = distributionFor(key, config.drives.length);
  const copy = withoutLocalData({
    ...version,
    erasure: { ...version.erasure!, dataShards: geometry.dataShards, parityShards: geometry.parityShards, distribution, index: 1 },
  });
  const { restoreExpiryMs: _restored, ...transition } = version.transition;
  await changeMeta(config, bucket, key, onlineSlots(config), {
    apply: (meta: XlMeta, slot: number) => ({ meta: upsertVersion(meta, { ...copy, transition, erasure: { ...copy.erasure!, index: distribution[slot]! } }) }),
  }, geometry.writeQuorum);
}

/**
 * RestoreObject: brings a transitioned version's bytes back onto the drives until `expiryMs`
 * (part by part, coded with the version's own geometry), or, when a restored copy is there
 * already, moves its expiry. Returns whether a copy was made now (false: only the expiry moved).
 * ObjectAlreadyInActiveTierError for a version that was never transitioned.
 *
 * `source`, when given, is the version's whole stored bytes from elsewhere (data movement carries
 * a restored copy from one pool to another this way); otherwise they are read from the tier.
 */
export async function restoreCopy(config: SetConfig, bucket: string, key: string, versionId: string | undefined, expiryMs: number, source?: AsyncIterable<Uint8Array>): Promise<{ restoredNow: boolean; info: ObjectInfo }> {
  const resolved = await resolveForRead(config, bucket, key, versionId);
  const target = resolved.version;
  if (!target.transition) throw new SvcError('ObjectAlreadyInActiveTierError', undefined, { bucket, key, versionId: target.versionId });
  if (hasLocalData(target)) {
    const transition = { ...target.transition, restoreExpiryMs: Math.max(expiryMs, target.transition.restoreExpiryMs ?? 0) };
    await config.restores?.record({ bucket, key, versionId: target.versionId, expiryMs: transition.restoreExpiryMs });
    await changeVersion(config, bucket, key, target, (own) => ({ version: { ...own, transition } }));
    return { restoredNow: false, info: toObjectInfo(bucket, key, { ...target, transition }, resolved.isLatest) };
  }
  const tiers = config.tiers;
  if (!source && !tiers) throw new SvcError('TierUnreachable', `the version's data is on tier ${target.transition.tier}, which this node cannot reach`, { tier: target.transition.tier });
  const transitioned = target.transition;
  // Noted before the bytes are written: the index holds every restored copy (and perhaps one never made).
  await config.restores?.record({ bucket, key, versionId: target.versionId, expiryMs });
  const slices = source ? new ByteSlices(source) : undefined;
  const open = async (offset: number, length: number): Promise<AsyncIterable<Uint8Array>> => (slices ? slices.next(length) : tiers!.open(transitioned, { offset, length }));
  const erasure = target.erasure!;
  const plan = { ...shardStreamPlan(config, { dataShards: erasure.dataShards, parityShards: erasure.parityShards, writeQuorum: writeQuorum(erasure.dataShards, erasure.parityShards) }, erasure.distribution, []), blockSizeBytes: erasure.blockSizeBytes };
  const tmpId = config.newId();
  const dataDir = config.newId();
  try {
    let slots = onlineSlots(config);
    let partStart = 0;
    for (const part of target.parts) {
      const body = part.sizeBytes === 0 ? noBytes() : await open(partStart, part.sizeBytes);
      const written = await streamShardFiles(config, plan, new BlockReader(body, erasure.blockSizeBytes, part.sizeBytes), [], `${tmpDir}/${tmpId}/part.${part.number}`, () => removeTmp(config, tmpId));
      slots = slots.filter((slot) => written.slots.includes(slot));
      partStart += part.sizeBytes;
    }
    const transition = { ...target.transition, restoreExpiryMs: expiryMs };
    await changeMeta(config, bucket, key, slots, {
      apply: (meta: XlMeta, _slot: number, dir: string) => {
        const own = findVersion(meta, target.versionId);
        if (!own || own.modTimeMs !== target.modTimeMs) throw new SvcError('FileNotFound', 'this drive lacks the version');
        return { meta: upsertVersion(meta, { ...own, dataDir, transition }), beforePublish: (drive: Drive) => drive.rename(`${tmpDir}/${tmpId}`, `${dir}/${dataDir}`) };
      },
      undoBeforePublish: (drive: Drive, dir: string) => drive.deleteRecursive(`${dir}/${dataDir}`),
    }, plan.quorum);
    return { restoredNow: true, info: toObjectInfo(bucket, key, { ...target, dataDir, transition }, resolved.isLatest) };
  } finally {
    await slices?.close();
    await removeTmp(config, tmpId);
  }
}

/** What ending a restored copy found: ended now, none there, or one that lasts until later (restored again). */
export interface RestoredCopyEnd {
  ended: boolean;
  laterExpiryMs?: number;
}

/** Ends a restored copy whose expiry is at or before `nowMs`: the local bytes go, the version reads from its tier again. */
export async function dropRestoredCopy(config: SetConfig, bucket: string, key: string, versionId: string, nowMs: number): Promise<RestoredCopyEnd> {
  const target = await versionRecord(config, bucket, key, versionId);
  const expiryMs = target.transition?.restoreExpiryMs;
  if (!target.transition || expiryMs === undefined) return { ended: false };
  if (expiryMs > nowMs) return { ended: false, laterExpiryMs: expiryMs };
  await changeVersion(config, bucket, key, target, (own) => {
    const { restoreExpiryMs: _ended, ...transition } = own.transition ?? target.transition!;
    return { version: withoutLocalData({ ...own, transition }), garbage: own.dataDir };
  });
  return { ended: true };
}

/** Applies `change` to every online drive's copy of `target` with the version's write quorum; a drive without it counts as failed. */
async function changeVersion(config: SetConfig, bucket: string, key: string, target: ObjectVersion, change: (own: ObjectVersion) => { version: ObjectVersion; garbage?: string }): Promise<void> {
  const quorum = writeQuorum(target.erasure!.dataShards, target.erasure!.parityShards);
  await changeMeta(config, bucket, key, onlineSlots(config), {
    apply: (meta: XlMeta) => {
      const own = findVersion(meta, target.versionId);
      if (!own || own.modTimeMs !== target.modTimeMs) throw new SvcError('FileNotFound', 'this drive lacks the version');
      const { version, garbage } = change(own);
      return { meta: upsertVersion(meta, version), garbageDataDirs: garbage ? [garbage] : [] };
    },
  }, quorum);
}

function withoutLocalData(version: ObjectVersion): ObjectVersion {
  const { dataDir: _dataDir, inlineData: _inline, ...rest } = version;
  return rest;
}

async function* noBytes(): AsyncGenerator<Uint8Array> {
  // An empty part: nothing to read from the tier.
}
