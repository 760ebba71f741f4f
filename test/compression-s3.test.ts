/**
 * Transparent compression through a real server and the AWS SDK (SVC_COMPRESSION_ENABLE=on):
 * PUT, GET, HEAD, ranges, partNumber, listings and CopyObject answer the client's bytes, sizes and
 * ETag while the drives hold the compressed stream; HEAD says nothing more than for a plain
 * object; compressed then sealed with SSE-S3 and SSE-C; what is never compressed (compressed
 * types, a content-encoded body; multipart uploads are in compression-uploads); a restart with compression off; the
 * console's object details and download.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import {
  CopyObjectCommand, CreateBucketCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client,
} from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { sdkErrorOf } from './helpers/codes.js';
import { signIn, startConsoleServer } from './helpers/console-client.js';
import { logLines, storedVersionOn } from './helpers/compressed-bodies.js';
import type { ObjectVersion } from '../src/format/xl-meta-types.js';

const MiB = 1024 * 1024;
let root: string;
let server: SvcProcess;
let s3: S3Client;
const customerKey = randomBytes(32);
const ssec = { SSECustomerAlgorithm: 'AES256', SSECustomerKey: customerKey.toString('base64'), SSECustomerKeyMD5: createHash('md5').update(customerKey).digest('base64') };

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-compress-'));
  server = await startSvc({
    args: [join(root, 'd{1...4}')],
    env: { SVC_COMPRESSION_ENABLE: 'on', SVC_KMS_SECRET_KEY: `svc-root:${randomBytes(32).toString('base64')}`, SVC_KMS_ALLOW_INSECURE_SSEC: 'on', SVC_CONSOLE_ENABLE: 'false' },
  });
  s3 = s3ClientFor(server.url);
  await s3.send(new CreateBucketCommand({ Bucket: 'zip' }));
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

const md5 = (bytes: Uint8Array) => createHash('md5').update(bytes).digest('hex');

/** The version as drive 1 stores it. */
const storedVersion = (key: string): Promise<ObjectVersion> => storedVersionOn(join(root, 'd1'), 'zip', key);

/** Bytes on all four drives for one object (its xl.meta and shard files). */
async function bytesOnDrives(key: string): Promise<number> {
  let total = 0;
  for (const drive of ['d1', 'd2', 'd3', 'd4']) {
    for (const entry of await readdir(join(root, drive, 'zip', key), { withFileTypes: true, recursive: true })) {
      if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
    }
  }
  return total;
}

async function body(command: GetObjectCommand): Promise<{ bytes: Buffer; length?: number; range?: string; etag?: string }> {
  const got = await s3.send(command);
  return { bytes: Buffer.from(await got.Body!.transformToByteArray()), ...(got.ContentLength !== undefined ? { length: got.ContentLength } : {}), ...(got.ContentRange ? { range: got.ContentRange } : {}), ...(got.ETag ? { etag: got.ETag } : {}) };
}

