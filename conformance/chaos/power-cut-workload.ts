/**
 * What the power-cut scenarios share (power-cut.ts: one server; power-cut-cluster.ts: four nodes).
 *
 * A `PowerCutServer` is one server (src/main.ts, in this process) on drives that are PowerCutDisks
 * over memfs (fault-injection/power-cut-drive.ts), powered by one PowerSupply per run: `cut` drops
 * it without a graceful shutdown and makes the chosen disks lose what was not durable; `start`
 * brings it up again on the same disks, with ids (deployment, versions, data dirs) from its own
 * seeded generator, which runs on across restarts so no id is drawn twice.
 *
 * The workload: workers, each owning its keys and with one change in flight per key, send PUTs
 * (100 bytes, inline, to 2.2 MB, three erasure blocks), overwrites, multipart completes (one part,
 * or 5 MiB and a tail) and deletes, each recorded by the history checker.
 */
import type { AddressInfo } from 'node:net';
import { CompleteMultipartUploadCommand, CreateMultipartUploadCommand, DeleteObjectCommand, PutObjectCommand, UploadPartCommand, type S3Client } from '@aws-sdk/client-s3';
import { pino } from 'pino';
import { startServer, type RunningServer } from '../../src/main.js';
import type { Drive } from '../../src/drive/index.js';
import { MiB } from '../../src/util/limits.js';
import { createPrng, type Prng } from '../../src/util/prng.js';
import { createMemfsDrive } from '../../backends/memfs/memfs-drive.js';
import { PowerCutDisk, PowerSupply, type LostWrite } from '../../fault-injection/power-cut-drive.js';
import { testCredentials } from '../harness/server-process.js';
import type { HistoryChecker } from './history-checker.js';

export interface PowerCutServerOptions {
  /** SVC_ADDRESS: `127.0.0.1:0` for a server alone, the node's own `host:port` in a cluster. */
  address: string;
  /** Each disk's capacity. */
  capacityBytes: number;
  /** Seeds the server's ids. */
  idSeed: number;
  env?: Record<string, string>;
  /** Wraps every local drive as the server sees it (tests only: a deliberately broken write ordering). */
  serverDrive?: (drive: Drive) => Drive;
  /** In a cluster: the peers' drives this server reaches go silent when its power goes. */
  silencePeers?: boolean;
}

const silent = pino({ level: 'silent' });

export class PowerCutServer {
  /** This server's disks by endpoint path. */
  readonly disks = new Map<string, PowerCutDisk>();
  supply = new PowerSupply();
  private server: RunningServer | undefined;
  private readonly ids: Prng;

  constructor(private readonly options: PowerCutServerOptions) {
    this.ids = createPrng(options.idSeed);
  }

  get running(): boolean {
    return this.server !== undefined;
  }

  /** Starts on a fresh supply; resolves with the S3 URL once storage is ready. */
  async start(args: string[]): Promise<string> {
    const supply = (this.supply = new PowerSupply());
    const env = {
      SVC_ADDRESS: this.options.address,
      SVC_CONSOLE_ENABLE: 'false',
      SVC_ACCESS_KEY: testCredentials.accessKeyId,
      SVC_SECRET_KEY: testCredentials.secretAccessKey,
      SVC_CODING_THREADS: '0',
      ...this.options.env,
    };
    this.server = await startServer(args, env, silent, {
      localDrive: (endpoint) => this.drive(endpoint.path, supply),
      newId: () => seededUuid(this.ids),
      ...(this.options.silencePeers ? { peerDrive: (drive: Drive) => supply.reach(drive) } : {}),
    });
    const { address, port } = this.server.s3.server.address() as AddressInfo;
    return `http://${address}:${port}`;
  }

  private drive(path: string, supply: PowerSupply): Drive {
    let disk = this.disks.get(path);
    if (!disk) {
      disk = new PowerCutDisk(createMemfsDrive({ endpoint: path, capacityBytes: this.options.capacityBytes }));
      this.disks.set(path, disk);
    }
    const powered = supply.power(disk);
    return this.options.serverDrive ? this.options.serverDrive(powered) : powered;
  }

  /**
   * The power goes: the supply trips (if it has not), the listener closes with every connection
   * on it, the server is dropped (no graceful shutdown), then the chosen disks (endpoint paths)
   * lose what was not durable.
   */
  async cut(victims: string[], prng: Prng): Promise<LostWrite[]> {
    this.supply.trip();
    const server = this.server;
    this.server = undefined;
    if (server) {
      server.s3.server.closeAllConnections();
      const closing = server.s3.close();
      server.s3.server.closeAllConnections();
      await closing.catch(() => undefined);
      await server.stop().catch(() => undefined);
    }
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
export function seededUuid(prng: Prng): string {
  const hex = Array.from({ length: 32 }, () => prng.int(16).toString(16));
  hex[12] = '4';
  hex[16] = (8 + prng.int(4)).toString(16);
  const text = hex.join('');
  return `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20)}`;
}

export function describeLost(lost: LostWrite[]): string {
  const count = (fate: LostWrite['fate']) => lost.filter((write) => write.fate === fate).length;
  return `${lost.length} non-durable file(s): ${count('whole')} whole, ${count('truncated')} truncated, ${count('zero-filled')} zero-filled`;
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
  const { bucket } = checker;
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
  const { bucket } = checker;
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

export interface TrafficPlan {
  /** Workers, each with its own keys (`w<worker>/k<n>`) and generator. */
  workerCount: number;
  /** Keys each worker owns. */
  keysPerWorker: number;
  /** Seeds worker `worker`'s generator. */
  workerSeed(worker: number): number;
  plannedOps: number;
  /** Ends the traffic early (checked before each operation). */
  stopped(): boolean;
  /** Called as operation `index` (counted over all workers) is about to start. */
  beforeOperation(index: number): void;
  /** The client operation `index` goes to; may draw from the worker's generator. */
  client(prng: Prng, index: number): S3Client;
}

/** Runs up to `plannedOps` changes through the workers until they are done or `stopped()`. Returns how many were started. */
export async function runTraffic(checker: HistoryChecker, plan: TrafficPlan): Promise<number> {
  let started = 0;
  await Promise.all(
    Array.from({ length: plan.workerCount }, async (_, worker) => {
      const prng = createPrng(plan.workerSeed(worker));
      while (!plan.stopped() && started < plan.plannedOps) {
        const index = (started += 1) - 1;
        plan.beforeOperation(index);
        const key = `w${worker}/k${prng.int(plan.keysPerWorker)}`;
        await oneChange(plan.client(prng, index), checker, key, prng);
      }
    }),
  );
  return started;
}
