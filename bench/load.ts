/**
 * The benchmark's load generator, run in a process of its own against one endpoint: 4 KiB PUTs
 * and GETs (32 at a time), then 64 MiB PUTs and GETs (4 at a time), each size after an untimed
 * warm-up, through one of the clients of bench/clients.ts (`http`, the default, or `sdk`).
 * Prints a `phase <name> start|end` line around each timed phase, then one JSON line with the
 * rates, this process's CPU ms per operation and the latency percentiles (ms) of each phase. Every
 * loop is bounded in count and time. Several endpoints (comma-separated: the nodes of a cluster)
 * share the load in turn, operation by operation.
 *
 * The load comes from `threads` worker threads (each with its own client and connections; the
 * phase's concurrency split between them, and its keys too), so the client's CPU is not capped
 * at one core: one thread receiving 64 MiB GETs, checking their CRC-32, kept a core busy at about
 * 850 MB/s, below what servers sent. `in-process-s3rver:<directory>` as the endpoint runs s3rver
 * inside this process instead, sharing the load's one thread, which is how s3rver figures are
 * often quoted (`threads` must then be 1).
 *
 *   node --import tsx bench/load.ts <endpoint[,endpoint...]> <access-key> <secret-key> <small-ops> <large-objects> <phases> [http|sdk] [threads] [small-warm-up-pairs] [small-warm-up-seconds] [large-warm-up-pairs-per-endpoint]
 *
 * `phases` is a comma-separated subset of small-put, small-get, large-put, large-get. With
 * `BENCH_SSE=AES256` in its environment every PUT asks for SSE-S3. With `BENCH_LOAD_STEPPED=1`
 * it prints `ready <phase>` before each timed phase and waits for a line on its input before
 * running it: a bench comparing builds runs each phase of one build right after the same phase of
 * the other (bench/cluster.ts).
 */
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { createLoadClient, payloadOf, type ClientKind, type ClientOptions, type LoadClient, type Payload } from './clients.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const smallSeconds = 10;
const largeSeconds = 120;
/**
 * Untimed PUT+GET pairs before the timed phases of each size. A Node server (svc, s3rver) and the
 * load generator itself need a few thousand small requests before their hot code is compiled and
 * their heaps have grown: measured on a fresh svc, 4 KiB PUTs ran at 505/s after 300 pairs and
 * 820/s after 3,000, GETs at 1,940/s and 3,190/s.
 */
const defaultSmallWarmUpPairs = 3000;
/**
 * The 64 MiB warm-up, per endpoint: 16 pairs for one node, 64 for a four-node cluster, so that
 * every node has coordinated as many large PUTs and GETs as the one node before the timed phases
 * (with 16 in all, each node of four coordinated four, and V8's compiler still ran in the timed
 * 64 MiB GETs: 0.1-0.15 s of compiling per phase in the four nodes, about 0.3 ms per MB read).
 */
const largeWarmUpPairsPerEndpoint = 16;
/** Large pairs per endpoint of the 'large-shapes' phase, before the small warm-up. */
const largeShapesPairsPerEndpoint = 2;
/** The longest a small warm-up may be asked to run. */
const maxWarmUpSeconds = 1200;
const maxThreads = 8;

type Size = 'small' | 'large';
const sizeBytes: Record<Size, number> = { small: 4 * KiB, large: 64 * MiB };

/** One stretch of work: `count` operations on keys `<size>/<prefix><index>`, `concurrency` at a time, for at most `seconds`. */
interface Task {
  kind: 'put' | 'get' | 'warm-up';
  size: Size;
  prefix: string;
  count: number;
  concurrency: number;
  seconds: number;
  /** A GET of only the keys this load stored (without it, of any key: for a server that answers every key). */
  storedOnly?: boolean;
}

/** What a stretch of work did: how many operations, and how long each took (ms). */
interface Done {
  done: number;
  latenciesMs: number[];
}

/** Runs `work(i)` for i < count with `concurrency` workers, stopping after `seconds`. */
async function drive(count: number, concurrency: number, seconds: number, work: (index: number) => Promise<void>): Promise<Done> {
  let next = 0;
  const latenciesMs: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count && performance.now() < deadline) {
      const index = next;
      next += 1;
      const started = performance.now();
      await work(index);
      latenciesMs.push(performance.now() - started);
    }
  }));
  return { done: latenciesMs.length, latenciesMs };
}

