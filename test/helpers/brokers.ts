/**
 * The brokers bucket notifications are delivered to, as the real servers from Debian, each
 * started by the test on loopback on a free port in a temporary directory and stopped after:
 * nats-server, redis-server (append-only file, so a restart keeps what it took), mosquitto,
 * rabbitmq-server (node name, data, logs, ports and epmd of its own) and a throwaway PostgreSQL
 * cluster (initdb + postgres; run as the `postgres` user when the test runs as root). A broker
 * can be stopped and started again on the same port and data. `missingBroker` says why one
 * cannot run (its binary is absent), and fails under CI instead.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { closeSync, existsSync, openSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './server-process.js';
import { toolPath } from './external-tools.js';

export type BrokerKind = 'nats' | 'redis' | 'mqtt' | 'amqp' | 'postgres';

const postgresBin = '/usr/lib/postgresql/15/bin';
const rabbitmqServer = '/usr/lib/rabbitmq/bin/rabbitmq-server';

const binaries: Record<BrokerKind, { path: () => string | undefined; debianPackage: string }> = {
  nats: { path: () => toolPath('nats-server'), debianPackage: 'nats-server' },
  redis: { path: () => toolPath('redis-server'), debianPackage: 'redis-server' },
  mqtt: { path: () => toolPath('mosquitto'), debianPackage: 'mosquitto' },
  amqp: { path: () => (existsSync(rabbitmqServer) && toolPath('epmd') ? rabbitmqServer : undefined), debianPackage: 'rabbitmq-server' },
  postgres: { path: () => (existsSync(join(postgresBin, 'postgres')) ? join(postgresBin, 'postgres') : undefined), debianPackage: 'postgresql-15' },
};

/** Undefined when the broker can run here; otherwise the skip reason (throws under CI). */
export function missingBroker(kind: BrokerKind): string | undefined {
  if (binaries[kind].path()) return undefined;
  const reason = `the ${kind} broker is not installed (Debian package ${binaries[kind].debianPackage}; .ci/run installs it)`;
  if (process.env.CI) throw new Error(`CI requires ${reason}`);
  return reason;
}

export interface Broker {
  kind: BrokerKind;
  port: number;
  /** How a client reaches it: host:port (NATS, Redis), a URL (MQTT, AMQP), a connection string (PostgreSQL). */
  address: string;
  /** Stops it (SIGTERM, then SIGKILL); its data stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops it and removes its directory. */
  dispose(): Promise<void>;
}

interface Launch {
  command: string;
  args: string[];
  env?: Record<string, string>;
  /** Resolves once the broker answers. */
  ready(): Promise<void>;
}

const runsAsRoot = process.getuid?.() === 0;

/** A system user's id (the brokers that drop root privileges need their directory to be theirs). */
function userId(name: string): number {
  return Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
}

export async function startBroker(kind: BrokerKind): Promise<Broker> {
  const directory = await mkdtemp(join(tmpdir(), `svc-broker-${kind}-`));
  const port = await freePort();
  const { launch, address, helpers } = await prepare(kind, directory, port);
  let child: ChildProcess | undefined;
  let helperChildren: ChildProcess[] = [];
  const start = async (): Promise<void> => {
    helperChildren = helpers.map((helper) => spawnLogged(helper.command, helper.args, helper.env, join(directory, `${kind}-helper.log`)));
    child = spawnLogged(launch.command, launch.args, launch.env, join(directory, `${kind}.log`));
    await launch.ready();
  };
  const stop = async (): Promise<void> => {
    await Promise.all([child, ...helperChildren].map((process) => stopProcess(process)));
    child = undefined;
    helperChildren = [];
  };
  await start();
  return { kind, port, address, stop, start, dispose: async () => { await stop(); await rm(directory, { recursive: true, force: true }); } };
}

