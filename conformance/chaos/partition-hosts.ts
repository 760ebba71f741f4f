/**
 * What the partition scenarios share between the harness and its run on the clients' host
 * (partition.ts, partition-moves.ts): the scenarios' names, the run handed over, and how the nodes
 * are started on their hosts.
 */
import { join } from 'node:path';
import type { NetControl, NetHost } from '../harness/netns.js';
import { startSvc, waitReady, type SvcProcess } from '../harness/server-process.js';

export const partitionKinds = ['partition-one', 'partition-two', 'partition-asymmetric', 'partition-flapping'] as const;
export type PartitionKind = (typeof partitionKinds)[number];
/** One node cut off during longer work: multipart uploads, a rebalance, a decommission. */
export const partitionWorkKinds = ['partition-multipart', 'partition-rebalance', 'partition-decommission'] as const;
export type PartitionWorkKind = (typeof partitionWorkKinds)[number];

export const nodeCount = 4;
const port = 9000;

export interface InsideRun {
  kind: PartitionKind | PartitionWorkKind;
  seed: number;
  size: number;
  hosts: NetHost[];
  /** The nodes' directories go under it (node n's drives under `<root>/n<n>`). */
  root: string;
  script?: string;
  versioned?: boolean;
}

/** Starts a node process on each host (drives under `<root>/<host>`), all with these launch arguments; resolves once every one is ready. */
export async function startNodes(run: InsideRun, net: NetControl, nodes: NetHost[], args: string[], env: Record<string, string> = {}): Promise<SvcProcess[]> {
  const servers: SvcProcess[] = [];
  try {
    for (const node of nodes) {
      servers.push(await startSvc({ args, host: node.address, port, waitReady: false, wrap: net.execPrefix(node), env: { SVC_DRIVE_ROOT: join(run.root, node.name), SVC_CONSOLE_ENABLE: 'false', ...env }, ...(run.script ? { script: run.script } : {}) }));
    }
    await Promise.all(servers.map((server) => waitReady(server, 60_000)));
  } catch (error) {
    await Promise.all(servers.map((server) => server.kill()));
    throw error;
  }
  return servers;
}

/** The nodes' endpoints for a pool at `path` (`/d{1...2}`): `http://<subnet>.{1...4}:<port><path>`. */
export function poolArgument(nodes: NetHost[], path: string): string {
  const subnet = nodes[0]!.address.split('.').slice(0, 3).join('.');
  return `http://${subnet}.{1...${nodes.length}}:${port}${path}`;
}
