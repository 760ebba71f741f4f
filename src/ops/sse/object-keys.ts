/**
 * Per-version data keys (docs/encryption.md): 32 random bytes and a 12-byte nonce base, sealed
 * by a KMS key (SSE-S3, SSE-KMS) or by the client's key (SSE-C), bound to the object's bucket and
 * key. Only the sealed form is stored; for SSE-C an HMAC keyed by the customer key recognises it
 * later, and the key itself is never stored.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { SvcError } from '../../errors/index.js';
import type { EncryptionKeyRecord, EncryptionKind } from '../../format/xl-meta-types.js';
import { dataKeyBytes, nonceBaseBytes, type PackageKey } from '../../format/sse-packages.js';
import { deriveKey, sealKey, unsealKey } from '../../format/sealed-key.js';
import type { Kms } from '../kms/kms.js';

/** What the client asked for on a write (parsed and checked by the API layer). */
export type SseRequest =
  | { kind: 'SSE-S3' }
  | { kind: 'SSE-KMS'; keyId?: string; context?: Record<string, string> }
  | { kind: 'SSE-C'; customerKey: Buffer };

/** The secrets a read needs besides the stored record: the customer key for SSE-C. */
export interface SseSecrets {
  customerKey?: Buffer;
}

/** The encryption record without its sizes (known once the body is in). */
export type KeyRecord = EncryptionKeyRecord;

const cipher = 'aes-256-gcm-64k-v1' as const;

export function sealContext(kind: EncryptionKind, bucket: string, key: string, context: Record<string, string> | undefined): string {
  const ordered = context ? JSON.stringify(Object.fromEntries(Object.entries(context).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))) : '';
  return `${kind}|${bucket}/${key}|${ordered}`;
}

function customerKek(customerKey: Buffer): Buffer {
  return deriveKey(customerKey, 'svc-ssec-kek');
}

function customerKeyHmac(customerKey: Buffer, bucket: string, key: string): string {
  return createHmac('sha256', customerKey).update(`svc-ssec-check|${bucket}/${key}`, 'utf8').digest('base64');
}

export function requireKms(kms: Kms | undefined): Kms {
  if (!kms) throw new SvcError('KMSNotConfigured');
  return kms;
}

/** A new data key for one version of bucket/key, and its sealed record. */
export async function newObjectKey(kms: Kms | undefined, request: SseRequest, bucket: string, key: string): Promise<{ packageKey: PackageKey; record: KeyRecord }> {
  const dataKey = randomBytes(dataKeyBytes);
  const nonceBase = randomBytes(nonceBaseBytes);
  const secret = Buffer.concat([dataKey, nonceBase]);
  const packageKey = { dataKey, nonceBase };
  if (request.kind === 'SSE-C') {
    const sealed = sealKey(customerKek(request.customerKey), secret, sealContext('SSE-C', bucket, key, undefined));
    return { packageKey, record: { kind: 'SSE-C', cipher, keyId: '', sealedKey: sealed.toString('base64'), customerKeyHmac: customerKeyHmac(request.customerKey, bucket, key) } };
  }
  const service = requireKms(kms);
  const keyId = request.kind === 'SSE-KMS' ? (request.keyId ?? service.defaultKeyId) : service.defaultKeyId;
  const context = request.kind === 'SSE-KMS' ? request.context : undefined;
  const sealed = await service.sealDataKey(keyId, secret, sealContext(request.kind, bucket, key, context));
  return { packageKey, record: { kind: request.kind, cipher, keyId, sealedKey: Buffer.from(sealed).toString('base64'), ...(context ? { context } : {}) } };
}

/** Whether `customerKey` is the SSE-C key `record` was sealed with (by its keyed hash, in constant time). */
export function customerKeyMatches(record: KeyRecord, bucket: string, key: string, customerKey: Buffer): boolean {
  const expected = Buffer.from(record.customerKeyHmac ?? '', 'base64');
  const given = Buffer.from(customerKeyHmac(customerKey, bucket, key), 'base64');
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/**
 * The secrets a read of a version needs, checked without unsealing anything (so a refusal comes
 * before any lock or byte): an SSE-C version needs its customer key, and no other takes one.
 */
export function checkObjectSecrets(record: KeyRecord, bucket: string, key: string, secrets: SseSecrets): void {
  if (record.kind === 'SSE-C') {
    if (!secrets.customerKey) throw new SvcError('InvalidRequest', 'The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.');
    if (!customerKeyMatches(record, bucket, key, secrets.customerKey)) throw new SvcError('AccessDenied', 'The customer key is not the one the object was encrypted with.');
  } else if (secrets.customerKey) {
    throw new SvcError('InvalidRequest', 'The encryption parameters are not applicable to this object: it is not encrypted with a customer key.');
  }
}

/**
 * The data key of a stored version. SSE-C: no key is InvalidRequest (400) and a key other than
 * the one it was written with is AccessDenied (403), as AWS answers; a KMS that cannot unseal it
 * is KMSKeyUnsealFailed.
 */
export async function openObjectKey(kms: Kms | undefined, record: KeyRecord, bucket: string, key: string, secrets: SseSecrets): Promise<PackageKey> {
  let secret: Buffer | undefined;
  const sealed = Buffer.from(record.sealedKey, 'base64');
  checkObjectSecrets(record, bucket, key, secrets);
  if (record.kind === 'SSE-C') {
    secret = unsealKey(customerKek(secrets.customerKey!), sealed, sealContext('SSE-C', bucket, key, undefined));
    if (!secret) throw new SvcError('ObjectTampered', 'the sealed key of this object does not open with the customer key that matches it');
  } else {
    secret = await requireKms(kms).unsealDataKey(record.keyId, sealed, sealContext(record.kind, bucket, key, record.context));
  }
  if (secret.length !== dataKeyBytes + nonceBaseBytes) throw new SvcError('ObjectTampered', 'the unsealed data key has the wrong length');
  return { dataKey: secret.subarray(0, dataKeyBytes), nonceBase: secret.subarray(dataKeyBytes) };
}

/**
 * The ETag the client sees for bytes whose MD5 is `md5Hex`: the MD5 itself for SSE-S3 (as AWS
 * answers), and for SSE-KMS and SSE-C an opaque value (HMAC-SHA256 keyed by the data key, cut to
 * 16 bytes) that says nothing of the plaintext to whoever lacks the key.
 */
export function clientEtag(kind: EncryptionKind, key: PackageKey, md5Hex: string, label = 'object'): string {
  if (kind === 'SSE-S3') return md5Hex;
  return createHmac('sha256', key.dataKey).update(`svc-etag|${label}|${md5Hex}`, 'utf8').digest('hex').slice(0, 32);
}
