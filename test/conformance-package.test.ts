/**
 * The standalone conformance package: `npm run conformance:package` packs a tarball with no
 * dependencies, `npm install --offline` puts it in an empty directory, and its `svc-conformance`
 * command checks a svc started from the build, writing a Markdown summary.
 */
import { describe, expect, it } from 'vitest';

// The whole s3 profile takes about a minute here; by default a few sections of it.
const only = process.env.SVC_CONFORMANCE_PACKAGE_FULL ? [] : ['--only', 's3.bucket.,s3.conditional-write.,s3.list-buckets.'];
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot, startSvc, testCredentials } from './helpers/server-process.js';
import { s3Checks } from '../conformance/suites/s3.js';
import { profileOf } from '../conformance/runner/check.js';
import { dockerUnavailable } from '../conformance/harness/container-cluster.js';

const noDocker = await dockerUnavailable();

const run = promisify(execFile);
const outcome = (promise: Promise<{ stdout: string; stderr: string }>) =>
  promise.then(
    (done) => ({ code: 0, ...done }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );

describe('npm run conformance:package', () => {
  it('packs a dependency-free tarball that installs offline into an empty directory and checks a svc', async () => {
    const built = await run('npm', ['run', '--silent', 'conformance:package'], { cwd: repoRoot });
    const tarball = built.stdout.trim().split('\n').at(-1)!;
    expect(tarball).toMatch(/build\/conformance\/svc-conformance-\d+\.\d+\.\d+\.tgz$/);
    const dir = await mkdtemp(join(tmpdir(), 'svc-conf-package-'));
    const data = await mkdtemp(join(tmpdir(), 'svc-conf-package-data-'));
    const server = await startSvc({ args: [join(data, 'd{1...4}')], env: { SVC_CONSOLE_ENABLE: 'false' } });
    try {
      await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--prefix', dir, tarball], { cwd: dir });
      const installed = JSON.parse(await readFile(join(dir, 'node_modules/svc-conformance/package.json'), 'utf8')) as Record<string, unknown>;
      expect(installed.dependencies).toBeUndefined();
      expect(installed.bin).toEqual({ 'svc-conformance': 'dist/svc-conformance.mjs' });
      const bin = join(dir, 'node_modules/.bin/svc-conformance');
      const help = await outcome(run(bin, ['--help']));
      expect(help.stdout).toContain('usage: svc-conformance --endpoint');
      expect((await outcome(run(bin, ['--managed', 'process']))).stderr).toContain('--managed needs a clone of the svc repository');
      expect((await outcome(run(bin, ['--endpoint', server.url, '--access-key', 'a', '--secret-key', 'b', '--profile', 'aws']))).code).toBe(2);
      const checked = await outcome(run(bin, ['--endpoint', server.url, '--access-key', testCredentials.accessKeyId, '--secret-key', testCredentials.secretAccessKey, '--suite', 's3', '--profile', 's3', ...only, '--seed', '3', '--markdown', join(dir, 'summary.md'), '--json', join(dir, 'report.json')], { cwd: dir, maxBuffer: 16 * 1024 * 1024 }));
      expect(checked.code, checked.stdout.split('\n').filter((line) => line.startsWith('FAILED') || line.startsWith('  ')).join('\n')).toBe(0);
      const report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')) as { profile: string; results: { id: string; outcome: string; source?: string }[] };
      expect(report.profile).toBe('s3');
      const prefixes = only[1]?.split(',') ?? [''];
      expect(report.results.map((result) => result.id)).toEqual(s3Checks.filter((check) => profileOf(check) === 's3' && prefixes.some((prefix) => check.id.startsWith(prefix))).map((check) => check.id));
      expect(report.results.length).toBeGreaterThan(10);
      expect(report.results.every((result) => result.source)).toBe(true);
      const summary = await readFile(join(dir, 'summary.md'), 'utf8');
      expect(summary).toMatch(/^## Conformance of http:\/\/127\.0\.0\.1:\d+\n\n\d+ passed, 0 failed/);
    } finally {
      await server.kill();
      await rm(dir, { recursive: true, force: true });
      await rm(data, { recursive: true, force: true });
    }
  }, 240_000);

  it.skipIf(noDocker !== undefined)('builds the svc-conformance image, which checks a svc on the host network', async () => {
    await run('npm', ['run', '--silent', 'conformance:image'], { cwd: repoRoot });
    const data = await mkdtemp(join(tmpdir(), 'svc-conf-image-data-'));
    const server = await startSvc({ args: [join(data, 'd{1...4}')], env: { SVC_CONSOLE_ENABLE: 'false' } });
    try {
      const checked = await outcome(run('docker', ['run', '--rm', '--network', 'host', 'svc-conformance:latest', '--endpoint', server.url, '--access-key', testCredentials.accessKeyId, '--secret-key', testCredentials.secretAccessKey, '--suite', 's3', '--profile', 's3', '--only', 's3.bucket.create', '--seed', '4'], { maxBuffer: 16 * 1024 * 1024 }));
      expect(checked.code, checked.stdout + checked.stderr).toBe(0);
      expect(checked.stdout).toMatch(/S3 CreateBucket\s+pass/);
      expect(checked.stdout).toMatch(/\d+ passed, 0 failed/);
    } finally {
      await server.kill();
      await rm(data, { recursive: true, force: true });
    }
  }, 240_000);
});
