/** The decommission queue of a three-pool deployment: batches, queued targets, cancel, clear, retry rules. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { staysTheSame } from './helpers/poll.js';
import { errorName } from './scenarios/node-failure.js';

let root: string;
let server: SvcProcess;
let pools: string[];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-decommission-queue-'));
  pools = ['p0', 'p1', 'p2'].map((pool) => join(root, `${pool}/d{1...4}`));
  // Pool 0 alone first, so its objects are certainly there; then pools 1 and 2 are appended.
  const first = await startSvc({ args: [pools[0]!], env: { SVC_CONSOLE_ENABLE: 'false' } });
  const s3 = s3ClientFor(first.url);
  await s3.send(new CreateBucketCommand({ Bucket: 'queue' }));
  for (let start = 0; start < 400; start += 20) {
    await Promise.all(Array.from({ length: 20 }, (_, offset) => s3.send(new PutObjectCommand({ Bucket: 'queue', Key: `k${String(start + offset).padStart(4, '0')}`, Body: `v${start + offset}` }))));
  }
  await first.stop();
  server = await startSvc({ args: pools, env: { SVC_CONSOLE_ENABLE: 'false', SVC_DECOMMISSION_ENTRY_CONCURRENCY: '1' } });
}, 120_000);
afterAll(async () => {
  await server?.kill();
  await rm(root, { recursive: true, force: true });
});

const call = (method: 'GET' | 'POST', route: string, query = '') => admin(server.url, method, `/svc/admin/v3/${route}`, query);
const stateOf = async (pool: number) => (await call('GET', 'decommission/status', `pool=${pool}&by-id=true`)).body.entries[0]?.state ?? 'none';

describe('decommission queue', () => {
  it('queues a batch serially, refuses queued and not-cleared targets, cancels, clears and retries', async () => {
    const batch = await call('POST', 'pools/decommission', 'pool=0,1&by-id=true');
    expect(batch.status, JSON.stringify(batch.body)).toBe(200);
    expect(batch.body.entries.map((entry: any) => entry.pool)).toEqual([0, 1]);
    expect(await stateOf(1)).toBe('queued');

    const queued = await call('POST', 'pools/decommission', 'pool=1&by-id=true');
    expect([queued.status, queued.body.Code, queued.body.Details?.state]).toEqual([409, 'DecommissionInProgress', 'queued']);
    expect((await call('POST', 'pools/decommission', 'pool=2&by-id=true')).body.Code).toBe('LastPoolCannotBeDecommissioned');

    // Cancel the queued entry: it is kept as canceled, and must be cleared before a new start.
    const canceledQueued = await call('POST', 'pools/cancel', 'pool=1&by-id=true');
    expect([canceledQueued.status, canceledQueued.body.entry?.state]).toEqual([200, 'canceled']);
    expect((await call('POST', 'pools/decommission', 'pool=1&by-id=true')).body.Code).toBe('DecommissionNotCleared');

    // Cancel the active one mid-run: the pool keeps refusing staged writes until the entry is cleared.
    expect(await stateOf(0)).toBe('active');
    const canceledActive = await call('POST', 'pools/cancel', `pool=${encodeURIComponent(pools[0]!)}`);
    expect(canceledActive.body.entry?.state, JSON.stringify(canceledActive.body)).toBe('canceled');
    const progress = canceledActive.body.entry.progress.objects;
    expect(progress).toBeLessThan(400);
    const s3 = s3ClientFor(server.url);
    expect(await errorName(s3.send(new PutObjectCommand({ Bucket: 'queue', Key: 'k0399', Body: 'staged' })))).toBe('SlowDown');
    const held = await staysTheSame('a canceled decommission\'s progress', async () => (await call('GET', 'decommission/status', 'pool=0&by-id=true')).body.entries[0].progress.objects, { forMs: 500 });
    expect(held).toBe(progress);

    expect((await call('POST', 'pools/clear', 'pool=0&by-id=true')).body).toEqual({ pool: 0, cleared: true });
    expect(await stateOf(0)).toBe('none');
    expect(await errorName(s3.send(new PutObjectCommand({ Bucket: 'queue', Key: 'k0399', Body: 'accepted again' })))).toBe('no error');

    expect((await call('POST', 'pools/clear', 'pool=1&by-id=true')).status).toBe(200);
    const retried = await call('POST', 'pools/decommission', 'pool=1&by-id=true');
    expect(retried.status).toBe(200);
    const deadline = Date.now() + 60_000;
    while ((await stateOf(1)) !== 'completed' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await stateOf(1)).toBe('completed');
  }, 120_000);

  it('status ignores unknown parameters; pools/status requires a pool', async () => {
    expect((await call('GET', 'decommission/status', 'pool=1&by-id=true&verbose=1')).status).toBe(200);
    const missing = await call('GET', 'pools/status', 'verbose=1');
    expect([missing.status, missing.body.Code]).toEqual([400, 'InvalidQueryParameter']);
    expect((await call('GET', 'pools/status', 'pool=9&by-id=true')).body.Code).toBe('NoSuchPool');
  });
});
