/**
 * Compression and encryption of the uploads that are not a single PutObject, through a real server
 * (SVC_COMPRESSION_ENABLE=on, the built-in KMS): multipart uploads compressed part by part (ranges
 * across parts, `partNumber`, ListParts and the ETag as for any multipart object; compressed then
 * sealed with SSE-S3 and SSE-C), POST form uploads compressed like a PUT, and console uploads
 * (one PUT, or in parts) stored as an S3 PUT would store them: encrypted by the bucket's default
 * encryption, compressed, refused with the console's JSON error and nothing stored when the
 * bucket's KMS key is disabled. The drives' xl.meta says how each version is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import {
  CompleteMultipartUploadCommand, CreateBucketCommand, CreateMultipartUploadCommand, DeleteBucketEncryptionCommand, GetObjectCommand, HeadObjectCommand,
  ListMultipartUploadsCommand, ListObjectsV2Command, ListPartsCommand, PutBucketEncryptionCommand, UploadPartCommand, type S3Client,
} from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { s3ClientFor } from './helpers/server-process.js';
import { signIn, startConsoleServer, type ConsoleServer, type ConsoleSession } from './helpers/console-client.js';
import { admin } from './helpers/admin-client.js';
import { sdkErrorOf } from './helpers/codes.js';
import { logLines, storedVersionOn } from './helpers/compressed-bodies.js';
import type { ObjectVersion } from '../src/format/xl-meta-types.js';

const MiB = 1024 * 1024;
let root: string;
let running: ConsoleServer;
let s3: S3Client;
let session: ConsoleSession;
const customerKey = randomBytes(32);
const ssec = { SSECustomerAlgorithm: 'AES256', SSECustomerKey: customerKey.toString('base64'), SSECustomerKeyMD5: createHash('md5').update(customerKey).digest('base64') };

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-compress-uploads-'));
  running = await startConsoleServer([join(root, 'd{1...4}')], {
    SVC_COMPRESSION_ENABLE: 'on', SVC_KMS_SECRET_KEY: `svc-root:${randomBytes(32).toString('base64')}`, SVC_KMS_ALLOW_INSECURE_SSEC: 'on',
  });
  s3 = s3ClientFor(running.server.url);
  for (const Bucket of ['zip', 'console-s3', 'console-kms']) await s3.send(new CreateBucketCommand({ Bucket }));
  expect((await admin(running.server.url, 'POST', '/svc/admin/v4/kms/key/create', 'key-id=uploads')).status).toBe(200);
  session = await signIn(running.consoleUrl);
}, 60_000);
afterAll(async () => {
  await running?.server.stop();
  await rm(root, { recursive: true, force: true });
});

const md5 = (bytes: Uint8Array) => createHash('md5').update(bytes).digest('hex');

/** The version as drive 1 stores it. */
const storedVersion = (bucket: string, key: string): Promise<ObjectVersion> => storedVersionOn(join(root, 'd1'), bucket, key);

async function bytesOf(input: ConstructorParameters<typeof GetObjectCommand>[0]): Promise<{ bytes: Buffer; length?: number; etag?: string; partsCount?: number }> {
  const got = await s3.send(new GetObjectCommand(input));
  return { bytes: Buffer.from(await got.Body!.transformToByteArray()), ...(got.ContentLength !== undefined ? { length: got.ContentLength } : {}), ...(got.ETag ? { etag: got.ETag } : {}), ...(got.PartsCount !== undefined ? { partsCount: got.PartsCount } : {}) };
}

/**
 * Uploads `parts` as a multipart upload of zip/key and completes it (`sse.create` on the creation,
 * `sse.parts` on every part and the completion); the parts' ETags.
 */
async function uploadInParts(key: string, parts: Buffer[], sse: { create?: Record<string, string>; parts?: typeof ssec } = {}): Promise<string[]> {
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'zip', Key: key, ...sse.create }));
  const etags: string[] = [];
  for (const [index, Body] of parts.entries()) etags.push((await s3.send(new UploadPartCommand({ Bucket: 'zip', Key: key, UploadId, PartNumber: index + 1, Body, ...sse.parts }))).ETag!);
  const listed = await s3.send(new ListPartsCommand({ Bucket: 'zip', Key: key, UploadId }));
  expect(listed.Parts!.map((part) => [part.Size, part.ETag])).toEqual(parts.map((part, index) => [part.length, etags[index]]));
  await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'zip', Key: key, UploadId, MultipartUpload: { Parts: etags.map((ETag, index) => ({ ETag, PartNumber: index + 1 })) }, ...sse.parts }));
  return etags;
}

