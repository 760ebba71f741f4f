/**
 * Starts the real `svc` server as a child process (from the build when it is current, else from
 * source through tsx: entry.ts) for integration tests and benchmarks: free ports, readiness polling, log capture, SIGTERM/SIGKILL.
 */
import { limits } from '../../src/util/limits.js';
import { programArgs } from './entry.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { S3Client } from '@aws-sdk/client-s3';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
export const testCredentials = { accessKeyId: 'testadmin', secretAccessKey: 'testadmin-secret' };

export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export interface SvcProcess {
  url: string;
  port: number;
  /** The console listener's URL, when the console runs at an address picked here. */
  consoleUrl?: string;
  child: ChildProcess;
  logs(): string;
  exited: Promise<number | null>;
  stop(): Promise<number | null>;
  kill(): Promise<number | null>;
}

export interface StartOptions {
  args: string[];
  env?: Record<string, string>;
  host?: string;
  port?: number;
  /** Wait for /health/ready (default true). */
  waitReady?: boolean;
  /** How long to wait for it at most (default 30 s): a bound on a wait, for a machine others share. */
  readyTimeoutMs?: number;
  /** Run the build in dist/ that `npm install` makes, or the TypeScript sources through tsx; by default the build when it is current. */
  entry?: 'source' | 'build';
  /** Runs this built `svc.js` instead (an altered copy of dist/, for the mutation check). */
  script?: string;
  /** A command the server is started under, e.g. `ip netns exec <namespace>` to run it on a host of a NetLab (netns.ts). */
  wrap?: string[];
}

/**
 * Node options the server runs with, as `npm start` and the container image start it: the old
 * generation starts at 64 MB. Started small, V8 ran a full mark-compact about every 100 ms of a
 * large upload here (some 35 per GiB, a tenth of the server's CPU on its helper threads); from
 * 64 MB, one to six.
 */
export const serverNodeOptions = ['--initial-old-space-size=64'];

/**
 * Starts a server process. Ports the caller did not fix are picked free just before the child
 * binds them, so a test running alongside can take one in between: a start that fails with
 * EADDRINUSE on such ports is tried again with new ones.
 */
export async function startSvc(options: StartOptions): Promise<SvcProcess> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startSvcOnce(options);
    } catch (error) {
      const portTaken = String(error).includes('EADDRINUSE');
      if (!portTaken || options.port !== undefined || attempt >= 3) throw error;
    }
  }
}

async function startSvcOnce(options: StartOptions): Promise<SvcProcess> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? (await freePort(host));
  // A console is only given a port when it runs (a port picked here may not exist where the server runs: a wrapped start).
  const consoleOff = options.env?.SVC_CONSOLE_ENABLE === 'false';
  const consolePort = consoleOff ? undefined : await freePort(host);
  const program = options.script !== undefined ? [options.script] : programArgs('svc', options.entry ?? 'current');
  const built = !program.includes('tsx');
  const command = [...serverNodeOptions, ...program];
  const argv = [process.execPath, ...command, 'server', ...options.args];
  const [executable, ...rest] = options.wrap ? [...options.wrap, ...argv] : argv;
  const child = spawn(executable!, rest, {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      SVC_ADDRESS: `${host}:${port}`,
      ...(consolePort === undefined ? {} : { SVC_CONSOLE_ADDRESS: `${host}:${consolePort}` }),
      SVC_ACCESS_KEY: testCredentials.accessKeyId,
      SVC_SECRET_KEY: testCredentials.secretAccessKey,
      SVC_OBS_LOGGER_LEVEL: 'info',
      // The build sizes libuv's pool itself; through tsx the loader starts the pool before the
      // entry can, so the size is passed in, as the build would set it.
      ...(built ? {} : { UV_THREADPOOL_SIZE: String(limits.ioThreadsDefault) }),
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A wrapper may run the server as its child rather than become it (faketime does): the pair
    // gets a process group of its own, and signals go to the whole group.
    detached: options.wrap !== undefined,
  });
  const signal = (name: NodeJS.Signals): void => {
    if (child.exitCode !== null) return;
    if (options.wrap && child.pid !== undefined) {
      try {
        process.kill(-child.pid, name);
        return;
      } catch {
        // the group is gone already: signal the wrapper alone
      }
    }
    child.kill(name);
  };
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://${host}:${port}`;
  // The console's URL when its address was picked here (a caller that sets SVC_CONSOLE_ADDRESS knows its own).
  const consoleAddress = consolePort === undefined || options.env?.SVC_CONSOLE_ADDRESS !== undefined ? undefined : `${host}:${consolePort}`;
  const process_: SvcProcess = {
    url,
    port,
    ...(consoleAddress !== undefined ? { consoleUrl: `http://${consoleAddress}` } : {}),
    child,
    logs: () => output,
    exited,
    stop: async () => {
      signal('SIGTERM');
      return exited;
    },
    kill: async () => {
      signal('SIGKILL');
      return exited;
    },
  };
  if (options.waitReady ?? true) {
    try {
      await waitReady(process_, options.readyTimeoutMs);
    } catch (error) {
      await process_.kill(); // a server that missed its readiness deadline does not outlive the failed start
      throw error;
    }
  }
  return process_;
}

export async function waitReady(server: SvcProcess, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exitCode: number | null | undefined;
  void server.exited.then((code) => (exitCode = code));
  while (Date.now() < deadline) {
    if (exitCode !== undefined) throw new Error(`svc exited with ${exitCode} before it was ready:\n${server.logs()}`);
    try {
      const response = await fetch(`${server.url}/health/ready`);
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`svc was not ready within ${timeoutMs} ms:\n${server.logs()}`);
}

export function s3ClientFor(url: string, options: { credentials?: { accessKeyId: string; secretAccessKey: string } } = {}): S3Client {
  return new S3Client({ endpoint: url, region: 'us-east-1', forcePathStyle: true, credentials: options.credentials ?? testCredentials, maxAttempts: 1 });
}
