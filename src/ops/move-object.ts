/**
 * Moves every version of one object from a source pool to a target pool, the unit of work of
 * decommission and rebalance. Under the object's write lock the source's versions are read
 * again (the listing that found the key may be stale), each is copied to the target with its
 * version id, modification time, ETag, metadata, storage class and part list (delete markers as markers),
 * oldest first (a transitioned version as its metadata, and its restored copy if it has one),
 * and only after every copy reached the target's write quorum are the source's
 * versions removed. A failure before that leaves the source whole; a retry rewrites the same
 * version ids on the target.
 */
import { SvcError } from '../errors/index.js';
import { hasLocalData, type BucketVersioning, type ErasureSet, type ObjectInfo, type ObjectLayer, type PutObjectOptions } from '../object/index.js';

export interface MoveOutcome {
  /** Versions copied (0 when the key was gone by the time the lock was held). */
  versions: number;
  bytes: number;
  targetPool?: number;
  /** Source versions that could not be removed after the copy reached quorum (the object reads from either pool meanwhile). */
  cleanupWarning?: string;
}

export async function moveObject(objects: ObjectLayer, bucket: string, key: string, fromPool: number, chooseTarget: () => Promise<number>): Promise<MoveOutcome> {
  const release = await objects.lockObject(bucket, key, 'write');
  try {
    const versions = await versionsIn(objects, fromPool, bucket, key);
    if (versions.length === 0) return { versions: 0, bytes: 0 };
    const record = await objects.requireBucket(bucket);
    const targetPool = await chooseTarget();
    if (targetPool === fromPool) throw new SvcError('InternalError', `no target pool other than ${fromPool} for ${bucket}/${key}`);
    const source = objects.setFor(fromPool, key);
    const target = objects.setFor(targetPool, key);
    let bytes = 0;
    for (const version of [...versions].reverse()) {
      if (version.deleteMarker) {
        await target.deleteObject(bucket, key, { versioning: record.versioning, marker: { versionId: version.versionId, modTimeMs: version.modTimeMs }, lockHeld: true });
        continue;
      }
      // A transitioned version's bytes stay on its tier: its metadata moves, and a restored copy with its expiry.
      if (version.transition) {
        bytes += await moveTransitioned(source, target, bucket, key, version.versionId);
        continue;
      }
      // An encrypted or compressed version moves as it is stored: sealed packages and sealed key, compressed blocks and their index.
      const reader = await source.getObject(bucket, key, { versionId: version.versionId, lockHeld: true, sealed: true });
      await target.putObject(bucket, key, reader.body, {
        ...sameVersion(version, record.versioning),
        beforeCommit: ({ md5Hex }) => {
          if (!version.encryption && !version.compression && !version.etag.includes('-') && md5Hex !== version.etag) {
            throw new SvcError('InternalError', `moved bytes of ${bucket}/${key} version ${version.versionId} do not match its ETag`);
          }
        },
      });
      bytes += version.storedSizeBytes ?? version.sizeBytes;
    }
    const leftBehind: string[] = [];
    for (const version of versions) {
      try {
        // The version lives on in the target pool (with its lock fields): object lock does not refuse this removal.
        await source.deleteObject(bucket, key, { versionId: version.versionId, versioning: record.versioning, lockHeld: true, ignoreObjectLock: true });
      } catch (error) {
        leftBehind.push(`${version.versionId}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    if (leftBehind.length > 0) {
      return { versions: versions.length, bytes, targetPool, cleanupWarning: `${bucket}/${key}: copied to pool ${targetPool} but not removed from pool ${fromPool} (${leftBehind.join('; ')})` };
    }
    return { versions: versions.length, bytes, targetPool };
  } finally {
    release();
  }
}

/**
 * A transitioned version into the target set: its metadata (naming the tier's object, which stays
 * where it is), then, when it has a restored copy, that copy's bytes read from the source's drives
 * (not from the tier) with the same expiry. Returns the bytes copied.
 */
async function moveTransitioned(source: ErasureSet, target: ErasureSet, bucket: string, key: string, versionId: string): Promise<number> {
  const record = await source.versionRecord(bucket, key, versionId);
  await target.writeTransitionedCopy(bucket, key, record);
  const restoreExpiryMs = record.transition?.restoreExpiryMs;
  if (restoreExpiryMs === undefined || !hasLocalData(record)) return 0;
  const reader = await source.getObject(bucket, key, { versionId, lockHeld: true, sealed: true });
  await target.restoreCopy(bucket, key, versionId, restoreExpiryMs, reader.body);
  return record.sizeBytes;
}

/** The versions of one key in one pool, newest first (read under the caller's lock). */
export async function versionsIn(objects: ObjectLayer, pool: number, bucket: string, key: string): Promise<ObjectInfo[]> {
  for await (const entry of objects.listPool(pool, bucket, { prefix: key })) {
    return entry.key === key ? entry.versions : [];
  }
  return [];
}

/**
 * Rewrites every data version of an object in place with the current storage-class parity (heal
 * with `updateParity`), keeping version ids, times, ETags and metadata. The caller holds the lock.
 * Returns the number of versions rewritten.
 */
export async function rewriteWithCurrentParity(objects: ObjectLayer, pool: number, bucket: string, key: string): Promise<number> {
  const record = await objects.requireBucket(bucket);
  const set = objects.setFor(pool, key);
  let rewritten = 0;
  for (const version of [...(await versionsIn(objects, pool, bucket, key))].reverse()) {
    // A transitioned version has no local shards to rewrite.
    if (version.deleteMarker || version.transition) continue;
    const wanted = version.storageClass === 'REDUCED_REDUNDANCY' ? set.config.rrsParity : set.config.standardParity;
    if (version.parityShards === wanted) continue;
    const reader = await set.getObject(bucket, key, { versionId: version.versionId, lockHeld: true, sealed: true });
    await set.putObject(bucket, key, reader.body, sameVersion(version, record.versioning));
    rewritten += 1;
  }
  return rewritten;
}

/** Put options that write a copy of `version` as the same version (id, time, ETag, metadata, class); the caller holds the lock. */
function sameVersion(version: ObjectInfo, versioning: BucketVersioning): PutObjectOptions {
  return {
    storageClass: version.storageClass,
    versioning,
    sizeBytes: version.storedSizeBytes ?? version.sizeBytes,
    // The part list as stored (sealed or compressed sizes): a multipart object keeps its parts (partNumber reads, part checksums).
    parts: version.storedParts ?? version.parts,
    ...(version.encryption ? { encryption: version.encryption } : {}),
    ...(version.compression ? { compression: version.compression } : {}),
    ...(version.contentType !== undefined ? { contentType: version.contentType } : {}),
    userMetadata: version.userMetadata,
    systemMetadata: version.systemMetadata,
    modTimeMs: version.modTimeMs,
    versionId: version.versionId,
    etag: version.etag,
    lockHeld: true,
  };
}
