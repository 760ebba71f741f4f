/**
 * Changes the stored metadata of one existing version in place (its tags, or its sealed data key
 * after a KMS key rotation), under the object's write lock and with the version's write quorum. Data, parts and modification time stay as
 * they are; a drive whose xl.meta lacks the version is not changed and counts as failed.
 */
import { SvcError } from '../errors/index.js';
import type { ObjectVersion, XlMeta } from '../format/xl-meta-types.js';
import { findVersion, upsertVersion } from '../format/xl-meta.js';
import { writeQuorum } from '../erasure/geometry.js';
import { resolveForRead } from './get-object.js';
import { objectResource } from './locks.js';
import { changeMeta } from './meta-io.js';
import { toObjectInfo } from './object-info.js';
import { onlineSlots, type SetConfig } from './set-context.js';
import type { ObjectInfo } from './types.js';

export type VersionUpdate = (version: ObjectVersion) => Partial<Pick<ObjectVersion, 'systemMetadata' | 'encryption'>>;

export async function updateVersionMetadata(config: SetConfig, bucket: string, key: string, versionId: string | undefined, update: VersionUpdate): Promise<ObjectInfo> {
  const release = await config.locker.acquire(objectResource(bucket, key), 'write');
  try {
    const resolved = await resolveForRead(config, bucket, key, versionId);
    const target = resolved.version;
    const quorum = writeQuorum(target.erasure!.dataShards, target.erasure!.parityShards);
    const changed = update(target);
    await changeMeta(config, bucket, key, onlineSlots(config), {
      apply: (meta: XlMeta) => {
        const own = findVersion(meta, target.versionId);
        if (!own || own.modTimeMs !== target.modTimeMs) throw new SvcError('FileNotFound', 'this drive lacks the version');
        return { meta: upsertVersion(meta, { ...own, ...changed }) };
      },
    }, quorum);
    return toObjectInfo(bucket, key, { ...target, ...changed }, resolved.isLatest);
  } finally {
    release();
  }
}
