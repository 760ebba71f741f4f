/**
 * The data-usage scanner on a two-node process cluster: the node holding the first endpoint
 * schedules scans (the other does not), a scan started on the other node runs there under the
 * cluster-wide lock, and both nodes answer the same persisted result.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { startProcessCluster, type ProcessCluster } from './helpers/process-cluster.js';
import { s3ClientFor } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { waitFor } from './helpers/poll.js';

const usagePath = '/svc/admin/v4/data-usage';
let cluster: ProcessCluster;

beforeAll(async () => {
  cluster = await startProcessCluster({ nodes: 2, drivesPerNode: 2 });
}, 120_000);
afterAll(async () => {
  await cluster?.destroy();
});

describe('data usage on a cluster', () => {
  it('one node schedules, a scan runs where it is asked, every node answers the same result', async () => {
    const [firstUrl, secondUrl] = cluster.urls as [string, string];
    const statuses = await Promise.all(cluster.urls.map((url) => admin(url, 'GET', usagePath)));
    // The first node schedules scans; the second reads what they persist.
    expect(statuses[0]!.body.nextScanAt !== null || statuses[0]!.body.running === true || statuses[0]!.body.last !== null).toBe(true);
    expect(statuses[1]!.body.nextScanAt).toBeNull();
    await waitFor('the first scheduled scan', async () => (await admin(firstUrl, 'GET', usagePath)).body.last !== null, { timeoutMs: 30_000, intervalMs: 100 });

    const s3 = s3ClientFor(firstUrl);
    await s3.send(new CreateBucketCommand({ Bucket: 'shared' }));
    for (let index = 0; index < 8; index += 1) await s3.send(new PutObjectCommand({ Bucket: 'shared', Key: `k${index}`, Body: 'abcd' }));

    const started = await admin(secondUrl, 'POST', `${usagePath}/scan`);
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const finished = await waitFor('the scan on the second node to finish', async () => {
      const answer = await admin(secondUrl, 'GET', usagePath);
      return answer.body.current === null && answer.body.last?.startedAt === started.body.started.startedAt ? answer.body : undefined;
    }, { timeoutMs: 30_000, intervalMs: 50 });
    expect(finished.last.buckets).toEqual([{ bucket: 'shared', objects: 8, versions: 8, deleteMarkers: 0, sizeBytes: 32, currentSizeBytes: 32 }]);
    const fromFirst = await admin(firstUrl, 'GET', usagePath);
    expect(fromFirst.body.last).toEqual(finished.last);
  }, 120_000);
});
