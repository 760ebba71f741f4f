/**
 * Managed suites: the harness starts its own servers and clusters, so it can take drives offline
 * (the fault-control route), look at disks, launch invalid layouts and kill processes. The
 * expected outcomes come from SPEC.md's formulas, not from the implementation.
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutBucketVersioningCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { CheckFailure, errorOf, expectThat, Target, type Check } from '../runner/check.js';
import { runSuites, type SuiteRun } from '../runner/run.js';
import type { Report } from '../runner/report.js';
import { startSvc, testCredentials, type SvcProcess } from '../harness/server-process.js';
import { startProcessCluster } from '../harness/process-cluster.js';
import { s3Checks } from '../suites/s3.js';
import { adminChecks } from '../suites/admin.js';
import { createPrng } from '../../src/util/prng.js';

/** SPEC "Erasure set and object geometry": default STANDARD parity by set width. */
export function defaultParity(width: number): number {
  if (width <= 1) return 0;
  if (width <= 3) return 1;
  if (width <= 5) return 2;
  if (width <= 7) return 3;
  return 4;
}

/** SPEC "Limits": read K, write K (K + 1 when K = M), deletes and markers N/2 + 1. */
export function quorums(width: number, parity: number): { read: number; write: number; delete: number } {
  const data = width - parity;
  return { read: data, write: data === parity ? data + 1 : data, delete: Math.floor(width / 2) + 1 };
}

async function server(args: string[], env: Record<string, string> = {}): Promise<{ process: SvcProcess; target: Target }> {
  const process = await startSvc({ args, env: { SVC_CONSOLE_ENABLE: 'false', ...env } });
  return { process, target: new Target({ endpoint: process.url, accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey, seed: 1 }) };
}

