/**
 * The slim image (svc:slim, the compose files' image): the single executable only, run as a
 * non-root user, with SPEC's container health check (rule 8); serves S3 from its /data volume.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildSlimImage } from '../scripts/build-image.js';
import { dockerUnavailable } from './helpers/container-cluster.js';
import { missingTool } from './helpers/external-tools.js';
import { freePort } from './helpers/server-process.js';
import { waitForOk } from './helpers/wait-url.js';

const run = promisify(execFile);
const skipReason = (await dockerUnavailable()) ?? missingTool('aws', 'awscli');
if (skipReason) console.warn(`slim image test skipped: ${skipReason}`);

describe.skipIf(skipReason !== undefined)('svc:slim', () => {
  let image: string;
  let directory: string;
  const container = `svc-slim-test-${process.pid}`;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'svc-slim-test-'));
    image = await buildSlimImage(() => undefined);
  }, 300_000);
  afterAll(async () => {
    await run('docker', ['rm', '-f', '-v', container]).catch(() => undefined);
    await rm(directory, { recursive: true, force: true });
  });

  it('holds the executable only, runs as svc with the health check of rule 8', async () => {
    const config = JSON.parse((await run('docker', ['image', 'inspect', image, '--format', '{{json .Config}}'])).stdout) as { User: string; Healthcheck: { Test: string[]; Interval: number; Timeout: number; Retries: number; StartPeriod: number } };
    expect(config.User).toBe('svc');
    expect(config.Healthcheck.Test).toEqual(['CMD', '/usr/bin/svc', 'healthcheck']);
    const seconds = 1e9;
    expect([config.Healthcheck.Interval, config.Healthcheck.Timeout, config.Healthcheck.Retries, config.Healthcheck.StartPeriod]).toEqual([10 * seconds, 5 * seconds, 5, 30 * seconds]);
    const size = Number((await run('docker', ['image', 'inspect', image, '--format', '{{.Size}}'])).stdout);
    console.log(`${image}: ${(size / 2 ** 20).toFixed(0)} MiB`);
    // No shell and no node in it: running one fails.
    await expect(run('docker', ['run', '--rm', '--entrypoint', '/bin/sh', image, '-c', 'true'])).rejects.toThrow();
  });

  it('serves S3 from its /data volume as a non-root user and turns healthy', async () => {
    const port = await freePort();
    const consolePort = await freePort();
    await run('docker', ['run', '-d', '--name', container, '--network', 'host', '--label', 'org.svc.test=slim', '-e', `SVC_ADDRESS=127.0.0.1:${port}`, '-e', `SVC_CONSOLE_ADDRESS=127.0.0.1:${consolePort}`, '-e', 'SVC_ACCESS_KEY=slimadmin', '-e', 'SVC_SECRET_KEY=slimadmin-secret', image, 'server', '/data/drive{1...4}']);
    const logs = async (): Promise<string> => (await run('docker', ['logs', container]).catch((error: { stdout?: string; stderr?: string }) => error)).stderr ?? '';
    expect(await waitForOk(`http://127.0.0.1:${port}/health/ready`), await logs()).toBe(true);
    const env = { ...process.env, AWS_ACCESS_KEY_ID: 'slimadmin', AWS_SECRET_ACCESS_KEY: 'slimadmin-secret', AWS_DEFAULT_REGION: 'us-east-1', AWS_EC2_METADATA_DISABLED: 'true' };
    const aws = (...args: string[]): string => execFileSync('aws', ['--endpoint-url', `http://127.0.0.1:${port}`, ...args], { env, encoding: 'utf8' });
    const source = join(directory, 'source.bin');
    await writeFile(source, Buffer.alloc(1024 * 1024 + 9, 'slim'));
    aws('s3', 'mb', 's3://slim');
    aws('s3', 'cp', source, 's3://slim/object.bin');
    aws('s3', 'cp', 's3://slim/object.bin', join(directory, 'back.bin'));
    expect((await readFile(join(directory, 'back.bin'))).equals(await readFile(source))).toBe(true);
    let health = '';
    const started = Date.now();
    while (health !== 'healthy' && Date.now() - started < 60_000) {
      health = (await run('docker', ['inspect', container, '--format', '{{.State.Health.Status}}'])).stdout.trim();
      if (health !== 'healthy') await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(health, await logs()).toBe('healthy');
  }, 120_000);
});
