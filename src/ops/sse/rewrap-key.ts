/**
 * Re-wrapping one stored version's data key after a KMS key rotation (docs/encryption.md): its
 * sealed key is opened by the KMS key version that sealed it and sealed again by the newest one,
 * bound to the same bucket, key and context. Only `xl.meta` changes, through the object layer's
 * metadata update (the object's write lock, the version's write quorum); the data is never read.
 */
import { SvcError } from '../../errors/index.js';
import type { ObjectInfo, ObjectLayer } from '../../object/index.js';
import type { Kms } from '../kms/kms.js';
import { sealContext } from './object-keys.js';

export type RewrapOutcome = 'rewrapped' | 'current' | 'changed';

/**
 * `current`: nothing to do (not KMS-sealed, sealed by the newest version already, or sealed by a
 * deleted key, which nothing can open any more);
 * `changed`: the version's sealed key changed meanwhile, so nothing was written.
 */
export async function rewrapVersion(objects: ObjectLayer, kms: Kms, info: ObjectInfo): Promise<RewrapOutcome> {
  const record = info.encryption;
  if (!record || record.kind === 'SSE-C' || info.deleteMarker) return 'current';
  const context = sealContext(record.kind, info.bucket, info.key, record.context);
  const next = await kms.rewrapDataKey(record.keyId, Buffer.from(record.sealedKey, 'base64'), context).catch((error: unknown) => {
    if (error instanceof SvcError && error.code === 'KMS.NotFoundException' && error.details.deleted === true) return undefined;
    throw error;
  });
  if (!next) return 'current';
  const sealedKey = Buffer.from(next).toString('base64');
  const updated = await objects.updateVersionMetadata(info.bucket, info.key, info.versionId, (version) =>
    version.encryption && version.encryption.sealedKey === record.sealedKey ? { encryption: { ...version.encryption, sealedKey } } : {},
  );
  return updated.encryption?.sealedKey === sealedKey ? 'rewrapped' : 'changed';
}