async function prepare(kind: BrokerKind, directory: string, port: number): Promise<{ launch: Launch; address: string; helpers: Omit<Launch, 'ready'>[] }> {
  const tcpReady = (): Promise<void> => waitForPort(port);
  switch (kind) {
    case 'nats':
      return { address: `127.0.0.1:${port}`, helpers: [], launch: { command: 'nats-server', args: ['-a', '127.0.0.1', '-p', String(port)], ready: tcpReady } };
    case 'redis':
      return {
        address: `127.0.0.1:${port}`, helpers: [],
        launch: { command: 'redis-server', args: ['--port', String(port), '--bind', '127.0.0.1', '--dir', directory, '--appendonly', 'yes', '--appendfsync', 'always', '--save', ''], ready: tcpReady },
      };
    case 'mqtt': {
      const config = join(directory, 'mosquitto.conf');
      await writeFile(config, `listener ${port} 127.0.0.1\nallow_anonymous true\npersistence true\npersistence_location ${directory}/\n`);
      if (runsAsRoot) await chown(directory, userId('mosquitto'), userId('mosquitto'));
      return { address: `mqtt://127.0.0.1:${port}`, helpers: [], launch: { command: 'mosquitto', args: ['-c', config], ready: tcpReady } };
    }
    case 'amqp':
      return prepareRabbit(directory, port);
    case 'postgres':
      return preparePostgres(directory, port);
  }
}

async function prepareRabbit(directory: string, port: number): Promise<{ launch: Launch; address: string; helpers: Omit<Launch, 'ready'>[] }> {
  const [epmdPort, distPort] = [await freePort(), await freePort()];
  await writeFile(join(directory, 'enabled_plugins'), '[].\n');
  await writeFile(join(directory, 'rabbitmq-env.conf'), '');
  await mkdir(join(directory, 'log'), { recursive: true });
  const env = {
    HOME: directory,
    ERL_EPMD_PORT: String(epmdPort),
    RABBITMQ_NODENAME: `svc${port}@localhost`,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_MNESIA_BASE: join(directory, 'mnesia'),
    RABBITMQ_LOG_BASE: join(directory, 'log'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(directory, 'enabled_plugins'),
    RABBITMQ_CONF_ENV_FILE: join(directory, 'rabbitmq-env.conf'),
    RABBITMQ_CONFIG_FILE: join(directory, 'rabbitmq'),
    RABBITMQ_ADVANCED_CONFIG_FILE: join(directory, 'advanced.config'),
    RABBITMQ_PID_FILE: join(directory, 'rabbit.pid'),
  };
  return {
    address: `amqp://guest:guest@127.0.0.1:${port}`,
    helpers: [{ command: 'epmd', args: ['-port', String(epmdPort), '-address', '127.0.0.1'], env }],
    launch: { command: rabbitmqServer, args: [], env, ready: () => waitForPort(port, 90_000) },
  };
}

async function preparePostgres(directory: string, port: number): Promise<{ launch: Launch; address: string; helpers: Omit<Launch, 'ready'>[] }> {
  const data = join(directory, 'data');
  const run = (command: string, args: string[]): { command: string; args: string[] } => (runsAsRoot ? { command: 'runuser', args: ['-u', 'postgres', '--', command, ...args] } : { command, args });
  if (runsAsRoot) await chown(directory, userId('postgres'), userId('postgres'));
  const initdb = run(join(postgresBin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'svc', '--no-sync']);
  await new Promise<void>((resolve, reject) => {
    const child = spawn(initdb.command, initdb.args, { stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`initdb exited with ${code}`))));
  });
  const server = run(join(postgresBin, 'postgres'), ['-D', data, '-p', String(port), '-k', directory, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off']);
  const address = `postgres://svc@127.0.0.1:${port}/postgres`;
  return { address, helpers: [], launch: { ...server, ready: () => waitForPostgres(address) } };
}

function spawnLogged(command: string, args: string[], env: Record<string, string> | undefined, logPath: string): ChildProcess {
  const log = openSync(logPath, 'a');
  const child = spawn(command, args, { detached: true, stdio: ['ignore', log, log], env: { PATH: process.env.PATH ?? '', ...env } });
  closeSync(log);
  child.on('error', () => undefined);
  return child;
}

/** SIGTERM to the process group it leads, SIGKILL after a grace period; resolves once it exited. */
async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const signal = (name: NodeJS.Signals): void => {
    try {
      process.kill(-child.pid!, name);
    } catch {
      // already gone
    }
  };
  signal('SIGTERM');
  const timer = setTimeout(() => signal('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

export async function waitForPort(port: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function waitForPostgres(connectionString: string, timeoutMs = 30_000): Promise<void> {
  const { default: pg } = await import('pg');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = new pg.Client({ connectionString });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      return;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
