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
 */
import type { AddressInfo } from 'node:net';
import { CompleteMultipartUploadCommand, CreateBucketCommand, CreateMultipartUploadCommand, DeleteObjectCommand, PutObjectCommand, UploadPartCommand, type S3Client } from '@aws-sdk/client-s3';
import { pino } from 'pino';
import { startServer, type RunningServer } from '../../src/main.js';
import type { Drive } from '../../src/drive/index.js';
import { MiB } from '../../src/util/limits.js';
import { createPrng, type Prng } from '../../src/util/prng.js';
import { createMemfsDrive } from '../../backends/memfs/memfs-drive.js';
import { PowerCutDisk, PowerSupply, type LostWrite } from '../../fault-injection/power-cut-drive.js';
import type { Target } from '../runner/check.js';
import { testCredentials } from '../harness/server-process.js';
import { HistoryChecker } from './history-checker.js';
import { bucket, healAndCheckRedundancy, targetFor, type ChaosContext } from './steps.js';

export interface PowerCutOptions {
  /**
   * Wraps every drive as the server sees it. Only tests set it, to run the scenario against a
   * deliberately broken write ordering; a real run never does.
   */
  serverDrive?: (drive: Drive) => Drive;
}

const poolPatterns = ['/power-cut/p0/d{1...4}', '/power-cut/p1/d{1...4}'];
const workerCount = 4;
const silent = pino({ level: 'silent' });

/** One server on power-cut disks, restarted generation after generation over the same disks. */
class PowerCutNode {
  readonly disks = new Map<string, PowerCutDisk>();
  supply = new PowerSupply();
  private server: RunningServer | undefined;
  private readonly ids: Prng;

  constructor(private readonly context: ChaosContext, private readonly options: PowerCutOptions) {
    this.ids = createPrng(context.seed ^ 0x1d5);
  }

  async start(poolCount: number): Promise<Target> {
    this.supply = new PowerSupply();
    const env = {
      SVC_ADDRESS: '127.0.0.1:0',
      SVC_CONSOLE_ENABLE: 'false',
      SVC_ACCESS_KEY: testCredentials.accessKeyId,
      SVC_SECRET_KEY: testCredentials.secretAccessKey,
      SVC_CODING_THREADS: '0',
    };
    this.server = await startServer(poolPatterns.slice(0, poolCount), env, silent, { localDrive: (endpoint) => this.drive(endpoint.path), newId: () => seededUuid(this.ids) });
    const { port } = this.server.s3.server.address() as AddressInfo;
    return targetFor(`http://127.0.0.1:${port}`, this.context.seed);
  }

  private drive(path: string): Drive {
    let disk = this.disks.get(path);
    if (!disk) {
      // Small enough that pool 0's data is a visible fraction (the rebalance has work), large enough never to fill.
      disk = new PowerCutDisk(createMemfsDrive({ endpoint: path, capacityBytes: 24 * MiB * this.context.size }));
      this.disks.set(path, disk);
    }
    const powered = this.supply.power(disk);
    return this.options.serverDrive ? this.options.serverDrive(powered) : powered;
  }

  /** The power goes: the server is dropped (no graceful shutdown), then the chosen disks lose what was not durable. */
  async cut(victims: string[], prng: Prng): Promise<LostWrite[]> {
    this.supply.trip();
    this.server?.s3.server.closeAllConnections();
    await this.server?.stop().catch(() => undefined);
    this.server = undefined;
    await this.supply.settle();
    const lost: LostWrite[] = [];
    for (const path of victims) lost.push(...(await this.disks.get(path)!.loseVolatile(prng)));
    return lost;
  }

  async stop(): Promise<void> {
    this.server?.s3.server.closeIdleConnections();
    await this.server?.stop();
    this.server = undefined;
  }
}

