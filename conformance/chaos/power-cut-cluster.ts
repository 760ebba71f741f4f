/**
 * The power-cut scenario on part of a cluster. Four nodes, each a server (src/main.ts) in this
 * process on its own loopback address (127.0.0.2 to .5, one port), with real drive and lock RPC
 * between them, each on two PowerCutDisks over memfs (fault-injection/power-cut-drive.ts): one
 * erasure set of eight drives at EC:3, so a node holds two shards of every object. With one node
 * down six drives are left, one above write quorum (5); with two down, four: below write and read
 * quorum (K = 5), so every object written before then reads back only if what the cut nodes kept
 * is what they acknowledged.
 *
 * The run is 2 + size episodes of 40 × size operations. In each, four workers (each owning its
 * keys, one change in flight per key) send PUTs, overwrites, multipart completes and deletes to
 * nodes drawn among those up. At a point drawn from the seed (armed as the n-th operation starts,
 * a drawn number of the node's drive writes later, so mid-request as a rule) one node loses power:
 * its drives stop answering, it sends nothing more to its peers' drives, its listener and every
 * connection on it close, and its disks lose what was not durable. Traffic goes on to the others.
 * A drawn number of operations later the node starts again on what survived (the same disks and
 * endpoints), and an explicit bucket heal is started on it. In some episodes a second node goes
 * too: while the first is down (every write then refused: no lock or write quorum) or soon after
 * the first came back, before it is healed. Once every node is up again and the heals ended, the
 * history checker demands that every acknowledged change reads back and nothing unacknowledged is
 * half-visible. At the end the bucket is healed, a deep scan must find every object at full
 * redundancy, and the history is checked once more.
 *
 * A seed fixes the workers' operations, keys and bodies, the victims, cut and restart points, the
 * fate of every lost file and every id the nodes draw from their generators. It does not fix how
 * the workers, read-repair and the heals interleave, nor (so) which node draws which id.
 */
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import type { Drive } from '../../src/drive/index.js';
import { MiB } from '../../src/util/limits.js';
import { createPrng, type Prng } from '../../src/util/prng.js';
import type { Target } from '../runner/check.js';
import { freePort } from '../harness/server-process.js';
import { HistoryChecker } from './history-checker.js';
import { describeLost, PowerCutServer, runTraffic } from './power-cut-workload.js';
import { bucket, healAndCheckRedundancy, targetFor, waitForHeal, type ChaosContext } from './steps.js';

export interface PowerCutClusterOptions {
  /** Wraps every node's local drives. Only tests set it, to run a deliberately broken write ordering. */
  serverDrive?: (drive: Drive) => Drive;
}

const nodeCount = 4;
const drivePaths = '/power-cut-cluster/d{1...2}';

/** One cut in an episode: which node, when its power goes, when it comes back. */
interface NodeCut {
  node: number;
  /** The operation at whose start the trip is armed (for a second cut: the first from then on at which the first node is down, or back, as `kind` says). */
  armAt: number;
  /** The node's drive writes after arming at which the power goes. */
  writesLater: number;
  /** Operations after arming at whose start the node is started again (cut first if it has not tripped). */
  downOps: number;
  kind: 'first' | 'while the first is down' | 'after the first came back';
}

/**
 * An episode's cuts: one node in its first half; with chance 1/4 a second while the first is
 * down (back 1 to 3 operations later: meanwhile no write reaches lock or write quorum, so each
 * waits out the lock timeout), with chance 1/4 a second once the first is back, before its heal
 * can have ended.
 */
function planEpisode(plannedOps: number, prng: Prng): NodeCut[] {
  const eighth = Math.max(1, Math.floor(plannedOps / 8));
  const first: NodeCut = { node: prng.int(nodeCount), armAt: eighth + prng.int(2 * eighth), writesLater: prng.int(60), downOps: 4 + prng.int(2 * eighth), kind: 'first' };
  const roll = prng.next();
  const node = (first.node + 1 + prng.int(nodeCount - 1)) % nodeCount;
  const writesLater = prng.int(60);
  if (roll < 0.25) return [first, { node, armAt: first.armAt + 1 + prng.int(first.downOps - 1), writesLater, downOps: 1 + prng.int(3), kind: 'while the first is down' }];
  if (roll < 0.5) return [first, { node, armAt: first.armAt + first.downOps + prng.int(4), writesLater, downOps: 4 + prng.int(2 * eighth), kind: 'after the first came back' }];
  return [first];
}

