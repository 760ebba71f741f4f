/**
 * Multipart uploads stored compressed (docs/compression.md, "Multipart uploads"). Whether an
 * upload compresses is decided at CreateMultipartUpload, as for a PutObject of the same key and
 * type, and kept in the upload's record. Each part is then cut into 1 MiB blocks of its own and
 * compressed as a PUT's body is, then sealed under the part's own key when the upload is
 * encrypted (src/ops/sse/encrypted-multipart.ts). The part's record keeps the client's size, ETag
 * and checksum beside its blocks' stored lengths; completion lists every part's blocks in the
 * object's record, so ranges and `partNumber` read only the blocks they need.
 */
import { randomBytes } from 'node:crypto';
import { compressionAlgorithm } from '../../format/compressed-blocks.js';
import { partKeySaltBytes, partPackageKey, sealStream, type PackageKey } from '../../format/sse-packages.js';
import type { CompressionInfo } from '../../format/xl-meta-types.js';
import type { ObjectLayer, PartOptions, UploadRecord, UploadedPart } from '../../object/index.js';
import type { Kms } from '../kms/kms.js';
import { checkUploadSecrets, newUploadKey, partSealer, type PartSealer } from '../sse/encrypted-multipart.js';
import { clientEtag, openObjectKey, type KeyRecord, type SseSecrets } from '../sse/object-keys.js';
import { codingOf } from '../sse/encrypted-objects.js';
import { compressingTap, type StoreAs } from './compressed-objects.js';

/** What a new upload's record keeps of how its parts are stored. */
export interface UploadStorage {
  encryption?: KeyRecord;
  compression?: CompressionInfo['algorithm'];
}

/**
 * How a new upload of bucket/key stores its parts, as `as` says: its data key is made (and
 * sealed) now, so an unknown or disabled KMS key is refused before any part is sent.
 */
export async function newUploadStorage(kms: Kms | undefined, as: StoreAs, bucket: string, key: string): Promise<UploadStorage> {
  const encryption = as.sse ? await newUploadKey(kms, as.sse, bucket, key) : undefined;
  return { ...(encryption ? { encryption } : {}), ...(as.compress ? { compression: compressionAlgorithm } : {}) };
}

/**
 * Stores the parts of `record` as its upload says: compressed, then sealed, or only one of the
 * two, or as sent. `secrets` are checked (and the upload's key opened) before any byte is read.
 */
export async function partUploader(objects: ObjectLayer, kms: Kms | undefined, record: UploadRecord, secrets: SseSecrets): Promise<PartSealer> {
  if (!record.compression) return partSealer(objects, kms, record, secrets);
  checkUploadSecrets(record, secrets, { keyRequired: true });
  const objectKey = record.encryption ? await openObjectKey(kms, record.encryption, record.bucket, record.key, secrets) : undefined;
  return { upload: (partNumber, body, options) => uploadCompressedPart(objects, record, objectKey, partNumber, body, options) };
}

async function uploadCompressedPart(objects: ObjectLayer, record: UploadRecord, objectKey: PackageKey | undefined, partNumber: number, body: AsyncIterable<Uint8Array>, options: PartOptions): Promise<UploadedPart> {
  const kept = record.checksum?.algorithm;
  const { beforeCommit, digests: algorithms, sizeBytes, ...rest } = options;
  // The upload's checksum is of the client's bytes: taken before they are compressed.
  const tap = compressingTap(body, [...(algorithms ?? []), ...(kept !== undefined ? [kept] : [])], sizeBytes, codingOf(objects));
  const salt = objectKey ? randomBytes(partKeySaltBytes) : undefined;
  const stored = objectKey && salt ? sealStream(tap.stored, partPackageKey(objectKey, salt), partNumber) : tap.stored;
  try {
    return await objects.uploadPart(record.bucket, record.key, record.uploadId, partNumber, stored, {
      ...rest,
      beforeCommit: async () => {
        const client = await tap.finish(); // taken even when the caller has no beforeCommit: the ETag needs it
        return beforeCommit?.(client);
      },
      transformed: () => {
        const client = tap.received();
        const etag = objectKey ? clientEtag(record.encryption!.kind, objectKey, client.md5Hex, `part.${partNumber}`) : client.md5Hex;
        return { sizeBytes: client.sizeBytes, etag, digests: client.digests, compressedBlocks: tap.index.blocks, ...(salt ? { keySalt: salt.toString('base64') } : {}) };
      },
    });
  } catch (error) {
    tap.discard();
    throw error;
  }
}
