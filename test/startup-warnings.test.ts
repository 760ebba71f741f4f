/**
 * Startup warnings on real processes: every multi-drive pool logs `host_failure_data_unavailable`
 * with the hosts it may lose, and the storage-class warnings follow the settings in force, whether
 * they come from the environment or from the persisted configuration.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSvc } from './helpers/server-process.js';
import { startProcessCluster } from './helpers/process-cluster.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The logs of one server started and stopped on `args` with `env`. */
async function startupLogs(args: string[], env: Record<string, string> = {}): Promise<string> {
  const server = await startSvc({ args, env: { SVC_CONSOLE_ENABLE: 'false', ...env } });
  await server.stop();
  return server.logs();
}

async function tempRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'svc-warn-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  return root;
}

describe('host_failure_data_unavailable', () => {
  it('is logged for a pool spread over two hosts, with how many hosts each storage class may lose', async () => {
    const cluster = await startProcessCluster({ nodes: 2, drivesPerNode: 2 });
    cleanups.push(() => cluster.destroy());
    // A node answers /health/ready in the same turn it logs the warning, but its output comes
    // through a pipe: wait for the line rather than read the logs at the instant of readiness.
    for (const node of cluster.nodes) {
      await vi.waitFor(() => {
        expect(node!.logs()).toContain('host_failure_data_unavailable: pool 0 spans 2 host(s); hosts it may lose and keep data readable: 1 for STANDARD EC:2, none for REDUCED_REDUNDANCY EC:1');
      }, { timeout: 10_000, interval: 50 });
    }
  }, 90_000);

  it('says a one-host pool may lose none', async () => {
    const root = await tempRoot();
    expect(await startupLogs([join(root, 'd{1...4}')])).toContain('host_failure_data_unavailable: pool 0 spans 1 host(s); hosts it may lose and keep data readable: none for STANDARD EC:2');
  }, 60_000);
});

describe('storage-class warnings from the persisted configuration', () => {
  it('an inline block above 128 KiB warns on every start, also when only the persisted value sets it', async () => {
    const root = await tempRoot();
    const args = [join(root, 'd{1...4}')];
    expect(await startupLogs(args, { SVC_STORAGE_CLASS_INLINE_BLOCK: '256KiB' })).toContain('262144 bytes is above 128 KiB');
    expect(await startupLogs(args)).toContain('262144 bytes is above 128 KiB');
  }, 60_000);

  it('automatic zero parity warns; a persisted explicit EC:0 does not', async () => {
    const auto = await tempRoot();
    expect(await startupLogs([join(auto, 'single')])).toContain('automatic parity is 0');
    const root = await tempRoot();
    expect(await startupLogs([join(root, 'single')], { SVC_STORAGE_CLASS_STANDARD: 'EC:0' })).not.toContain('automatic parity is 0');
    expect(await startupLogs([join(root, 'single')])).not.toContain('automatic parity is 0');
  }, 60_000);
});
