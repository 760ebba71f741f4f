/**
 * Remote tiers on a two-node process cluster, with a single-node svc deployment as the tier:
 *
 * - a restored copy (RestoreObject through the second node) is noted in its set's restored-copy
 *   index, which a restart of every node keeps; the lifecycle cycle then ends the expired copy in
 *   a bucket without rules without listing any bucket (the cycle walks no bucket and no key);
 * - `rc admin tier info` and its admin route, asked on the first node, show a deletion queued on
 *   the second node (the tier down when a transitioned object was deleted through it), one row
 *   per node with the sum; with the second node stopped, its row says unreachable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand, DeleteBucketLifecycleCommand, DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutBucketLifecycleConfigurationCommand, PutObjectCommand, RestoreObjectCommand, type S3Client,
} from '@aws-sdk/client-s3';
import { startProcessCluster, type ProcessCluster } from './helpers/process-cluster.js';
import { freePort, s3ClientFor, startSvc, testCredentials, waitReady, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { rcIn } from './helpers/rc-process.js';
import { waitFor } from './helpers/poll.js';
import { decodeStateFile } from '../src/format/state-file.js';
import { restoreIndexMagic, validateRestoreIndex } from '../src/ops/tier/restore-index.js';

let cluster: ProcessCluster;
let tier: SvcProcess | undefined;
let tierRoot: string;
let home: string;
let tierPort: number;
const body = (key: string): Buffer => Buffer.from(`the bytes of ${key}, moved to the tier and read back`);

/** Starts the tier's server (kept in `tier` before it is ready, so that afterAll stops it whatever happens). */
async function startTier(): Promise<void> {
  const started = await startSvc({ args: [join(tierRoot, 'd{1...4}')], env: { SVC_CONSOLE_ENABLE: 'false' }, port: tierPort, waitReady: false });
  tier = started;
  await waitReady(started, 60_000);
}

beforeAll(async () => {
  tierRoot = await mkdtemp(join(tmpdir(), 'svc-tier-cluster-'));
  home = await mkdtemp(join(tmpdir(), 'svc-tier-cluster-home-'));
  tierPort = await freePort();
  await startTier();
  // The lifecycle clock runs two days ahead: a one-day transition and a one-day restore are due.
  cluster = await startProcessCluster({ nodes: 2, drivesPerNode: 2, env: { SVC_LIFECYCLE_CLOCK_OFFSET: '2d' }, readyTimeoutMs: 150_000 });
  await s3ClientFor(tier!.url).send(new CreateBucketCommand({ Bucket: 'warm' }));
}, 240_000);

