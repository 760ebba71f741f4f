/**
 * The node-failure scenario of a 4-node x 4-drive cluster (one set of 16, EC:4), written once and
 * run on both harnesses: an object written through one node reads identically from the others;
 * with one node killed reads and writes succeed; with two killed writes fail with
 * ErasureWriteQuorum and reads with ErasureReadQuorum; the nodes return, rejoin and serve, and
 * nothing of the failed write is visible.
 */
import { expect } from 'vitest';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { s3ClientFor } from '../helpers/server-process.js';
import { withClusterLogs, type TestCluster } from '../helpers/cluster.js';
import { admin } from '../helpers/admin-client.js';

/** Waits until every node sees every drive online again (a restarted peer is re-checked every 2 s). */
export async function waitForAllDrivesOnline(cluster: TestCluster, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const url of cluster.urls) {
    for (;;) {
      const answer = await admin(url, 'GET', '/svc/admin/v4/cluster/snapshot').catch(() => undefined);
      const nodes = (answer?.body.nodes ?? []) as { drives: number; drivesOnline: number }[];
      if (nodes.length > 0 && nodes.every((node) => node.drivesOnline === node.drives)) break;
      if (Date.now() > deadline) throw new Error(`${url} does not see every drive online: ${JSON.stringify(answer?.body.nodes)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

export const scenarioBucket = 'shared';
const everywhereSize = 3 * 1024 * 1024 + 7;

export async function errorName(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'no error';
  } catch (error) {
    return (error as { name: string }).name;
  }
}

export async function readText(url: string, key: string): Promise<string> {
  const object = await s3ClientFor(url).send(new GetObjectCommand({ Bucket: scenarioBucket, Key: key }));
  return object.Body!.transformToString();
}

export function writeThroughOneReadFromEvery(cluster: TestCluster): Promise<void> {
  return withClusterLogs(cluster, async () => {
    const first = s3ClientFor(cluster.urls[0]!);
    await first.send(new CreateBucketCommand({ Bucket: scenarioBucket }));
    const body = 'x'.repeat(everywhereSize);
    await first.send(new PutObjectCommand({ Bucket: scenarioBucket, Key: 'everywhere', Body: body }));
    for (const url of cluster.urls.slice(1)) expect(await readText(url, 'everywhere')).toBe(body);
  });
}

/** Needs writeThroughOneReadFromEvery first; leaves every node running. */
export function killNodesAndRejoin(cluster: TestCluster): Promise<void> {
  return withClusterLogs(cluster, async () => {
    await cluster.kill(3);
    const second = s3ClientFor(cluster.urls[1]!);
    await second.send(new PutObjectCommand({ Bucket: scenarioBucket, Key: 'degraded', Body: 'written with a node down' }));
    expect(await readText(cluster.urls[0]!, 'everywhere')).toHaveLength(everywhereSize);

    await cluster.kill(2);
    expect(await errorName(second.send(new PutObjectCommand({ Bucket: scenarioBucket, Key: 'too-few', Body: 'x'.repeat(300_000) })))).toBe('ErasureWriteQuorum');
    expect(await errorName(second.send(new GetObjectCommand({ Bucket: scenarioBucket, Key: 'everywhere' })))).toBe('ErasureReadQuorum');

    await cluster.start(2);
    await cluster.start(3);
    expect(await readText(cluster.urls[3]!, 'degraded')).toBe('written with a node down');
    expect(await readText(cluster.urls[2]!, 'everywhere')).toHaveLength(everywhereSize);
    expect(await errorName(s3ClientFor(cluster.urls[2]!).send(new GetObjectCommand({ Bucket: scenarioBucket, Key: 'too-few' })))).toBe('NoSuchKey');
    await waitForAllDrivesOnline(cluster);
  });
}
