/**
 * Admin heal and rebalance request rules on a real server: `nolock: true` still takes the object
 * lock (a heal waits for a PUT of the same object that holds it), `/heal` without the trailing
 * slash is the root heal, and rebalance start/stop refuse even a bare `?`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';

let root: string;
let server: SvcProcess;
let s3: S3Client;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-heal-rules-'));
  server = await startSvc({ args: [join(root, 'd{1...4}')], env: { SVC_CONSOLE_ENABLE: 'false', SVC_FAULT_INJECTION: 'on' } });
  s3 = s3ClientFor(server.url);
  await s3.send(new CreateBucketCommand({ Bucket: 'locked' }));
  await s3.send(new PutObjectCommand({ Bucket: 'locked', Key: 'object', Body: 'first' }));
}, 60_000);
afterAll(async () => {
  await server?.kill();
  await rm(root, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('admin heal takes the object lock', () => {
  it('a heal with nolock: true waits for a PUT of the same object that holds the lock', async () => {
    const drives = ((await admin(server.url, 'GET', '/svc/admin/v4/faults')).body.drives as { drive: string }[]).map((entry) => entry.drive);
    const setFaults = async (plan: unknown) => {
      for (const drive of drives) expect((await admin(server.url, 'POST', '/svc/admin/v4/faults', `drive=${encodeURIComponent(drive)}`, { body: JSON.stringify(plan) })).status).toBe(200);
    };
    // A small (inline) PUT writes only xl.meta, under the object's write lock: slow that write.
    await setFaults({ operations: { writeFileAtomic: { latencyMs: 1500 } } });
    let putDoneMs = 0;
    const put = s3.send(new PutObjectCommand({ Bucket: 'locked', Key: 'object', Body: 'second' })).then(() => (putDoneMs = Date.now()));
    await sleep(300);
    const started = await admin(server.url, 'POST', '/svc/admin/v3/heal/locked/object', '', { body: JSON.stringify({ nolock: true }) });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const token = started.body.clientToken as string;
    let healDoneMs = 0;
    for (const deadline = Date.now() + 20_000; Date.now() < deadline && healDoneMs === 0; await sleep(50)) {
      const status = await admin(server.url, 'POST', '/svc/admin/v3/heal/locked/object', `clientToken=${token}`);
      if (status.body.status !== 'running') healDoneMs = Date.now();
    }
    await put;
    await setFaults({});
    expect(healDoneMs).toBeGreaterThan(0);
    // Reading a healthy inline object takes milliseconds; the heal ended only after the PUT released the lock.
    expect(healDoneMs).toBeGreaterThanOrEqual(putDoneMs - 100);
  }, 60_000);
});

describe('heal and rebalance paths and queries', () => {
  it('POST /svc/admin/v3/heal without the trailing slash is the root heal', async () => {
    const refused = await admin(server.url, 'POST', '/svc/admin/v3/heal', '', { body: '{}' });
    expect([refused.status, refused.body.Code]).toEqual([400, 'InvalidArgument']);
    const started = await admin(server.url, 'POST', '/svc/admin/v3/heal', '', { body: JSON.stringify({ pool: 0, set: 0 }) });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect(started.body.clientToken).toEqual(expect.any(String));
  });

  it('rebalance start and stop refuse a bare ? as a query string', async () => {
    for (const action of ['start', 'stop']) {
      const answer = await admin(server.url, 'POST', `/svc/admin/v3/rebalance/${action}`, '', { bareQuestionMark: true });
      expect([answer.status, answer.body.Code], action).toEqual([400, 'InvalidQueryParameter']);
    }
  });
});
