/**
 * The Prometheus endpoints pass `promtool check metrics` (Debian's promtool) with no lint message,
 * on a node that has served S3 requests; and lock exchanges with a peer are counted with the other
 * internode calls (`svc_rpc_calls_total`): one per round trip the peer answers.
 * Skips with the reason when promtool is missing; fails under CI (.ci/run installs it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { rpcStreamPlugin } from '../src/api/rpc/rpc-stream-plugin.js';
import { LockTable } from '../src/cluster/lock-table.js';
import { remoteLockServer } from '../src/cluster/remote-lock-server.js';
import { rpcKeyFor } from '../src/transport/rpc-token.js';
import { Transport } from '../src/transport/transport.js';
import { systemClock } from '../src/util/clock.js';
import { freePort, s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { missingTool } from './helpers/external-tools.js';
import { parseExposition } from './helpers/metrics.js';

const missing = missingTool('promtool', 'prometheus');
if (missing) console.warn(`skipping promtool check metrics: ${missing}`);

describe.skipIf(missing !== undefined)('promtool check metrics on /svc/metrics/node and /svc/metrics/cluster', () => {
  let home: string;
  let server: SvcProcess;
  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'svc-promtool-'));
    server = await startSvc({ args: [join(home, 'd{1...4}')], env: { SVC_PROMETHEUS_AUTH_TYPE: 'public' } });
    const s3 = s3ClientFor(server.url);
    await s3.send(new CreateBucketCommand({ Bucket: 'linted' }));
    await s3.send(new PutObjectCommand({ Bucket: 'linted', Key: 'one', Body: 'one' }));
  }, 60_000);
  afterAll(async () => {
    await server?.kill();
    await rm(home, { recursive: true, force: true });
  });

  for (const view of ['node', 'cluster'] as const) {
    it(`${view}: no lint message, and the process counts as gauges with gauge names`, async () => {
      const text = await (await fetch(`${server.url}/svc/metrics/${view}`)).text();
      const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
      expect(`${check.stdout}${check.stderr}`).toBe('');
      expect(check.status).toBe(0);
      const families = parseExposition(text);
      expect(families.has('svc_nodejs_active_handles_total')).toBe(false);
      for (const name of ['svc_nodejs_handles_active', 'svc_nodejs_requests_active', 'svc_nodejs_resources_active']) expect(families.get(name)?.type, name).toBe('gauge');
      expect(families.get('svc_nodejs_handles_active')!.samples[0]!.value).toBeGreaterThan(0);
    });
  }
});

describe('lock exchanges with a peer', () => {
  it('are each told to the metrics once, as many as the peer answers', async () => {
    const rpcKey = rpcKeyFor('lockadmin', 'lockadmin-secret');
    const received = { drive: 0, lock: 0, peer: 0 };
    const app = Fastify();
    const transport = new Transport();
    await app.register(rpcStreamPlugin, { rpcKey, table: new LockTable(systemClock), driveFor: () => undefined, buffers: transport.buffers, nowMs: () => Date.now(), observe: (service) => (received[service as keyof typeof received] += 1) });
    const port = await freePort();
    await app.listen({ host: '127.0.0.1', port });
    try {
      const calls: { peer: string; failed: boolean }[] = [];
      const server = remoteLockServer({ host: '127.0.0.1', port, rpcKey, transport, onCall: (peer, _seconds, failed) => calls.push({ peer, failed }) });
      for (let index = 0; index < 5; index += 1) {
        expect(await server.acquire(`linted/key-${index}`, 'write', `uid-${index}`, 30_000)).toBe(true);
        await server.release(`linted/key-${index}`, `uid-${index}`);
      }
      await expect.poll(() => calls.length).toBe(received.lock);
      expect(calls.length).toBeGreaterThanOrEqual(5);
      expect(calls.every((call) => call.peer === `127.0.0.1:${port}` && !call.failed)).toBe(true);
    } finally {
      transport.close();
      await app.close();
    }
  });
});
