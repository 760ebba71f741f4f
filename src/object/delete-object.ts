/**
 * DELETE in one erasure set: remove a version (by id, or the null version on unversioned
 * buckets) or add a delete marker. Both need a majority of the set (N/2 + 1), not read or write
 * quorum: a delete can succeed on a set whose reads and writes fail.
 */
import type { ObjectVersion, XlMeta } from '../format/xl-meta-types.js';
import { findVersion, removeVersion, upsertVersion } from '../format/xl-meta.js';
import { acquireWriteLock, checkWritePrecondition } from './write-preconditions.js';
import { changeMeta } from './meta-io.js';
import { checkRemovable } from './object-lock.js';
import { checkObjectKey } from './paths.js';
import { majority, onlineSlots, requireQuorum, type SetConfig } from './set-context.js';
import type { DeleteObjectOptions, DeleteObjectResult } from './types.js';

export async function deleteObject(config: SetConfig, bucket: string, key: string, options: DeleteObjectOptions): Promise<DeleteObjectResult> {
  checkObjectKey(key);
  const quorum = majority(config);
  requireQuorum(onlineSlots(config).length, quorum, 'write', { bucket, key, operation: 'delete' });
  const release = options.lockHeld ? () => undefined : await acquireWriteLock(config, bucket, key, options.precondition !== undefined);
  try {
    await checkWritePrecondition(config, bucket, key, options.precondition);
    if (options.marker) return await addDeleteMarker(config, bucket, key, options.marker.versionId, quorum, options.marker.modTimeMs);
    const removal = { quorum, bypassGovernance: options.bypassGovernance === true, ignoreObjectLock: options.ignoreObjectLock === true };
    if (options.versionId !== undefined) return await removeOneVersion(config, bucket, key, options.versionId, removal);
    if (options.versioning === 'unversioned') return await removeOneVersion(config, bucket, key, 'null', removal);
    return await addDeleteMarker(config, bucket, key, options.versioning === 'enabled' ? config.newId() : 'null', quorum);
  } finally {
    release();
  }
}

interface Removal {
  quorum: number;
  bypassGovernance: boolean;
  ignoreObjectLock: boolean;
}

/**
 * Removes one version everywhere it is stored; absent versions are not an error (S3 semantics).
 * A version that object lock protects on any drive's copy is refused with AccessDenied before
 * anything is written, unless the removal is data movement (the version lives on elsewhere).
 */
async function removeOneVersion(config: SetConfig, bucket: string, key: string, versionId: string, removal: Removal): Promise<DeleteObjectResult> {
  let removedMarker = false;
  const nowMs = config.clock.nowMs();
  await changeMeta(config, bucket, key, onlineSlots(config), {
    check: (metas: XlMeta[]) => {
      if (removal.ignoreObjectLock) return;
      for (const meta of metas) {
        const copy = findVersion(meta, versionId);
        if (copy) checkRemovable(copy, nowMs, removal.bypassGovernance);
      }
    },
    apply: (meta: XlMeta) => {
      const existing = findVersion(meta, versionId);
      if (!existing) return { meta: meta.versions.length > 0 ? meta : undefined };
      removedMarker ||= existing.deleteMarker;
      const next = removeVersion(meta, versionId);
      return { meta: next.versions.length > 0 ? next : undefined, garbageDataDirs: existing.dataDir ? [existing.dataDir] : [] };
    },
    // Data movement removes a source copy whose tier object the moved copy still names.
    ...(removal.ignoreObjectLock ? { keepTierObjects: true } : {}),
  }, removal.quorum);
  return { versionId, deleteMarker: removedMarker };
}

async function addDeleteMarker(config: SetConfig, bucket: string, key: string, versionId: string, quorum: number, fixedModTimeMs?: number): Promise<DeleteObjectResult> {
  const marker: ObjectVersion = {
    versionId,
    modTimeMs: fixedModTimeMs ?? config.clock.nowMs(),
    deleteMarker: true,
    sizeBytes: 0,
    etag: '',
    userMetadata: {},
    systemMetadata: {},
    storageClass: 'STANDARD',
    parts: [],
  };
  await changeMeta(config, bucket, key, onlineSlots(config), {
    prepare: (newest) => {
      if (fixedModTimeMs === undefined && marker.modTimeMs <= newest) marker.modTimeMs = newest + 1;
    },
    apply: (meta: XlMeta) => {
      const replaced = findVersion(meta, versionId);
      return { meta: upsertVersion(meta, marker), garbageDataDirs: replaced?.dataDir ? [replaced.dataDir] : [] };
    },
  }, quorum);
  return { versionId, deleteMarker: true };
}