/** The p-th percentile (0..100) of some latencies, nearest rank. */
function percentile(sortedMs: number[], p: number): number {
  if (sortedMs.length === 0) return 0;
  return sortedMs[Math.min(sortedMs.length - 1, Math.max(0, Math.ceil((p / 100) * sortedMs.length) - 1))]!;
}

/** A client with the bodies it sends (their digests computed once, before any timing). */
class Loader {
  private readonly payloads = new Map<Size, Payload>();
  /** Objects this loader has stored under each `<size>/<prefix>`: its first indexes, all of them done. */
  private readonly stored = new Map<string, number>();

  /** `clients`: one per endpoint, taking the operations in turn. */
  constructor(private readonly clients: LoadClient[], private readonly bucket: string) {}

  /** Runs this loader's share of `task`: indexes congruent to `share` modulo `shares`. */
  async run(task: Task, share: number, shares: number): Promise<Done> {
    const payload = this.payload(task.size);
    const keys = `${task.size}/${task.prefix}`;
    let indexes = Math.floor((task.count - share + shares - 1) / shares);
    if (task.storedOnly) indexes = Math.min(indexes, this.stored.get(keys) ?? 0);
    const concurrency = Math.max(1, Math.round(task.concurrency / shares));
    const done = await drive(indexes, concurrency, task.seconds, async (local) => {
      const index = local * shares + share;
      const key = `${keys}${index}`;
      const client = this.clients[index % this.clients.length]!;
      if (task.kind !== 'get') await client.put(this.bucket, key, payload);
      if (task.kind === 'put') return;
      const length = await client.get(this.bucket, key);
      if (length !== payload.bytes.length) throw new Error(`read ${length} bytes of an object of ${payload.bytes.length}`);
    });
    if (task.kind !== 'get') this.stored.set(keys, done.done);
    return done;
  }

  private payload(size: Size): Payload {
    let payload = this.payloads.get(size);
    if (!payload) {
      payload = payloadOf(Buffer.alloc(sizeBytes[size], size === 'small' ? 's' : 'L'));
      this.payloads.set(size, payload);
    }
    return payload;
  }
}

/** What runs the tasks: one loader on this thread, or one per worker thread. */
interface LoadRunner {
  run(task: Task): Promise<Done>;
  close(): Promise<void>;
}

interface WorkerSetup {
  client: ClientKind;
  options: ClientOptions[];
  bucket: string;
  share: number;
  shares: number;
}

class ThreadRunner implements LoadRunner {
  private readonly workers: Worker[];

  constructor(setups: WorkerSetup[]) {
    this.workers = setups.map((setup) => new Worker(fileURLToPath(import.meta.url), { workerData: setup }));
  }

  async run(task: Task): Promise<Done> {
    const done = await Promise.all(this.workers.map((worker) => new Promise<Done>((resolve, reject) => {
      const onError = (error: Error): void => reject(error);
      worker.once('error', onError);
      worker.once('message', (reply: { done?: Done; error?: string }) => {
        worker.off('error', onError);
        if (reply.error !== undefined) reject(new Error(reply.error));
        else resolve(reply.done!);
      });
      worker.postMessage(task);
    })));
    return { done: done.reduce((sum, part) => sum + part.done, 0), latenciesMs: done.flatMap((part) => part.latenciesMs) };
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }
}

async function serveAsWorker(): Promise<void> {
  const setup = workerData as WorkerSetup;
  const loader = new Loader(await Promise.all(setup.options.map((options) => createLoadClient(setup.client, options))), setup.bucket);
  parentPort!.on('message', (task: Task) => {
    loader.run(task, setup.share, setup.shares).then(
      (done) => parentPort!.postMessage({ done }),
      (error: unknown) => parentPort!.postMessage({ error: String(error instanceof Error ? error.message : error) }),
    );
  });
}

/** The endpoint to load; an in-process s3rver is started here (its modules loaded only then, and never in load threads). */
async function resolveEndpoint(endpoint: string): Promise<{ url: string; stop(): Promise<void> }> {
  if (!endpoint.startsWith('in-process-s3rver:')) return { url: endpoint, stop: async () => undefined };
  const [{ default: S3rver }, { freePort }] = await Promise.all([import('s3rver'), import('../conformance/harness/server-process.js')]);
  const port = await freePort();
  const instance = new S3rver({ port, address: '127.0.0.1', silent: true, directory: endpoint.slice('in-process-s3rver:'.length) });
  await instance.run();
  return { url: `http://127.0.0.1:${port}`, stop: () => instance.close() };
}

