/**
 * Bucket replication from a four-node cluster (real processes on 127.0.0.2-5) to a one-node
 * deployment: the remote target added through one node and the configuration put through
 * another are known to every node (replication.bin), writes through each node are queued on that
 * node and all arrive with their version ids and times, delete markers included. The status
 * asked of any node has one row per node (each node's own queue) and the totals; a resync
 * started through a node that is not the leader runs on the leader.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, DeleteObjectCommand, ListObjectVersionsCommand, PutBucketReplicationCommand, PutBucketVersioningCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { startProcessCluster, type ProcessCluster } from './helpers/process-cluster.js';
import { admin } from './helpers/admin-client.js';
import { waitFor } from './helpers/poll.js';

let cluster: ProcessCluster;
let rootTarget: string;
let target: SvcProcess;

async function versionList(s3: S3Client, bucket: string): Promise<string[]> {
  const page = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket }));
  return [
    ...(page.Versions ?? []).map((version) => `${version.Key} ${version.VersionId} ${version.LastModified!.toISOString()} ${version.ETag}`),
    ...(page.DeleteMarkers ?? []).map((marker) => `${marker.Key} ${marker.VersionId} ${marker.LastModified!.toISOString()} marker`),
  ].sort();
}

beforeAll(async () => {
  rootTarget = await mkdtemp(join(tmpdir(), 'svc-replication-target-'));
  // One after the other: five processes starting at once on a busy machine may miss the ready wait.
  cluster = await startProcessCluster({ nodes: 4, drivesPerNode: 2 });
  target = await startSvc({ args: [join(rootTarget, 'd{1...4}')] });
}, 90_000);

afterAll(async () => {
  await Promise.all([cluster?.destroy(), target?.stop()]);
  if (rootTarget) await rm(rootTarget, { recursive: true, force: true });
}, 30_000);

describe('a four-node source', () => {
  it('replicates writes made through every node', async () => {
    const first = s3ClientFor(cluster.urls[0]!);
    await first.send(new CreateBucketCommand({ Bucket: 'photos' }));
    await first.send(new PutBucketVersioningCommand({ Bucket: 'photos', VersioningConfiguration: { Status: 'Enabled' } }));
    await s3ClientFor(target.url).send(new CreateBucketCommand({ Bucket: 'photos-copy' }));
    await s3ClientFor(target.url).send(new PutBucketVersioningCommand({ Bucket: 'photos-copy', VersioningConfiguration: { Status: 'Enabled' } }));
    const body = JSON.stringify({ bucket: 'photos', endpoint: target.url, targetBucket: 'photos-copy', accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey });
    const added = await admin(cluster.urls[0]!, 'POST', '/svc/admin/v4/replication/target/add', '', { body });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    await s3ClientFor(cluster.urls[1]!).send(new PutBucketReplicationCommand({
      Bucket: 'photos',
      ReplicationConfiguration: { Role: '', Rules: [{ ID: 'all', Priority: 1, Status: 'Enabled', Filter: { Prefix: '' }, DeleteMarkerReplication: { Status: 'Enabled' }, Destination: { Bucket: 'arn:aws:s3:::photos-copy' } }] },
    }));
    for (const [index, url] of cluster.urls.entries()) {
      const s3 = s3ClientFor(url);
      await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: `node-${index}/a.jpg`, Body: `first from ${index}` }));
      await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: `node-${index}/a.jpg`, Body: `second from ${index}` }));
      if (index % 2 === 1) await s3.send(new DeleteObjectCommand({ Bucket: 'photos', Key: `node-${index}/a.jpg` }));
    }
    let source: string[] = [];
    await waitFor('the target holds every version of the source', async () => {
      source = await versionList(first, 'photos');
      return JSON.stringify(source) === JSON.stringify(await versionList(s3ClientFor(target.url), 'photos-copy'));
    }, { timeoutMs: 45_000, intervalMs: 200 });
    expect(source).toHaveLength(10);
    expect(source.filter((line) => line.endsWith('marker'))).toHaveLength(2);

    // Every node queued and sent the writes it answered: asked of any node, the status has each node's row and the sum.
    const status = await waitFor('every node\'s queue is empty and the totals count every change', async () => {
      const answer = (await admin(cluster.urls[2]!, 'GET', '/svc/admin/v4/replication/status', 'bucket=photos')).body;
      return answer.targets[0]?.completed === 10 && answer.targets[0].queued === 0 ? answer : undefined;
    }, { timeoutMs: 20_000, intervalMs: 200 });
    const hosts = cluster.urls.map((url) => new URL(url).host);
    expect(status.nodes.map((row: { node: string }) => row.node).sort()).toEqual([...hosts].sort());
    for (const row of status.nodes) {
      expect(row.error, row.node).toBeUndefined();
      expect(row.targets[0].completed, row.node).toBeGreaterThan(0);
    }
    expect(status.nodes.reduce((sum: number, row: { targets: { completed: number }[] }) => sum + row.targets[0]!.completed, 0)).toBe(10);

    // A resync asked of the last node runs on the leader (the first node), and shows there in the status of any node.
    const resync = await admin(cluster.urls[3]!, 'POST', '/svc/admin/v4/replication/resync', 'bucket=photos');
    expect(resync.status, JSON.stringify(resync.body)).toBe(200);
    const done = await waitFor('the resync completed and its tasks were sent', async () => {
      const answer = (await admin(cluster.urls[1]!, 'GET', '/svc/admin/v4/replication/status', 'bucket=photos')).body;
      return answer.resyncs[0]?.status === 'completed' && answer.targets[0].queued === 0 ? answer : undefined;
    }, { timeoutMs: 30_000, intervalMs: 200 });
    expect(done.resyncs).toHaveLength(1);
    expect(done.resyncs[0]).toMatchObject({ node: hosts[0], keys: 4, queued: 10 });
    expect(done.nodes.find((row: { node: string }) => row.node === hosts[0]).resyncs).toHaveLength(1);
    expect(JSON.stringify(await versionList(s3ClientFor(target.url), 'photos-copy'))).toBe(JSON.stringify(source));
  }, 90_000);
});
