/**
 * Encrypted objects through rebalance, heal and decommission: a pool sheds objects to a new one,
 * a wiped drive is rebuilt and a pool is drained while the data stays sealed (the drives never
 * hold plaintext), and every object reads back with its keys afterwards (SSE-S3, SSE-KMS with a
 * named key, SSE-C), multipart objects with their part list (ranges across parts, `partNumber`).
 * Rebalance needs pools that really differ in fullness, so each pool lives on a small tmpfs
 * (mounting needs root: without it the rebalance step skips with the reason, and fails under CI).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { CompleteMultipartUploadCommand, CreateBucketCommand, CreateMultipartUploadCommand, GetObjectCommand, PutObjectCommand, UploadPartCommand, type PutObjectCommandInput, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { tmpfsPools } from './helpers/tmpfs-pools.js';
import { MiB } from '../src/util/limits.js';

let root: string;
let server: SvcProcess | undefined;
let s3: S3Client;
let bothPools = false;
const q = (pairs: Record<string, string>) => new URLSearchParams(pairs).toString();
const customerKey = Buffer.alloc(32, 5);
const ssec = { SSECustomerAlgorithm: 'AES256', SSECustomerKey: customerKey.toString('base64'), SSECustomerKeyMD5: createHash('md5').update(customerKey).digest('base64') };
const env = { SVC_KMS_SECRET_KEY: `svc-root:${randomBytes(32).toString('base64')}`, SVC_KMS_ALLOW_INSECURE_SSEC: 'on', SVC_CONSOLE_ENABLE: 'false', SVC_REBALANCE_MAX_ATTEMPTS: '2' };
const marker = `movement-marker-${randomBytes(6).toString('hex')}`;
/**
 * Buckets in the order a rebalance walks them: the multipart objects first (moved by it), then
 * filler that brings the pool within its goal, then single-part objects (left for the decommission).
 */
const partsBucket = 'a-parts';
const fillerBucket = 'b-filler';
const singlesBucket = 'moving';
const written = new Map<string, { bucket: string; key: string; body: Buffer; read: Record<string, string> }>();
/** Multipart objects among `written` (bucket/key), with their part sizes. */
const multipart = new Map<string, number[]>();

root = await mkdtemp(join(tmpdir(), 'svc-sse-move-'));
const tmpfs = await tmpfsPools(root, ['p0', 'p1'], '192m', 'encrypted rebalance step');
const pools = tmpfs.pools;
const noTmpfs = tmpfs.skipReason;

beforeAll(async () => {
  server = await startSvc({ args: [pools[0]!], env });
  s3 = s3ClientFor(server.url);
  for (const bucket of [partsBucket, fillerBucket, singlesBucket]) await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  expect((await admin(server.url, 'POST', '/svc/admin/v4/kms/key/create', 'key-id=mover')).status).toBe(200);
  const kinds: [string, Partial<PutObjectCommandInput>, Record<string, string>][] = [
    ['s3', { ServerSideEncryption: 'AES256' }, {}],
    ['kms', { ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'mover' }, {}],
    ['ssec', ssec, ssec],
  ];
  for (let index = 0; index < 12; index += 1) {
    const [kind, put, read] = kinds[index % kinds.length]!;
    const body = Buffer.from(`${marker}|${index}|`.repeat(index % 2 === 0 ? 40 : 40_000));
    await s3.send(new PutObjectCommand({ Bucket: singlesBucket, Key: `${kind}/${index}`, Body: body, ...put }));
    written.set(`${singlesBucket}/${kind}/${index}`, { bucket: singlesBucket, key: `${kind}/${index}`, body, read });
  }
  // A plain multipart object moves with its part list too (its bytes carry no marker: they are stored in the clear).
  for (const [kind, put, read] of [...kinds, ['plain', {}, {}] as (typeof kinds)[number]]) {
    const key = `multipart/${kind}`;
    const sizes = [5 * MiB + 1234, 70_000];
    const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: partsBucket, Key: key, ...(put as object) }));
    const stamp = kind === 'plain' ? 'in the clear' : marker;
    const bodies = sizes.map((size, part) => Buffer.from(`${stamp}|${key}|${part}|`.repeat(Math.ceil(size / 10))).subarray(0, size));
    const parts = [];
    for (const [index, body] of bodies.entries()) {
      const answer = await s3.send(new UploadPartCommand({ Bucket: partsBucket, Key: key, UploadId: created.UploadId, PartNumber: index + 1, Body: body, ...read }));
      parts.push({ PartNumber: index + 1, ETag: answer.ETag! });
    }
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: partsBucket, Key: key, UploadId: created.UploadId, MultipartUpload: { Parts: parts }, ...read }));
    written.set(`${partsBucket}/${key}`, { bucket: partsBucket, key, body: Buffer.concat(bodies), read });
    multipart.set(`${partsBucket}/${key}`, sizes);
  }
  // Random filler (no marker) so that pool 0 is clearly fuller than the new pool 1 will be.
  for (let index = 0; index < 28; index += 1) await s3.send(new PutObjectCommand({ Bucket: fillerBucket, Key: `f-${String(index).padStart(2, '0')}`, Body: randomBytes(MiB) }));
}, 180_000);
afterAll(async () => {
  await server?.kill();
  tmpfs.unmount();
  await rm(root, { recursive: true, force: true });
});

