/**
 * PUT and GET of encrypted objects over the object layer (docs/encryption.md). A PUT seals the
 * body into packages as it streams (before erasure coding, so bitrot hashes cover ciphertext)
 * while the client's digests are taken over the plaintext; a GET reads only the stored bytes of
 * the packages its range touches and opens them. The object layer sees sealed bytes only.
 */
import type { EncryptionInfo } from '../../format/xl-meta-types.js';
import { cipherRangeOf, openStream, plainSizeOf, sealStream, sealedSizeBytes, type PackageKey } from '../../format/sse-packages.js';
import { SvcError } from '../../errors/index.js';
import { BodyDigests, type DigestValues, type GetObjectOptions, type ObjectInfo, type ObjectLayer, type ObjectReader, type PutOptions } from '../../object/index.js';
import type { Kms } from '../kms/kms.js';
import { newObjectKey, openObjectKey, type SseRequest, type SseSecrets } from './object-keys.js';

/** Passes `source` on while `digests` sees every byte. */
async function* tapped(source: AsyncIterable<Uint8Array>, digests: BodyDigests, counter: { bytes: number }): AsyncGenerator<Uint8Array> {
  for await (const chunk of source) {
    digests.update(chunk);
    counter.bytes += chunk.length;
    yield chunk;
  }
}

/**
 * Stores `body` encrypted as asked. `options.sizeBytes` and the digests `beforeCommit` sees are
 * the plaintext's (the client's); the stored size is derived from it.
 */
export async function putEncrypted(objects: ObjectLayer, kms: Kms | undefined, sse: SseRequest, bucket: string, key: string, body: AsyncIterable<Uint8Array>, options: PutOptions): Promise<ObjectInfo> {
  const { packageKey, record } = await newObjectKey(kms, sse, bucket, key);
  const digests = new BodyDigests(options.digests ?? []);
  const received = { bytes: 0 };
  let plain: DigestValues | undefined;
  const { beforeCommit, digests: _algorithms, sizeBytes, etag, ...rest } = options;
  return objects.putObject(bucket, key, sealStream(tapped(body, digests, received), packageKey, 1), {
    ...rest,
    ...(sizeBytes !== undefined ? { sizeBytes: sealedSizeBytes(sizeBytes) } : {}),
    beforeCommit: async (stored) => {
      if (plainSizeOf(stored.sizeBytes) !== received.bytes) throw new SvcError('InternalError', 'sealed size does not match the plaintext received');
      plain = digests.finish();
      return beforeCommit?.({ md5Hex: plain.md5, sizeBytes: received.bytes, digests: plain });
    },
    sealing: () => ({ etag: etag ?? plain!.md5, encryption: { ...record, plainSizeBytes: received.bytes, plainParts: [{ number: 1, sizeBytes: received.bytes }] } }),
  });
}

/** The data key of an object found encrypted, or undefined for a plain one (refusing SSE-C keys sent for it). */
export async function keyOf(kms: Kms | undefined, info: ObjectInfo, secrets: SseSecrets): Promise<PackageKey | undefined> {
  if (!info.encryption) {
    if (secrets.customerKey) throw new SvcError('InvalidRequest', 'The encryption parameters are not applicable to this object: it is not encrypted.');
    return undefined;
  }
  return openObjectKey(kms, info.encryption, info.bucket, info.key, secrets);
}

/**
 * GET of an object that may be encrypted: `prepare` and `range` speak in plaintext bytes as for
 * any object. The data key is opened (and an SSE-C key checked) before any byte is read.
 */
export async function getDecrypted(objects: ObjectLayer, kms: Kms | undefined, bucket: string, key: string, options: GetObjectOptions & { secrets?: SseSecrets; onKey?: (info: ObjectInfo) => Promise<PackageKey | undefined> }): Promise<ObjectReader> {
  let read: ReturnType<typeof cipherRangeOf> | undefined;
  let packageKey: PackageKey | undefined;
  const { prepare, range, secrets, ...rest } = options;
  // The key is opened in prepare, under the read lock, before any stored byte is read.
  let opening: Promise<void> = Promise.resolve();
  const reader = await objects.getObject(bucket, key, {
    ...rest,
    sealed: true,
    prepare: (info) => {
      const chosen = prepare?.(info) ?? range ?? { offset: 0, length: info.sizeBytes };
      if (!info.encryption) {
        if (secrets?.customerKey) throw new SvcError('InvalidRequest', 'The encryption parameters are not applicable to this object: it is not encrypted.');
        return chosen;
      }
      if (chosen.offset < 0 || chosen.length < 0 || chosen.offset + chosen.length > info.sizeBytes) throw new SvcError('InvalidRange', undefined, { sizeBytes: info.sizeBytes });
      read = cipherRangeOf(info.encryption.plainParts.map((part) => ({ partNumber: part.number, plainSizeBytes: part.sizeBytes })), chosen);
      opening = openObjectKey(kms, info.encryption, bucket, key, secrets ?? {}).then((opened) => void (packageKey = opened));
      return { offset: read.cipherOffset, length: read.cipherLength };
    },
  });
  if (!reader.info.encryption) return reader;
  try {
    await opening;
  } catch (error) {
    await reader.body[Symbol.asyncIterator]().return?.(); // releases the read lock
    throw error;
  }
  const plainInfo = reader.info;
  return {
    info: plainInfo,
    // The sealed chunks go back to the reader as soon as their packages are opened; the plaintext is fresh memory.
    body: openStream(reader.body, packageKey!, read!, (chunk) => reader.release(chunk)),
    release: () => undefined,
  };
}

/** The response headers AWS sends for an encrypted object. */
export function encryptionHeaders(encryption: EncryptionInfo | undefined, customerKeyMd5?: string): Record<string, string> {
  if (!encryption) return {};
  if (encryption.kind === 'SSE-S3') return { 'x-amz-server-side-encryption': 'AES256' };
  if (encryption.kind === 'SSE-KMS') {
    return {
      'x-amz-server-side-encryption': 'aws:kms',
      'x-amz-server-side-encryption-aws-kms-key-id': encryption.keyId,
      ...(encryption.context ? { 'x-amz-server-side-encryption-context': Buffer.from(JSON.stringify(encryption.context)).toString('base64') } : {}),
    };
  }
  return { 'x-amz-server-side-encryption-customer-algorithm': 'AES256', ...(customerKeyMd5 ? { 'x-amz-server-side-encryption-customer-key-md5': customerKeyMd5 } : {}) };
}
