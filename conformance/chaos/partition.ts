/**
 * Network partitions between the nodes of a four-node cluster, judged by the linearizability
 * checker (conformance/checkers/linearizability.ts).
 *
 * The nodes run as real processes, each on a host of its own (a network namespace with its own
 * address, netns.ts), joined by a bridge; the clients run on a fifth host, so every node stays
 * reachable from them while links between nodes are cut (iptables in the hosts' namespaces:
 * packets dropped, so calls across a cut hang until their timeouts, as on a real network). This
 * harness runs inside the clients' host: `partitionScenario` makes the hosts and runs
 * `partition-inside.ts` there.
 *
 * A run has three phases of the recorded workload (history-recorder.ts: concurrent PUTs, also
 * conditional, GETs, HEADs, DELETEs and listings on a few shared keys, one client per node):
 * healthy, faulted, healed. The fault is the scenario's:
 * - `partition-one`: one node cut off from the other three, both ways;
 * - `partition-two`: two nodes cut off from the other two (no side holds a majority);
 * - `partition-asymmetric`: one node's packets to one peer dropped, the other way open;
 * - `partition-flapping`: the link between two nodes cut and restored every few operations.
 * The seed draws the nodes, the bucket's kind (versioned or not) and the points of the workload
 * (operation counts, never wall-clock times) at which links change. After the healed phase every
 * client reads every key once more. The whole history must be linearizable (a register per key;
 * a versioned register in a versioned bucket), listings must include every key acknowledged
 * before them, and a closing heal must fail on nothing and leave every object at full redundancy.
 *
 * Three more cut one node off, drawn from the seed, in the middle of longer work:
 * - `partition-multipart`: the clients run multipart uploads (multipart-recorder.ts) through
 *   different nodes while one node is cut off and the links heal;
 * - `partition-rebalance` and `partition-decommission` (partition-moves.ts): the node is cut off
 *   while a rebalance into a second pool, or the decommission of the first, is moving objects.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recordedPrefix, runRecordedPhases, type RecordedResult } from './recorded-phases.js';
import { netControl, netLabUnavailable, startNetLab, type NetControl, type NetHost } from '../harness/netns.js';
import { repoRoot, s3ClientFor } from '../harness/server-process.js';
import { createPrng, type Prng } from '../../src/util/prng.js';
import { bucket, volume, type ChaosContext } from './steps.js';
import type { Tally } from './history-checker.js';
import { MultipartRecorder } from './multipart-recorder.js';
import { partitionMovesInside } from './partition-moves.js';
import { nodeCount, poolArgument, startNodes, type InsideRun, type PartitionKind, type PartitionWorkKind } from './partition-hosts.js';

export { partitionKinds, partitionWorkKinds, type InsideRun, type PartitionKind, type PartitionWorkKind } from './partition-hosts.js';

/** What the inside run hands back (its last line of standard output, as JSON). */
export type InsideResult = RecordedResult;

/**
 * The scenario: makes the hosts, runs the inside harness on the clients' host, removes the hosts.
 * `script`: the nodes run this built `svc.js` (an altered copy of the build, to show the checker
 * catches what it should); `versioned`: the bucket's kind instead of the seed's draw.
 */
export function partitionScenario(kind: PartitionKind | PartitionWorkKind, options: { script?: string; versioned?: boolean } = {}) {
  return async (context: ChaosContext): Promise<{ problems: string[]; checker: Tally }> => {
    const unavailable = await netLabUnavailable();
    if (unavailable) throw new Error(`${kind} runs its nodes on hosts of their own: ${unavailable}`);
    const lab = await startNetLab({ count: nodeCount, client: true });
    const mounts: string[] = [];
    let root: string | undefined;
    try {
      root = await mkdtemp(join(tmpdir(), 'svc-partition-'));
      // A rebalance needs pools that differ in fullness: each node's pools on a tmpfs of their own.
      if (kind === 'partition-rebalance') mounts.push(...(await mountPools(root, lab.hosts.filter((host) => host.name !== 'client'), volume(context.size))));
      const client = lab.hosts.find((host) => host.name === 'client')!;
      const result = await runInside(lab.execPrefix(client), { kind, seed: context.seed, size: context.size, hosts: lab.hosts, root, ...options });
      context.timeline.push(...result.timeline);
      return { problems: result.problems, checker: { acknowledged: result.acknowledged, refused: result.refused, refusals: new Map(Object.entries(result.refusals)) } };
    } finally {
      await lab.destroy();
      for (const mount of mounts) execFileSync('umount', ['-l', mount]);
      if (root) await rm(root, { recursive: true, force: true });
    }
  };
}

