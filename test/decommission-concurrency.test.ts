/**
 * SVC_DECOMMISSION_ENTRY_CONCURRENCY bounds the objects a decommission moves at once across the
 * whole pool, not per bucket: with its hard cap (64) and five buckets of 70 objects (four buckets
 * move at once), a real server never has more than 64 objects in flight.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { forEachConcurrent } from '../src/util/concurrency.js';
import { limits } from '../src/util/limits.js';

const buckets = ['bucket1', 'bucket2', 'bucket3', 'bucket4', 'bucket5'];
const objectsPerBucket = limits.decommissionEntryConcurrencyHardCap + 6;

let root: string;
let server: SvcProcess | undefined;
afterAll(async () => {
  await server?.kill();
  await rm(root, { recursive: true, force: true });
});

describe('decommission entry concurrency', () => {
  it('the hard cap bounds the objects in flight across all buckets of the pool', async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-decom-cap-'));
    const env = { SVC_CONSOLE_ENABLE: 'false', SVC_FAULT_INJECTION: 'on', SVC_DECOMMISSION_ENTRY_CONCURRENCY: String(limits.decommissionEntryConcurrencyHardCap) };
    // Every object lands on pool 0: it is the only pool when they are written.
    server = await startSvc({ args: [join(root, 'p0-{1...2}')], env });
    const s3 = s3ClientFor(server.url);
    for (const bucket of buckets) await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    const puts = buckets.flatMap((bucket) => Array.from({ length: objectsPerBucket }, (_, index) => ({ bucket, key: `k${index}` })));
    await forEachConcurrent(puts, 16, async ({ bucket, key }) => {
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: key }));
    });
    await server.stop();
    server = await startSvc({ args: [join(root, 'p0-{1...2}'), join(root, 'p1-{1...2}')], env });
    // Slow target drives keep moves overlapping, so the cap is what limits them.
    const drives = ((await admin(server.url, 'GET', '/svc/admin/v4/faults')).body.drives as { drive: string }[]).map((entry) => entry.drive);
    for (const drive of drives.filter((path) => path.includes('p1-'))) {
      expect((await admin(server.url, 'POST', '/svc/admin/v4/faults', `drive=${encodeURIComponent(drive)}`, { body: JSON.stringify({ operations: { '*': { latencyMs: 20 } } }) })).status).toBe(200);
    }
    expect((await admin(server.url, 'POST', '/svc/admin/v3/pools/decommission', 'by-id=true&pool=0')).status).toBe(200);
    let entry: Record<string, any> = {};
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 200))) {
      entry = (await admin(server.url, 'GET', '/svc/admin/v3/decommission/status', 'by-id=true&pool=0')).body.entries[0];
      if (entry.state !== 'active' && entry.state !== 'queued') break;
    }
    expect(entry.state, JSON.stringify(entry)).toBe('completed');
    expect(entry.progress.objects).toBe(buckets.length * objectsPerBucket);
    expect(entry.entriesInFlightPeak).toBeLessThanOrEqual(limits.decommissionEntryConcurrencyHardCap);
    expect(entry.entriesInFlightPeak).toBeGreaterThan(limits.decommissionEntryConcurrencyDefault);
  }, 120_000);
});
