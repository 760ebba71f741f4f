/**
 * A cluster of real `svc` processes on one machine: node i listens on 127.0.0.<i+2>:<port> with
 * its own directory through SVC_DRIVE_ROOT, and every node gets the identical launch command.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startSvc, waitReady, type SvcProcess } from './server-process.js';

export interface ProcessCluster {
  /** The launch arguments every node gets (changed by setPools for the next starts). */
  args: string[];
  setPools(paths: string[]): void;
  nodes: (SvcProcess | undefined)[];
  urls: string[];
  root: string;
  start(index: number, options?: { waitReady?: boolean }): Promise<SvcProcess>;
  stop(index: number): Promise<void>;
  kill(index: number): Promise<void>;
  logs(): string;
  destroy(): Promise<void>;
}

export async function startProcessCluster(options: {
  nodes: number;
  drivesPerNode: number;
  /** Path patterns of the pools (default one pool, /data{1...drivesPerNode}); each becomes http://127.0.0.{2...}:<port><path>. */
  poolPaths?: string[];
  env?: Record<string, string>;
  /** Which server the nodes run (see startSvc): the sources (default), the build, or an altered build. */
  entry?: 'source' | 'build';
  script?: string;
  /** A command node i is started under (e.g. faketime with the node's clock offset), read at each start. */
  wrap?: (index: number) => string[] | undefined;
  /** How long each node may take to be ready at most (default 60 s). */
  readyTimeoutMs?: number;
}): Promise<ProcessCluster> {
  const root = await mkdtemp(join(tmpdir(), 'svc-cluster-'));
  const port = await freePort('127.0.0.2');
  const hosts = Array.from({ length: options.nodes }, (_, index) => `127.0.0.${index + 2}`);
  const argsFor = (paths: string[]) => paths.map((path) => `http://127.0.0.{2...${options.nodes + 1}}:${port}${path}`);
  const args = argsFor(options.poolPaths ?? [`/data{1...${options.drivesPerNode}}`]);
  const nodes: (SvcProcess | undefined)[] = hosts.map(() => undefined);
  const history: string[] = [];
  const cluster: ProcessCluster = {
    args,
    setPools(paths) {
      cluster.args = argsFor(paths);
    },
    nodes,
    urls: hosts.map((host) => `http://${host}:${port}`),
    root,
    async start(index, startOptions = {}) {
      const wrap = options.wrap?.(index);
      const node = await startSvc({ args: cluster.args, host: hosts[index]!, port, waitReady: false, ...(wrap ? { wrap } : {}), ...(options.entry ? { entry: options.entry } : {}), ...(options.script ? { script: options.script } : {}), env: { SVC_DRIVE_ROOT: join(root, `node${index + 1}`), SVC_CONSOLE_ENABLE: 'false', ...options.env } });
      nodes[index] = node;
      if (startOptions.waitReady ?? true) await waitReady(node, options.readyTimeoutMs ?? 60_000);
      return node;
    },
    async stop(index) {
      const node = nodes[index];
      if (node) history.push(`--- node ${index + 1} (stopped)\n${node.logs()}`);
      await node?.stop();
      nodes[index] = undefined;
    },
    async kill(index) {
      const node = nodes[index];
      if (node) history.push(`--- node ${index + 1} (killed)\n${node.logs()}`);
      await node?.kill();
      nodes[index] = undefined;
    },
    logs: () => [...history, ...nodes.map((node, index) => (node ? `--- node ${index + 1}\n${node.logs()}` : ''))].join('\n').slice(-20_000),
    async destroy() {
      await Promise.all(nodes.map((node) => node?.kill()));
      await rm(root, { recursive: true, force: true });
    },
  };
  // Nodes start together; each waits for format quorum across the others. A cluster that does
  // not come up is taken down, so that no node outlives the failed start.
  try {
    await Promise.all(hosts.map((_, index) => cluster.start(index, { waitReady: false })));
    await Promise.all(nodes.map((node) => waitReady(node!, options.readyTimeoutMs ?? 60_000)));
  } catch (error) {
    await cluster.destroy();
    throw error;
  }
  return cluster;
}