async function withDir<T>(prefix: string, action: (root: string) => Promise<T>): Promise<T> {
  const root = await mkdtemp(join(tmpdir(), prefix));
  try {
    return await action(root);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

export function quorumCheck(seed: number): Check {
  const prng = createPrng(seed);
  const width = [4, 5, 6, 8][prng.int(4)]!;
  return {
    id: 'managed.quorum-formulas',
    spec: 'Limits',
    title: `PUT, GET, HEAD and delete markers succeed exactly when the drives left meet the quorum formulas (random width ${width})`,
    async run() {
      await withDir('svc-conf-quorum-', async (root) => {
        const { process, target } = await server([join(root, `d{1...${width}}`)], { SVC_FAULT_INJECTION: 'on' });
        try {
          const parity = defaultParity(width);
          const q = quorums(width, parity);
          const s3 = target.s3;
          await s3.send(new CreateBucketCommand({ Bucket: 'quorum' }));
          await s3.send(new CreateBucketCommand({ Bucket: 'markers' }));
          await s3.send(new PutBucketVersioningCommand({ Bucket: 'markers', VersioningConfiguration: { Status: 'Enabled' } }));
          await s3.send(new PutObjectCommand({ Bucket: 'quorum', Key: 'large', Body: Buffer.alloc(600_000, 1) }));
          await s3.send(new PutObjectCommand({ Bucket: 'quorum', Key: 'small', Body: 'inline object' }));
          await s3.send(new PutObjectCommand({ Bucket: 'markers', Key: 'm', Body: 'versioned' }));
          const drives = ((await target.admin('GET', '/svc/admin/v4/faults')).body.drives as { drive: string }[]).map((entry) => entry.drive);
          expectThat(drives.length === width, `the fault route lists ${drives.length} drives, expected ${width}`);
          for (let offline = 0; offline <= width; offline += 1) {
            for (const [index, drive] of drives.entries()) await target.admin('POST', '/svc/admin/v4/faults', `drive=${encodeURIComponent(drive)}`, { body: JSON.stringify(index < offline ? { offline: true } : {}) });
            const up = width - offline;
            const put = await errorOf(s3.send(new PutObjectCommand({ Bucket: 'quorum', Key: `probe-${offline}`, Body: Buffer.alloc(300_000, 2) })));
            const get = await errorOf(s3.send(new GetObjectCommand({ Bucket: 'quorum', Key: 'large' })).then((object) => object.Body!.transformToByteArray()));
            const head = await errorOf(s3.send(new HeadObjectCommand({ Bucket: 'quorum', Key: 'small' })));
            const marker = await errorOf(s3.send(new DeleteObjectCommand({ Bucket: 'markers', Key: 'm' })));
            const expect = (what: string, outcome: { name: string; status?: number }, needed: number, code: string) => {
              const wanted = up >= needed ? 'no error' : code;
              // A HEAD answer has no body, so a client sees only the 503 status there.
              const ok = up >= needed ? outcome.name === 'no error' : outcome.name === code || (what === 'HEAD' && outcome.status === 503);
              if (!ok) throw new CheckFailure(`${what} with ${up} of ${width} drives (EC:${parity}, needs ${needed}): expected ${wanted}, got ${outcome.name}`);
            };
            expect('PUT', put, q.write, 'ErasureWriteQuorum');
            expect('GET', get, q.read, 'ErasureReadQuorum');
            expect('HEAD', head, q.read, 'ErasureReadQuorum');
            expect('delete marker', marker, q.delete, 'ErasureWriteQuorum');
          }
        } finally {
          await process.kill();
        }
      });
    },
  };
}

async function isInlineOnDisk(driveRoot: string, bucket: string, key: string): Promise<boolean> {
  const entries = await readdir(join(driveRoot, bucket, key));
  expectThat(entries.includes('xl.meta'), `${bucket}/${key} has no xl.meta on ${driveRoot}`);
  return entries.length === 1;
}

export const inlineCheck: Check = {
  id: 'managed.inline-thresholds',
  spec: 'Erasure set and object geometry',
  title: 'objects are inline exactly when every shard fits 256 KiB / K (at most 128 KiB), ÷8 when versioned, or SVC_STORAGE_CLASS_INLINE_BLOCK',
  async run() {
    await withDir('svc-conf-inline-', async (root) => {
      const args = [join(root, 'd{1...4}')]; // K = 2
      const cases = async (target: Target, budgetPerShard: number, versionedBudget: number, label: string) => {
        const bucket = `plain-${label}`;
        const versioned = `versioned-${label}`;
        await target.s3.send(new CreateBucketCommand({ Bucket: bucket }));
        await target.s3.send(new CreateBucketCommand({ Bucket: versioned }));
        await target.s3.send(new PutBucketVersioningCommand({ Bucket: versioned, VersioningConfiguration: { Status: 'Enabled' } }));
        for (const [name, budget] of [[bucket, budgetPerShard], [versioned, versionedBudget]] as const) {
          for (const [key, size, inline] of [['below', budget * 2 - 10, true], ['above', budget * 2 + 10, false]] as const) {
            await target.s3.send(new PutObjectCommand({ Bucket: name, Key: key, Body: Buffer.alloc(size, 3) }));
            const observed = await isInlineOnDisk(join(root, 'd1'), name, key);
            expectThat(observed === inline, `${name}/${key} (${size} bytes, K=2, budget ${budget} per shard) is ${observed ? '' : 'not '}inline`);
          }
        }
      };
      let running = await server(args);
      try {
        await cases(running.target, 128 * 1024, (128 * 1024) / 8, 'default');
      } finally {
        await running.process.stop();
      }
      running = await server(args, { SVC_STORAGE_CLASS_INLINE_BLOCK: '64KiB' });
      try {
        await cases(running.target, 64 * 1024, (64 * 1024) / 8, 'override');
      } finally {
        await running.process.stop();
      }
    });
  },
};

export const layoutCheck: Check = {
  id: 'managed.layout-rejection',
  spec: 'Launch and layout rules',
  title: 'invalid layouts and storage classes are refused at startup with the rule named, and no disk is touched',
  async run() {
    await withDir('svc-conf-layout-', async (root) => {
      const cases: { name: string; args: string[]; env?: Record<string, string>; paths: string[] }[] = [
        { name: 'singleton range', args: [join(root, 'a/d{3...3}')], paths: [join(root, 'a')] },
        { name: 'second pool without an ellipsis', args: [join(root, 'b/d{1...4}'), join(root, 'b2/plain')], paths: [join(root, 'b'), join(root, 'b2')] },
        { name: '17 drives (no set width from 2 to 16 divides them)', args: [join(root, 'c/d{1...17}')], paths: [join(root, 'c')] },
        { name: 'set width that does not divide the pool', args: [join(root, 'd/d{1...8}')], env: { SVC_ERASURE_SET_DRIVE_COUNT: '3' }, paths: [join(root, 'd')] },
        { name: 'parity above N/2', args: [join(root, 'e/d{1...8}')], env: { SVC_STORAGE_CLASS_STANDARD: 'EC:5' }, paths: [join(root, 'e')] },
        { name: 'malformed storage class', args: [join(root, 'f/d{1...4}')], env: { SVC_STORAGE_CLASS_RRS: 'EC:one' }, paths: [join(root, 'f')] },
        { name: 'a single remote endpoint (only a single local path is a single-drive layout)', args: [`http://127.0.0.1:9${join(root, 'g')}`], paths: [join(root, 'g')] },
      ];
      for (const testCase of cases) {
        const process = await startSvc({ args: testCase.args, waitReady: false, env: { SVC_CONSOLE_ENABLE: 'false', ...testCase.env } });
        const code = await Promise.race([process.exited, new Promise((resolve) => setTimeout(() => resolve('timeout'), 15_000))]);
        if (code === 'timeout') await process.kill();
        expectThat(code !== 'timeout' && code !== 0, `${testCase.name}: the server ${code === 'timeout' ? 'kept running' : 'exited 0'}`);
        expectThat(/InvalidLayout|InvalidConfiguration/.test(process.logs()), `${testCase.name}: no named layout or configuration error in the output`);
        for (const path of testCase.paths) expectThat(!existsSync(path), `${testCase.name}: ${path} was created`);
      }
    });
  },
};

export const recoveryCheck: Check = {
  id: 'managed.restart-recovery',
  spec: 'Restart rules',
  title: 'after SIGKILL: decommission resumes (pool.bin), rebalance comes back stopped (rebalance.bin), the unclean marker is seen, a bad root-heal record is quarantined',
  async run() {
    await withDir('svc-conf-recovery-', async (root) => {
      const pool0 = join(root, 'p0/d{1...4}');
      const pool1 = join(root, 'p1/d{1...4}');
      let running = await server([pool0]);
      try {
        await running.target.s3.send(new CreateBucketCommand({ Bucket: 'recover' }));
        for (let index = 0; index < 300; index += 1) await running.target.s3.send(new PutObjectCommand({ Bucket: 'recover', Key: `k${index}`, Body: `value ${index}` }));
        await running.process.stop();
        const env = { SVC_DECOMMISSION_ENTRY_CONCURRENCY: '1' };
        running = await server([pool0, pool1], env);
        const started = await running.target.admin('POST', '/svc/admin/v3/pools/decommission', 'pool=0&by-id=true');
        expectThat(started.status === 200, `decommission start answered ${started.status}`);
        await new Promise((resolve) => setTimeout(resolve, 300));
        await running.process.kill();
        await writeFile(join(root, 'p0', 'd1', '.svc.sys', 'root-heal-garbage.json'), 'not json at all');
        running = await server([pool0, pool1], env);
        const logs = running.process.logs();
        expectThat(logs.includes('the last shutdown was unclean'), 'the unclean-shutdown marker was not reported after SIGKILL');
        expectThat(existsSync(join(root, 'p0', 'd1', '.svc.sys', 'quarantine', 'root-heal-garbage.json')), 'a bad root-heal record was not quarantined');
        const deadline = Date.now() + 60_000;
        let state = '';
        while (Date.now() < deadline) {
          state = (await running.target.admin('GET', '/svc/admin/v3/decommission/status', 'pool=0&by-id=true')).body.entries?.[0]?.state ?? 'none';
          if (state !== 'queued' && state !== 'active') break;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        expectThat(state === 'completed', `the decommission interrupted by SIGKILL ended '${state}', not completed`);
        await running.target.admin('POST', '/svc/admin/v3/rebalance/start');
        await running.process.kill();
        running = await server([pool0, pool1], env);
        const rebalance = (await running.target.admin('GET', '/svc/admin/v3/rebalance/status')).body;
        expectThat(!(rebalance.pools as any[]).some((pool) => pool.status === 'active' || pool.status === 'stopping'), 'a rebalance was running after a restart');
      } finally {
        await running.process.kill();
      }
    });
  },
};

/** Starts a managed cluster, runs the black-box suites against it (mutations allowed) and the managed suites. */
export async function managedSuites(options: { harness: 'process' | 'container'; seed: number; suites?: string[]; progress?: (line: string) => void }): Promise<Report> {
  const wanted = (name: string) => !options.suites || options.suites.includes(name);
  const managed: SuiteRun[] = [
    { suite: 'quorum', checks: [quorumCheck(options.seed)] },
    { suite: 'inline', checks: [inlineCheck] },
    { suite: 'layout', checks: [layoutCheck] },
    { suite: 'recovery', checks: [recoveryCheck] },
  ].filter((suite) => wanted(suite.suite));
  const blackBox: SuiteRun[] = [
    { suite: 's3', checks: s3Checks },
    { suite: 'admin', checks: adminChecks },
  ].filter((suite) => wanted(suite.suite));
  const poolPaths = ['/p0/d{1...2}', '/p1/d{1...2}'];
  let endpoint: string;
  let destroy: () => Promise<void>;
  if (options.harness === 'container') {
    const { buildImages } = await import('../../scripts/build-image.js');
    const { startContainerCluster } = await import('../harness/container-cluster.js');
    const { project } = await buildImages({ log: () => undefined });
    const cluster = await startContainerCluster({ image: project, nodes: 2, drivesPerNode: 2, poolPaths });
    endpoint = cluster.urls[0]!;
    destroy = () => cluster.destroy();
  } else {
    const cluster = await startProcessCluster({ nodes: 2, drivesPerNode: 2, poolPaths });
    endpoint = cluster.urls[0]!;
    destroy = () => cluster.destroy();
  }
  try {
    return await runSuites(
      { endpoint, accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey, seed: options.seed, allowAdminMutations: true, ...(options.progress ? { progress: options.progress } : {}) },
      [...blackBox, ...managed],
    );
  } finally {
    await destroy();
  }
}
