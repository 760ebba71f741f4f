/**
 * The Debian package on fresh Debian roots with no Node.js (a debootstrap image, in containers
 * with host networking, each standing for a machine): install, start the server with the unit's
 * own command line, user, directory and environment file, PUT/GET with the AWS CLI, a graceful
 * restart with the unit's KillSignal, an upgrade, and a removal that keeps the data and the
 * configuration; then the four-node recipe of docs/getting-started.md ("A cluster with the Debian
 * package"): four machines with the same /etc/default/svc but their own address, one machine's
 * server killed and brought back while clients read and write through the others.
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

/** A container standing for one machine with the package installed, and its server run as the unit runs it. */
class Machine {
  private server: ChildProcess | undefined;
  private output = '';
  unit!: Unit;

  private constructor(readonly name: string) {}

  static async boot(name: string, image: string, packages: string): Promise<Machine> {
    await run('docker', ['run', '-d', '--rm', '--name', name, '--network', 'host', '--label', 'org.svc.test=debian-package', '-v', `${packages}:/packages:ro`, image, 'sleep', 'infinity']);
    return new Machine(name);
  }

  async exec(...args: string[]): Promise<string> {
    return (await run('docker', ['exec', this.name, ...args], { maxBuffer: 16 * 1024 * 1024 })).stdout;
  }

  async install(deb: DebianPackage): Promise<void> {
    await this.exec('dpkg', '-i', `/packages/${basename(deb.path)}`);
    this.unit = unitOf(await this.exec('cat', '/lib/systemd/system/svc.service'));
  }

  /** Edits /etc/default/svc as an operator would: each setting replaces its line (commented or not), or is added. */
  async configure(settings: Record<string, string>): Promise<void> {
    for (const [key, value] of Object.entries(settings)) {
      const line = `${key}="${value}"`;
      await this.exec('sh', '-c', `if grep -q '^#\\?${key}=' "$1"; then sed -i "s|^#\\?${key}=.*|$2|" "$1"; else printf '%s\\n' "$2" >> "$1"; fi`, 'sh', this.unit.environmentFile, line);
    }
  }

