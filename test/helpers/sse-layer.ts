/**
 * Encrypted objects at the object layer, without a server: a built-in KMS over the layer's own
 * drives, encrypted multipart uploads through the same code the S3 handlers call, and reads.
 */
import { randomBytes } from 'node:crypto';
import type { ObjectInfo, ObjectLayer } from '../../src/object/index.js';
import type { Drive } from '../../src/drive/index.js';
import { BuiltinKms, validateKmsDocument, type KmsDocument } from '../../src/ops/kms/builtin-kms.js';
import { StateStore } from '../../src/ops/state-store.js';
import { StateFileQuarantine } from '../../src/cluster/state-quarantine.js';
import { newUploadKey, partSealer } from '../../src/ops/sse/encrypted-multipart.js';
import { getDecrypted } from '../../src/ops/sse/encrypted-objects.js';
import type { SseRequest, SseSecrets } from '../../src/ops/sse/object-keys.js';

export function kmsFor(objects: ObjectLayer): BuiltinKms {
  const store = new StateStore<KmsDocument>({ name: 'kms.bin', magic: 'SVKM', drives: () => objects.allSets().flatMap((set) => set.drives), validate: validateKmsDocument, quarantine: new StateFileQuarantine({ warn: () => undefined }) });
  return new BuiltinKms({ root: { name: 'test-root', key: randomBytes(32) }, store, nowMs: () => Date.now() });
}

/** The secrets a read of an object written with `sse` needs. */
export const secretsFor = (sse: SseRequest): SseSecrets => (sse.kind === 'SSE-C' ? { customerKey: sse.customerKey } : {});

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

/** Uploads `parts` (bodies, in order) as an encrypted multipart upload of bucket/key and completes it. */
export async function putEncryptedMultipart(objects: ObjectLayer, kms: BuiltinKms, bucket: string, key: string, sse: SseRequest, parts: Uint8Array[]): Promise<ObjectInfo> {
  const encryption = await newUploadKey(kms, sse, bucket, key);
  const uploadId = await objects.createMultipartUpload(bucket, key, { storageClass: 'STANDARD', encryption });
  const sealer = await partSealer(objects, kms, await objects.multipartUpload(bucket, key, uploadId), secretsFor(sse));
  const requested = [];
  for (const [index, body] of parts.entries()) {
    const part = await sealer.upload(index + 1, once(body), { sizeBytes: body.length });
    requested.push({ number: index + 1, etag: part.etag });
  }
  return objects.completeMultipartUpload(bucket, key, uploadId, requested);
}

/** The plaintext of a range (the whole object when none) of an encrypted object. */
export async function readDecrypted(objects: ObjectLayer, kms: BuiltinKms, bucket: string, key: string, sse: SseRequest, range?: { offset: number; length: number }): Promise<Buffer> {
  const reader = await getDecrypted(objects, kms, bucket, key, { secrets: secretsFor(sse), ...(range ? { range } : {}) });
  const chunks: Buffer[] = [];
  for await (const chunk of reader.body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** The byte range of part `partNumber` of an object, as GET ?partNumber= reads it. */
export function partRangeOf(info: ObjectInfo, partNumber: number): { offset: number; length: number } {
  const index = info.parts.findIndex((part) => part.number === partNumber);
  if (index < 0) throw new Error(`no part ${partNumber}`);
  return { offset: info.parts.slice(0, index).reduce((sum, part) => sum + part.sizeBytes, 0), length: info.parts[index]!.sizeBytes };
}

/** Files of the given drives that hold `text` (their own tmp and trash areas are not walked). */
export async function filesHolding(drives: readonly Drive[], text: string): Promise<string[]> {
  const found: string[] = [];
  for (const drive of drives) for await (const path of drive.walk('')) if (Buffer.from(await drive.readFile(path)).includes(Buffer.from(text))) found.push(path);
  return found;
}
