/**
 * Lifecycle on a two-node process cluster: a bucket is scanned by one node at a time (cycles
 * started on both nodes at once: one scans, the other finds the bucket's lock held and skips
 * it), rules put through one node are applied by the other, and the rules survive a restart of
 * every node.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateBucketCommand, GetBucketLifecycleConfigurationCommand, ListObjectsV2Command, PutBucketLifecycleConfigurationCommand, PutObjectCommand, type LifecycleRule } from '@aws-sdk/client-s3';
import { startProcessCluster, type ProcessCluster } from './helpers/process-cluster.js';
import { s3ClientFor } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';

let cluster: ProcessCluster;

beforeAll(async () => {
  cluster = await startProcessCluster({ nodes: 2, drivesPerNode: 2, env: { SVC_LIFECYCLE_OBJECTS_PER_SECOND: '5' } });
}, 120_000);
afterAll(async () => {
  await cluster?.destroy();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function lastCycle(url: string): Promise<Record<string, any>> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(100)) {
    const status = await admin(url, 'GET', '/svc/admin/v4/lifecycle/status');
    if (status.body.running === false && status.body.last) return status.body.last;
  }
  throw new Error(`the lifecycle cycle on ${url} did not end`);
}

describe('lifecycle on a cluster', () => {
  it('scans a bucket on one node at a time, applies rules put through another node, and keeps them across a restart of every node', async () => {
    const [first, second] = cluster.urls.map((url) => s3ClientFor(url)) as [ReturnType<typeof s3ClientFor>, ReturnType<typeof s3ClientFor>];
    await first.send(new CreateBucketCommand({ Bucket: 'shared' }));
    for (let index = 0; index < 10; index += 1) await first.send(new PutObjectCommand({ Bucket: 'shared', Key: `k${index}`, Body: 'x' }));
    await first.send(new PutBucketLifecycleConfigurationCommand({ Bucket: 'shared', LifecycleConfiguration: { Rules: [{ ID: 'month', Status: 'Enabled', Filter: {}, Expiration: { Days: 30 } }] } }));

    // Ten keys at five a second hold the bucket's lock for two seconds; the other node waits one and skips it.
    const started = await Promise.all(cluster.urls.map((url) => admin(url, 'POST', '/svc/admin/v4/lifecycle/run')));
    expect(started.map((answer) => answer.status)).toEqual([200, 200]);
    const cycles = await Promise.all(cluster.urls.map((url) => lastCycle(url)));
    expect(cycles.map((cycle) => [cycle.bucketsScanned, cycle.bucketsSkipped]).sort()).toEqual([[0, 1], [1, 0]]);
    expect(cycles.map((cycle) => cycle.objectsScanned).sort()).toEqual([0, 10]);

    // Rules changed through the second node; the first applies them.
    const rules: LifecycleRule[] = [{ ID: 'past', Status: 'Enabled', Filter: { Prefix: 'k1' }, Expiration: { Date: new Date('2020-01-01T00:00:00Z') } }];
    await second.send(new PutBucketLifecycleConfigurationCommand({ Bucket: 'shared', LifecycleConfiguration: { Rules: rules } }));
    expect((await admin(cluster.urls[0]!, 'POST', '/svc/admin/v4/lifecycle/run')).status).toBe(200);
    // Only the keys under the rule's prefix are walked (restored copies end from their index, not from a walk).
    expect(await lastCycle(cluster.urls[0]!)).toMatchObject({ bucketsScanned: 1, objectsScanned: 1, expired: { currentVersions: 1 }, errors: 0 });
    const listed = await second.send(new ListObjectsV2Command({ Bucket: 'shared' }));
    expect(listed.Contents?.map((item) => item.Key)).toEqual(['k0', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8', 'k9']);

    await Promise.all([0, 1].map((index) => cluster.stop(index)));
    await Promise.all([0, 1].map((index) => cluster.start(index)));
    for (const url of cluster.urls) {
      expect((await s3ClientFor(url).send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'shared' }))).Rules).toEqual(rules);
    }
  }, 180_000);
});
