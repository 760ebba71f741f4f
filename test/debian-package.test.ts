/**
 * The Debian package on a fresh Debian root with no Node.js (a debootstrap image, in a container
 * with host networking): install, start the server with the unit's own command line, user,
 * directory and environment file, PUT/GET with the AWS CLI, a graceful restart with the unit's
 * KillSignal, an upgrade, and a removal that keeps the data and the configuration.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { buildExecutable } from '../scripts/package.js';
import { buildDebianPackage, type DebianPackage } from '../scripts/package-deb.js';
import { dockerUnavailable } from './helpers/container-cluster.js';
import { debianRootImage, debianRootUnavailable } from './helpers/debian-root.js';
import { missingTool } from './helpers/external-tools.js';
import { freePort } from './helpers/server-process.js';
import { waitForOk } from './helpers/wait-url.js';

const run = promisify(execFile);
const required = Boolean(process.env.CI) || process.env.SVC_REQUIRE_DOCKER === '1';
const skipReason = (await dockerUnavailable()) ?? missingTool('aws', 'awscli') ?? missingTool('dpkg-deb', 'dpkg') ?? (await debianRootUnavailable(required));
if (skipReason) console.warn(`Debian package test skipped: ${skipReason}`);

interface Unit {
  execStart: string[];
  user: string;
  workingDirectory: string;
  environmentFile: string;
  killSignal: string;
}

function unitOf(text: string): Unit {
  const value = (key: string): string => {
    const match = new RegExp(`^${key}=(.*)$`, 'm').exec(text);
    if (!match) throw new Error(`svc.service has no ${key}=`);
    return match[1]!.trim();
  };
  return { execStart: value('ExecStart').split(/\s+/), user: value('User'), workingDirectory: value('WorkingDirectory'), environmentFile: value('EnvironmentFile').replace(/^-/, ''), killSignal: value('KillSignal') };
}

/** An EnvironmentFile as systemd reads it: KEY=VALUE lines, comments skipped, quotes removed. */
function environmentOf(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (match) env[match[1]!] = match[2]!.trim().replace(/^"(.*)"$/, '$1').replace(/^'(.*)'$/, '$1');
  }
  return env;
}

/** ExecStart with $VAR words replaced by the variable's words, as systemd does. */
function commandLineOf(unit: Unit, env: Record<string, string>): string[] {
  return unit.execStart.flatMap((word) => (/^\$[A-Za-z_]\w*$/.test(word) ? (env[word.slice(1)] ?? '').split(/\s+/).filter(Boolean) : [word.replace(/\$\{(\w+)\}/g, (_all, name: string) => env[name] ?? '')]));
}

