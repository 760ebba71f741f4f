/**
 * Where the managed suites launch what they test: real `svc` processes on 127.0.0.x, or containers
 * of the locally built image (testcontainers, host networking). Both lay drives out alike: node i
 * keeps its drives under `<root>/node<i+1>/` on the host (SVC_DRIVE_ROOT for a process, a bind
 * mount at /data for a container), so a suite can look at disks the same way on either.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sendSigned, jsonOrRaw } from '../../src/cli/rc/signed-request.js';
import { startProcessCluster } from '../harness/process-cluster.js';
import { startSvc, testCredentials } from '../harness/server-process.js';
import type { AdminAnswer } from '../runner/check.js';

export interface Deployment {
  /** S3 endpoint of node i. */
  readonly urls: string[];
  /** Host directory of node i's drives: a pool path `/p0/d1` is `<nodeRoot(i)>/p0/d1`. */
  nodeRoot(index: number): string;
  start(index: number): Promise<unknown>;
  /** Graceful shutdown (SIGTERM). */
  stop(index: number): Promise<void>;
  /** SIGKILL. */
  kill(index: number): Promise<void>;
  logs(): string;
  /** The output of node i since its last start ('' when it is down). */
  nodeLogs(index: number): string;
  /** The whole output of node i's run that ended last (stopped or killed), shutdown lines included. */
  endedLogs(index: number): string;
  destroy(): Promise<void>;
}

export interface LaunchOptions {
  nodes: number;
  /** Drive path patterns, one per pool, e.g. `/d{1...4}`; node hosts are added in front. */
  poolPaths: string[];
  env?: Record<string, string>;
}

export interface Refusal {
  /** Exit code, or 'timeout' when the server kept running. */
  code: number | 'timeout';
  output: string;
}

export interface Launcher {
  readonly name: 'process' | 'container';
  launch(options: LaunchOptions): Promise<Deployment>;
  /**
   * Starts one server expected to refuse its launch. `args` gets the directory the server sees
   * (empty, made for this call); `untouched` says whether that directory is still empty after.
   */
  refused(args: (root: string) => string[], env?: Record<string, string>): Promise<Refusal & { untouched: boolean }>;
}

/** Real processes; `script` runs an altered build instead of the sources (the mutation check). */
export function processLauncher(options: { entry?: 'source' | 'build'; script?: string } = {}): Launcher {
  const which = { ...(options.entry ? { entry: options.entry } : {}), ...(options.script ? { script: options.script } : {}) };
  return {
    name: 'process',
    async launch(launch) {
      const cluster = await startProcessCluster({ nodes: launch.nodes, drivesPerNode: 1, poolPaths: launch.poolPaths, env: { SVC_CONSOLE_ENABLE: 'false', ...launch.env }, ...which });
      const ended: string[] = [];
      // A process's output stays readable after it exits: keep it when the node goes down.
      const down = async (index: number, how: 'stop' | 'kill') => {
        const node = cluster.nodes[index];
        await cluster[how](index);
        ended[index] = node?.logs() ?? '';
      };
      return {
        ...deploymentOf(cluster, (index) => cluster.nodes[index]?.logs() ?? '', (index) => ended[index] ?? ''),
        stop: (index) => down(index, 'stop'),
        kill: (index) => down(index, 'kill'),
      };
    },
    async refused(args, env = {}) {
      return withEmptyDir(async (root) => {
        const server = await startSvc({ args: args(root), waitReady: false, env: { SVC_CONSOLE_ENABLE: 'false', ...env }, ...which });
        const code = await Promise.race([server.exited, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 20_000))]);
        if (code === 'timeout') await server.kill();
        return { code: code === null ? -1 : code, output: server.logs(), untouched: (await readdir(root)).length === 0 };
      });
    },
  };
}

/** Containers of `image` (build it first: scripts/build-image.ts). */
export function containerLauncher(image: string): Launcher {
  return {
    name: 'container',
    async launch(launch) {
      const { startContainerCluster } = await import('../harness/container-cluster.js');
      const cluster = await startContainerCluster({ image, nodes: launch.nodes, drivesPerNode: 1, poolPaths: launch.poolPaths, env: { ...launch.env } });
      return deploymentOf(cluster, (index) => cluster.nodeLogs(index), (index) => cluster.endedLogs(index));
    },
    async refused(args, env = {}) {
      const { refusedContainerLaunch } = await import('../harness/container-cluster.js');
      return withEmptyDir(async (root) => {
        const answer = await refusedContainerLaunch({ image, root, args: args('/data'), env });
        return { ...answer, untouched: (await readdir(root)).length === 0 };
      });
    },
  };
}

type Cluster = Pick<Deployment, 'urls' | 'start' | 'stop' | 'kill' | 'logs' | 'destroy'> & { root: string };

function deploymentOf(cluster: Cluster, nodeLogs: (index: number) => string, endedLogs: (index: number) => string): Deployment {
  return {
    urls: cluster.urls,
    nodeRoot: (index) => join(cluster.root, `node${index + 1}`),
    start: (index) => cluster.start(index),
    stop: (index) => cluster.stop(index),
    kill: (index) => cluster.kill(index),
    logs: () => cluster.logs(),
    nodeLogs,
    endedLogs,
    destroy: () => cluster.destroy(),
  };
}

async function withEmptyDir<T>(action: (root: string) => Promise<T>): Promise<T> {
  const root = await mkdtemp(join(tmpdir(), 'svc-managed-'));
  try {
    return await action(root);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** Launches, runs `action`, and always tears down; a failure carries the deployment's logs (as `logs`). */
export async function withDeployment<T>(launcher: Launcher, options: LaunchOptions, action: (deployment: Deployment) => Promise<T>): Promise<T> {
  const deployment = await launcher.launch(options);
  try {
    return await action(deployment);
  } catch (error) {
    if (error instanceof Error) Object.assign(error, { logs: deployment.logs().slice(-4000) });
    throw error;
  } finally {
    await deployment.destroy();
  }
}

/** A root-signed admin request to one node. */
export async function adminAt(url: string, method: 'GET' | 'POST', path: string, rawQuery = '', body?: string): Promise<AdminAnswer> {
  const answer = await sendSigned({ endpoint: url, accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey, method, path, rawQuery, timeoutMs: 30_000, ...(body !== undefined ? { body } : {}) });
  return { status: answer.status, body: jsonOrRaw(answer.text) };
}

/** The admin outcome as a code: 'ok' for 200, else the error code the body names. */
export function outcomeOf(answer: AdminAnswer): string {
  return answer.status === 200 ? 'ok' : String(answer.body.Code ?? answer.status);
}
