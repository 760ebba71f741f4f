/**
 * How a transitioned version shows in S3 answers: its storage class is its tier's name (HEAD,
 * GET, listings, GetObjectAttributes), and while a restored copy is on the drives HEAD says so
 * with `x-amz-restore` as AWS does (`ongoing-request="false", expiry-date="..."`).
 */
import type { ObjectInfo } from '../../object/index.js';

export function shownStorageClass(info: Pick<ObjectInfo, 'storageClass' | 'transition'>): string {
  return info.transition?.tier ?? info.storageClass;
}

export function restoreHeader(info: Pick<ObjectInfo, 'transition'>): Record<string, string> {
  const expiryMs = info.transition?.restoreExpiryMs;
  return expiryMs === undefined ? {} : { 'x-amz-restore': `ongoing-request="false", expiry-date="${new Date(expiryMs).toUTCString()}"` };
}
