/**
 * Request headers that ask for something this server does not do, refused before anything is
 * read or stored: a client that asked for encryption or for others to be granted access must
 * never be told it got it.
 */
import { SvcError } from '../../errors/index.js';
import type { S3Endpoint } from './router.js';
import { refuseMisplacedEncryption } from './sse-headers.js';

type Headers = Record<string, string | string[] | undefined>;

/**
 * Server-side encryption in any form (SSE-S3, SSE-KMS, SSE-C, and the copy source's SSE-C key)
 * is answered NotImplemented where a request takes it and this server does not encrypt it yet
 * (POST form uploads).
 */
export function refuseEncryption(headers: Headers): void {
  const asked = Object.keys(headers).filter((name) => /^x-amz-(copy-source-)?server-side-encryption/.test(name)).sort();
  if (asked.length === 0) return;
  throw new SvcError('NotImplemented', `Server-side encryption is not supported by this server; nothing was stored or read. Remove ${asked.join(', ')}.`, { headers: asked });
}

/**
 * A write this server cannot encrypt yet (a multipart upload, a POST form) into a bucket whose
 * default encryption asks for it is refused rather than stored in the clear.
 */
export async function refuseUnencryptableWrite(objects: { bucketRecord(bucket: string): Promise<{ encryption?: unknown } | undefined> }, bucket: string, what: string): Promise<void> {
  if ((await objects.bucketRecord(bucket))?.encryption === undefined) return;
  throw new SvcError('NotImplemented', `The bucket's default encryption cannot be applied to ${what} by this server yet; nothing was stored.`, { bucket });
}

/** Canned ACLs that grant nothing beyond the owner (the only user there is). */
const ownerOnlyAcls = new Set(['private', 'bucket-owner-full-control', 'bucket-owner-read']);

/**
 * A canned ACL other than the owner-only ones, or any `x-amz-grant-*` header naming someone
 * other than the owner, is refused with AccessControlListNotSupported.
 */
export function refuseAclHeaders(headers: Headers, ownerId: string): void {
  const canned = headers['x-amz-acl'];
  const value = Array.isArray(canned) ? canned.join(',') : canned;
  if (value !== undefined && !ownerOnlyAcls.has(value.trim())) {
    throw new SvcError('AccessControlListNotSupported', `The canned ACL '${value}' would grant access to others; only private is accepted.`);
  }
  for (const [name, raw] of Object.entries(headers)) {
    if (!name.startsWith('x-amz-grant-') || raw === undefined) continue;
    const grantees = (Array.isArray(raw) ? raw.join(',') : raw).split(',').map((item) => item.trim()).filter((item) => item !== '');
    const others = grantees.filter((grantee) => grantee.replace(/"/g, '') !== `id=${ownerId}`);
    if (others.length > 0) throw new SvcError('AccessControlListNotSupported', `${name} grants access to ${others.join(', ')}; only the owner can hold access here.`);
  }
}

const writesObjects = new Set<S3Endpoint['kind']>(['PutObject', 'CopyObject', 'CreateMultipartUpload', 'CreateBucket', 'PutObjectAcl', 'PutBucketAcl']);

/** The guards every request goes through once routed. */
export function guardRequest(endpoint: S3Endpoint, headers: Headers, ownerId: string): void {
  refuseMisplacedEncryption(endpoint, headers);
  if (writesObjects.has(endpoint.kind)) refuseAclHeaders(headers, ownerId);
}