/** A v4-shaped UUID from the seeded generator (the deployment id, version and data-dir ids). */
function seededUuid(prng: Prng): string {
  const hex = Array.from({ length: 32 }, () => prng.int(16).toString(16));
  hex[12] = '4';
  hex[16] = (8 + prng.int(4)).toString(16);
  const text = hex.join('');
  return `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20)}`;
}

const bodySizes = [100, 4_000, 150_000, 1_100_000, 2_200_000];
const bodyWeights = [0.4, 0.25, 0.2, 0.1, 0.05];

function pickWeighted<T>(prng: Prng, values: T[], weights: number[]): T {
  let point = prng.next();
  for (const [index, weight] of weights.entries()) {
    point -= weight;
    if (point < 0) return values[index]!;
  }
  return values.at(-1)!;
}

/** A body no other change carries (but by a 1 in 2^62 chance): it starts with its key and two random numbers. */
function bodyFor(key: string, sizeBytes: number, prng: Prng): Buffer {
  const body = Buffer.alloc(sizeBytes, prng.int(256));
  body.write(`${key}#${prng.int(2 ** 31)}#${prng.int(2 ** 31)}`.slice(0, sizeBytes));
  return body;
}

/** One worker's next change on one of its own keys. */
async function oneChange(s3: S3Client, checker: HistoryChecker, key: string, prng: Prng): Promise<void> {
  const roll = prng.next();
  if (roll < 0.1) {
    await checker.attempt(key, undefined, () => s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })));
  } else if (roll < 0.2) {
    await multipartChange(s3, checker, key, prng);
  } else {
    const body = bodyFor(key, pickWeighted(prng, bodySizes, bodyWeights) + prng.int(1000), prng);
    await checker.attempt(key, body, () => s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body })));
  }
}

/** A multipart upload of one part, or now and then two (5 MiB and a tail), then its complete. */
async function multipartChange(s3: S3Client, checker: HistoryChecker, key: string, prng: Prng): Promise<void> {
  const sizes = prng.next() < 0.15 ? [5 * MiB, 100_000 + prng.int(1000)] : [300_000 + prng.int(1_000_000)];
  const parts = sizes.map((sizeBytes) => bodyFor(key, sizeBytes, prng));
  const etags: string[] = [];
  let uploadId: string;
  try {
    uploadId = (await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }))).UploadId!;
    for (const [index, part] of parts.entries()) etags.push((await s3.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: index + 1, Body: part }))).ETag!);
  } catch (error) {
    checker.refuse(error);
    return;
  }
  const complete = new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: etags.map((ETag, index) => ({ ETag, PartNumber: index + 1 })) } });
  await checker.attempt(key, Buffer.concat(parts), () => s3.send(complete));
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
async function traffic(node: PowerCutNode, s3: S3Client, checker: HistoryChecker, context: ChaosContext, generation: number, plannedOps: number, cut: CutPlan | undefined): Promise<number> {
  let started = 0;
  const keysPerWorker = 8 * context.size;
  await Promise.all(
    Array.from({ length: workerCount }, async (_, worker) => {
      const prng = createPrng((context.seed * 31 + generation * 7 + worker) >>> 0);
      while (!node.supply.tripped && started < plannedOps) {
        const index = (started += 1) - 1;
        if (cut && index === cut.operation) node.supply.tripAt(node.supply.writeCount + cut.writesLater);
        await oneChange(s3, checker, `w${worker}/k${prng.int(keysPerWorker)}`, prng);
      }
    }),
  );
  return started;
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

function describeLost(lost: LostWrite[]): string {
  const count = (fate: LostWrite['fate']) => lost.filter((write) => write.fate === fate).length;
  return `${lost.length} non-durable file(s): ${count('whole')} whole, ${count('truncated')} truncated, ${count('zero-filled')} zero-filled`;
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
      let target = await node.start(1);
      await target.s3.send(new CreateBucketCommand({ Bucket: bucket }));
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
        target = await node.start(2);
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