describe('compressed objects over S3', () => {
  it('PUT, GET, ranges, partNumber, HEAD and listings answer the client\'s bytes, size and ETag; the drives hold far less', async () => {
    const size = 3 * MiB + 4321;
    const text = logLines(size, 'zip-marker');
    const put = await s3.send(new PutObjectCommand({ Bucket: 'zip', Key: 'logs/app.log', Body: text }));
    expect(put.ETag).toBe(`"${md5(text)}"`);
    const stored = await storedVersion('logs/app.log');
    expect(stored.compression?.plainSizeBytes).toBe(size);
    expect(stored.sizeBytes).toBeLessThan(size / 4);
    expect(stored.etag).toBe(md5(text));
    expect(await bytesOnDrives('logs/app.log')).toBeLessThan(size / 2);
    const whole = await body(new GetObjectCommand({ Bucket: 'zip', Key: 'logs/app.log' }));
    expect([whole.length, whole.etag, whole.bytes.equals(text)]).toEqual([size, `"${md5(text)}"`, true]);
    for (const [from, to] of [[0, 0], [size - 1, size - 1], [MiB - 3, MiB + 3], [100, 2 * MiB + 100], [2 * MiB, size - 1]] as const) {
      const ranged = await body(new GetObjectCommand({ Bucket: 'zip', Key: 'logs/app.log', Range: `bytes=${from}-${to}` }));
      expect(ranged.range).toBe(`bytes ${from}-${to}/${size}`);
      expect(ranged.bytes.equals(text.subarray(from, to + 1)), `${from}-${to}`).toBe(true);
    }
    const suffix = await body(new GetObjectCommand({ Bucket: 'zip', Key: 'logs/app.log', Range: 'bytes=-1000' }));
    expect(suffix.bytes.equals(text.subarray(size - 1000))).toBe(true);
    expect(await sdkErrorOf(s3.send(new GetObjectCommand({ Bucket: 'zip', Key: 'logs/app.log', Range: `bytes=${size}-` })))).toEqual({ name: 'InvalidRange', status: 416 });
    const part = await body(new GetObjectCommand({ Bucket: 'zip', Key: 'logs/app.log', PartNumber: 1 }));
    expect([part.length, part.bytes.equals(text)]).toEqual([size, true]);
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'zip', Prefix: 'logs/' }));
    expect(listed.Contents?.map((entry) => [entry.Key, entry.Size, entry.ETag])).toEqual([['logs/app.log', size, `"${md5(text)}"`]]);
  });

  it('HEAD of a compressed object says nothing a plain one does not (AWS has no compression header)', async () => {
    const text = logLines(200_000, 'head');
    await s3.send(new PutObjectCommand({ Bucket: 'zip', Key: 'same.txt', Body: text }));
    await s3.send(new PutObjectCommand({ Bucket: 'zip', Key: 'same.bin', Body: text }));
    const stored = (await storedVersion('same.txt')).compression;
    expect(stored).toMatchObject({ algorithm: 'zstd-1m-v1', plainSizeBytes: 200_000 });
    expect(stored!.storedSizeBytes).toBeLessThan(200_000);
    expect((await storedVersion('same.bin')).compression).toBeUndefined();
    const headers = async (key: string) => {
      const head = await s3.send(new HeadObjectCommand({ Bucket: 'zip', Key: key }));
      return { length: head.ContentLength, etag: head.ETag, names: Object.keys(head).filter((name) => name !== '$metadata' && name !== 'LastModified').sort() };
    };
    const compressed = await headers('same.txt');
    const plain = await headers('same.bin');
    expect(compressed).toEqual(plain);
    expect(compressed.length).toBe(200_000);
  });

  it('CopyObject compresses or not by the target\'s key, whatever its source was', async () => {
    const text = logLines(1_500_000, 'copy');
    await s3.send(new PutObjectCommand({ Bucket: 'zip', Key: 'source.csv', Body: text }));
    await s3.send(new CopyObjectCommand({ Bucket: 'zip', Key: 'copy.bin', CopySource: 'zip/source.csv' }));
    await s3.send(new CopyObjectCommand({ Bucket: 'zip', Key: 'copy-again.json', CopySource: 'zip/copy.bin' }));
    expect((await storedVersion('source.csv')).compression).toMatchObject({ algorithm: 'zstd-1m-v1', plainSizeBytes: text.length });
    expect((await storedVersion('copy.bin')).compression).toBeUndefined();
    expect((await storedVersion('copy-again.json')).compression?.plainSizeBytes).toBe(text.length);
    for (const key of ['copy.bin', 'copy-again.json']) {
      const got = await body(new GetObjectCommand({ Bucket: 'zip', Key: key }));
      expect([got.etag, got.bytes.equals(text)], key).toEqual([`"${md5(text)}"`, true]);
    }
    const ranged = await body(new GetObjectCommand({ Bucket: 'zip', Key: 'copy-again.json', Range: 'bytes=1048570-1048590' }));
    expect(ranged.bytes.equals(text.subarray(1_048_570, 1_048_591))).toBe(true);
  });

  it('compressed, then sealed: SSE-S3 and SSE-C objects read back with their keys, ranges too; without the SSE-C key not a byte', async () => {
    const text = logLines(2 * MiB + 777, 'sealed-zip');
    await s3.send(new PutObjectCommand({ Bucket: 'zip', Key: 'sealed/s3.json', Body: text, ServerSideEncryption: 'AES256' }));
    await s3.send(new PutObjectCommand({ Bucket: 'zip', Key: 'sealed/c.json', Body: text, ...ssec }));
    for (const [key, read] of [['sealed/s3.json', {}], ['sealed/c.json', ssec]] as const) {
      const stored = await storedVersion(key);
      expect(stored.compression?.plainSizeBytes, key).toBe(text.length);
      expect(stored.encryption?.plainSizeBytes, key).toBe(stored.compression!.storedSizeBytes);
      expect(stored.sizeBytes).toBeLessThan(text.length / 4);
      const got = await s3.send(new GetObjectCommand({ Bucket: 'zip', Key: key, ...read }));
      // SSE-S3 keeps the MD5 as its ETag; SSE-C's is opaque (docs/encryption.md), compressed or not.
      expect([got.ContentLength, got.ETag === `"${md5(text)}"`]).toEqual([text.length, key === 'sealed/s3.json']);
      expect(Buffer.from(await got.Body!.transformToByteArray()).equals(text)).toBe(true);
      const ranged = await body(new GetObjectCommand({ Bucket: 'zip', Key: key, Range: 'bytes=1048000-1049000', ...read }));
      expect(ranged.bytes.equals(text.subarray(1_048_000, 1_049_001))).toBe(true);
      const head = await s3.send(new HeadObjectCommand({ Bucket: 'zip', Key: key, ...read }));
      expect(head.ContentLength).toBe(text.length);
    }
    expect(await sdkErrorOf(s3.send(new GetObjectCommand({ Bucket: 'zip', Key: 'sealed/c.json' })))).toEqual({ name: 'InvalidRequest', status: 400 });
  });

  it('never compresses compressed types, a content-encoded body or a body that does not shrink', async () => {
    const text = logLines(600_000, 'never');
    await s3.send(new PutObjectCommand({ Bucket: 'zip', Key: 'archive.log.gz', Body: text }));
    await s3.send(new PutObjectCommand({ Bucket: 'zip', Key: 'encoded.log', Body: text, ContentEncoding: 'gzip' }));
    await s3.send(new PutObjectCommand({ Bucket: 'zip', Key: 'typed', Body: text, ContentType: 'video/mp4' }));
    await s3.send(new PutObjectCommand({ Bucket: 'zip', Key: 'random.txt', Body: randomBytes(600_000) }));
    for (const key of ['archive.log.gz', 'encoded.log', 'typed', 'random.txt']) expect((await storedVersion(key)).compression, key).toBeUndefined();
    const encoded = await body(new GetObjectCommand({ Bucket: 'zip', Key: 'encoded.log' }));
    expect(encoded.bytes.equals(text)).toBe(true);
  });

  it('compressed objects read back after a restart with compression off; a setting it does not understand stops the start', async () => {
    const before = await body(new GetObjectCommand({ Bucket: 'zip', Key: 'copy-again.json' }));
    await server.stop();
    const restarted = await startConsoleServer([join(root, 'd{1...4}')], { SVC_KMS_ALLOW_INSECURE_SSEC: 'on' });
    server = restarted.server;
    s3 = s3ClientFor(server.url);
    // The console's object details name the compression; its download is the client's bytes.
    const session = await signIn(restarted.consoleUrl);
    const details = await session.call('GET', 'buckets/zip/object?key=copy-again.json');
    expect(details.body.versions[0]).toMatchObject({ sizeBytes: before.length, compression: { algorithm: 'zstd-1m-v1' } });
    expect(details.body.versions[0].compression.storedSizeBytes).toBeLessThan(before.length! / 4);
    expect((await session.call('GET', 'buckets/zip/object?key=copy.bin')).body.versions[0].compression).toBeUndefined();
    const download = await fetch(`${restarted.consoleUrl}/svc/console/api/buckets/zip/download?key=copy-again.json`, { headers: { cookie: session.cookie } });
    expect(Buffer.from(await download.arrayBuffer()).equals(before.bytes)).toBe(true);
    const after = await body(new GetObjectCommand({ Bucket: 'zip', Key: 'copy-again.json' }));
    expect([after.length, after.etag, after.bytes.equals(before.bytes)]).toEqual([before.length, before.etag, true]);
    const sealed = await body(new GetObjectCommand({ Bucket: 'zip', Key: 'sealed/c.json', Range: 'bytes=5-99', ...ssec }));
    expect(sealed.bytes.length).toBe(95);
    await s3.send(new PutObjectCommand({ Bucket: 'zip', Key: 'off.log', Body: logLines(300_000, 'off') }));
    expect((await storedVersion('off.log')).compression).toBeUndefined();
    const refused = await startSvc({ args: [join(root, 'other', 'd{1...4}')], env: { SVC_COMPRESSION_ENABLE: 'on', SVC_COMPRESSION_EXTENSIONS: '.log,.zip' }, waitReady: false });
    expect(await refused.exited).not.toBe(0);
    expect(refused.logs()).toContain("SVC_COMPRESSION_EXTENSIONS: '.zip' names data that is compressed already");
  });
});
