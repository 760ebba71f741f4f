/**
 * Compressed objects (plain, and compressed then sealed with SSE-S3, SSE-KMS and SSE-C; multipart
 * objects compressed part by part, read by part number too) through
 * rebalance, heal after a drive is wiped, and decommission: the stored blocks, their index and the
 * sealed keys move as they are (nothing is decompressed or decrypted on the way), and every object
 * reads back whole and by range with its keys afterwards. Rebalance needs pools that really differ
 * in fullness, so each pool lives on a small tmpfs (mounting needs root: without it the rebalance
 * step skips with the reason, and fails under CI).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { CompleteMultipartUploadCommand, CreateBucketCommand, CreateMultipartUploadCommand, GetObjectCommand, PutObjectCommand, UploadPartCommand, type PutObjectCommandInput, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { waitFor } from './helpers/poll.js';
import { tmpfsPools } from './helpers/tmpfs-pools.js';
import { decodeXlMeta } from '../src/format/xl-meta.js';

let root: string;
let server: SvcProcess | undefined;
let s3: S3Client;
const q = (pairs: Record<string, string>) => new URLSearchParams(pairs).toString();
const customerKey = Buffer.alloc(32, 9);
const ssec = { SSECustomerAlgorithm: 'AES256', SSECustomerKey: customerKey.toString('base64'), SSECustomerKeyMD5: createHash('md5').update(customerKey).digest('base64') };
const env = { SVC_COMPRESSION_ENABLE: 'on', SVC_KMS_SECRET_KEY: `svc-root:${randomBytes(32).toString('base64')}`, SVC_KMS_ALLOW_INSECURE_SSEC: 'on', SVC_CONSOLE_ENABLE: 'false', SVC_REBALANCE_MAX_ATTEMPTS: '2' };
const written = new Map<string, { body: Buffer; read: Record<string, string>; partSizes?: number[] }>();

root = await mkdtemp(join(tmpdir(), 'svc-compress-move-'));
const tmpfs = await tmpfsPools(root, ['p0', 'p1'], '96m', 'compression rebalance step');
const pools = tmpfs.pools;
const noTmpfs = tmpfs.skipReason;

function logLines(size: number, salt: string): Buffer {
  const body = Buffer.alloc(size);
  let offset = 0;
  for (let line = 0; offset < size; line += 1) {
    const text = `{"salt":"${salt}","line":${line},"op":"PUT","key":"k/${line % 401}","ms":${(line * 13) % 301}}\n`;
    offset += body.write(text, offset, Math.min(text.length, size - offset), 'latin1');
  }
  return body;
}

beforeAll(async () => {
  server = await startSvc({ args: [pools[0]!], env });
  s3 = s3ClientFor(server.url);
  // Listed first, so a rebalance moves these before the filler.
  await s3.send(new CreateBucketCommand({ Bucket: 'a-zip' }));
  await s3.send(new CreateBucketCommand({ Bucket: 'filler' }));
  expect((await admin(server.url, 'POST', '/svc/admin/v4/kms/key/create', 'key-id=mover')).status).toBe(200);
  const kinds: [string, Partial<PutObjectCommandInput>, Record<string, string>][] = [
    ['plain', {}, {}],
    ['s3', { ServerSideEncryption: 'AES256' }, {}],
    ['kms', { ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'mover' }, {}],
    ['ssec', ssec, ssec],
  ];
  for (let index = 0; index < 12; index += 1) {
    const [kind, put, read] = kinds[index % kinds.length]!;
    const key = `${kind}/${index}.json`;
    const body = logLines(index % 3 === 0 ? 20_000 : 2 * 1024 * 1024 + index * 1000, key);
    await s3.send(new PutObjectCommand({ Bucket: 'a-zip', Key: key, Body: body, ...put }));
    written.set(key, { body, read });
  }
  // Multipart uploads, compressed part by part (plain and SSE-KMS): they move with their parts.
  for (const [kind, put] of [kinds[0]!, kinds[2]!]) {
    const key = `${kind}/multipart.json`;
    const parts = [logLines(5 * 1024 * 1024 + 7, `${key}-1`), logLines(300_000, `${key}-2`)];
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'a-zip', Key: key, ...(put as Record<string, string>) }));
    const etags: string[] = [];
    for (const [index, Body] of parts.entries()) etags.push((await s3.send(new UploadPartCommand({ Bucket: 'a-zip', Key: key, UploadId, PartNumber: index + 1, Body }))).ETag!);
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'a-zip', Key: key, UploadId, MultipartUpload: { Parts: etags.map((ETag, index) => ({ ETag, PartNumber: index + 1 })) } }));
    written.set(key, { body: Buffer.concat(parts), read: {}, partSizes: parts.map((part) => part.length) });
  }
  // Random filler (stored as sent) so that pool 0 is clearly fuller than pool 1 will be.
  for (let index = 0; index < 12; index += 1) await s3.send(new PutObjectCommand({ Bucket: 'filler', Key: `f-${index}.bin`, Body: randomBytes(1024 * 1024) }));
}, 120_000);
afterAll(async () => {
  await server?.kill();
  tmpfs.unmount();
  await rm(root, { recursive: true, force: true });
});

/** Reads until `done` holds of the answer, and returns it. */
async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> {
  return waitFor(what, async () => {
    const value = await read();
    return done(value) ? { value } : undefined;
  }, { timeoutMs, intervalMs: 200 }).then((answer) => answer.value);
}

