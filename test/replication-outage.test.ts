/**
 * Bucket replication when the target cannot take it (real processes, AWS SDK): credentials the
 * target stops accepting after the target was added are a counted, visible failure, retried until
 * they work again; the target stopped, and the source restarted meanwhile, leaves the backlog on
 * the source's drive (FAILED shows), and it drains when the target is back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { waitFor } from './helpers/poll.js';
import { rcIn } from './helpers/rc-process.js';
import { addTarget, replicate, replicationStatus, sameVersions, versionedBucket } from './helpers/replication.js';

let rootA: string;
let rootB: string;
let a: SvcProcess;
let b: SvcProcess;
const { ok } = rcIn(() => rootA);
const replicator = { accessKeyId: 'replicator', secretAccessKey: 'replicator-secret-1' };

const startA = (port?: number) => startSvc({ args: [join(rootA, 'd{1...4}')], ...(port !== undefined ? { port } : {}) });
const startB = (port?: number) => startSvc({ args: [join(rootB, 'd{1...4}')], ...(port !== undefined ? { port } : {}) });
const same = (timeoutMs?: number) => sameVersions(() => a, 'src', () => b, 'dst', timeoutMs);

/** The one target's state on the source, once `done` holds for it. */
const targetWhen = (what: string, done: (target: Record<string, any>) => boolean, timeoutMs = 20_000) =>
  waitFor(what, async () => {
    const target = (await replicationStatus(a, 'src')).targets[0];
    return done(target) ? target : undefined;
  }, { timeoutMs });

beforeAll(async () => {
  rootA = await mkdtemp(join(tmpdir(), 'svc-replication-outage-a-'));
  rootB = await mkdtemp(join(tmpdir(), 'svc-replication-outage-b-'));
  a = await startA();
  b = await startB();
  await versionedBucket(a, 'src');
  await versionedBucket(b, 'dst');
  await admin(b.url, 'POST', '/svc/admin/v4/iam/user/add', '', { body: JSON.stringify({ accessKey: replicator.accessKeyId, secretKey: replicator.secretAccessKey, policies: ['readwrite'] }) });
  expect((await addTarget(a, 'src', b, 'dst', replicator)).status).toBe(200);
  await replicate(a, 'src', 'dst');
  await ok('alias', 'set', 'a', a.url, testCredentials.accessKeyId, testCredentials.secretAccessKey);
}, 60_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  for (const root of [rootA, rootB]) if (root) await rm(root, { recursive: true, force: true });
}, 30_000);

describe('a target that cannot take it', () => {
  it('credentials the target stops accepting are a counted failure, retried until they work again', async () => {
    await s3ClientFor(a.url).send(new PutObjectCommand({ Bucket: 'src', Key: 'before', Body: 'fine' }));
    await same();
    const failedBefore = (await replicationStatus(a, 'src')).targets[0].failed;
    await admin(b.url, 'POST', '/svc/admin/v4/iam/user/disable', `accessKey=${replicator.accessKeyId}`);
    await s3ClientFor(a.url).send(new PutObjectCommand({ Bucket: 'src', Key: 'refused', Body: 'waits' }));
    const refused = await targetWhen('a refused attempt is counted', (target) => target.failed > failedBefore && target.queued === 1);
    expect(refused.lastError).toMatch(/InvalidAccessKeyId|AccessDenied|credentials/);
    await admin(b.url, 'POST', '/svc/admin/v4/iam/user/enable', `accessKey=${replicator.accessKeyId}`);
    await same();
    await targetWhen('the queue drained', (target) => target.queued === 0 && target.lastError === null);
  });

  it('the target stopped and the source restarted meanwhile: FAILED shows, the queue stays on the drive, and drains when the target is back', async () => {
    const s3 = s3ClientFor(a.url);
    const portB = b.port;
    await b.stop();
    for (let index = 0; index < 5; index += 1) await s3.send(new PutObjectCommand({ Bucket: 'src', Key: `backlog/${index}`, Body: `value ${index}` }));
    const waiting = await targetWhen('a failed attempt is counted', (target) => target.failed > 0 && target.queued === 5);
    expect(typeof waiting.lastError).toBe('string');
    await waitFor('the first waiting version reads FAILED', async () => (await s3.send(new HeadObjectCommand({ Bucket: 'src', Key: 'backlog/0' }))).ReplicationStatus === 'FAILED', { timeoutMs: 20_000 });
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'src', Key: 'backlog/4' }))).ReplicationStatus).toBe('PENDING');
    expect(await ok('admin', 'replicate', 'status', 'a/src')).toContain('last attempt failed');

    // The source restarts while the target is down: the queue is on its drive.
    const portA = a.port;
    await a.stop();
    a = await startA(portA);
    expect((await replicationStatus(a, 'src')).targets[0].queued).toBe(5);
    b = await startB(portB);
    await same(45_000);
    await waitFor('the backlog reads COMPLETED', async () => (await s3ClientFor(a.url).send(new HeadObjectCommand({ Bucket: 'src', Key: 'backlog/4' }))).ReplicationStatus === 'COMPLETED', { timeoutMs: 20_000 });
    const drained = await targetWhen('the queue drained', (target) => target.queued === 0);
    expect(drained.lastError).toBeNull();
  }, 90_000);
});
