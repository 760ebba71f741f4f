/**
 * Server-side encryption headers as AWS defines them: which operation takes which, and what a
 * write or a read asks for. Every bad combination is a named error before anything is read or
 * stored (docs/encryption.md).
 */
import { createHash } from 'node:crypto';
import { SvcError } from '../../errors/index.js';
import type { SseRequest } from '../../ops/sse/object-keys.js';
import type { S3Endpoint } from './router.js';

type Headers = Record<string, string | string[] | undefined>;

const sse = 'x-amz-server-side-encryption';
const kmsKeyId = 'x-amz-server-side-encryption-aws-kms-key-id';
const kmsContext = 'x-amz-server-side-encryption-context';
const bucketKeyEnabled = 'x-amz-server-side-encryption-bucket-key-enabled';
const customer = (prefix: string) => ({
  algorithm: `${prefix}server-side-encryption-customer-algorithm`,
  key: `${prefix}server-side-encryption-customer-key`,
  keyMd5: `${prefix}server-side-encryption-customer-key-md5`,
});

const one = (headers: Headers, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** Operations that take each kind of header (others refuse them by name). */
const takesWriteSse = new Set<S3Endpoint['kind']>(['PutObject', 'CopyObject', 'CreateMultipartUpload']);
const takesCustomerKey = new Set<S3Endpoint['kind']>(['PutObject', 'GetObject', 'HeadObject', 'CopyObject', 'CreateMultipartUpload', 'UploadPart', 'UploadPartCopy', 'CompleteMultipartUpload']);
const takesCopySourceKey = new Set<S3Endpoint['kind']>(['CopyObject', 'UploadPartCopy']);

/** Refuses SSE headers an operation does not take (InvalidArgument), before anything is read or stored. */
export function refuseMisplacedEncryption(endpoint: S3Endpoint, headers: Headers): void {
  const asked = Object.keys(headers).filter((name) => /^x-amz-(copy-source-)?server-side-encryption/.test(name)).sort();
  if (asked.length === 0) return;
  const allowed = new Set<string>();
  if (takesWriteSse.has(endpoint.kind)) [sse, kmsKeyId, kmsContext, bucketKeyEnabled].forEach((name) => allowed.add(name));
  if (takesCustomerKey.has(endpoint.kind)) Object.values(customer('x-amz-')).forEach((name) => allowed.add(name));
  if (takesCopySourceKey.has(endpoint.kind)) Object.values(customer('x-amz-copy-source-')).forEach((name) => allowed.add(name));
  const misplaced = asked.filter((name) => !allowed.has(name));
  if (misplaced.length > 0) throw new SvcError('InvalidArgument', `${misplaced.join(', ')} cannot be used with ${endpoint.kind}.`, { headers: misplaced });
}

/** The SSE-C key of a request (or its copy source with prefix `x-amz-copy-source-`), checked; undefined when none is sent. */
export function customerKeyOf(headers: Headers, options: { secure: boolean; allowInsecure: boolean }, prefix = 'x-amz-'): { key: Buffer; keyMd5: string } | undefined {
  const names = customer(prefix);
  const algorithm = one(headers, names.algorithm);
  const encoded = one(headers, names.key);
  const md5 = one(headers, names.keyMd5);
  if (algorithm === undefined && encoded === undefined && md5 === undefined) return undefined;
  if (!options.secure && !options.allowInsecure) {
    throw new SvcError('InvalidRequest', 'Requests specifying Server Side Encryption with Customer provided keys must be made over a secure connection.');
  }
  if (algorithm === undefined) throw new SvcError('InvalidArgument', 'Requests specifying Server Side Encryption with Customer provided keys must provide a valid encryption algorithm.', { header: names.algorithm });
  if (algorithm !== 'AES256') throw new SvcError('InvalidEncryptionAlgorithmError', 'The encryption request you specified is not valid. The valid value is AES256.', { header: names.algorithm });
  if (encoded === undefined) throw new SvcError('InvalidArgument', 'Requests specifying Server Side Encryption with Customer provided keys must provide an appropriate secret key.', { header: names.key });
  if (md5 === undefined) throw new SvcError('InvalidArgument', 'Requests specifying Server Side Encryption with Customer provided keys must provide the client calculated MD5 of the secret key.', { header: names.keyMd5 });
  const key = /^[A-Za-z0-9+/]+={0,2}$/.test(encoded) ? Buffer.from(encoded, 'base64') : Buffer.alloc(0);
  if (key.length !== 32) throw new SvcError('InvalidArgument', 'The secret key was invalid for the specified algorithm.', { header: names.key });
  const keyMd5 = createHash('md5').update(key).digest('base64');
  if (keyMd5 !== md5) throw new SvcError('InvalidArgument', 'The calculated MD5 hash of the key did not match the hash that was provided.', { header: names.keyMd5 });
  return { key, keyMd5 };
}

/** What a write asks for: SSE-S3, SSE-KMS (key id, context), SSE-C, or nothing. */
export function writeEncryptionOf(headers: Headers, options: { secure: boolean; allowInsecure: boolean }): (SseRequest & { customerKeyMd5?: string }) | undefined {
  const algorithm = one(headers, sse);
  const keyId = one(headers, kmsKeyId);
  const context = one(headers, kmsContext);
  const customerKey = customerKeyOf(headers, options);
  if (customerKey && algorithm !== undefined) throw new SvcError('InvalidArgument', `Server Side Encryption with Customer provided keys cannot be combined with ${sse}.`, { header: sse });
  if (customerKey) return { kind: 'SSE-C', customerKey: customerKey.key, customerKeyMd5: customerKey.keyMd5 };
  if ((keyId !== undefined || context !== undefined) && algorithm !== 'aws:kms') {
    throw new SvcError('InvalidArgument', `${keyId !== undefined ? kmsKeyId : kmsContext} is only valid with ${sse}: aws:kms.`, { header: keyId !== undefined ? kmsKeyId : kmsContext });
  }
  if (algorithm === undefined) return undefined;
  if (algorithm === 'AES256') return { kind: 'SSE-S3' };
  if (algorithm !== 'aws:kms') throw new SvcError('InvalidArgument', `The encryption method specified is not supported: ${sse} must be AES256 or aws:kms.`, { header: sse });
  return { kind: 'SSE-KMS', ...(keyId !== undefined ? { keyId: kmsKeyIdOf(keyId) } : {}), ...(context !== undefined ? { context: encryptionContextOf(context) } : {}) };
}

/** A key id as sent: a bare name, or an ARN whose last `key/` part is the name. */
export function kmsKeyIdOf(value: string): string {
  const trimmed = value.trim();
  const name = trimmed.startsWith('arn:') ? trimmed.slice(trimmed.lastIndexOf('key/') + 4) : trimmed;
  if (name === '' || trimmed.startsWith('arn:') && !trimmed.includes('key/')) throw new SvcError('KMS.NotFoundException', `Invalid keyId ${value}`, { keyId: value });
  return name;
}

/** The encryption context header: base64 of a JSON object of strings. */
function encryptionContextOf(value: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value, 'base64').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const valid = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && Object.values(parsed).every((entry) => typeof entry === 'string');
  if (!valid) throw new SvcError('InvalidArgument', `${kmsContext} must be base64 of a JSON object whose values are strings.`, { header: kmsContext });
  return parsed as Record<string, string>;
}
