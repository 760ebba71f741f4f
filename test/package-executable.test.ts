import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { buildExecutable } from '../scripts/package.js';
import { missingTool } from './helpers/external-tools.js';
import { freePort } from './helpers/server-process.js';
import { waitForOk } from './helpers/wait-url.js';

const skipReason = missingTool('aws', 'awscli');
if (skipReason) console.warn(`single executable round trip skipped: ${skipReason}`);

/** A PATH on which no node can be found (this machine has one in /usr/bin): an empty directory. */
function pathWithoutNode(directory: string): string {
  const path = join(directory, 'empty-bin');
  mkdirSync(path, { recursive: true });
  expect(() => execFileSync('/bin/sh', ['-c', 'command -v node'], { env: { PATH: path } })).toThrow();
  return path;
}

describe.skipIf(skipReason !== undefined)('npm run package: one executable', () => {
  let directory: string;
  let executable: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'svc-executable-'));
    executable = join(directory, 'svc');
    const built = await buildExecutable(() => undefined);
    await copyFile(built.executable, executable);
    execFileSync('chmod', ['755', executable]);
  }, 120_000);
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('plans, answers rc and --help with no node on PATH', () => {
    const env = { PATH: pathWithoutNode(directory), HOME: directory };
    expect(execFileSync(executable, ['--help'], { env, encoding: 'utf8' })).toContain('svc server <endpoint-pattern>');
    expect(execFileSync(executable, ['plan', './drive{1...4}'], { env, encoding: 'utf8' })).toContain('EC:2');
    expect(execFileSync(executable, ['rc', '--help'], { env, encoding: 'utf8' })).toContain('rc alias set');
  });

  it('serves S3 from a temporary directory with no node on PATH: the AWS CLI puts and gets, the console is inside', async () => {
    const port = await freePort();
    const consolePort = await freePort();
    const env = { PATH: pathWithoutNode(directory), HOME: directory, SVC_ACCESS_KEY: 'packadmin', SVC_SECRET_KEY: 'packadmin-secret', SVC_ADDRESS: `127.0.0.1:${port}`, SVC_CONSOLE_ADDRESS: `127.0.0.1:${consolePort}` };
    const child: ChildProcess = spawn(executable, ['server', './data/drive{1...4}'], { cwd: directory, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let logs = '';
    child.stdout!.on('data', (chunk: Buffer) => (logs += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (logs += chunk.toString()));
    try {
      expect(await waitForOk(`http://127.0.0.1:${port}/health/ready`, { exited: () => child.exitCode !== null }), logs).toBe(true);
      const awsEnv = { ...process.env, AWS_ACCESS_KEY_ID: 'packadmin', AWS_SECRET_ACCESS_KEY: 'packadmin-secret', AWS_DEFAULT_REGION: 'us-east-1', AWS_EC2_METADATA_DISABLED: 'true' };
      const aws = (...args: string[]): string => execFileSync('aws', ['--endpoint-url', `http://127.0.0.1:${port}`, ...args], { env: awsEnv, encoding: 'utf8' });
      const source = join(directory, 'source.bin');
      const target = join(directory, 'target.bin');
      // Larger than one block, so the coding threads (embedded) code it.
      await writeFile(source, Buffer.alloc(3 * 1024 * 1024 + 5, 'packaged'));
      aws('s3', 'mb', 's3://packaged');
      aws('s3', 'cp', source, 's3://packaged/file.bin');
      aws('s3', 'cp', 's3://packaged/file.bin', target);
      expect((await readFile(target)).equals(await readFile(source))).toBe(true);
      const consolePage = await fetch(`http://127.0.0.1:${consolePort}/svc/console/`);
      expect(consolePage.status).toBe(200);
      expect(await consolePage.text()).toContain('app.js');
      expect(logs).not.toContain('the console is not built');
    } finally {
      child.kill('SIGTERM');
      if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
    }
    expect(child.exitCode, logs).toBe(0);
  }, 60_000);
});