const usage = 'usage: load.ts <endpoint[,endpoint...]> <access-key> <secret-key> <small-ops> <large-objects> <phases> [http|sdk] [threads] [small-warm-up-pairs] [small-warm-up-seconds] [large-warm-up-pairs-per-endpoint]';

/** With BENCH_LOAD_STEPPED=1, the lines of this process's input: one before each timed phase lets it run. */
const steps = process.env.BENCH_LOAD_STEPPED === '1' && isMainThread ? createInterface({ input: process.stdin }) : undefined;
const stepLines = steps?.[Symbol.asyncIterator]();

/** Waits, when stepped, for the line that lets `phase` run. */
async function waitForTurn(phase: string): Promise<void> {
  if (!stepLines) return;
  console.log(`ready ${phase}`);
  if ((await stepLines.next()).done) throw new Error(`the input closed before the phase ${phase} was let run`);
}

async function main(): Promise<void> {
  const [target, accessKeyId, secretAccessKey, smallOpsText, largeObjectsText, phasesText, clientText = 'http', threadsText = '1', warmUpText, warmUpSecondsText, largeWarmUpText] = process.argv.slice(2);
  if (!target || !accessKeyId || !secretAccessKey) throw new Error(usage);
  if (clientText !== 'http' && clientText !== 'sdk') throw new Error(`unknown client ${clientText}; ${usage}`);
  const threads = Number(threadsText);
  if (!Number.isInteger(threads) || threads < 1 || threads > maxThreads) throw new Error(`threads ${threadsText}: a whole number from 1 to ${maxThreads}; ${usage}`);
  if (threads > 1 && target.startsWith('in-process-s3rver:')) throw new Error('an in-process s3rver shares the load\'s one thread: threads must be 1');
  const resolved = await Promise.all(target.split(',').map(resolveEndpoint));
  const sse = process.env.BENCH_SSE === 'AES256';
  const options: ClientOptions[] = resolved.map(({ url }) => ({ endpoint: url, accessKeyId, secretAccessKey, ...(sse ? { sse } : {}) }));
  // BENCH_BUCKET names a bucket made beforehand (with a notification rule: bench/notify.ts).
  const given = process.env.BENCH_BUCKET;
  const bucket = given ?? `bench-${randomUUID().slice(0, 8)}`;
  const setup = await Promise.all(options.map((each) => createLoadClient(clientText, each)));
  let runner: LoadRunner | undefined;
  try {
    if (given === undefined) await setup[0]!.createBucket(bucket);
    if (threads === 1) {
      const loader = new Loader(setup, bucket);
      runner = { run: (task) => loader.run(task, 0, 1), close: async () => undefined };
    } else {
      runner = new ThreadRunner(Array.from({ length: threads }, (_, share) => ({ client: clientText, options, bucket, share, shares: threads })));
    }
    const warmUpPairs = warmUpText === undefined ? defaultSmallWarmUpPairs : Number(warmUpText);
    const warmUpSeconds = warmUpSecondsText === undefined ? smallSeconds : Number(warmUpSecondsText);
    if (!(warmUpSeconds > 0 && warmUpSeconds <= maxWarmUpSeconds)) throw new Error(`small-warm-up-seconds ${warmUpSecondsText}: from 1 to ${maxWarmUpSeconds}; ${usage}`);
    const largeWarmUpPairs = largeWarmUpText === undefined ? largeWarmUpPairsPerEndpoint : Number(largeWarmUpText);
    if (!(Number.isInteger(largeWarmUpPairs) && largeWarmUpPairs >= 0 && largeWarmUpPairs <= 64)) throw new Error(`large-warm-up-pairs-per-endpoint ${largeWarmUpText}: a whole number from 0 to 64; ${usage}`);
    await measure(runner, { smallOps: Number(smallOpsText ?? 3000), largeObjects: Number(largeObjectsText ?? 8), warmUpPairs, warmUpSeconds, largeWarmUpPairs: largeWarmUpPairs * setup.length, largeShapesPairs: largeShapesPairsPerEndpoint * setup.length }, new Set((phasesText ?? 'small-put,small-get,large-put,large-get').split(',')));
  } finally {
    await runner?.close();
    steps?.close();
    if (steps) process.stdin.destroy();
    for (const client of setup) client.destroy();
    await Promise.all(resolved.map((each) => each.stop()));
  }
}

