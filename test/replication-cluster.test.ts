/**
 * Bucket replication from a four-node cluster (real processes on 127.0.0.2-5) to a one-node
 * deployment: the remote target added through one node and the configuration put through
 * another are known to every node (replication.bin), writes through each node are queued on that
 * node and all arrive with their version ids and times, delete markers included.
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
  }, 60_000);
});
