/**
 * A resync whose walk fails is not lost: while the source's drives refuse to list the bucket
 * (injected faults, as when too many drives or nodes are away), a configuration with
 * ExistingObjectReplication starts its resync, which shows `failed` with its error; once the
 * drives list again the resync is tried again by itself, and every object that existed before the
 * rule reaches the target.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { waitFor } from './helpers/poll.js';
import { addTarget, replicate, replicationStatus, sameVersions, versionedBucket, versionList } from './helpers/replication.js';

let root: string;
let source: SvcProcess;
let target: SvcProcess;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-resync-retry-'));
  [source, target] = await Promise.all([
    startSvc({ args: [join(root, 'source', 'd{1...4}')], env: { SVC_FAULT_INJECTION: 'on' } }),
    startSvc({ args: [join(root, 'target', 'd{1...4}')] }),
  ]);
}, 60_000);

afterAll(async () => {
  await source?.stop();
  await target?.stop();
  await rm(root, { recursive: true, force: true });
});

/** Sets the fault plan of every drive of the source. */
async function sourceFaults(plan: object): Promise<void> {
  const drives = ((await admin(source.url, 'GET', '/svc/admin/v4/faults')).body.drives as { drive: string }[]).map((entry) => entry.drive);
  expect(drives).toHaveLength(4);
  for (const drive of drives) expect((await admin(source.url, 'POST', '/svc/admin/v4/faults', `drive=${encodeURIComponent(drive)}`, { body: JSON.stringify(plan) })).status).toBe(200);
}

describe('a resync that fails', () => {
  it('is tried again by itself once the drives list again, and the objects that existed before the rule arrive', async () => {
    await versionedBucket(source, 'before');
    await versionedBucket(target, 'before-copy');
    for (let index = 0; index < 3; index += 1) await s3ClientFor(source.url).send(new PutObjectCommand({ Bucket: 'before', Key: `old/${index}`, Body: `old ${index}` }));
    expect((await addTarget(source, 'before', target, 'before-copy')).status).toBe(200);
    const refused = { error: 'EIO', pathContains: 'before' };
    await sourceFaults({ operations: { walk: refused, listDir: refused } });
    await replicate(source, 'before', 'before-copy', true);
    const failed = await waitFor('the resync shows failed', async () => (await replicationStatus(source, 'before')).resyncs.find((resync: { status: string }) => resync.status === 'failed'));
    expect(failed.error).toEqual(expect.any(String));
    expect(await versionList(s3ClientFor(target.url), 'before-copy')).toEqual([]);
    await sourceFaults({});
    expect(await sameVersions(() => source, 'before', () => target, 'before-copy')).toHaveLength(3);
    await waitFor('the resync reads completed', async () => (await replicationStatus(source, 'before')).resyncs[0]?.status === 'completed');
  }, 60_000);
});