async function expectAllReadable(): Promise<void> {
  for (const [key, { body, read, partSizes }] of written) {
    const object = await s3.send(new GetObjectCommand({ Bucket: 'a-zip', Key: key, ...read }));
    expect(Buffer.from(await object.Body!.transformToByteArray()).equals(body), key).toBe(true);
    const from = Math.floor(body.length / 2) - 10;
    const ranged = await s3.send(new GetObjectCommand({ Bucket: 'a-zip', Key: key, Range: `bytes=${from}-${from + 99}`, ...read }));
    expect(Buffer.from(await ranged.Body!.transformToByteArray()).equals(body.subarray(from, from + 100)), key).toBe(true);
    for (const [index, size] of (partSizes ?? []).entries()) {
      const part = await s3.send(new GetObjectCommand({ Bucket: 'a-zip', Key: key, PartNumber: index + 1, ...read }));
      const start = (partSizes ?? []).slice(0, index).reduce((sum, length) => sum + length, 0);
      expect([part.PartsCount, Buffer.from(await part.Body!.transformToByteArray()).equals(body.subarray(start, start + size))], `${key} part ${index + 1}`).toEqual([partSizes!.length, true]);
    }
  }
}

/** The compressed versions' xl.meta files under a pool's first drive. */
async function compressedMetasIn(pool: string): Promise<string[]> {
  const found: string[] = [];
  const directory = join(root, pool, 'd1', 'a-zip');
  for (const entry of await readdir(directory, { withFileTypes: true, recursive: true }).catch(() => [])) {
    if (!entry.isFile() || entry.name !== 'xl.meta') continue;
    const meta = decodeXlMeta(new Uint8Array(await readFile(join(entry.parentPath, entry.name))));
    if (meta.versions[0]?.compression) found.push(join(entry.parentPath, entry.name));
  }
  return found;
}

describe('compressed objects moved by rebalance, heal and decommission', () => {
  it('are stored compressed in the first place', async () => {
    expect((await compressedMetasIn('p0')).length).toBe(written.size);
    await expectAllReadable();
  });

  it.skipIf(noTmpfs !== undefined)('a rebalance onto a new pool moves compressed objects as they are, and they read back', async () => {
    await server!.stop();
    server = await startSvc({ args: pools, env });
    s3 = s3ClientFor(server.url);
    const started = await admin(server.url, 'POST', '/svc/admin/v3/rebalance/start');
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const done = await until('rebalance', async () => (await admin(server!.url, 'GET', '/svc/admin/v3/rebalance/status')).body, (status) => !status.pools.some((pool: { status: string }) => pool.status === 'active' || pool.status === 'stopping'), 120_000);
    expect(done.pools.map((pool: { status: string }) => pool.status), JSON.stringify(done)).toEqual(['completed', 'completed']);
    expect((await compressedMetasIn('p1')).length).toBeGreaterThan(0);
    expect((await compressedMetasIn('p0')).length + (await compressedMetasIn('p1')).length).toBe(written.size);
    await expectAllReadable();
  }, 180_000);

  it('heal rebuilds a wiped drive from the compressed shards, and the objects read back', async () => {
    if (noTmpfs !== undefined) {
      await server!.stop();
      server = await startSvc({ args: pools, env });
      s3 = s3ClientFor(server.url);
    }
    for (const pool of ['p0', 'p1']) await rm(join(root, pool, 'd2', 'a-zip'), { recursive: true, force: true });
    const started = await admin(server!.url, 'POST', '/svc/admin/v3/heal/a-zip', '', { body: JSON.stringify({ scanMode: 'normal' }) });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const done = await until('heal', async () => (await admin(server!.url, 'POST', '/svc/admin/v3/heal/a-zip', `clientToken=${started.body.clientToken}`)).body, (body) => body.status !== 'running', 90_000);
    expect(done.status).toBe('finished');
    expect(done.counts.objectsHealed).toBe(written.size);
    const healed = [...(await compressedMetasIn('p0')), ...(await compressedMetasIn('p1'))];
    expect(healed.length).toBe(written.size);
    for (const pool of ['p0', 'p1']) {
      for (const path of await compressedMetasIn(pool)) expect(decodeXlMeta(new Uint8Array(await readFile(path.replace(`${pool}/d1/`, `${pool}/d2/`)))).versions[0]!.compression).toMatchObject({ algorithm: 'zstd-1m-v1' });
    }
    await expectAllReadable();
  }, 120_000);

  it('a decommission moves every compressed object to the other pool as stored, and they read back with their keys', async () => {
    const started = await admin(server!.url, 'POST', '/svc/admin/v3/pools/decommission', q({ pool: pools[0]! }));
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const entry = await until('decommission', async () => (await admin(server!.url, 'GET', '/svc/admin/v3/decommission/status', q({ pool: pools[0]! }))).body.entries?.[0], (value) => ['completed', 'failed'].includes(value?.state), 120_000);
    expect(entry.state, JSON.stringify(entry)).toBe('completed');
    expect(await compressedMetasIn('p0')).toEqual([]);
    expect((await compressedMetasIn('p1')).length).toBe(written.size);
    await expectAllReadable();
  }, 180_000);
});