/** Four nodes on power-cut disks, each cut and restarted on its own. */
class PowerCutCluster {
  readonly nodes: PowerCutServer[];
  readonly targets: (Target | undefined)[] = [];
  /** Each node's heal started when it came back, until waited for. */
  readonly heals: ({ target: Target; token: string } | undefined)[] = [];
  private readonly args: string[];

  constructor(private readonly context: ChaosContext, port: number, options: PowerCutClusterOptions) {
    this.args = [`http://127.0.0.{2...${nodeCount + 1}}:${port}${drivePaths}`];
    this.nodes = Array.from({ length: nodeCount }, (_, index) => new PowerCutServer({
      address: `${hostOf(index)}:${port}`,
      capacityBytes: 64 * MiB * context.size,
      idSeed: (context.seed ^ 0x1d5) + index * 7919,
      env: { SVC_STORAGE_CLASS_STANDARD: 'EC:3' },
      silencePeers: true,
      ...(options.serverDrive ? { serverDrive: options.serverDrive } : {}),
    }));
  }

  /** Every node at once (each waits for format quorum across the others). */
  async startAll(): Promise<void> {
    await Promise.all(this.nodes.map((_, index) => this.start(index)));
  }

  async start(index: number): Promise<void> {
    const url = await this.nodes[index]!.start(this.args);
    this.targets[index] = targetFor(url, this.context.seed);
  }

  /** Indices of the nodes serving now. */
  up(): number[] {
    return this.nodes.flatMap((node, index) => (node.running && !node.supply.tripped && this.targets[index] ? [index] : []));
  }

  /** Node `index` loses power: every disk of it loses what was not durable. */
  async powerOff(index: number, fates: Prng): Promise<string> {
    const node = this.nodes[index]!;
    const writes = node.supply.writeCount;
    this.targets[index]?.s3.destroy();
    this.targets[index] = undefined;
    this.heals[index] = undefined;
    const lost = await node.cut([...node.disks.keys()].sort(), fates);
    return `at its drive write ${writes}; it lost ${describeLost(lost)}`;
  }

  async stopAll(): Promise<void> {
    for (const target of this.targets) target?.s3.destroy();
    await Promise.all(this.nodes.map((node) => node.stop().catch(() => undefined)));
  }

  /** After a failure: every node down at once, nothing lost. */
  async dropAll(): Promise<void> {
    for (const target of this.targets) target?.s3.destroy();
    await Promise.all(this.nodes.map((node) => node.cut([], createPrng(0)).catch(() => undefined)));
  }
}

const hostOf = (index: number): string => `127.0.0.${index + 2}`;

/** Runs one cut: arms it, and once the power went and its restart point came, starts the node again and a heal on it. */
class CutRun {
  private armedAt: number | undefined;
  private powerOff: Promise<void> | undefined;
  private restarted: Promise<void> | undefined;
  /** The node is up again (its restart resolved). */
  back = false;

  constructor(
    private readonly cluster: PowerCutCluster,
    private readonly cut: NodeCut,
    private readonly context: ChaosContext,
    private readonly label: string,
    private readonly fates: Prng,
    /** The episode's first cut, for a second one: armed only once that node is down, or back, as its kind says. */
    private readonly first?: CutRun,
  ) {}

  /** The node lost power (and may be on its way back). */
  get down(): boolean {
    return this.armedAt !== undefined && this.cluster.nodes[this.cut.node]!.supply.tripped;
  }

  private mayArm(): boolean {
    if (!this.first) return true;
    return this.cut.kind === 'while the first is down' ? this.first.down && !this.first.back : this.first.back;
  }

  /** Called as operation `index` starts. */
  at(index: number): void {
    if (this.armedAt === undefined && index >= this.cut.armAt && this.mayArm()) this.arm(index);
    if (this.armedAt !== undefined && !this.restarted && index >= this.armedAt + this.cut.downOps) this.restart(index);
  }

  private arm(index: number): void {
    const node = this.cluster.nodes[this.cut.node]!;
    this.armedAt = index;
    node.supply.tripAt(node.supply.writeCount + this.cut.writesLater);
    this.powerOff = node.supply.whenTripped().then(async () => {
      const relation = !this.first ? 'first' : this.first.back ? 'after the first came back' : 'while the first is down';
      const what = await this.cluster.powerOff(this.cut.node, this.fates);
      this.context.note(`${this.label}: node ${this.cut.node + 1} (${hostOf(this.cut.node)}) loses power (${relation}; armed at operation ${index} + ${this.cut.writesLater} writes) ${what}`);
    });
  }

