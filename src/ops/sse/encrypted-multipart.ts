/**
 * Encrypted multipart uploads (docs/encryption.md, "Multipart uploads"). CreateMultipartUpload
 * makes the object's data key and keeps it sealed in the upload's record (for SSE-C with the
 * keyed hash that recognises the customer's key, never the key). Each part is sealed under its
 * own key, derived from the data key and a salt drawn for that upload of that part, with its part
 * number in every package's nonce and authenticated data: parts cannot be swapped, and a part
 * sent again never reuses a nonce. The part record keeps the client's size and ETag; completion
 * writes the object's `encryption` with every part's plaintext size and salt.
 */
import { randomBytes } from 'node:crypto';
import { SvcError } from '../../errors/index.js';
import { partKeySaltBytes, partPackageKey, sealStream, sealedSizeBytes, type PackageKey } from '../../format/sse-packages.js';
import type { ObjectLayer, PartOptions, UploadRecord, UploadedPart } from '../../object/index.js';
import type { Kms } from '../kms/kms.js';
import { clientEtag, customerKeyMatches, newObjectKey, openObjectKey, type KeyRecord, type SseRequest, type SseSecrets } from './object-keys.js';
import { codingOf, plaintextTap } from './encrypted-objects.js';

/** The sealed key record of a new encrypted upload of bucket/key. */
export async function newUploadKey(kms: Kms | undefined, sse: SseRequest, bucket: string, key: string): Promise<KeyRecord> {
  return (await newObjectKey(kms, sse, bucket, key)).record;
}

/**
 * Checks the customer key a request about an upload sends (UploadPart, UploadPartCopy,
 * CompleteMultipartUpload): an SSE-C upload's part requests must repeat its key, and no other
 * upload takes one. Nothing is read or stored before this passes.
 */
export function checkUploadSecrets(record: UploadRecord, secrets: SseSecrets, options: { keyRequired: boolean }): void {
  const encryption = record.encryption;
  if (encryption?.kind !== 'SSE-C') {
    if (secrets.customerKey) throw new SvcError('InvalidRequest', 'The multipart upload was not initiated with a customer-provided key (SSE-C): its requests must not send one.');
    return;
  }
  if (!secrets.customerKey) {
    if (!options.keyRequired) return;
    throw new SvcError('InvalidRequest', 'The multipart upload was initiated with a customer-provided key (SSE-C): every part request must send that key.');
  }
  if (!customerKeyMatches(encryption, record.bucket, record.key, secrets.customerKey)) {
    throw new SvcError('InvalidRequest', 'The customer-provided key does not match the one the multipart upload was initiated with.');
  }
}

/** Seals the parts of one upload: made once its key is open, before any byte of a part is read. */
export interface PartSealer {
  upload(partNumber: number, body: AsyncIterable<Uint8Array>, options: PartOptions): Promise<UploadedPart>;
}

/**
 * A sealer of parts for `record` (checked against `secrets` first). A plain upload's parts are
 * stored as sent.
 */
export async function partSealer(objects: ObjectLayer, kms: Kms | undefined, record: UploadRecord, secrets: SseSecrets): Promise<PartSealer> {
  checkUploadSecrets(record, secrets, { keyRequired: true });
  const { bucket, key, uploadId } = record;
  const encryption = record.encryption;
  if (!encryption) return { upload: (partNumber, body, options) => objects.uploadPart(bucket, key, uploadId, partNumber, body, options) };
  const objectKey = await openObjectKey(kms, encryption, bucket, key, secrets);
  return { upload: (partNumber, body, options) => uploadSealedPart(objects, record, objectKey, partNumber, body, options) };
}

async function uploadSealedPart(objects: ObjectLayer, record: UploadRecord, objectKey: PackageKey, partNumber: number, body: AsyncIterable<Uint8Array>, options: PartOptions): Promise<UploadedPart> {
  const salt = randomBytes(partKeySaltBytes);
  const kept = record.checksum?.algorithm;
  const { beforeCommit, digests: algorithms, sizeBytes, ...rest } = options;
  // The upload's checksum is of the client's bytes: taken over the plaintext too, with its MD5 (the
  // part's ETag), where the set codes its blocks; the object layer takes no digest of the sealed bytes.
  const tap = plaintextTap(body, [...(algorithms ?? []), ...(kept !== undefined ? [kept] : [])], beforeCommit, codingOf(objects));
  try {
    return await objects.uploadPart(record.bucket, record.key, record.uploadId, partNumber, sealStream(tap.source, partPackageKey(objectKey, salt), partNumber), {
      ...rest,
      ...(sizeBytes !== undefined ? { sizeBytes: sealedSizeBytes(sizeBytes) } : {}),
      beforeCommit: tap.beforeCommit,
      transformed: () => {
        const plain = tap.plain();
        return { ...plain, etag: clientEtag(record.encryption!.kind, objectKey, plain.digests.md5, `part.${partNumber}`), keySalt: salt.toString('base64') };
      },
    });
  } catch (error) {
    tap.discard();
    throw error;
  }
}
