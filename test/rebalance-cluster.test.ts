import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProcessCluster, type ProcessCluster } from './helpers/process-cluster.js';
import { withClusterLogs } from './helpers/cluster.js';
import { admin } from './helpers/admin-client.js';

let cluster: ProcessCluster;

beforeAll(async () => {
  cluster = await startProcessCluster({ nodes: 3, drivesPerNode: 2, poolPaths: ['/p0/d{1...2}', '/p1/d{1...2}'] });
}, 120_000);
afterAll(async () => {
  await cluster?.destroy();
});

describe('rebalance in a three-node cluster', () => {
  it('is started through a follower and seen from every node; a start that cannot reach a peer rolls back and names it', () =>
    withClusterLogs(cluster, async () => {
      const started = await admin(cluster.urls[1]!, 'POST', '/svc/admin/v3/rebalance/start');
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      for (const url of cluster.urls) expect((await admin(url, 'GET', '/svc/admin/v3/rebalance/status')).body.id).toBe(started.body.id);

      await cluster.kill(2);
      const third = new URL(cluster.urls[2]!).host;
      const refused = await admin(cluster.urls[0]!, 'POST', '/svc/admin/v3/rebalance/start');
      expect([refused.status, refused.body.Code], JSON.stringify(refused.body)).toEqual([503, 'RebalancePropagationFailed']);
      expect(refused.body.Message).toContain(third);
      const status = (await admin(cluster.urls[1]!, 'GET', '/svc/admin/v3/rebalance/status')).body;
      expect(status.id).not.toBe(started.body.id);
      expect(status.pools.map((pool: any) => pool.status)).toEqual(['stopped', 'stopped']);
      expect(status.stopPropagation).toEqual({ complete: false, failedPeers: [third] });
      await cluster.start(2);
    }), 120_000);
});