  /** Starts the unit's command line as its user, in its directory, with its environment file; resolves once `ready` answers 200. */
  async start(ready: string): Promise<void> {
    const env = environmentOf(await this.exec('cat', this.unit.environmentFile));
    const argv = commandLineOf(this.unit, env);
    const envArgs = Object.entries(env).flatMap(([key, value]) => ['-e', `${key}=${value}`]);
    // The shell records its pid, then becomes the server (exec): the pid is the server's.
    const server = spawn('docker', ['exec', '-u', this.unit.user, '-w', this.unit.workingDirectory, ...envArgs, this.name, 'sh', '-c', 'echo $$ > /tmp/svc.pid && exec "$@"', 'sh', ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.server = server;
    server.stdout!.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    server.stderr!.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    expect(await waitForOk(ready, { timeoutMs: 90_000, exited: () => server.exitCode !== null }), `${this.name}:\n${this.output.slice(-4000)}`).toBe(true);
  }

  /** Sends the server a signal (the unit's KillSignal by default); resolves with its exit code. */
  async stop(signal = this.unit.killSignal): Promise<number | null> {
    const server = this.server!;
    const exited = server.exitCode !== null ? Promise.resolve(server.exitCode) : new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
    await this.exec('sh', '-c', `kill -${signal.replace(/^SIG/, '')} "$(cat /tmp/svc.pid)"`);
    return exited;
  }

  logs(): string {
    return this.output;
  }

  async remove(): Promise<void> {
    this.server?.kill();
    await run('docker', ['rm', '-f', this.name]).catch(() => undefined);
  }
}

function awsCli(endpoint: string, accessKey: string, secretKey: string): (...args: string[]) => string {
  const env = { ...process.env, AWS_ACCESS_KEY_ID: accessKey, AWS_SECRET_ACCESS_KEY: secretKey, AWS_DEFAULT_REGION: 'us-east-1', AWS_EC2_METADATA_DISABLED: 'true' };
  return (...args: string[]) => execFileSync('aws', ['--endpoint-url', endpoint, ...args], { env, encoding: 'utf8' });
}

describe.skipIf(skipReason !== undefined)('the Debian package on fresh Debian roots', () => {
  let directory: string;
  let image: string;
  let first: DebianPackage;
  let second: DebianPackage;
  const machines: Machine[] = [];
  const boot = async (role: string): Promise<Machine> => {
    const machine = await Machine.boot(`svc-deb-${role}-${process.pid}`, image, join(first.path, '..'));
    machines.push(machine);
    return machine;
  };

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'svc-deb-'));
    image = await debianRootImage();
    await buildExecutable(() => undefined);
    first = await buildDebianPackage({ version: '0.1.0~test1', fast: true, log: () => undefined });
    second = await buildDebianPackage({ version: '0.1.0~test2', fast: true, log: () => undefined });
  }, 600_000);

  afterAll(async () => {
    await Promise.all(machines.map((machine) => machine.remove()));
    await rm(directory, { recursive: true, force: true });
    for (const built of [first, second]) if (built) await rm(built.path, { force: true });
  });

  it('installs, serves S3 as the unit runs it, restarts gracefully, upgrades, and keeps data and settings when removed', async () => {
    const machine = await boot('single');
    await expect(machine.exec('sh', '-c', 'command -v node')).rejects.toThrow();
    await machine.install(first);
    expect(await machine.exec('getent', 'passwd', 'svc')).toContain('svc');
    expect(await machine.exec('svc-rc', '--help')).toContain('rc alias set');
    expect(machine.unit.user).toBe('svc');
    expect(machine.unit.killSignal).toBe('SIGTERM');

    // The operator's settings, as they would edit /etc/default/svc.
    const port = await freePort();
    const consolePort = await freePort();
    await machine.configure({ SVC_ADDRESS: `127.0.0.1:${port}`, SVC_CONSOLE_ADDRESS: `127.0.0.1:${consolePort}`, SVC_ACCESS_KEY: 'debadmin', SVC_SECRET_KEY: 'debadmin-secret' });
    expect(await machine.exec('stat', '-c', '%U:%G %a', machine.unit.environmentFile)).toBe('root:svc 640\n');
    const ready = `http://127.0.0.1:${port}/health/ready`;

    const aws = awsCli(`http://127.0.0.1:${port}`, 'debadmin', 'debadmin-secret');
    const source = join(directory, 'source.bin');
    await writeFile(source, Buffer.alloc(2 * 1024 * 1024 + 3, 'debian'));
    const readBack = async (name: string): Promise<boolean> => {
      aws('s3', 'cp', 's3://debian/object.bin', join(directory, name));
      return (await readFile(join(directory, name))).equals(await readFile(source));
    };

    await machine.start(ready);
    aws('s3', 'mb', 's3://debian');
    aws('s3', 'cp', source, 's3://debian/object.bin');
    expect(await readBack('first.bin')).toBe(true);
    expect(await machine.exec('stat', '-c', '%U', '/var/lib/svc/drive1/debian')).toBe('svc\n');

    expect(await machine.stop(), machine.logs()).toBe(0);
    await machine.start(ready);
    expect(await readBack('after-restart.bin')).toBe(true);
    expect(await machine.stop(), machine.logs()).toBe(0);

    await machine.exec('dpkg', '-i', `/packages/${basename(second.path)}`);
    expect(await machine.exec('dpkg-query', '-W', '-f', '${Version}', 'svc')).toBe(second.version);
    expect(await machine.exec('cat', machine.unit.environmentFile)).toContain('SVC_ACCESS_KEY="debadmin"');
    await machine.start(ready);
    expect(await readBack('after-upgrade.bin')).toBe(true);
    expect(await machine.stop(), machine.logs()).toBe(0);

    await machine.exec('dpkg', '-r', 'svc');
    await expect(machine.exec('test', '-e', '/usr/bin/svc')).rejects.toThrow();
    expect(await machine.exec('cat', machine.unit.environmentFile)).toContain('SVC_ACCESS_KEY="debadmin"');
    expect(await machine.exec('sh', '-c', 'ls /var/lib/svc/drive*/debian')).toContain('object.bin');
  }, 300_000);

  it('runs the four-machine cluster recipe: one /etc/default/svc but the address, a machine lost and back', async () => {
    const hosts = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'];
    const port = await freePort();
    const consolePort = await freePort();
    const cluster = await Promise.all(hosts.map((_host, index) => boot(`node${index + 1}`)));
    for (const [index, machine] of cluster.entries()) {
      await machine.install(first);
      await machine.configure({
        SVC_VOLUMES: `http://127.0.0.{2...5}:${port}/var/lib/svc/drive{1...4}`,
        SVC_ADDRESS: `${hosts[index]}:${port}`,
        SVC_CONSOLE_ADDRESS: `${hosts[index]}:${consolePort}`,
        SVC_ACCESS_KEY: 'clusteradmin',
        SVC_SECRET_KEY: 'clusteradmin-secret',
      });
    }
    const ready = (index: number) => `http://${hosts[index]}:${port}/health/ready`;
    // Machines come up in any order; each waits for format quorum before it answers ready.
    await Promise.all(cluster.map((machine, index) => machine.start(ready(index))));
    const aws = hosts.map((host) => awsCli(`http://${host}:${port}`, 'clusteradmin', 'clusteradmin-secret'));
    const source = join(directory, 'cluster.bin');
    await writeFile(source, Buffer.alloc(3 * 1024 * 1024 + 11, 'cluster'));
    const readsBack = async (through: number, key: string): Promise<boolean> => {
      const copy = join(directory, `read-${through}-${key}`);
      aws[through]!('s3', 'cp', `s3://fleet/${key}`, copy);
      return (await readFile(copy)).equals(await readFile(source));
    };

    aws[0]!('s3', 'mb', 's3://fleet');
    aws[0]!('s3', 'cp', source, 's3://fleet/before.bin');
    for (const through of [1, 2, 3]) expect(await readsBack(through, 'before.bin')).toBe(true);
    // Each machine's drives hold a shard of it: the erasure sets span the four machines.
    for (const machine of cluster) expect(await machine.exec('sh', '-c', 'ls -d /var/lib/svc/drive*/fleet/before.bin | wc -l')).not.toBe('0\n');

    // The fourth machine crashes: the others still read and write.
    expect(await cluster[3]!.stop('SIGKILL')).not.toBe(0);
    expect(await readsBack(1, 'before.bin')).toBe(true);
    aws[2]!('s3', 'cp', source, 's3://fleet/while-down.bin');
    expect(await readsBack(0, 'while-down.bin')).toBe(true);

    // Back, it rejoins with no manual step and serves both objects.
    await cluster[3]!.start(ready(3));
    expect(await readsBack(3, 'before.bin')).toBe(true);
    expect(await readsBack(3, 'while-down.bin')).toBe(true);
    for (const machine of cluster) expect(await machine.stop(), machine.logs().slice(-4000)).toBe(0);
  }, 420_000);
});
