/**
 * PUT and GET of encrypted objects over the object layer (docs/encryption.md). A PUT seals the
 * body into packages as it streams (before erasure coding, so bitrot hashes cover ciphertext)
 * while the client's digests are taken over the plaintext; a GET reads only the stored bytes of
 * the packages its range touches and opens them. The object layer sees sealed bytes only.
 */
import type { EncryptionInfo, EncryptionKeyRecord } from '../../format/xl-meta-types.js';
import { cipherRangeOf, openStream, partPackageKey, plainSizeOf, sealStream, sealedSizeBytes, type PackageKey } from '../../format/sse-packages.js';
import { SvcError } from '../../errors/index.js';
import { BodyDigests, readBuffers, StreamDigests, type BlockCoding, type DigestAlgorithm, type DigestValues, type GetObjectOptions, type ReceivedBody, type ObjectInfo, type ObjectLayer, type ObjectReader, type PutOptions } from '../../object/index.js';
import type { Kms } from '../kms/kms.js';
import { checkObjectSecrets, clientEtag, newObjectKey, openObjectKey, type SseRequest, type SseSecrets } from './object-keys.js';

/** The digests of a plaintext: on the event loop, or where the set codes its blocks. */
interface PlainDigests {
  update(chunk: Uint8Array): void | Promise<void>;
  finish(): DigestValues | Promise<DigestValues>;
  discard(): void;
}

/** Passes `source` on while `digests` sees every byte. */
async function* tapped(source: AsyncIterable<Uint8Array>, digests: PlainDigests, counter: { bytes: number }): AsyncGenerator<Uint8Array> {
  for await (const chunk of source) {
    await digests.update(chunk);
    counter.bytes += chunk.length;
    yield chunk;
  }
}

/**
 * The plaintext side of a body on its way into a sealer: `source` feeds the sealer while the
 * digests in `algorithms` are taken (on `coding`'s threads when given, else on the event loop);
 * `beforeCommit` (for the object layer, which sees sealed bytes) checks the stored size against
 * the plaintext received and hands the caller's own `beforeCommit` the plaintext's size and
 * digests; `plain()` gives them afterwards; `discard()` drops the digests of a failed put.
 */
export function plaintextTap<R>(body: AsyncIterable<Uint8Array>, algorithms: readonly DigestAlgorithm[], beforeCommit: ((received: ReceivedBody) => R) | undefined, coding?: BlockCoding) {
  const digests: PlainDigests = coding ? new StreamDigests(coding, algorithms) : Object.assign(new BodyDigests(algorithms), { discard: () => undefined });
  const received = { bytes: 0 };
  let values: DigestValues | undefined;
  return {
    source: tapped(body, digests, received),
    discard: () => digests.discard(),
    beforeCommit: async (stored: ReceivedBody): Promise<Awaited<R> | undefined> => {
      if (plainSizeOf(stored.sizeBytes) !== received.bytes) throw new SvcError('InternalError', 'sealed size does not match the plaintext received');
      values = await digests.finish();
      return await beforeCommit?.({ md5Hex: values.md5, sizeBytes: received.bytes, digests: values });
    },
    plain: (): { sizeBytes: number; digests: DigestValues } => {
      if (!values) throw new SvcError('InternalError', 'the plaintext digests are read before the body was stored');
      return { sizeBytes: received.bytes, digests: values };
    },
  };
}

/** Where the set codes its blocks (its coding threads, when it has them): there the digests of a client's bytes are taken too. */
export function codingOf(objects: ObjectLayer): BlockCoding | undefined {
  return objects.allSets()[0]?.config.coding;
}

/**
 * Stores `body` encrypted as asked. `options.sizeBytes` and the digests `beforeCommit` sees are
 * the plaintext's (the client's); the stored size is derived from it.
 */
export async function putEncrypted(objects: ObjectLayer, kms: Kms | undefined, sse: SseRequest, bucket: string, key: string, body: AsyncIterable<Uint8Array>, options: PutOptions): Promise<ObjectInfo> {
  const { packageKey, record } = await newObjectKey(kms, sse, bucket, key);
  const { beforeCommit, digests: algorithms, sizeBytes, etag, ...rest } = options;
  // The plaintext's digests are taken where the set codes its blocks, as a plain PUT's are.
  const tap = plaintextTap(body, algorithms ?? [], beforeCommit, codingOf(objects));
  try {
    return await objects.putObject(bucket, key, sealStream(tap.source, packageKey, 1), {
      ...rest,
      ...(sizeBytes !== undefined ? { sizeBytes: sealedSizeBytes(sizeBytes) } : {}),
      // The ETag is the plaintext's (or made from it): the sealed bytes' MD5 would be no one's.
      skipStoredMd5: true,
      beforeCommit: tap.beforeCommit,
      sealing: () => {
        const plain = tap.plain();
        return { etag: etag ?? clientEtag(record.kind, packageKey, plain.digests.md5), encryption: { ...record, plainSizeBytes: plain.sizeBytes, plainParts: [{ number: 1, sizeBytes: plain.sizeBytes }] } };
      },
    });
  } catch (error) {
    tap.discard();
    throw error;
  }
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
      // A missing or wrong customer key is refused here, before the read starts (the lock is then released at once).
      checkObjectSecrets(info.encryption, bucket, key, secrets ?? {});
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
    // The sealed chunks go back to the reader as soon as their packages are opened; the plaintext
    // is gathered into the GET's reused buffers, handed back by the consumer once written.
    body: openStream(reader.body, partKeys(packageKey!, reader.info.encryption), read!, (chunk) => reader.release(chunk), (lengthBytes) => readBuffers.acquire(lengthBytes)),
    release: (chunk) => readBuffers.release(chunk),
  };
}

/** The package key of each part: a multipart part's own (from its salt), else the version's. */
export function partKeys(key: PackageKey, encryption: EncryptionInfo): (partNumber: number) => PackageKey {
  const keys = new Map<number, PackageKey>();
  for (const part of encryption.plainParts) if (part.keySalt !== undefined) keys.set(part.number, partPackageKey(key, Buffer.from(part.keySalt, 'base64')));
  return (partNumber) => keys.get(partNumber) ?? key;
}

/** The response headers AWS sends for an encrypted object (or an upload that will make one). */
export function encryptionHeaders(encryption: EncryptionKeyRecord | undefined, customerKeyMd5?: string): Record<string, string> {
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
