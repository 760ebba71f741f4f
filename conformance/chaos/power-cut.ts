/**
 * The power-cut scenario. One server (the real object layer, admin services and S3 API, in this
 * process) runs on two pools of four drives, each drive a PowerCutDisk over memfs: what the Drive
 * contract promises durable is kept apart from what is not (fault-injection/power-cut-drive.ts).
 *
 * The run is a series of generations. Generation 0 has pool 0 only; from generation 1 on, pool 1
 * is there too (an expansion) and a rebalance is started; generation 2 starts a bucket heal. In
 * each generation four workers, each owning its keys, send PUTs (inline to several erasure
 * blocks), overwrites, multipart completes and deletes. At a point drawn from the seed (the n-th
 * operation, then a drawn number of drive writes later, so usually mid-request) the power goes:
 * every drive stops answering at once, the server is dropped without a graceful shutdown, and the
 * drives chosen to lose power (one, two of a pool, a whole pool, or all) lose what was not
 * durable. The server restarts on what survived, and the history checker demands that every
 * acknowledged change reads back (or its delete holds) and that nothing unacknowledged is
 * half-visible, in GETs and in the listing. After the last cut the bucket is healed and a deep
 * scan must find every object at full redundancy.
 *
 * A seed fixes the workers' operations, keys and bodies, the cut points and victims, the fate of
 * each lost file and the deployment id (so which pool a new key goes to). It does not fix how the
 * four workers, the rebalance and the heal interleave, so the drive writes counted at a cut differ
 * a little from run to run.
 *
 * The server, its disks and the workload live in power-cut-workload.ts, shared with
 * power-cut-cluster.ts, where part of a four-node cluster loses power while the rest serves on.
 */
import { CreateBucketCommand, PutBucketEncryptionCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Drive } from '../../src/drive/index.js';
import { MiB } from '../../src/util/limits.js';
import { createPrng, type Prng } from '../../src/util/prng.js';
import type { Target } from '../runner/check.js';
import { HistoryChecker } from './history-checker.js';
import { describeLost, PowerCutServer, runTraffic } from './power-cut-workload.js';
import { bucket, healAndCheckRedundancy, targetFor, type ChaosContext } from './steps.js';

export interface PowerCutOptions {
  /**
   * Wraps every drive as the server sees it. Only tests set it, to run the scenario against a
   * deliberately broken write ordering; a real run never does.
   */
  serverDrive?: (drive: Drive) => Drive;
  /**
   * Every write is SSE-S3: the server has a KMS root key (drawn from the seed) and the bucket's
   * default encryption applies to each PUT and multipart upload of the workload.
   */
  sse?: boolean;
}

const poolPatterns = ['/power-cut/p0/d{1...4}', '/power-cut/p1/d{1...4}'];

/** A KMS root key (base64 of 32 bytes) drawn from the seed, so a run replays. */
function seededKey(seed: number): string {
  const prng = createPrng((seed ^ 0x5e5) >>> 0);
  return Buffer.from(Array.from({ length: 32 }, () => prng.int(256))).toString('base64');
}

/** One server on power-cut disks, restarted generation after generation over the same disks. */
class PowerCutNode extends PowerCutServer {
  constructor(private readonly context: ChaosContext, options: PowerCutOptions) {
    // Small enough that pool 0's data is a visible fraction (the rebalance has work), large enough never to fill.
    super({
      address: '127.0.0.1:0', capacityBytes: 24 * MiB * context.size, idSeed: context.seed ^ 0x1d5,
      ...(options.serverDrive ? { serverDrive: options.serverDrive } : {}),
      ...(options.sse ? { env: { SVC_KMS_SECRET_KEY: `chaos-root:${seededKey(context.seed)}` } } : {}),
    });
  }

  async startPools(poolCount: number): Promise<Target> {
    return targetFor(await this.start(poolPatterns.slice(0, poolCount)), this.context.seed);
  }
}

interface CutPlan {
  /** The operation at whose start the trip is armed. */
  operation: number;
  /** Drive writes after that moment at which the power goes. */
  writesLater: number;
}

/**
 * Where a generation's cut goes: in its last three quarters of operations; in generation 1 a
 * drawn number of drive writes after the rebalance is asked to start (operation -1: armed before
 * that call), so that it meets the rebalance moving objects (memfs drives let it finish in a moment).
 */
function cutPlan(generation: number, plannedOps: number, prng: Prng): CutPlan {
  if (generation === 1) return { operation: -1, writesLater: 1 + prng.int(400) };
  const from = Math.floor(plannedOps / 4);
  return { operation: from + prng.int(plannedOps - from), writesLater: prng.int(60) };
}

/**
 * Runs up to `plannedOps` changes through four workers (each owning its keys, one change in
 * flight per key) until they are done or the power goes. Returns how many were started.
 */
function traffic(node: PowerCutNode, s3: S3Client, checker: HistoryChecker, context: ChaosContext, generation: number, plannedOps: number, cut: CutPlan | undefined): Promise<number> {
  return runTraffic(checker, {
    workerCount: 4,
    keysPerWorker: 8 * context.size,
    workerSeed: (worker) => (context.seed * 31 + generation * 7 + worker) >>> 0,
    plannedOps,
    stopped: () => node.supply.tripped,
    beforeOperation: (index) => {
      if (cut && index === cut.operation) node.supply.tripAt(node.supply.writeCount + cut.writesLater);
    },
    client: () => s3,
  });
}

