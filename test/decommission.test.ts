import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { versionsOf } from './helpers/s3-versions.js';
import { errorName } from './scenarios/node-failure.js';

let root: string;
let pool0: string;
let pool1: string;
let server: SvcProcess | undefined;

const env = { SVC_CONSOLE_ENABLE: 'false', SVC_DECOMMISSION_BUCKET_CONCURRENCY: '1', SVC_DECOMMISSION_ENTRY_CONCURRENCY: '4' };
const q = (pairs: Record<string, string>) => new URLSearchParams(pairs).toString();

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-decommission-'));
  pool0 = join(root, 'p0/d{1...4}');
  pool1 = join(root, 'p1/d{1...4}');
});
afterAll(async () => {
  await server?.kill();
  await rm(root, { recursive: true, force: true });
});

async function restart(args: string[]): Promise<S3Client> {
  await server?.stop();
  server = await startSvc({ args, env });
  return s3ClientFor(server.url);
}


async function md5Of(s3: S3Client, bucket: string, key: string, versionId?: string): Promise<string> {
  const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, VersionId: versionId }));
  return createHash('md5').update(await object.Body!.transformToByteArray()).digest('hex');
}

/** Object files (xl.meta) on a pool's drives outside .svc.sys. */
async function objectFilesUnder(directory: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (path: string): Promise<void> => {
    for (const entry of await readdir(path, { withFileTypes: true })) {
      if (entry.name === '.svc.sys') continue;
      if (entry.isDirectory()) await walk(join(path, entry.name));
      else if (entry.name === 'xl.meta') found.push(join(path, entry.name));
    }
  };
  await walk(directory);
  return found;
}