async function measure(runner: LoadRunner, counts: { smallOps: number; largeObjects: number; warmUpPairs: number; warmUpSeconds: number; largeWarmUpPairs: number; largeShapesPairs: number }, phases: Set<string>): Promise<void> {
  const { smallOps, largeObjects, warmUpPairs, warmUpSeconds, largeWarmUpPairs, largeShapesPairs } = counts;
  const result: Record<string, number> = {};
  const cpu: Record<string, number> = {};
  const latencyMs: Record<string, { p50: number; p90: number; p99: number }> = {};
  /**
   * Runs one timed phase between `phase <name> start` and `phase <name> end` lines (the benchmark
   * reads the server's CPU time at each), recording the operations per second and this process's
   * CPU ms per operation (all of its threads).
   */
  async function phase(name: string, task: Task): Promise<{ done: number; perSecond: number }> {
    await waitForTurn(name);
    console.log(`phase ${name} start`);
    const before = process.cpuUsage();
    const started = performance.now();
    const { done, latenciesMs } = await runner.run(task);
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(before);
    console.log(`phase ${name} end ${done}`);
    cpu[name] = (used.user + used.system) / 1000 / Math.max(1, done);
    const sorted = latenciesMs.sort((a, b) => a - b);
    latencyMs[name] = { p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99) };
    return { done, perSecond: done / seconds };
  }
  // 'large-shapes': a few large pairs before the small warm-up, so that code serving both sizes
  // (the shard reads, the internode frames) is compiled for both. Warmed on small objects alone,
  // it was thrown out by the first large GETs and compiled again only during the timed 64 MiB
  // GETs, in every one of the four nodes.
  if (phases.has('large-shapes')) {
    const { done } = await runner.run({ kind: 'warm-up', size: 'large', prefix: 'shapes-', count: largeShapesPairs, concurrency: 4, seconds: largeSeconds });
    console.log(`large shapes ${done} pairs`);
  }
  if (phases.has('small-put') || phases.has('small-get')) {
    const started = performance.now();
    const { done } = await runner.run({ kind: 'warm-up', size: 'small', prefix: 'warm-', count: warmUpPairs, concurrency: 32, seconds: warmUpSeconds });
    console.log(`warm-up ${done} pairs in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  if (phases.has('small-put')) {
    result.smallPut = (await phase('smallPut', { kind: 'put', size: 'small', prefix: '', count: smallOps, concurrency: 32, seconds: smallSeconds })).perSecond;
  }
  if (phases.has('small-get')) {
    // What the PUTs stored; without them, any key (the bare server answers every key).
    result.smallGet = (await phase('smallGet', { kind: 'get', size: 'small', prefix: '', count: smallOps, concurrency: 32, seconds: smallSeconds, storedOnly: phases.has('small-put') })).perSecond;
  }
  if (phases.has('large-put') || phases.has('large-get')) {
    const started = performance.now();
    const { done } = await runner.run({ kind: 'warm-up', size: 'large', prefix: 'warm-', count: largeWarmUpPairs, concurrency: 4, seconds: largeSeconds });
    console.log(`large warm-up ${done} pairs in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  if (phases.has('large-put')) {
    const puts = await phase('largePut', { kind: 'put', size: 'large', prefix: '', count: largeObjects, concurrency: 4, seconds: largeSeconds });
    result.largePut = (puts.perSecond * sizeBytes.large) / 1e6;
  }
  if (phases.has('large-get')) {
    const gets = await phase('largeGet', { kind: 'get', size: 'large', prefix: '', count: largeObjects, concurrency: 4, seconds: largeSeconds, storedOnly: phases.has('large-put') });
    result.largeGet = (gets.perSecond * sizeBytes.large) / 1e6;
  }
  console.log(JSON.stringify({ ...result, cpu, latencyMs }));
}

if (isMainThread) await main();
else await serveAsWorker();