/** Which disks lose power: one, two of a pool, a whole pool, or every disk present. */
function chooseVictims(node: PowerCutNode, poolCount: number, prng: Prng): { victims: string[]; described: string } {
  const paths = [...node.disks.keys()].sort();
  const pool = prng.int(poolCount);
  const ofPool = paths.filter((path) => path.startsWith(`/power-cut/p${pool}/`));
  const roll = prng.next();
  if (roll < 0.25) {
    const one = ofPool[prng.int(ofPool.length)]!;
    return { victims: [one], described: `drive ${one}` };
  }
  if (roll < 0.5) {
    const first = prng.int(ofPool.length);
    const two = [ofPool[first]!, ofPool[(first + 1 + prng.int(ofPool.length - 1)) % ofPool.length]!].sort();
    return { victims: two, described: `drives ${two.join(', ')}` };
  }
  if (roll < 0.75) return { victims: ofPool, described: `every drive of pool ${pool}` };
  return { victims: paths, described: 'every drive' };
}

/**
 * Admin work a generation starts before its traffic: the rebalance after the expansion, then a
 * heal. Either one refused, unless the power went meanwhile, is a problem: the cuts would not
 * meet what the scenario says they meet.
 */
async function startBackgroundWork(target: Target, generation: number, context: ChaosContext, powerCut: () => boolean): Promise<string[]> {
  const work = generation === 1 ? { what: 'rebalance', path: '/svc/admin/v3/rebalance/start', body: undefined } : generation === 2 ? { what: 'heal', path: `/svc/admin/v3/heal/${bucket}`, body: JSON.stringify({ remove: true }) } : undefined;
  if (!work) return [];
  const answer = await target.admin('POST', work.path, '', work.body === undefined ? {} : { body: work.body });
  context.note(`${work.what} start: ${answer.status}`);
  return answer.status === 200 || powerCut() ? [] : [`the ${work.what} did not start (${answer.status} ${JSON.stringify(answer.body)})`];
}

/** What the rebalance cut short had done, as its persisted state tells after the restart. */
async function noteRebalance(target: Target, context: ChaosContext): Promise<void> {
  const status = (await target.admin('GET', '/svc/admin/v3/rebalance/status')).body;
  const source = (status.pools as { id: number; status: string; progress: { objects: number } }[] | undefined)?.find((pool) => pool.id === 0);
  context.note(`after the restart the rebalance is ${source?.status ?? 'absent'}, ${source?.progress.objects ?? 0} object(s) moved before the cut`);
}

export function powerCut(options: PowerCutOptions = {}) {
  return async (context: ChaosContext): Promise<{ problems: string[]; checker: HistoryChecker }> => {
    const node = new PowerCutNode(context, options);
    const checker = new HistoryChecker(bucket);
    const problems: string[] = [];
    const cuts = 2 + context.size;
    const plannedOps = 40 * context.size;
    try {
      let target = await node.startPools(1);
      await target.s3.send(new CreateBucketCommand({ Bucket: bucket }));
      if (options.sse) await target.s3.send(new PutBucketEncryptionCommand({ Bucket: bucket, ServerSideEncryptionConfiguration: { Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] } }));
      for (let generation = 0; generation < cuts; generation += 1) {
        const poolCount = generation === 0 ? 1 : 2;
        const plan = cutPlan(generation, plannedOps, context.prng);
        if (plan.operation < 0) node.supply.tripAt(node.supply.writeCount + plan.writesLater);
        problems.push(...(await startBackgroundWork(target, generation, context, () => node.supply.tripped)));
        const before = checker.acknowledged;
        const ran = await traffic(node, target.s3, checker, context, generation, plannedOps, plan);
        const writes = node.supply.writeCount;
        const { victims, described } = chooseVictims(node, poolCount, context.prng);
        // The fates get a generator of their own: how many files were in flight depends on the interleaving.
        const lost = await node.cut(victims, createPrng((context.seed * 131 + generation) >>> 0));
        context.note(`generation ${generation} (${poolCount} pool${poolCount > 1 ? 's' : ''}): power cut at drive write ${writes} (armed ${plan.operation < 0 ? 'before the rebalance start' : `at operation ${plan.operation}`} + ${plan.writesLater} writes; ${ran} operations started, ${checker.acknowledged - before} acknowledged); ${described} lost ${describeLost(lost)}`);
        target = await node.startPools(2);
        if (generation === 1) await noteRebalance(target, context);
        const found = await checker.verify(target.s3);
        problems.push(...found.map((problem) => `after cut ${generation + 1}: ${problem}`));
        if (found.length > 0) break;
      }
      if (problems.length === 0) problems.push(...(await healAndCheckRedundancy(target, context)));
      await node.stop();
    } catch (error) {
      await node.cut([], context.prng).catch(() => undefined);
      throw error;
    }
    return { problems, checker };
  };
}
