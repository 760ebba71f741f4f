/**
 * A write that carries another deployment's version (bucket replication, docs/replication.md): the
 * replica headers name the source's version id and modification time, which the version keeps
 * here, and its ETag. Only a caller holding s3:ReplicateObject (s3:ReplicateDelete for a delete
 * marker) on the key may send them; the version is stored with replication status REPLICA.
 */
import { isSvcError, SvcError } from '../../errors/index.js';
import { versionLock } from '../../object/index.js';
import { replicaHeaders, replicationStatusKey } from '../../ops/replication/types.js';
import { headerValue, type S3Context, type S3Request } from './context.js';

export interface ReplicaWrite {
  versionId: string;
  modTimeMs: number;
  etag?: string;
}

/** The replica a request writes, checked and authorised; undefined for an ordinary write. */
export async function replicaWriteOf(request: S3Request, bucket: string, key: string, action: 's3:ReplicateObject' | 's3:ReplicateDelete'): Promise<ReplicaWrite | undefined> {
  const versionId = headerValue(request.headers, replicaHeaders.versionId);
  const modTime = headerValue(request.headers, replicaHeaders.modTimeMs);
  const etag = headerValue(request.headers, replicaHeaders.etag);
  if (versionId === undefined && modTime === undefined && etag === undefined) return undefined;
  await request.authorize?.(action, bucket, key);
  if (versionId === undefined || !/^[A-Za-z0-9._-]{1,128}$/.test(versionId) || versionId === 'null') {
    throw new SvcError('InvalidArgument', `${replicaHeaders.versionId} must name the source's version (1 to 128 letters, digits and ._-, not null).`, { argumentName: replicaHeaders.versionId });
  }
  const modTimeMs = Number(modTime);
  if (modTime === undefined || !/^\d{1,15}$/.test(modTime) || modTimeMs <= 0) {
    throw new SvcError('InvalidArgument', `${replicaHeaders.modTimeMs} must be the source version's modification time in milliseconds.`, { argumentName: replicaHeaders.modTimeMs });
  }
  if (etag !== undefined && !/^[0-9a-f]{32}(-\d{1,5})?$/.test(etag)) throw new SvcError('InvalidArgument', `${replicaHeaders.etag} must be an S3 ETag without quotes.`, { argumentName: replicaHeaders.etag });
  return { versionId, modTimeMs, ...(etag !== undefined ? { etag } : {}) };
}

/** What the object layer is told for a replica PUT: the source's version id, time and ETag, and status REPLICA. */
export function replicaPutOptions(replica: ReplicaWrite, systemMetadata: Record<string, string>): { versionId: string; modTimeMs: number; etag?: string; systemMetadata: Record<string, string> } {
  return { versionId: replica.versionId, modTimeMs: replica.modTimeMs, ...(replica.etag !== undefined ? { etag: replica.etag } : {}), systemMetadata: { ...systemMetadata, [replicationStatusKey]: 'REPLICA' } };
}

/**
 * A replica that replaces a version the target holds under COMPLIANCE retention must keep that
 * retention at least as long: replication never shortens what object lock promises here.
 */
export async function checkReplacedLock(context: S3Context, bucket: string, key: string, replica: ReplicaWrite, systemMetadata: Record<string, string>): Promise<void> {
  const existing = await context.objects.headObject(bucket, key, replica.versionId).catch((error: unknown) => {
    if (isSvcError(error, 'NoSuchKey') || isSvcError(error, 'NoSuchVersion') || isSvcError(error, 'MethodNotAllowed')) return undefined;
    throw error;
  });
  const held = existing ? versionLock(existing).retention : undefined;
  if (!held || held.mode !== 'COMPLIANCE' || held.retainUntilMs <= context.nowMs()) return;
  const next = versionLock({ systemMetadata }).retention;
  if (next?.mode !== 'COMPLIANCE' || next.retainUntilMs < held.retainUntilMs) {
    throw new SvcError('AccessDenied', `Access Denied: version ${replica.versionId} is under COMPLIANCE retention here, which a replica may not shorten.`, { bucket, key });
  }
}