describe('multipart uploads', () => {
  it('are compressed part by part: whole, ranges across parts and partNumber read the client\'s bytes; the ETag is any multipart object\'s', async () => {
    const parts = [logLines(5 * MiB + 123_457, 'one'), logLines(5 * MiB, 'two'), logLines(70_001, 'three')];
    const whole = Buffer.concat(parts);
    const etags = await uploadInParts('multi.log', parts);
    expect(etags.map((etag) => etag.replace(/"/g, ''))).toEqual(parts.map(md5));
    const stored = await storedVersion('zip', 'multi.log');
    expect(stored.compression).toMatchObject({ algorithm: 'zstd-1m-v1', plainSizeBytes: whole.length, parts: parts.map((part, index) => ({ number: index + 1, plainSizeBytes: part.length })) });
    expect(stored.compression!.blocks).toHaveLength(6 + 5 + 1);
    expect(stored.sizeBytes).toBeLessThan(whole.length / 4);
    expect(stored.parts.map((part) => part.number)).toEqual([1, 2, 3]);
    const expectedEtag = `"${md5(Buffer.concat(parts.map((part) => Buffer.from(md5(part), 'hex'))))}-3"`;
    const got = await bytesOf({ Bucket: 'zip', Key: 'multi.log' });
    expect([got.length, got.etag, got.bytes.equals(whole)]).toEqual([whole.length, expectedEtag, true]);
    const boundary = parts[0]!.length;
    for (const [offset, length] of [[boundary - 10, 20], [MiB - 3, 5 * MiB], [boundary + 5 * MiB - 1, 2], [whole.length - 7, 7], [0, 1]] as const) {
      const ranged = await bytesOf({ Bucket: 'zip', Key: 'multi.log', Range: `bytes=${offset}-${offset + length - 1}` });
      expect(ranged.bytes.equals(whole.subarray(offset, offset + length)), `${offset}+${length}`).toBe(true);
    }
    for (const [index, part] of parts.entries()) {
      const read = await bytesOf({ Bucket: 'zip', Key: 'multi.log', PartNumber: index + 1 });
      expect([read.length, read.partsCount, read.bytes.equals(part)], `part ${index + 1}`).toEqual([part.length, 3, true]);
    }
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'zip', Key: 'multi.log', PartNumber: 2 }));
    expect([head.ContentLength, head.PartsCount]).toEqual([parts[1]!.length, 3]);
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'zip', Prefix: 'multi.log' }));
    expect(listed.Contents!.map((item) => [item.Size, item.ETag])).toEqual([[whole.length, expectedEtag]]);
  });

  it('compressed, then sealed (SSE-S3, SSE-C): read back with their keys, by range and part; SSE-C without its key not a byte', async () => {
    const parts = [logLines(5 * MiB + 1, 'sealed-one'), logLines(MiB + 17, 'sealed-two')];
    const whole = Buffer.concat(parts);
    for (const [key, sse] of [['sealed/s3.log', { create: { ServerSideEncryption: 'AES256' } }], ['sealed/c.log', { create: ssec, parts: ssec }]] as const) {
      await uploadInParts(key, parts, sse);
      const stored = await storedVersion('zip', key);
      expect(stored.compression?.parts, key).toHaveLength(2);
      expect(stored.encryption?.plainSizeBytes, key).toBe(stored.compression!.storedSizeBytes);
      expect(stored.encryption?.plainParts.map((part) => part.number), key).toEqual([1, 2]);
      expect(stored.sizeBytes, key).toBeLessThan(whole.length / 4);
      const read = key === 'sealed/c.log' ? ssec : {};
      expect((await bytesOf({ Bucket: 'zip', Key: key, ...read })).bytes.equals(whole), key).toBe(true);
      const ranged = await bytesOf({ Bucket: 'zip', Key: key, Range: `bytes=${5 * MiB - 100}-${5 * MiB + 100}`, ...read });
      expect(ranged.bytes.equals(whole.subarray(5 * MiB - 100, 5 * MiB + 101)), key).toBe(true);
      expect((await bytesOf({ Bucket: 'zip', Key: key, PartNumber: 2, ...read })).bytes.equals(parts[1]!), key).toBe(true);
    }
    expect(await sdkErrorOf(s3.send(new GetObjectCommand({ Bucket: 'zip', Key: 'sealed/c.log' })))).toEqual({ name: 'InvalidRequest', status: 400 });
  });

  it('of a type never compressed are stored as sent', async () => {
    const parts = [logLines(5 * MiB, 'video'), logLines(1000, 'video-end')];
    await uploadInParts('clip.mp4', parts);
    expect((await storedVersion('zip', 'clip.mp4')).compression).toBeUndefined();
    expect((await bytesOf({ Bucket: 'zip', Key: 'clip.mp4' })).bytes.equals(Buffer.concat(parts))).toBe(true);
    expect((await s3.send(new ListMultipartUploadsCommand({ Bucket: 'zip' }))).Uploads ?? []).toEqual([]);
  });
});

describe('POST form uploads', () => {
  it('are compressed like a PUT of the same key and type', async () => {
    const body = logLines(700_000, 'form');
    const form = await createPresignedPost(s3, { Bucket: 'zip', Key: 'form/upload.log', Expires: 300 });
    const data = new FormData();
    for (const [name, value] of Object.entries(form.fields)) data.append(name, value);
    data.append('file', new Blob([body]), 'upload.log');
    const answer = await fetch(form.url, { method: 'POST', body: data, redirect: 'manual' });
    expect([answer.status, answer.headers.get('etag')]).toEqual([204, `"${md5(body)}"`]);
    const stored = await storedVersion('zip', 'form/upload.log');
    expect(stored.compression?.plainSizeBytes).toBe(body.length);
    expect(stored.sizeBytes).toBeLessThan(body.length / 4);
    expect((await bytesOf({ Bucket: 'zip', Key: 'form/upload.log' })).bytes.equals(body)).toBe(true);
  });
});

