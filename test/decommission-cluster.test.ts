import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateBucketCommand, PutObjectCommand, GetObjectCommand } from '@aws-sdk/client-s3';
import { s3ClientFor } from './helpers/server-process.js';
import { startProcessCluster, type ProcessCluster } from './helpers/process-cluster.js';
import { withClusterLogs } from './helpers/cluster.js';
import { admin } from './helpers/admin-client.js';
import { errorName } from './scenarios/node-failure.js';

let cluster: ProcessCluster;
const q = (pairs: Record<string, string>) => new URLSearchParams(pairs).toString();

beforeAll(async () => {
  cluster = await startProcessCluster({ nodes: 2, drivesPerNode: 2, poolPaths: ['/p0/d{1...2}'], env: { SVC_DECOMMISSION_BUCKET_CONCURRENCY: '1', SVC_DECOMMISSION_ENTRY_CONCURRENCY: '2' } });
}, 120_000);
afterAll(async () => {
  await cluster?.destroy();
});

describe('decommission in a two-node cluster', () => {
  it('is started, followed and completed through the node that is not the leader', () =>
    withClusterLogs(cluster, async () => {
      const first = s3ClientFor(cluster.urls[0]!);
      await first.send(new CreateBucketCommand({ Bucket: 'data' }));
      await first.send(new CreateBucketCommand({ Bucket: 'z-last' }));
      for (let start = 0; start < 300; start += 20) {
        await Promise.all(Array.from({ length: 20 }, (_, offset) => first.send(new PutObjectCommand({ Bucket: 'data', Key: `k${start + offset}`, Body: `value ${start + offset}` }))));
      }
      await first.send(new PutObjectCommand({ Bucket: 'z-last', Key: 'staged', Body: 'in pool 0' }));

      // Expansion: every node restarts with a second pool appended.
      await Promise.all([cluster.stop(0), cluster.stop(1)]);
      cluster.setPools(['/p0/d{1...2}', '/p1/d{1...2}']);
      await Promise.all([cluster.start(0), cluster.start(1)]);

      const second = cluster.urls[1]!;
      const started = await admin(second, 'POST', '/svc/admin/v3/pools/decommission', q({ pool: '0', 'by-id': 'true' }));
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      expect(['queued', 'active']).toContain(started.body.entries[0].state);
      // The follower refuses staged writes to the source pool as the leader does.
      expect(await errorName(s3ClientFor(second).send(new PutObjectCommand({ Bucket: 'z-last', Key: 'staged', Body: 'overwrite' })))).toBe('SlowDown');

      let entry: Record<string, any> = {};
      const deadline = Date.now() + 120_000;
      while (Date.now() < deadline) {
        entry = (await admin(second, 'GET', '/svc/admin/v3/decommission/status', q({ pool: '0', 'by-id': 'true' }))).body.entries[0];
        if (entry.state === 'completed' || entry.state === 'failed') break;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(entry.state, JSON.stringify(entry)).toBe('completed');
      const listed = await admin(cluster.urls[0]!, 'GET', '/svc/admin/v3/pools/list');
      expect(listed.body.pools[0].decommission.state).toBe('completed');
      const object = await s3ClientFor(second).send(new GetObjectCommand({ Bucket: 'data', Key: 'k123' }));
      expect(await object.Body!.transformToString()).toBe('value 123');
    }), 240_000);
});