async function waitForState(pool: string, states: string[], timeoutMs: number): Promise<Record<string, any>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await admin(server!.url, 'GET', '/svc/admin/v3/decommission/status', q({ pool }));
    const entry = answer.body.entries?.[0];
    if (entry && states.includes(entry.state)) return entry;
    if (Date.now() > deadline) throw new Error(`decommission did not reach ${states.join('/')}: ${JSON.stringify(answer.body)}\n${server!.logs().slice(-5000)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const recorded = new Map<string, string[]>();
const contents = new Map<string, string>();
let draining: string | undefined;

/** Every recorded version is listed exactly as before (ids, ETags, sizes, markers), and the sampled bytes are the same. */
async function expectRecordedObjects(s3: S3Client): Promise<void> {
  for (const [bucket, versions] of recorded) {
    const now = await versionsOf(s3, bucket);
    expect(now.filter((line) => !/^(during\/|new\/|draining )/.test(line))).toEqual(versions);
  }
  for (const [name, md5] of contents) {
    const [bucket, ...key] = name.split('/');
    expect(await md5Of(s3, bucket!, key.join('/'))).toBe(md5);
  }
}

describe('decommission of pool 0 in a two-pool deployment', () => {
  it('on one pool, decommission is NotImplemented; 2,000 objects (versioned, multipart, inline, large) are written', async () => {
    const s3 = await restart([pool0]);
    const single = await admin(server!.url, 'POST', '/svc/admin/v3/pools/decommission', q({ pool: pool0 }));
    expect([single.status, single.body.Code]).toEqual([501, 'NotImplemented']);

    for (const bucket of ['a-plain', 'b-versioned', 'c-multipart', 'z-last']) await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    await s3.send(new PutBucketVersioningCommand({ Bucket: 'b-versioned', VersioningConfiguration: { Status: 'Enabled' } }));
    const puts: (() => Promise<unknown>)[] = [];
    for (let index = 0; index < 1_500; index += 1) {
      const body = index % 250 === 0 ? Buffer.alloc(2 * 1024 * 1024 + index, index % 251) : `inline object ${index} `.repeat(1 + (index % 40));
      puts.push(() => s3.send(new PutObjectCommand({ Bucket: 'a-plain', Key: `obj/${String(index).padStart(5, '0')}`, Body: body, Metadata: { index: String(index) } })));
    }
    for (let index = 0; index < 240; index += 1) {
      const key = `doc-${String(index).padStart(4, '0')}`;
      puts.push(async () => {
        await s3.send(new PutObjectCommand({ Bucket: 'b-versioned', Key: key, Body: `first ${index}` }));
        await s3.send(new PutObjectCommand({ Bucket: 'b-versioned', Key: key, Body: `second ${index}` }));
        if (index % 4 === 0) await s3.send(new DeleteObjectCommand({ Bucket: 'b-versioned', Key: key }));
      });
    }
    for (let start = 0; start < puts.length; start += 16) await Promise.all(puts.slice(start, start + 16).map((put) => put()));

    const upload = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'c-multipart', Key: 'big' }));
    const parts = [Buffer.alloc(5 * 1024 * 1024, 'p'), Buffer.alloc(1024 * 1024 + 5, 'q')];
    const etags = [];
    for (const [index, body] of parts.entries()) etags.push((await s3.send(new UploadPartCommand({ Bucket: 'c-multipart', Key: 'big', UploadId: upload.UploadId, PartNumber: index + 1, Body: body }))).ETag);
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'c-multipart', Key: 'big', UploadId: upload.UploadId, MultipartUpload: { Parts: etags.map((ETag, index) => ({ ETag, PartNumber: index + 1 })) } }));
    await s3.send(new PutObjectCommand({ Bucket: 'z-last', Key: 'staged', Body: 'in pool 0' }));
    // An upload opened in pool 0 before the decommission may drain while the pool is being emptied.
    draining = (await s3.send(new CreateMultipartUploadCommand({ Bucket: 'z-last', Key: 'draining' }))).UploadId;

    for (const bucket of ['a-plain', 'b-versioned', 'c-multipart', 'z-last']) recorded.set(bucket, await versionsOf(s3, bucket));
    expect(recorded.get('a-plain')).toHaveLength(1_500);
    expect(recorded.get('b-versioned')).toHaveLength(240 * 2 + 60);
    expect(recorded.get('c-multipart')![0]).toMatch(/-2" /);
    for (const [bucket, key] of [['a-plain', 'obj/00000'], ['a-plain', 'obj/00250'], ['a-plain', 'obj/00007'], ['c-multipart', 'big'], ['b-versioned', 'doc-0001']] as const) {
      contents.set(`${bucket}/${key}`, await md5Of(s3, bucket, key));
    }
  }, 300_000);

  it('after appending pool 1 and restarting, both pools are listed and the admin API refuses bad requests', async () => {
    await restart([pool0, pool1]);
    const list = await admin(server!.url, 'GET', '/svc/admin/v3/pools/list');
    expect(list.status).toBe(200);
    expect(list.body.pools.map((pool: any) => [pool.id, pool.cmdline, pool.setCount, pool.drivesPerSet, pool.decommission])).toEqual([
      [0, pool0, 1, 4, null],
      [1, pool1, 1, 4, null],
    ]);
    const status = await admin(server!.url, 'GET', '/svc/admin/v3/pools/status', q({ pool: '1', 'by-id': 'true', ignored: 'yes' }));
    expect(status.status).toBe(200);
    expect(status.body.sets[0].drives).toHaveLength(4);
    expect(status.body.sets[0].drives[0]).toMatchObject({ slot: 0, local: true, state: 'online' });
    expect(status.body.sets[0].drives[0].uuid).toMatch(/^[0-9a-f-]{36}$/);

    const path = '/svc/admin/v3/pools/decommission';
    const cases: [string, string, number, string][] = [
      ['unknown parameter', q({ pool: pool0, force: 'true' }), 400, 'InvalidQueryParameter'],
      ['duplicate parameter', `${q({ pool: pool0 })}&${q({ pool: pool0 })}`, 400, 'InvalidQueryParameter'],
      ['by-id not true/false', q({ pool: '0', 'by-id': 'yes' }), 400, 'InvalidQueryParameter'],
      ['missing pool', '', 400, 'InvalidQueryParameter'],
      ['unknown pattern', q({ pool: '/nowhere/d{1...4}' }), 404, 'NoSuchPool'],
      ['index out of range', q({ pool: '2', 'by-id': 'true' }), 404, 'NoSuchPool'],
      ['a batch with one unknown target', q({ pool: '1,7', 'by-id': 'true' }), 404, 'NoSuchPool'],
      ['a duplicate target', q({ pool: '0,0', 'by-id': 'true' }), 400, 'DuplicatePoolTarget'],
      ['every pool', q({ pool: '0,1', 'by-id': 'true' }), 409, 'LastPoolCannotBeDecommissioned'],
    ];
    for (const [name, query, code, errorCode] of cases) {
      const answer = await admin(server!.url, 'POST', path, query);
      expect([name, answer.status, answer.body.Code], JSON.stringify(answer.body)).toEqual([name, code, errorCode]);
      expect(answer.body.Message).toBeTruthy();
    }
    expect((await admin(server!.url, 'POST', '/svc/admin/v3/pools/cancel', q({ pool: '0', 'by-id': 'true' }))).body.Code).toBe('NoActiveDecommission');
    expect((await admin(server!.url, 'POST', '/svc/admin/v3/pools/clear', q({ pool: '0', 'by-id': 'true' }))).body.Code).toBe('DecommissionNotClearable');
    const unsigned = await admin(server!.url, 'POST', path, q({ pool: pool0 }), { unsigned: true });
    expect([unsigned.status, unsigned.body.Code]).toEqual([403, 'AccessDenied']);
    const forged = await admin(server!.url, 'POST', path, q({ pool: pool0 }), { credentials: { accessKeyId: 'testadmin', secretAccessKey: 'not-the-secret' } });
    expect([forged.status, forged.body.Code]).toEqual([403, 'AccessDenied']);
    // Nothing was persisted by any refused request.
    expect((await admin(server!.url, 'GET', '/svc/admin/v3/decommission/status')).body.entries).toEqual([]);

    // The appended pool takes new writes (spread by free space; these pools share one filesystem).
    const s3 = s3ClientFor(server!.url);
    for (let index = 0; index < 40; index += 1) await s3.send(new PutObjectCommand({ Bucket: 'z-last', Key: `new/${index}`, Body: `after expansion ${index}` }));
    expect((await objectFilesUnder(join(root, 'p1'))).length).toBeGreaterThan(0);
  });

  it('start returns before completion; the source refuses staged writes; new writes land on pool 1; everything moves', async () => {
    const s3 = s3ClientFor(server!.url);
    const started = await admin(server!.url, 'POST', '/svc/admin/v3/pools/decommission', q({ pool: pool0 }));
    expect(started.status).toBe(200);
    expect(['queued', 'active']).toContain(started.body.entries[0].state);
    // z-last is the last bucket (bucket concurrency 1): its object is still in pool 0.
    expect(await errorName(s3.send(new PutObjectCommand({ Bucket: 'z-last', Key: 'staged', Body: 'overwrite' })))).toBe('SlowDown');
    expect(await errorName(s3.send(new CreateMultipartUploadCommand({ Bucket: 'z-last', Key: 'staged' })))).toBe('SlowDown');
    const again = await admin(server!.url, 'POST', '/svc/admin/v3/pools/decommission', q({ pool: pool0 }));
    expect(again.body.Code).toBe('DecommissionInProgress');
    expect((await admin(server!.url, 'POST', '/svc/admin/v3/pools/clear', q({ pool: pool0 }))).body.Code).toBe('DecommissionNotClearable');
    for (let index = 0; index < 20; index += 1) await s3.send(new PutObjectCommand({ Bucket: 'a-plain', Key: `during/${index}`, Body: `written during the decommission ${index}` }));
    const pool0Files = (await objectFilesUnder(join(root, 'p0'))).join('\n');
    expect(pool0Files).not.toContain('/during/');
    const part = await s3.send(new UploadPartCommand({ Bucket: 'z-last', Key: 'draining', UploadId: draining, PartNumber: 1, Body: 'drained upload' }));
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'z-last', Key: 'draining', UploadId: draining, MultipartUpload: { Parts: [{ ETag: part.ETag, PartNumber: 1 }] } }));

    const active = await waitForState(pool0, ['active', 'completed'], 30_000);
    expect(active.progress).toMatchObject({ objects: expect.any(Number), versions: expect.any(Number), bytes: expect.any(Number), totalObjects: expect.any(Number) });
    expect(active.elapsedMs).toBeGreaterThanOrEqual(0);
    const done = await waitForState(pool0, ['completed', 'failed'], 240_000);
    expect(done.state, JSON.stringify(done)).toBe('completed');
    expect(done.progress.objects).toBeGreaterThanOrEqual(1_500 + 240 + 2);
    expect(await objectFilesUnder(join(root, 'p0'))).toEqual([]);

    await expectRecordedObjects(s3);
    expect((await admin(server!.url, 'POST', '/svc/admin/v3/pools/decommission', q({ pool: pool0 }))).body.Code).toBe('DecommissionAlreadyCompleted');
  }, 300_000);

  it('removing the decommissioned pool from the launch arguments keeps every object readable', async () => {
    const s3 = await restart([pool1]);
    await expectRecordedObjects(s3);
    expect(await md5Of(s3, 'a-plain', 'during/3')).toBe(createHash('md5').update('written during the decommission 3').digest('hex'));
    expect(await md5Of(s3, 'z-last', 'draining')).toBe(createHash('md5').update('drained upload').digest('hex'));
  }, 120_000);
});

describe('decommission across a restart', () => {
  it('a node killed in the middle of a decommission resumes it to completion after restart', async () => {
    const base = await mkdtemp(join(tmpdir(), 'svc-decommission-restart-'));
    const first = join(base, 'p0/d{1...4}');
    const second = join(base, 'p1/d{1...4}');
    const slow = { ...env, SVC_DECOMMISSION_ENTRY_CONCURRENCY: '1' };
    let node = await startSvc({ args: [first], env: slow });
    try {
      const s3 = s3ClientFor(node.url);
      await s3.send(new CreateBucketCommand({ Bucket: 'resume' }));
      for (let start = 0; start < 600; start += 20) {
        await Promise.all(Array.from({ length: 20 }, (_, offset) => s3.send(new PutObjectCommand({ Bucket: 'resume', Key: `k${start + offset}`, Body: `value ${start + offset}` }))));
      }
      const before = await versionsOf(s3, 'resume');
      await node.stop();
      node = await startSvc({ args: [first, second], env: slow });
      expect((await admin(node.url, 'POST', '/svc/admin/v3/pools/decommission', q({ pool: '0', 'by-id': 'true' }))).status).toBe(200);
      const deadline = Date.now() + 60_000;
      let entry: Record<string, any> = {};
      while (Date.now() < deadline) {
        entry = (await admin(node.url, 'GET', '/svc/admin/v3/decommission/status', q({ pool: '0', 'by-id': 'true' }))).body.entries[0];
        if (entry.state === 'active' && entry.progress.objects >= 20) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(entry.state).toBe('active');
      expect(entry.progress.objects).toBeLessThan(600);
      expect(entry.elapsedMs).toBeGreaterThanOrEqual(0);
      await node.kill();

      node = await startSvc({ args: [first, second], env });
      const resumedDeadline = Date.now() + 120_000;
      while (Date.now() < resumedDeadline) {
        entry = (await admin(node.url, 'GET', '/svc/admin/v3/decommission/status', q({ pool: '0', 'by-id': 'true' }))).body.entries[0];
        if (entry.state !== 'active' && entry.state !== 'queued') break;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(entry.state, JSON.stringify(entry)).toBe('completed');
      expect(node.logs()).toContain('resuming decommission after restart');
      expect(await objectFilesUnder(join(base, 'p0'))).toEqual([]);
      expect(await versionsOf(s3ClientFor(node.url), 'resume')).toEqual(before);
    } finally {
      await node.kill();
      await rm(base, { recursive: true, force: true });
    }
  }, 300_000);
});
