import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { XMLParser } from 'fast-xml-parser';
import { runSuites } from '../conformance/runner/run.js';
import { s3Checks } from '../conformance/suites/s3.js';
import { adminChecks } from '../conformance/suites/admin.js';
import { inlineCheck, layoutCheck, quorumCheck, recoveryCheck } from '../conformance/managed/suites.js';
import type { Report } from '../conformance/runner/report.js';
import { startProcessCluster, type ProcessCluster } from './helpers/process-cluster.js';
import { repoRoot, startSvc, testCredentials } from './helpers/server-process.js';
import { startBrokenServer } from './fixtures/broken-server.js';

const blackBox = [
  { suite: 's3', checks: s3Checks },
  { suite: 'admin', checks: adminChecks },
];
const credentials = { accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey };
const failed = (report: Report) => report.results.filter((result) => result.outcome === 'failed');
const describeFailures = (report: Report) => failed(report).map((result) => `${result.id}: ${result.message}`).join('\n');

let cluster: ProcessCluster;
beforeAll(async () => {
  cluster = await startProcessCluster({ nodes: 2, drivesPerNode: 2, poolPaths: ['/p0/d{1...2}', '/p1/d{1...2}'] });
}, 120_000);
afterAll(async () => {
  await cluster?.destroy();
});

describe('conformance (black-box)', () => {
  it('passes against a two-node, two-pool process cluster, mutations included, and cleans up after itself', async () => {
    const report = await runSuites({ endpoint: cluster.urls[1]!, ...credentials, seed: 42, allowAdminMutations: true }, blackBox);
    expect(failed(report), describeFailures(report)).toEqual([]);
    expect(report.results.filter((result) => result.outcome === 'passed').length).toBeGreaterThanOrEqual(14);
    expect(report.notes).toEqual([]);
    const { S3Client, ListBucketsCommand } = await import('@aws-sdk/client-s3');
    const left = await new S3Client({ endpoint: cluster.urls[0], region: 'us-east-1', forcePathStyle: true, credentials: testCredentials }).send(new ListBucketsCommand({}));
    expect((left.Buckets ?? []).filter((bucket) => bucket.Name!.startsWith('conf-'))).toEqual([]);
  }, 120_000);

  it('skips the mutation checks unless they are allowed', async () => {
    const report = await runSuites({ endpoint: cluster.urls[0]!, ...credentials, seed: 1, allowAdminMutations: false }, [{ suite: 'admin', checks: adminChecks }]);
    const skipped = report.results.filter((result) => result.outcome === 'skipped').map((result) => result.id);
    expect(skipped).toEqual(adminChecks.filter((check) => check.mutates).map((check) => check.id));
  });

  it('can fail: a server that accepts any storage class, reports completion at once and starts a rebalance during a decommission', async () => {
    const broken = await startBrokenServer();
    try {
      const report = await runSuites({ endpoint: broken.url, ...credentials, seed: 3, allowAdminMutations: true }, blackBox);
      const ids = failed(report).map((result) => result.id);
      expect(ids).toContain('s3.storage-class.reject');
      expect(ids).toContain('s3.auth.bad-signature');
      expect(ids).toContain('admin.auth.root-only');
      expect(ids).toContain('admin.decommission.start-is-not-completion');
      expect(failed(report).find((result) => result.id === 'admin.decommission.start-is-not-completion')!.message).toMatch(/completed/);
    } finally {
      await broken.close();
    }
  }, 60_000);

  it('can fail: drives that silently drop writes beyond parity break read-after-write', async () => {
    const root = await mkdtemp(join(tmpdir(), 'svc-conf-drop-'));
    const server = await startSvc({ args: [join(root, 'd{1...4}')], env: { SVC_FAULT_INJECTION: 'on', SVC_CONSOLE_ENABLE: 'false' } });
    try {
      const { Target } = await import('../conformance/runner/check.js');
      const target = new Target({ endpoint: server.url, ...credentials, seed: 1 });
      const drives = ((await target.admin('GET', '/svc/admin/v4/faults')).body.drives as { drive: string }[]).map((entry) => entry.drive);
      const drop = { operations: { openWriter: { silentDrop: true }, writeFile: { silentDrop: true }, writeFileAtomic: { silentDrop: true } } };
      for (const drive of drives.slice(0, 3)) expect((await target.admin('POST', '/svc/admin/v4/faults', `drive=${encodeURIComponent(drive)}`, { body: JSON.stringify(drop) })).status).toBe(200);
      const report = await runSuites({ endpoint: server.url, ...credentials, seed: 5, allowAdminMutations: false }, [{ suite: 's3', checks: s3Checks.filter((check) => check.id === 's3.read-after-write') }]);
      expect(failed(report).map((result) => result.id)).toEqual(['s3.read-after-write']);
    } finally {
      await server.kill();
      await rm(root, { recursive: true, force: true });
    }
  }, 60_000);

  it('the fault route is refused when fault injection is off', async () => {
    const { Target } = await import('../conformance/runner/check.js');
    const target = new Target({ endpoint: cluster.urls[0]!, ...credentials, seed: 1 });
    const answer = await target.admin('GET', '/svc/admin/v4/faults');
    expect([answer.status, answer.body.Code]).toEqual([403, 'FaultInjectionDisabled']);
  });
});

