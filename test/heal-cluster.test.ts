/** Drive replacement and crash recovery in a 4-node x 4-drive process cluster (one set of 16, EC:4). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { s3ClientFor } from './helpers/server-process.js';
import { startProcessCluster, type ProcessCluster } from './helpers/process-cluster.js';
import { withClusterLogs } from './helpers/cluster.js';
import { admin } from './helpers/admin-client.js';
import { WriteChecker } from '../conformance/chaos/checker.js';
import { createPrng } from '../src/util/prng.js';

let cluster: ProcessCluster;
const md5 = (bytes: Uint8Array | string) => createHash('md5').update(bytes).digest('hex');
const written = new Map<string, string>();

beforeAll(async () => {
  cluster = await startProcessCluster({ nodes: 4, drivesPerNode: 4 });
  const s3 = s3ClientFor(cluster.urls[0]!);
  await s3.send(new CreateBucketCommand({ Bucket: 'cluster' }));
  for (let index = 0; index < 30; index += 1) {
    const body = index % 6 === 0 ? Buffer.alloc(2 * 1024 * 1024 + index, index) : `cluster object ${index} `.repeat(30);
    await s3.send(new PutObjectCommand({ Bucket: 'cluster', Key: `o${index}`, Body: body }));
    written.set(`o${index}`, md5(body));
  }
}, 120_000);
afterAll(async () => {
  await cluster?.destroy();
});

async function xlMetaCount(directory: string): Promise<number> {
  let count = 0;
  for (const entry of await readdir(directory, { withFileTypes: true, recursive: true }).catch(() => [])) if (entry.isFile() && entry.name === 'xl.meta' && !entry.parentPath.includes('.svc.sys')) count += 1;
  return count;
}

describe('heal in a four-node cluster', () => {
  it('a wiped drive stays out until its set is healed; reads meanwhile are right; afterwards every shard is back', () =>
    withClusterLogs(cluster, async () => {
      await cluster.stop(3);
      const wiped = join(cluster.root, 'node4', 'data2');
      await rm(wiped, { recursive: true, force: true });
      await mkdir(wiped);
      const restarting = cluster.start(3);
      // Reads through the other nodes while node 4 comes back and heals never return wrong bytes.
      const reader = s3ClientFor(cluster.urls[0]!);
      let reads = 0;
      let done = false;
      const reading = (async () => {
        while (!done) {
          for (const [key, digest] of written) {
            const object = await reader.send(new GetObjectCommand({ Bucket: 'cluster', Key: key }));
            expect(md5(await object.Body!.transformToByteArray()), key).toBe(digest);
            reads += 1;
          }
        }
      })();
      await restarting;
      expect(cluster.nodes[3]!.logs()).toContain('replaced drive found');
      const deadline = Date.now() + 90_000;
      let report: Record<string, any> = {};
      while (Date.now() < deadline) {
        report = (await admin(cluster.urls[3]!, 'GET', '/svc/admin/v4/heal/replacement-recovery')).body;
        if (report.instances?.[0]?.completed) break;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      done = true;
      await reading;
      expect(reads).toBeGreaterThan(0);
      expect(report.instances?.[0], JSON.stringify(report)).toMatchObject({ slot: 13, completed: true, objectsFailed: 0 });
      expect(await xlMetaCount(wiped)).toBe(written.size);
      const deep = await admin(cluster.urls[3]!, 'POST', '/svc/admin/v3/heal/cluster', '', { body: JSON.stringify({ scanMode: 'deep', dryRun: true }) });
      let status: Record<string, any> = {};
      const scanDeadline = Date.now() + 60_000;
      do {
        await new Promise((resolve) => setTimeout(resolve, 100));
        status = (await admin(cluster.urls[3]!, 'POST', '/svc/admin/v3/heal/cluster', `clientToken=${deep.body.clientToken}`)).body;
      } while (status.status === 'running' && Date.now() < scanDeadline);
      expect(status.counts).toMatchObject({ objectsScanned: written.size, objectsUnrecoverable: 0, failures: 0 });
      expect(status.items.every((item: any) => item.outcome === 'healthy' && item.before.every((slot: any) => slot.state === 'ok'))).toBe(true);
    }), 240_000);

  it('a node killed with SIGKILL during PUT traffic heals its sets after restart; acknowledged writes read back, others are whole or absent', () =>
    withClusterLogs(cluster, async () => {
      const checker = new WriteChecker('cluster');
      const prng = createPrng(23);
      const writes = Array.from({ length: 40 }, (_, index) => checker.put(s3ClientFor(cluster.urls[index % 2]!), `crash-${index}`, prng));
      await new Promise((resolve) => setTimeout(resolve, 40));
      await cluster.kill(1);
      await Promise.all(writes);
      await cluster.start(1);
      const logs = cluster.nodes[1]!.logs();
      expect(logs).toContain('the last shutdown was unclean');
      expect(logs).toContain('unclean-0-0');
      expect(checker.acknowledged).toBeGreaterThan(0);
      // Acknowledged writes read back identical; unacknowledged ones are whole or absent.
      expect(await checker.verify(s3ClientFor(cluster.urls[2]!))).toEqual([]);
    }), 180_000);

  it('a heal started on one node is followed and stopped through the others: its client token names its node', () =>
    withClusterLogs(cluster, async () => {
      const started = await admin(cluster.urls[2]!, 'POST', '/svc/admin/v3/heal/cluster', '', { body: JSON.stringify({ scanMode: 'deep', dryRun: true }) });
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      const token = String(started.body.clientToken);
      expect(token).toMatch(/@2$/);
      const query = `clientToken=${encodeURIComponent(token)}`;
      const elsewhere = await admin(cluster.urls[0]!, 'POST', '/svc/admin/v3/heal/cluster', query);
      expect(elsewhere.status, JSON.stringify(elsewhere.body)).toBe(200);
      expect(elsewhere.body).toMatchObject({ clientToken: token, path: { bucket: 'cluster' } });
      // The root path finds it too; another path is refused as on its own node.
      expect((await admin(cluster.urls[3]!, 'POST', '/svc/admin/v3/heal/', query)).body.clientToken).toBe(token);
      // Unencoded in the query ('@' may stand as it is), it is the same token.
      expect((await admin(cluster.urls[3]!, 'POST', '/svc/admin/v3/heal/cluster', `clientToken=${token}`)).body.clientToken).toBe(token);
      const otherPath = await admin(cluster.urls[1]!, 'POST', '/svc/admin/v3/heal/cluster/o1', query);
      expect([otherPath.status, otherPath.body.Code]).toEqual([400, 'InvalidArgument']);
      const stopped = await admin(cluster.urls[1]!, 'POST', '/svc/admin/v3/heal/cluster', `${query}&forceStop=true`);
      expect(stopped.status, JSON.stringify(stopped.body)).toBe(200);
      expect(stopped.body.status).not.toBe('running');
      expect((await admin(cluster.urls[2]!, 'POST', '/svc/admin/v3/heal/cluster', query)).body.status).toBe(stopped.body.status);
      // A token naming no node of the cluster is unknown, not an error of the cluster.
      const unknown = await admin(cluster.urls[0]!, 'POST', '/svc/admin/v3/heal/cluster', `clientToken=${encodeURIComponent('nothing@9')}`);
      expect([unknown.status, unknown.body.Code]).toEqual([404, 'NoSuchHealSequence']);
    }), 60_000);
});