  private restart(index: number): void {
    if (this.armedAt === undefined) this.arm(index);
    this.cluster.nodes[this.cut.node]!.supply.trip();
    this.restarted = this.powerOff!.then(async () => {
      await this.cluster.start(this.cut.node);
      this.back = true;
      const target = this.cluster.targets[this.cut.node]!;
      const heal = await target.admin('POST', `/svc/admin/v3/heal/${bucket}`, '', { body: JSON.stringify({ remove: true }) }).catch((error: Error) => ({ status: error.message, body: {} as Record<string, string> }));
      this.context.note(`${this.label}: node ${this.cut.node + 1} back (restart at operation ${index}); heal on it: ${heal.status}`);
      if (heal.status === 200) this.cluster.heals[this.cut.node] = { target, token: heal.body.clientToken! };
    });
  }

  /** Completes the cut (power off and back on) if the traffic ended before its points. */
  async finish(operations: number): Promise<void> {
    await this.first?.finish(operations);
    if (!this.restarted) this.restart(operations);
    await this.restarted;
  }
}

/** Waits for the heals started on returning nodes; their failures are noted, not problems (a node may have gone down meanwhile). */
async function waitForHeals(cluster: PowerCutCluster, context: ChaosContext, label: string): Promise<void> {
  for (const [index, heal] of cluster.heals.entries()) {
    if (!heal) continue;
    cluster.heals[index] = undefined;
    try {
      const healed = await waitForHeal(heal.target, bucket, heal.token);
      context.note(`${label}: heal on node ${index + 1} ${healed.status}: ${healed.counts.objectsHealed} objects healed, ${healed.counts.failures} failures`);
    } catch (error) {
      context.note(`${label}: heal on node ${index + 1}: ${(error as Error).message}`);
    }
  }
}

/** One episode: traffic over the nodes up, the cuts and restarts at their points; resolves when every node is up again. */
async function episode(cluster: PowerCutCluster, checker: HistoryChecker, context: ChaosContext, number: number, plannedOps: number): Promise<void> {
  const label = `episode ${number}`;
  const cuts: CutRun[] = [];
  for (const [index, cut] of planEpisode(plannedOps, context.prng).entries()) {
    const fates = createPrng((context.seed * 131 + number * 7 + index) >>> 0);
    cuts.push(new CutRun(cluster, cut, context, label, fates, cuts[0]));
  }
  const before = checker.acknowledged;
  const refusedBefore = checker.refused;
  const started = await runTraffic(checker, {
    workerCount: 4,
    keysPerWorker: 8 * context.size,
    workerSeed: (worker) => (context.seed * 31 + number * 7 + worker) >>> 0,
    plannedOps,
    stopped: () => false,
    beforeOperation: (index) => {
      for (const cut of cuts) cut.at(index);
    },
    client: (prng) => {
      const up = cluster.up();
      return cluster.targets[up[prng.int(up.length)]!]!.s3;
    },
  });
  for (const cut of cuts) await cut.finish(started);
  context.note(`${label}: ${started} operations, ${checker.acknowledged - before} acknowledged, ${checker.refused - refusedBefore} refused`);
  await waitForHeals(cluster, context, label);
}

export function powerCutCluster(options: PowerCutClusterOptions = {}) {
  return async (context: ChaosContext): Promise<{ problems: string[]; checker: HistoryChecker }> => {
    const cluster = new PowerCutCluster(context, await freePort(hostOf(0)), options);
    const checker = new HistoryChecker(bucket);
    const problems: string[] = [];
    const episodes = 2 + context.size;
    try {
      await cluster.startAll();
      await cluster.targets[0]!.s3.send(new CreateBucketCommand({ Bucket: bucket }));
      for (let number = 1; number <= episodes && problems.length === 0; number += 1) {
        await episode(cluster, checker, context, number, 40 * context.size);
        const reader = cluster.targets[context.prng.int(nodeCount)]!;
        problems.push(...(await checker.verify(reader.s3)).map((problem) => `after episode ${number}: ${problem}`));
      }
      if (problems.length === 0) {
        const target = cluster.targets[context.prng.int(nodeCount)]!;
        problems.push(...(await healAndCheckRedundancy(target, context)));
        problems.push(...(await checker.verify(target.s3)).map((problem) => `after the heal: ${problem}`));
      }
      await cluster.stopAll();
    } catch (error) {
      await cluster.dropAll();
      throw error;
    }
    return { problems, checker };
  };
}