describe.skipIf(skipReason !== undefined)('the Debian package on a fresh Debian root', () => {
  let directory: string;
  let container: string;
  let first: DebianPackage;
  let second: DebianPackage;
  const exec = async (...args: string[]): Promise<string> => (await run('docker', ['exec', container, ...args], { maxBuffer: 16 * 1024 * 1024 })).stdout;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'svc-deb-'));
    const image = await debianRootImage();
    await buildExecutable(() => undefined);
    first = await buildDebianPackage({ version: '0.1.0~test1', fast: true, log: () => undefined });
    second = await buildDebianPackage({ version: '0.1.0~test2', fast: true, log: () => undefined });
    container = `svc-deb-test-${process.pid}`;
    await run('docker', ['run', '-d', '--rm', '--name', container, '--network', 'host', '--label', 'org.svc.test=debian-package', '-v', `${join(first.path, '..')}:/packages:ro`, image, 'sleep', 'infinity']);
  }, 600_000);

  afterAll(async () => {
    if (container) await run('docker', ['rm', '-f', container]).catch(() => undefined);
    await rm(directory, { recursive: true, force: true });
    for (const built of [first, second]) if (built) await rm(built.path, { force: true });
  });

  it('installs, serves S3 as the unit runs it, restarts gracefully, upgrades, and keeps data and settings when removed', async () => {
    await expect(exec('sh', '-c', 'command -v node')).rejects.toThrow();
    await exec('dpkg', '-i', `/packages/${basename(first.path)}`);
    expect(await exec('getent', 'passwd', 'svc')).toContain('svc');
    expect(await exec('svc-rc', '--help')).toContain('rc alias set');
    const unit = unitOf(await exec('cat', '/lib/systemd/system/svc.service'));
    expect(unit.user).toBe('svc');
    expect(unit.killSignal).toBe('SIGTERM');

    // The operator's settings, as they would edit /etc/default/svc.
    const port = await freePort();
    const consolePort = await freePort();
    const settings = `SVC_ADDRESS=127.0.0.1:${port}\nSVC_CONSOLE_ADDRESS=127.0.0.1:${consolePort}\nSVC_ACCESS_KEY=debadmin\nSVC_SECRET_KEY=debadmin-secret\n`;
    await exec('sh', '-c', `printf '%s' '${settings}' >> ${unit.environmentFile}`);
    expect(await exec('stat', '-c', '%U:%G %a', unit.environmentFile)).toBe('root:svc 640\n');

    let server: ChildProcess | undefined;
    let logs = '';
    const start = async (): Promise<void> => {
      const env = environmentOf(await exec('cat', unit.environmentFile));
      const argv = commandLineOf(unit, env);
      const envArgs = Object.entries(env).flatMap(([key, value]) => ['-e', `${key}=${value}`]);
      // The shell records its pid, then becomes the server (exec): the pid is the server's.
      server = spawn('docker', ['exec', '-u', unit.user, '-w', unit.workingDirectory, ...envArgs, container, 'sh', '-c', 'echo $$ > /tmp/svc.pid && exec "$@"', 'sh', ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
      server.stdout!.on('data', (chunk: Buffer) => (logs += chunk.toString()));
      server.stderr!.on('data', (chunk: Buffer) => (logs += chunk.toString()));
      expect(await waitForOk(`http://127.0.0.1:${port}/health/ready`, { exited: () => server!.exitCode !== null }), logs).toBe(true);
    };
    const stop = async (): Promise<number | null> => {
      const exited = new Promise<number | null>((resolve) => server!.once('exit', (code) => resolve(code)));
      await exec('sh', '-c', `kill -${unit.killSignal.replace(/^SIG/, '')} "$(cat /tmp/svc.pid)"`);
      return exited;
    };

    const awsEnv = { ...process.env, AWS_ACCESS_KEY_ID: 'debadmin', AWS_SECRET_ACCESS_KEY: 'debadmin-secret', AWS_DEFAULT_REGION: 'us-east-1', AWS_EC2_METADATA_DISABLED: 'true' };
    const aws = (...args: string[]): string => execFileSync('aws', ['--endpoint-url', `http://127.0.0.1:${port}`, ...args], { env: awsEnv, encoding: 'utf8' });
    const source = join(directory, 'source.bin');
    await writeFile(source, Buffer.alloc(2 * 1024 * 1024 + 3, 'debian'));
    const readBack = async (name: string): Promise<boolean> => {
      aws('s3', 'cp', 's3://debian/object.bin', join(directory, name));
      return (await readFile(join(directory, name))).equals(await readFile(source));
    };

    await start();
    aws('s3', 'mb', 's3://debian');
    aws('s3', 'cp', source, 's3://debian/object.bin');
    expect(await readBack('first.bin')).toBe(true);
    expect(await exec('stat', '-c', '%U', '/var/lib/svc/drive1/debian')).toBe('svc\n');

    expect(await stop(), logs).toBe(0);
    await start();
    expect(await readBack('after-restart.bin')).toBe(true);
    expect(await stop(), logs).toBe(0);

    await exec('dpkg', '-i', `/packages/${basename(second.path)}`);
    expect(await exec('dpkg-query', '-W', '-f', '${Version}', 'svc')).toBe(second.version);
    expect(await exec('cat', unit.environmentFile)).toContain('SVC_ACCESS_KEY=debadmin');
    await start();
    expect(await readBack('after-upgrade.bin')).toBe(true);
    expect(await stop(), logs).toBe(0);

    await exec('dpkg', '-r', 'svc');
    await expect(exec('test', '-e', '/usr/bin/svc')).rejects.toThrow();
    expect(await exec('cat', unit.environmentFile)).toContain('SVC_ACCESS_KEY=debadmin');
    expect(await exec('sh', '-c', 'ls /var/lib/svc/drive*/debian')).toContain('object.bin');
  }, 300_000);
});
