/**
 * Encrypted objects through heal and decommission: a wiped drive is rebuilt and a pool
 * is drained while the data stays sealed (the drives never hold plaintext), and every object reads
 * back with its keys afterwards (SSE-S3, SSE-KMS with a named key, SSE-C), multipart objects with
 * their part list (ranges across parts, `partNumber`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { CompleteMultipartUploadCommand, CreateBucketCommand, CreateMultipartUploadCommand, GetObjectCommand, PutObjectCommand, UploadPartCommand, type PutObjectCommandInput, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { MiB } from '../src/util/limits.js';

let root: string;
let server: SvcProcess;
let s3: S3Client;
const pools: string[] = [];
const q = (pairs: Record<string, string>) => new URLSearchParams(pairs).toString();
const customerKey = Buffer.alloc(32, 5);
const ssec = { SSECustomerAlgorithm: 'AES256', SSECustomerKey: customerKey.toString('base64'), SSECustomerKeyMD5: createHash('md5').update(customerKey).digest('base64') };
const marker = `movement-marker-${randomBytes(6).toString('hex')}`;
const written = new Map<string, { body: Buffer; read: Record<string, string> }>();
/** Multipart objects among `written`, with their part sizes. */
const multipart = new Map<string, number[]>();

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-sse-move-'));
  pools.push(join(root, 'p0/d{1...4}'), join(root, 'p1/d{1...4}'));
  const env = { SVC_KMS_SECRET_KEY: `svc-root:${randomBytes(32).toString('base64')}`, SVC_KMS_ALLOW_INSECURE_SSEC: 'on', SVC_CONSOLE_ENABLE: 'false' };
  server = await startSvc({ args: pools, env });
  s3 = s3ClientFor(server.url);
  await s3.send(new CreateBucketCommand({ Bucket: 'moving' }));
  expect((await admin(server.url, 'POST', '/svc/admin/v4/kms/key/create', 'key-id=mover')).status).toBe(200);
  const kinds: [string, Partial<PutObjectCommandInput>, Record<string, string>][] = [
    ['s3', { ServerSideEncryption: 'AES256' }, {}],
    ['kms', { ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'mover' }, {}],
    ['ssec', ssec, ssec],
  ];
  for (let index = 0; index < 12; index += 1) {
    const [kind, put, read] = kinds[index % kinds.length]!;
    const body = Buffer.from(`${marker}|${index}|`.repeat(index % 2 === 0 ? 40 : 100_000));
    await s3.send(new PutObjectCommand({ Bucket: 'moving', Key: `${kind}/${index}`, Body: body, ...put }));
    written.set(`${kind}/${index}`, { body, read });
  }
  // A plain multipart object moves with its part list too (its bytes carry no marker: they are stored in the clear).
  for (const [kind, put, read] of [...kinds, ['plain', {}, {}] as (typeof kinds)[number]]) {
    const key = `multipart/${kind}`;
    const sizes = [5 * MiB + 1234, 70_000];
    const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'moving', Key: key, ...(put as object) }));
    const stamp = kind === 'plain' ? 'in the clear' : marker;
    const bodies = sizes.map((size, part) => Buffer.from(`${stamp}|${key}|${part}|`.repeat(Math.ceil(size / 10))).subarray(0, size));
    const parts = [];
    for (const [index, body] of bodies.entries()) {
      const answer = await s3.send(new UploadPartCommand({ Bucket: 'moving', Key: key, UploadId: created.UploadId, PartNumber: index + 1, Body: body, ...read }));
      parts.push({ PartNumber: index + 1, ETag: answer.ETag! });
    }
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'moving', Key: key, UploadId: created.UploadId, MultipartUpload: { Parts: parts }, ...read }));
    written.set(key, { body: Buffer.concat(bodies), read });
    multipart.set(key, sizes);
  }
}, 120_000);
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

async function expectAllReadable(): Promise<void> {
  for (const [key, { body, read }] of written) {
    const object = await s3.send(new GetObjectCommand({ Bucket: 'moving', Key: key, ...read }));
    expect(Buffer.from(await object.Body!.transformToByteArray()).equals(body), key).toBe(true);
  }
}

/** Multipart objects read by part number and across their part boundary. */
async function expectPartsReadable(): Promise<void> {
  for (const [key, sizes] of multipart) {
    const { body, read } = written.get(key)!;
    let offset = 0;
    for (const [index, size] of sizes.entries()) {
      const part = await s3.send(new GetObjectCommand({ Bucket: 'moving', Key: key, PartNumber: index + 1, ...read }));
      expect([key, part.PartsCount, part.ContentLength]).toEqual([key, sizes.length, size]);
      expect(Buffer.from(await part.Body!.transformToByteArray()).equals(body.subarray(offset, offset + size)), `${key} part ${index + 1}`).toBe(true);
      offset += size;
    }
    const across = await s3.send(new GetObjectCommand({ Bucket: 'moving', Key: key, Range: `bytes=${sizes[0]! - 100}-${sizes[0]! + 100}`, ...read }));
    expect(Buffer.from(await across.Body!.transformToByteArray()).equals(body.subarray(sizes[0]! - 100, sizes[0]! + 101)), key).toBe(true);
  }
}

async function filesWithMarker(directory: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(directory, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    if ((await readFile(path)).includes(Buffer.from(marker))) found.push(path);
  }
  return found;
}

async function poll<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: ${JSON.stringify(value)}\n${server.logs().slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('encrypted objects moved by heal and decommission', () => {
  it('heal rebuilds a wiped drive from sealed shards, and the objects read back', async () => {
    for (const pool of ['p0', 'p1']) await rm(join(root, pool, 'd2', 'moving'), { recursive: true, force: true });
    const started = await admin(server.url, 'POST', '/svc/admin/v3/heal/moving', '', { body: JSON.stringify({ scanMode: 'normal' }) });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const done = await poll('heal', async () => (await admin(server.url, 'POST', '/svc/admin/v3/heal/moving', `clientToken=${started.body.clientToken}`)).body, (body) => body.status !== 'running');
    expect(done.status).toBe('finished');
    expect(done.counts.objectsHealed).toBe(written.size);
    await expectAllReadable();
    await expectPartsReadable();
    expect(await filesWithMarker(root)).toEqual([]);
  });

  it('a decommission moves every encrypted object to the other pool, sealed, and they read back with their keys', async () => {
    const metasIn = async (pool: string) => (await readdir(join(root, pool, 'd1', 'moving'), { recursive: true }).catch(() => [])).filter((name) => String(name).endsWith('xl.meta'));
    expect((await metasIn('p0')).length).toBeGreaterThan(0);
    const started = await admin(server.url, 'POST', '/svc/admin/v3/pools/decommission', q({ pool: pools[0]! }));
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const entry = await poll('decommission', async () => (await admin(server.url, 'GET', '/svc/admin/v3/decommission/status', q({ pool: pools[0]! }))).body.entries?.[0], (value) => ['completed', 'failed'].includes(value?.state));
    expect(entry.state, JSON.stringify(entry)).toBe('completed');
    expect(await metasIn('p0')).toEqual([]);
    expect((await metasIn('p1')).length).toBe(written.size);
    await expectAllReadable();
    await expectPartsReadable();
    expect(await filesWithMarker(root)).toEqual([]);
  });
});