describe('console uploads', () => {
  async function consolePut(bucket: string, key: string, body: Buffer, contentType?: string) {
    return session.call('PUT', `buckets/${bucket}/objects?key=${encodeURIComponent(key)}${contentType ? `&contentType=${encodeURIComponent(contentType)}` : ''}`, { raw: body });
  }
  async function consoleInParts(bucket: string, key: string, parts: Buffer[]) {
    const start = await session.call('POST', `buckets/${bucket}/uploads`, { body: { key } });
    if (start.status !== 200) return start;
    const id = start.body.uploadId as string;
    const done = [];
    for (const [index, part] of parts.entries()) {
      const answer = await session.call('PUT', `buckets/${bucket}/uploads/${id}/parts/${index + 1}?key=${encodeURIComponent(key)}`, { raw: part });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      done.push({ partNumber: index + 1, etag: answer.body.etag });
    }
    return session.call('POST', `buckets/${bucket}/uploads/${id}/complete`, { body: { key, parts: done } });
  }

  it('are encrypted by the bucket\'s default encryption (SSE-S3, SSE-KMS with its key) and compressed, as an S3 PUT would be', async () => {
    await s3.send(new PutBucketEncryptionCommand({ Bucket: 'console-s3', ServerSideEncryptionConfiguration: { Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] } }));
    await s3.send(new PutBucketEncryptionCommand({ Bucket: 'console-kms', ServerSideEncryptionConfiguration: { Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: 'uploads' } }] } }));
    const small = logLines(300_000, 'console-small');
    const random = randomBytes(100_000);
    const parts = [logLines(5 * MiB + 99, 'console-one'), logLines(4321, 'console-two')];
    for (const [bucket, kind, keyId] of [['console-s3', 'AES256', undefined], ['console-kms', 'aws:kms', 'uploads']] as const) {
      expect((await consolePut(bucket, 'small.log', small)).status).toBe(200);
      expect((await consolePut(bucket, 'random.bin', random, 'application/octet-stream')).status).toBe(200);
      expect((await consoleInParts(bucket, 'parts.log', parts)).status).toBe(200);
      for (const [key, body, compressed] of [['small.log', small, true], ['random.bin', random, false], ['parts.log', Buffer.concat(parts), true]] as const) {
        const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        expect([head.ServerSideEncryption, head.SSEKMSKeyId, head.ContentLength], `${bucket}/${key}`).toEqual([kind, keyId, body.length]);
        expect((await bytesOf({ Bucket: bucket, Key: key })).bytes.equals(body), `${bucket}/${key}`).toBe(true);
        const stored = await storedVersion(bucket, key);
        expect(stored.encryption?.kind, `${bucket}/${key}`).toBe(kind === 'AES256' ? 'SSE-S3' : 'SSE-KMS');
        expect(stored.compression !== undefined, `${bucket}/${key}`).toBe(compressed);
      }
      // The console downloads what it stored, opened with the KMS as a GET opens it.
      const download = await fetch(`${running.consoleUrl}/svc/console/api/buckets/${bucket}/download?key=parts.log`, { headers: { cookie: session.cookie } });
      expect([download.status, Buffer.from(await download.arrayBuffer()).equals(Buffer.concat(parts))]).toEqual([200, true]);
    }
  });

  it('into a bucket whose KMS key is disabled: the console\'s JSON error, and nothing stored', async () => {
    expect((await admin(running.server.url, 'POST', '/svc/admin/v4/kms/key/disable', 'key-id=uploads')).status).toBe(200);
    try {
      const put = await consolePut('console-kms', 'refused.log', logLines(10_000, 'refused'));
      const parts = await consoleInParts('console-kms', 'refused-parts.log', [logLines(10_000, 'refused')]);
      for (const answer of [put, parts]) expect([answer.status, answer.body.Code]).toEqual([400, 'KMS.DisabledException']);
      const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'console-kms', Prefix: 'refused' }));
      expect(listed.KeyCount).toBe(0);
      expect((await s3.send(new ListMultipartUploadsCommand({ Bucket: 'console-kms' }))).Uploads ?? []).toEqual([]);
    } finally {
      expect((await admin(running.server.url, 'POST', '/svc/admin/v4/kms/key/enable', 'key-id=uploads')).status).toBe(200);
    }
    await s3.send(new DeleteBucketEncryptionCommand({ Bucket: 'console-kms' }));
    expect((await consolePut('console-kms', 'plain.log', logLines(10_000, 'plain'))).status).toBe(200);
    expect((await storedVersion('console-kms', 'plain.log')).encryption).toBeUndefined();
  });
});
