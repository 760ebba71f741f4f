/**
 * PUT and GET of objects that may be compressed and encrypted, over the object layer
 * (docs/compression.md). A compressing PUT cuts the client's body into 1 MiB blocks, compresses
 * each (src/format/compressed-blocks.ts), seals the compressed stream when SSE applies, and
 * stores the result; the client's digests, size and ETag are taken over its own bytes. A GET maps
 * the client's range to the compressed blocks holding it, reads (and opens) only those, and
 * decompresses them.
 */
import { SvcError } from '../../errors/index.js';
import { CompressionIndex, compressedRangeOf, compressStream, decompressStream, type CompressedRead } from '../../format/compressed-blocks.js';
import { sealStream } from '../../format/sse-packages.js';
import { BodyDigests, StreamDigests, type BlockCoding, type DigestAlgorithm, type DigestValues, type GetObjectOptions, type ObjectInfo, type ObjectLayer, type ObjectReader, type PutOptions, type ReceivedBody } from '../../object/index.js';
import { limits } from '../../util/limits.js';
import type { Kms } from '../kms/kms.js';
import { codingOf, getDecrypted, putEncrypted } from '../sse/encrypted-objects.js';
import { clientEtag, newObjectKey, type SseRequest, type SseSecrets } from '../sse/object-keys.js';

/** How a new object is to be stored: encrypted as asked (if at all), compressed or not. */
export interface StoreAs {
  sse?: SseRequest;
  compress: boolean;
}

/** Passes `source` on while `digests` sees every byte; more or fewer bytes than `declared` fail as the object layer's own check does. */
async function* counted(source: AsyncIterable<Uint8Array>, digests: BodyDigests | StreamDigests, received: { bytes: number }, declared: number | undefined): AsyncGenerator<Uint8Array> {
  for await (const chunk of source) {
    await digests.update(chunk);
    received.bytes += chunk.length;
    if (declared !== undefined && received.bytes > declared) throw new SvcError('InvalidRequest', `the body is longer than the declared ${declared} bytes`);
    yield chunk;
  }
  if (declared !== undefined && received.bytes !== declared) throw new SvcError('IncompleteBody', `received ${received.bytes} of ${declared} bytes`);
}

/**
 * The client's body on its way into the compressor: `stored` yields the compressed blocks while
 * the digests in `algorithms` and the size are taken over the client's bytes (on `coding`'s
 * threads when given, else on the event loop; more or fewer than `declared` fail). `finish()`,
 * once the stored bytes are in, takes what the client sent; `received()` gives it afterwards;
 * `discard()` drops the digests of a failed put.
 */
export function compressingTap(body: AsyncIterable<Uint8Array>, algorithms: readonly DigestAlgorithm[], declared: number | undefined, coding?: BlockCoding) {
  const digests = coding ? new StreamDigests(coding, algorithms) : new BodyDigests(algorithms);
  const received = { bytes: 0 };
  const index = new CompressionIndex();
  let plain: Promise<DigestValues> | undefined;
  let client: ReceivedBody | undefined;
  return {
    index,
    stored: compressStream(counted(body, digests, received, declared), index, limits.compressionBlocksInFlight),
    finish: async (): Promise<ReceivedBody> => {
      if (index.plainSizeBytes !== received.bytes) throw new SvcError('InternalError', 'compressed blocks do not match the body received');
      plain ??= Promise.resolve(digests.finish());
      const values = await plain;
      client = { md5Hex: values.md5, sizeBytes: received.bytes, digests: values };
      return client;
    },
    received: (): ReceivedBody => {
      if (!client) throw new SvcError('InternalError', 'the client\'s digests are read before the body was stored');
      return client;
    },
    discard: (): void => {
      if (digests instanceof StreamDigests) digests.discard();
    },
  };
}

/**
 * Stores `body` as asked. `options` speak of the client's bytes (size, digests, ETag); a
 * compressed body's stored size is known only once it is in, so it inlines only when the
 * compressed stream fits the inline budget (the object layer reads ahead to tell).
 */
export async function storeObject(objects: ObjectLayer, kms: Kms | undefined, as: StoreAs, bucket: string, key: string, body: AsyncIterable<Uint8Array>, options: PutOptions): Promise<ObjectInfo> {
  if (!as.compress) return as.sse ? putEncrypted(objects, kms, as.sse, bucket, key, body, options) : objects.putObject(bucket, key, body, options);
  const sealing = as.sse ? await newObjectKey(kms, as.sse, bucket, key) : undefined;
  const { beforeCommit, digests: algorithms, sizeBytes, etag, ...rest } = options;
  const tap = compressingTap(body, algorithms ?? [], sizeBytes, codingOf(objects));
  const stored = sealing ? sealStream(tap.stored, sealing.packageKey, 1) : tap.stored;
  // The client's ETag: the MD5 of its bytes, or for SSE-KMS and SSE-C the opaque value (docs/encryption.md).
  const clientEtagOf = (): string => etag ?? (sealing ? clientEtag(sealing.record.kind, sealing.packageKey, tap.received().md5Hex) : tap.received().md5Hex);
  const index = tap.index;
  try {
    return await objects.putObject(bucket, key, stored, {
      ...rest,
      skipStoredMd5: true, // the ETag is the client's bytes' (the tap gives it)
      beforeCommit: async () => {
        const client = await tap.finish(); // taken even when the caller has no beforeCommit: the ETag needs it
        return beforeCommit?.(client);
      },
      compressing: () => {
        const compression = index.record();
        return { etag: clientEtagOf(), ...(compression ? { compression } : {}) };
      },
      ...(sealing
        ? { sealing: () => ({ etag: clientEtagOf(), encryption: { ...sealing.record, plainSizeBytes: index.storedSizeBytes, plainParts: [{ number: 1, sizeBytes: index.storedSizeBytes }] } }) }
        : {}),
    });
  } catch (error) {
    tap.discard();
    throw error;
  }
}

/**
 * GET of an object that may be encrypted and compressed: `prepare` and `range` speak in the
 * client's bytes as for any object. Only the compressed blocks (and, encrypted, the packages)
 * the range touches are read.
 */
export async function readObject(objects: ObjectLayer, kms: Kms | undefined, bucket: string, key: string, options: GetObjectOptions & { secrets?: SseSecrets }): Promise<ObjectReader> {
  let read: CompressedRead | undefined;
  const { prepare, range, ...rest } = options;
  const reader = await getDecrypted(objects, kms, bucket, key, {
    ...rest,
    prepare: (info) => {
      const chosen = prepare?.(info) ?? range ?? { offset: 0, length: info.sizeBytes };
      if (!info.compression) return chosen;
      read = compressedRangeOf(info.compression, chosen);
      return { offset: read.storedOffset, length: read.storedLength };
    },
  });
  // A read of no bytes (an empty part, by partNumber) decompresses nothing: the stored stream, empty,
  // is handed on as it is, so that reading it to its end releases it (a wrapper never pulled would not).
  if (!read || !reader.info.compression || read.lengthBytes === 0) return reader;
  return {
    info: reader.info,
    // The stored chunks go back to the reader once copied out; the decompressed bytes are fresh memory.
    body: decompressStream(reader.body, reader.info.compression, read, (chunk) => reader.release(chunk)),
    release: () => undefined,
  };
}
