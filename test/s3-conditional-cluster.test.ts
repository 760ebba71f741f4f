/**
 * Conditional writes on a two-node cluster: writers racing through different nodes with
 * If-None-Match: * on one key, exactly one commits; the others get 412 (or 409 when the lock could
 * not be had), and the object read from either node is the winner's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { startProcessCluster, type ProcessCluster } from './helpers/process-cluster.js';
import { s3ClientFor } from './helpers/server-process.js';
import { withClusterLogs } from './helpers/cluster.js';

let cluster: ProcessCluster;

beforeAll(async () => {
  cluster = await startProcessCluster({ nodes: 2, drivesPerNode: 2 });
}, 120_000);
afterAll(async () => {
  await cluster?.destroy();
});

describe('conditional writes across nodes', () => {
  it('If-None-Match: * writers through both nodes: one wins per key', () =>
    withClusterLogs(cluster, async () => {
      const clients = cluster.urls.map((url) => s3ClientFor(url));
      await clients[0]!.send(new CreateBucketCommand({ Bucket: 'race' }));
      for (let round = 0; round < 3; round += 1) {
        const key = `key-${round}`;
        const outcomes = await Promise.all(
          Array.from({ length: 6 }, async (_, index) => {
            try {
              await clients[index % 2]!.send(new PutObjectCommand({ Bucket: 'race', Key: key, Body: `writer ${index}`, IfNoneMatch: '*' }));
              return { index, status: 200 };
            } catch (error) {
              return { index, status: (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0 };
            }
          }),
        );
        const winners = outcomes.filter((outcome) => outcome.status === 200);
        expect(winners, JSON.stringify(outcomes)).toHaveLength(1);
        for (const outcome of outcomes) if (outcome.status !== 200) expect([409, 412], JSON.stringify(outcomes)).toContain(outcome.status);
        for (const client of clients) {
          expect(await (await client.send(new GetObjectCommand({ Bucket: 'race', Key: key }))).Body!.transformToString()).toBe(`writer ${winners[0]!.index}`);
        }
      }
    }));
});
