/**
 * Writes made while a node is down reach its drives once it is back, without a heal being asked
 * for: the read-repair queue (MRF) heals each such object at once, finds the node's drives
 * offline, and tries again later (5 s, then doubling) until they answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { s3ClientFor } from './helpers/server-process.js';
import { startProcessCluster, type ProcessCluster } from './helpers/process-cluster.js';
import { withClusterLogs } from './helpers/cluster.js';
import { admin } from './helpers/admin-client.js';

let cluster: ProcessCluster;

beforeAll(async () => {
  // Four nodes of two drives: one set of eight at EC:2, so one node down still takes writes.
  cluster = await startProcessCluster({ nodes: 4, drivesPerNode: 2 });
}, 120_000);
afterAll(async () => {
  await cluster?.destroy();
});

const onNode4 = (key: string) => [1, 2].map((drive) => join(cluster.root, 'node4', `data${drive}`, 'mrf', key, 'xl.meta'));

describe('the read-repair queue and a node that was down', () => {
  it('objects written while node 4 was stopped reach its drives after it returns, with no heal asked for', () =>
    withClusterLogs(cluster, async () => {
      const s3 = s3ClientFor(cluster.urls[0]!);
      await s3.send(new CreateBucketCommand({ Bucket: 'mrf' }));
      // A graceful stop: no unclean-shutdown heal when it comes back, so only the queue can heal.
      await cluster.stop(3);
      const keys = ['small', 'large'];
      await s3.send(new PutObjectCommand({ Bucket: 'mrf', Key: 'small', Body: 'x'.repeat(1000) }));
      await s3.send(new PutObjectCommand({ Bucket: 'mrf', Key: 'large', Body: Buffer.alloc(3 * 1024 * 1024, 7) }));
      for (const key of keys) expect(onNode4(key).some(existsSync)).toBe(false);
      // Both were tried at once (the write asked for it) and wait for node 4's drives.
      const mrf = async () => (await admin(cluster.urls[0]!, 'POST', '/svc/admin/v3/background-heal/status')).body.mrf;
      await expect.poll(mrf, { timeout: 15_000 }).toMatchObject({ awaitingDrives: keys.length });
      await cluster.start(3);
      const deadline = Date.now() + 45_000;
      while (Date.now() < deadline && !keys.every((key) => onNode4(key).every(existsSync))) await new Promise((resolve) => setTimeout(resolve, 250));
      for (const key of keys) expect(onNode4(key).every(existsSync), key).toBe(true);
      const after = await admin(cluster.urls[0]!, 'POST', '/svc/admin/v3/background-heal/status');
      expect(after.body.mrf).toMatchObject({ awaitingDrives: 0 });
      expect(after.body.mrf.retried).toBeGreaterThanOrEqual(keys.length);
    }), 120_000);
});