describe('conformance (managed)', () => {
  it('quorum formulas, inline thresholds, layout rejection and restart recovery hold', async () => {
    const report = await runSuites({ endpoint: cluster.urls[0]!, ...credentials, seed: 9, allowAdminMutations: true }, [
      { suite: 'quorum', checks: [quorumCheck(9), quorumCheck(10)] },
      { suite: 'inline', checks: [inlineCheck] },
      { suite: 'layout', checks: [layoutCheck] },
      { suite: 'recovery', checks: [recoveryCheck] },
    ]);
    expect(failed(report), describeFailures(report)).toEqual([]);
    expect(report.results.every((result) => result.outcome === 'passed')).toBe(true);
  }, 300_000);
});

describe('npm run conformance', () => {
  it('writes JUnit and JSON reports, prints the summary, and refuses bad arguments', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-conf-cli-'));
    const run = (args: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, ['--import', 'tsx', 'conformance/cli.ts', ...args], { cwd: repoRoot });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });
    try {
      const ok = await run(['--endpoint', cluster.urls[0]!, '--access-key', credentials.accessKey, '--secret-key', credentials.secretKey, '--suite', 's3', '--seed', '4', '--junit', join(dir, 'r.xml'), '--json', join(dir, 'r.json')]);
      expect(ok.code, ok.stdout + ok.stderr).toBe(0);
      expect(ok.stdout).toMatch(/SPEC SECTION\s+RESULT/);
      expect(ok.stderr).toMatch(/\[1\/11\] pass {2}s3\.health/);
      const junit = new XMLParser({ ignoreAttributes: false }).parse(await readFile(join(dir, 'r.xml'), 'utf8'));
      expect(junit.testsuites['@_tests']).toBe('11');
      expect(junit.testsuites['@_failures']).toBe('0');
      const json = JSON.parse(await readFile(join(dir, 'r.json'), 'utf8')) as Report;
      expect(json.seed).toBe(4);
      expect(json.results.every((result) => result.spec.length > 0)).toBe(true);
      expect((await run(['--endpoint', 'nowhere'])).code).toBe(2);
      expect((await run(['--endpoint', cluster.urls[0]!, '--access-key', 'a', '--secret-key', 'b', '--suite', 'nonsense'])).stderr).toContain('unknown suite');
      const wrong = await run(['--endpoint', cluster.urls[0]!, '--access-key', 'nobody', '--secret-key', 'nothing-at-all', '--suite', 's3']);
      expect(wrong.code).toBe(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