/** The server on both pools (a restart the first time). */
async function onBothPools(): Promise<string> {
  if (!bothPools) {
    bothPools = true;
    await server!.stop();
    server = await startSvc({ args: pools, env });
    s3 = s3ClientFor(server.url);
  }
  return server!.url;
}

async function expectAllReadable(): Promise<void> {
  for (const [name, { bucket, key, body, read }] of written) {
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, ...read }));
    expect(Buffer.from(await object.Body!.transformToByteArray()).equals(body), name).toBe(true);
  }
}

/** Multipart objects read by part number and across their part boundary. */
async function expectPartsReadable(): Promise<void> {
  for (const [name, sizes] of multipart) {
    const { bucket, key, body, read } = written.get(name)!;
    let offset = 0;
    for (const [index, size] of sizes.entries()) {
      const part = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, PartNumber: index + 1, ...read }));
      expect([name, part.PartsCount, part.ContentLength]).toEqual([name, sizes.length, size]);
      expect(Buffer.from(await part.Body!.transformToByteArray()).equals(body.subarray(offset, offset + size)), `${name} part ${index + 1}`).toBe(true);
      offset += size;
    }
    const across = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${sizes[0]! - 100}-${sizes[0]! + 100}`, ...read }));
    expect(Buffer.from(await across.Body!.transformToByteArray()).equals(body.subarray(sizes[0]! - 100, sizes[0]! + 101)), name).toBe(true);
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

/** The xl.meta files of `bucket` under a pool's first drive, relative to the bucket. */
async function metasIn(pool: string, bucket: string): Promise<string[]> {
  return (await readdir(join(root, pool, 'd1', bucket), { recursive: true }).catch(() => [])).filter((name) => String(name).endsWith('xl.meta')).map(String);
}

async function poll<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: ${JSON.stringify(value)}\n${server!.logs().slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('encrypted objects moved by rebalance, heal and decommission', () => {
  it.skipIf(noTmpfs !== undefined)('a rebalance onto a new pool moves the encrypted multipart objects with their parts, sealed, and they read back with their keys', async () => {
    const url = await onBothPools();
    const started = await admin(url, 'POST', '/svc/admin/v3/rebalance/start');
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const done = await poll('rebalance', async () => (await admin(url, 'GET', '/svc/admin/v3/rebalance/status')).body, (status) => !status.pools.some((pool: { status: string }) => pool.status === 'active' || pool.status === 'stopping'), 120_000);
    expect(done.pools.map((pool: { status: string; lastError: string }) => [pool.status, pool.lastError]), JSON.stringify(done)).toEqual([['completed', ''], ['completed', '']]);
    // Every multipart object was moved (the walk takes their bucket first); the single-part ones stay for the decommission.
    expect((await metasIn('p1', partsBucket)).sort()).toEqual([...multipart.keys()].map((name) => join(name.slice(partsBucket.length + 1), 'xl.meta')).sort());
    expect(await metasIn('p0', partsBucket)).toEqual([]);
    expect((await metasIn('p0', singlesBucket)).length).toBe(written.size - multipart.size);
    await expectAllReadable();
    await expectPartsReadable();
    expect(await filesWithMarker(root)).toEqual([]);
  }, 180_000);

  it('heal rebuilds a wiped drive from sealed shards, and the objects read back', async () => {
    const url = await onBothPools();
    let healed = 0;
    for (const bucket of [partsBucket, singlesBucket]) {
      for (const pool of ['p0', 'p1']) await rm(join(root, pool, 'd2', bucket), { recursive: true, force: true });
      const started = await admin(url, 'POST', `/svc/admin/v3/heal/${bucket}`, '', { body: JSON.stringify({ scanMode: 'normal' }) });
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      const done = await poll('heal', async () => (await admin(url, 'POST', `/svc/admin/v3/heal/${bucket}`, `clientToken=${started.body.clientToken}`)).body, (body) => body.status !== 'running');
      expect(done.status).toBe('finished');
      healed += done.counts.objectsHealed;
    }
    expect(healed).toBe(written.size);
    await expectAllReadable();
    await expectPartsReadable();
    expect(await filesWithMarker(root)).toEqual([]);
  });

  it('a decommission moves every encrypted object to the other pool, sealed, and they read back with their keys', async () => {
    const url = await onBothPools();
    expect((await metasIn('p0', singlesBucket)).length).toBeGreaterThan(0);
    const started = await admin(url, 'POST', '/svc/admin/v3/pools/decommission', q({ pool: pools[0]! }));
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const entry = await poll('decommission', async () => (await admin(url, 'GET', '/svc/admin/v3/decommission/status', q({ pool: pools[0]! }))).body.entries?.[0], (value) => ['completed', 'failed'].includes(value?.state));
    expect(entry.state, JSON.stringify(entry)).toBe('completed');
    for (const bucket of [partsBucket, singlesBucket]) expect(await metasIn('p0', bucket)).toEqual([]);
    expect((await metasIn('p1', partsBucket)).length + (await metasIn('p1', singlesBucket)).length).toBe(written.size);
    await expectAllReadable();
    await expectPartsReadable();
    expect(await filesWithMarker(root)).toEqual([]);
  }, 120_000);
});