/** Mounts a tmpfs on `<root>/<node>/p0` and `.../p1` for every node (40 MiB × the traffic multiple each); returns the mount points. */
async function mountPools(root: string, nodes: NetHost[], scale: number): Promise<string[]> {
  const mounts: string[] = [];
  try {
    for (const node of nodes) {
      for (const pool of ['p0', 'p1']) {
        const path = join(root, node.name, pool);
        await mkdir(path, { recursive: true });
        execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${40 * scale}m`, 'tmpfs', path]);
        mounts.push(path);
      }
    }
  } catch (error) {
    for (const mount of mounts) execFileSync('umount', ['-l', mount]);
    throw error;
  }
  return mounts;
}

async function runInside(prefix: string[], run: InsideRun): Promise<InsideResult> {
  // The harness runs from its sources, as the chaos command does (the servers it starts run the build when current).
  const program = ['--import', 'tsx', join(repoRoot, 'conformance/chaos/partition-inside.ts')];
  const child = spawn(prefix[0]!, [...prefix.slice(1), process.execPath, ...program], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_CHAOS_PARTITION_RUN: JSON.stringify(run) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-20_000)));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const last = stdout.trim().split('\n').at(-1) ?? '';
  try {
    return JSON.parse(last) as InsideResult;
  } catch {
    throw new Error(`the partition run on the clients' host ended with ${code} and no result:\n${stdout.slice(-5_000)}\n${stderr}`);
  }
}

/** The fault of a scenario: applied at the faulted phase's start, and at operations it names. */
interface Fault {
  describe: string;
  apply(net: NetControl): Promise<void>;
  /** Called before each operation of the faulted phase (flapping links). */
  atOperation?(started: number, net: NetControl): Promise<string | undefined>;
}

function faultFor(kind: PartitionKind, nodes: NetHost[], prng: Prng): Fault {
  const shuffled = [...nodes].sort(() => prng.next() - 0.5);
  const [a, b] = [shuffled[0]!, shuffled[1]!];
  switch (kind) {
    case 'partition-one':
      return { describe: `${a.name} cut off from the others`, apply: (net) => net.partition([a], shuffled.slice(1)) };
    case 'partition-two':
      return { describe: `${a.name} and ${b.name} cut off from the others`, apply: (net) => net.partition([a, b], shuffled.slice(2)) };
    case 'partition-asymmetric':
      return { describe: `${a.name}'s packets to ${b.name} dropped (the other way open)`, apply: (net) => net.cut(a, b) };
    case 'partition-flapping': {
      const every = 3 + prng.int(4);
      let cut = false;
      return {
        describe: `the link between ${a.name} and ${b.name} flapping every ${every} operations`,
        apply: async (net) => {
          cut = true;
          await net.partition([a], [b]);
        },
        atOperation: async (started, net) => {
          if (started === 0 || started % every !== 0) return undefined;
          cut = !cut;
          if (cut) await net.partition([a], [b]);
          else await net.heal();
          return `operation ${started}: link ${a.name}-${b.name} ${cut ? 'cut' : 'restored'}`;
        },
      };
    }
  }
}

/** Runs in the clients' namespace: starts the nodes on their hosts, runs the phases, checks. */
export async function partitionInside(run: InsideRun): Promise<InsideResult> {
  const started = Date.now();
  const timeline: string[] = [];
  const note = (event: string) => timeline.push(`+${((Date.now() - started) / 1000).toFixed(1)}s ${event}`);
  const context: ChaosContext = { seed: run.seed, prng: createPrng(run.seed), size: run.size, timeline, round: 0, note };
  const net = netControl(run.hosts);
  const nodes = run.hosts.filter((host) => host.name !== 'client');
  if (run.kind === 'partition-rebalance' || run.kind === 'partition-decommission') return partitionMovesInside(run.kind, run, context, net, nodes);
  const faultKind = run.kind === 'partition-multipart' ? 'partition-one' : run.kind;
  const servers = await startNodes(run, net, nodes, [poolArgument(nodes, '/d{1...2}')]);
  const multipart = run.kind === 'partition-multipart' ? new MultipartRecorder() : undefined;
  try {
    let fault: Fault | undefined;
    const result = await runRecordedPhases(context, servers, nodes.map((node) => node.name), [
      { name: 'healthy' },
      {
        name: 'faulted',
        before: async () => {
          fault = faultFor(faultKind, nodes, context.prng);
          await fault.apply(net);
          return `fault applied: ${fault.describe}`;
        },
        beforeOperation: (count) => fault?.atOperation?.(count, net) ?? Promise.resolve(undefined),
      },
      {
        name: 'healed',
        before: async () => {
          await net.heal();
          return 'links healed';
        },
      },
    ], {
      ...(run.versioned === undefined ? {} : { versioned: run.versioned }),
      ...(multipart ? {
        recorder: multipart,
        beforeHeal: async () => {
          const { uploads, completed, refused, unknown, leftOpen, abandoned } = multipart.counts;
          context.note(`multipart uploads: ${uploads} created, ${completed} completed, ${refused} Completes refused, ${unknown} with unknown outcome, ${leftOpen} left open, ${abandoned} abandoned after a part failed`);
          return multipart.problems;
        },
        afterHeal: async () => [
          ...(await multipart.checkUploadListings(servers.map((server) => s3ClientFor(server.url)), bucket, recordedPrefix)),
          ...(await multipart.checkUploadDirs(nodes.flatMap((node) => ['d1', 'd2'].map((drive) => join(run.root, node.name, drive))), bucket, context.note)),
        ],
      } : {}),
    });
    return result;
  } finally {
    await Promise.all(servers.map((server) => server.kill()));
  }
}
