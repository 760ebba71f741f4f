/**
 * Request headers that ask for something this server does not do, refused before anything is
 * read or stored: a client that asked for encryption must never be told it got it.
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

/** The guards every request goes through once routed (ACLs are checked by the handlers that take them, against the bucket). */
export function guardRequest(endpoint: S3Endpoint, headers: Headers, _ownerId: string): void {
  refuseMisplacedEncryption(endpoint, headers);
}
