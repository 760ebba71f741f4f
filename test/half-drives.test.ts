/**
 * With exactly half the drives of a set gone (a two-node cluster, one node down), reads need K
 * shards and K = N/2 at EC:N/2, so objects still read, and so do the bucket records that reads
 * look up (`.svc.sys` metadata, parity N/2, read quorum N/2): also on a node that had not cached
 * them. Writes need K + 1 when K = M, so they are refused (here the write lock, which needs a
 * majority of the lock servers, is refused first: 503 SlowDown), with nothing changed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, GetObjectCommand, HeadBucketCommand, ListBucketsCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { s3ClientFor } from './helpers/server-process.js';
import { startProcessCluster, type ProcessCluster } from './helpers/process-cluster.js';
import { withClusterLogs } from './helpers/cluster.js';

let cluster: ProcessCluster;

beforeAll(async () => {
  cluster = await startProcessCluster({ nodes: 2, drivesPerNode: 2 });
}, 120_000);
afterAll(async () => {
  await cluster?.destroy();
});

describe('half of the drives gone (one of two nodes down, EC:2 on four drives)', () => {
  it('objects and buckets made through the node that went down still read through the other; writes are refused', () =>
    withClusterLogs(cluster, async () => {
      // Everything goes through node 2: node 1 holds no cached bucket record of its own.
      const viaTwo = s3ClientFor(cluster.urls[1]!);
      await viaTwo.send(new CreateBucketCommand({ Bucket: 'halves' }));
      const body = randomBytes(300_000);
      await viaTwo.send(new PutObjectCommand({ Bucket: 'halves', Key: 'kept', Body: body }));
      await cluster.kill(1);
      const viaOne = s3ClientFor(cluster.urls[0]!);
      await viaOne.send(new HeadBucketCommand({ Bucket: 'halves' }));
      const got = await viaOne.send(new GetObjectCommand({ Bucket: 'halves', Key: 'kept' }));
      expect(Buffer.from(await got.Body!.transformToByteArray()).equals(body)).toBe(true);
      expect((await viaOne.send(new ListBucketsCommand({}))).Buckets?.map((bucket) => bucket.Name)).toContain('halves');
      expect((await viaOne.send(new ListObjectsV2Command({ Bucket: 'halves' }))).Contents?.map((entry) => entry.Key)).toEqual(['kept']);
      const refused = await viaOne.send(new PutObjectCommand({ Bucket: 'halves', Key: 'new', Body: 'x' })).catch((error: { name: string; $metadata?: { httpStatusCode?: number } }) => error);
      expect(refused).toMatchObject({ $metadata: { httpStatusCode: 503 } });
      expect(['ErasureWriteQuorum', 'SlowDown']).toContain((refused as { name: string }).name);
      const absent = await viaOne.send(new GetObjectCommand({ Bucket: 'halves', Key: 'new' })).catch((error: { name: string }) => error);
      expect((absent as { name: string }).name).toBe('NoSuchKey');
    }), 90_000);
});