afterAll(async () => {
  await cluster?.destroy();
  await tier?.kill();
  await rm(tierRoot, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
});

const client = (node: number): S3Client => s3ClientFor(cluster.urls[node]!);
const nodeName = (node: number): string => new URL(cluster.urls[node]!).host;

async function runLifecycle(url: string): Promise<Record<string, any>> {
  const started = await admin(url, 'POST', '/svc/admin/v4/lifecycle/run');
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  return waitFor('the lifecycle cycle to end', async () => {
    const status = (await admin(url, 'GET', '/svc/admin/v4/lifecycle/status')).body;
    return !status.running && status.last?.startedAt === started.body.started.startedAt ? status.last : undefined;
  }, { timeoutMs: 30_000 });
}

const tierInfo = async (node: number): Promise<Record<string, any>> => {
  const answer = await admin(cluster.urls[node]!, 'GET', '/svc/admin/v4/tier/info', 'tier=warm');
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
};

describe('tiers on a cluster', () => {
  it('move objects to the tier through a rule', async () => {
    const tierBody = JSON.stringify({ name: 'warm', endpoint: tier!.url, bucket: 'warm', accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey });
    expect((await admin(cluster.urls[0]!, 'POST', '/svc/admin/v4/tier/add', '', { body: tierBody })).status).toBe(200);
    await client(0).send(new CreateBucketCommand({ Bucket: 'photos' }));
    await client(0).send(new PutBucketLifecycleConfigurationCommand({ Bucket: 'photos', LifecycleConfiguration: { Rules: [{ ID: 'warm', Status: 'Enabled', Filter: {}, Transitions: [{ Days: 1, StorageClass: 'WARM' as never }] }] } }));
    for (const key of ['restored.txt', 'deleted.txt']) await client(0).send(new PutObjectCommand({ Bucket: 'photos', Key: key, Body: body(key) }));
    expect(await runLifecycle(cluster.urls[0]!)).toMatchObject({ transitioned: 2, errors: 0 });
    expect((await client(1).send(new HeadObjectCommand({ Bucket: 'photos', Key: 'restored.txt' }))).StorageClass).toBe('WARM');
  }, 60_000);

  it('end an expired restored copy from the index kept across a restart, listing no bucket', async () => {
    // No rules left: no cycle has a reason to list the bucket.
    await client(0).send(new DeleteBucketLifecycleCommand({ Bucket: 'photos' }));
    const restored = await client(1).send(new RestoreObjectCommand({ Bucket: 'photos', Key: 'restored.txt', RestoreRequest: { Days: 1 } }));
    expect(restored.$metadata.httpStatusCode).toBe(202);
    expect((await client(0).send(new HeadObjectCommand({ Bucket: 'photos', Key: 'restored.txt' }))).Restore).toMatch(/^ongoing-request="false", expiry-date=/);

    // The copy is noted in the index of its set, on every drive of the set (each node's two).
    for (const drive of ['node1/data1', 'node2/data2']) {
      const index = validateRestoreIndex(decodeStateFile(restoreIndexMagic, await readFile(join(cluster.root, drive, '.svc.sys', 'restored.bin'))));
      expect(index.copies.map((copy) => [copy.bucket, copy.key, copy.versionId])).toEqual([['photos', 'restored.txt', 'null']]);
    }

    await Promise.all([0, 1].map((node) => cluster.stop(node)));
    await Promise.all([0, 1].map((node) => cluster.start(node)));

    const cycle = await runLifecycle(cluster.urls[0]!);
    expect(cycle).toMatchObject({ bucketsScanned: 0, objectsScanned: 0, versionsScanned: 0, restoredCopiesEnded: 1, repairWalk: false, errors: 0 });
    expect((await client(1).send(new HeadObjectCommand({ Bucket: 'photos', Key: 'restored.txt' }))).Restore).toBeUndefined();
    const read = await client(1).send(new GetObjectCommand({ Bucket: 'photos', Key: 'restored.txt' }));
    expect(Buffer.from(await read.Body!.transformToByteArray()).equals(body('restored.txt'))).toBe(true);
    // The entry is gone from the index: the next cycle has nothing to end.
    expect(await runLifecycle(cluster.urls[0]!)).toMatchObject({ restoredCopiesEnded: 0, objectsScanned: 0, errors: 0 });
  }, 120_000);

  it('show every node\'s deletion queue in tier info, and a stopped node as unreachable', async () => {
    await tier!.kill();
    tier = undefined;
    // Deleted through the second node while the tier is down: its tier object waits in that node's queue.
    await client(1).send(new DeleteObjectCommand({ Bucket: 'photos', Key: 'deleted.txt' }));
    const info = await waitFor('the deletion to wait on the second node', async () => {
      const answer = await tierInfo(0);
      return answer.nodes?.find((row: Record<string, any>) => row.node === nodeName(1))?.pending === 1 ? answer : undefined;
    }, { timeoutMs: 20_000 });
    expect(info.nodes.map((row: Record<string, any>) => [row.node, row.state])).toEqual([[nodeName(0), 'answered'], [nodeName(1), 'answered']]);
    expect(info.nodes[0]).toMatchObject({ pending: 0 });
    expect(info.nodes[1].oldestQueuedAt).toEqual(expect.any(String));
    expect(info.deletions).toMatchObject({ tier: 'WARM', pending: 1, nodesAnswered: 2, nodesUnreachable: 0, oldestQueuedAt: info.nodes[1].oldestQueuedAt });
    const { ok } = rcIn(() => home);
    await ok('alias', 'set', 'first', cluster.urls[0]!, testCredentials.accessKeyId, testCredentials.secretAccessKey);
    const printed = await ok('admin', 'tier', 'info', 'first', 'warm');
    expect(printed).toMatch(new RegExp(`${nodeName(1).replace(/\./g, '\\.')}\\s+answered\\s+1\\s`));
    expect(printed).toContain('pending deletions on all nodes: 1');

    await cluster.stop(1);
    const without = await tierInfo(0);
    expect(without.nodes.map((row: Record<string, any>) => [row.node, row.state])).toEqual([[nodeName(0), 'answered'], [nodeName(1), 'unreachable']]);
    expect(without.nodes[1].error).toEqual(expect.any(String));
    expect(without.nodes[1].pending).toBeUndefined();
    expect(without.deletions).toMatchObject({ pending: 0, nodesAnswered: 1, nodesUnreachable: 1 });
    const printedWithout = await ok('admin', 'tier', 'info', 'first', 'warm');
    expect(printedWithout).toMatch(new RegExp(`${nodeName(1).replace(/\./g, '\\.')}\\s+unreachable`));
    expect(printedWithout).toContain('1 node unreachable, not counted');
  }, 90_000);
});
