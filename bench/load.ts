/**
 * The benchmark's load generator, run in a process of its own against one endpoint: 4 KiB PUTs
 * and GETs (32 at a time), then 64 MiB PUTs and GETs (4 at a time), each size after an untimed
 * warm-up, through one of the clients of bench/clients.ts (`http`, the default, or `sdk`).
 * Prints a `phase <name> start|end` line around each timed phase, then one JSON line with the
 * rates and this process's CPU ms per operation of each phase. Every loop is bounded in count and
 * time.
 *
 *   node --import tsx bench/load.ts <endpoint> <access-key> <secret-key> <small-ops> <large-objects> <phases> [http|sdk]
 *
 * `phases` is a comma-separated subset of small-put, small-get, large-put, large-get.
 */
import { randomUUID } from 'node:crypto';
import S3rver from 's3rver';
import { freePort } from '../conformance/harness/server-process.js';
import { createLoadClient, payloadOf, type ClientKind, type LoadClient, type Payload } from './clients.js';

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
const smallWarmUpPairs = 3000;
const largeWarmUpPairs = 4;

/** Runs `task(i)` for i < count with `concurrency` workers, stopping after `seconds`; returns done/second. */
async function drive(count: number, concurrency: number, seconds: number, task: (index: number) => Promise<void>): Promise<{ done: number; perSecond: number }> {
  let next = 0;
  let done = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count && performance.now() < deadline) {
      const index = next;
      next += 1;
      await task(index);
      done += 1;
    }
  }));
  return { done, perSecond: done / ((performance.now() - started) / 1000) };
}

/** Untimed PUT+GET pairs of `payload` (see smallWarmUpPairs), as `<prefix>/warm-<n>`. */
async function warmUp(client: LoadClient, bucket: string, prefix: 'small' | 'large', payload: Payload, pairs: number, concurrency: number, seconds: number): Promise<void> {
  await drive(pairs, concurrency, seconds, async (index) => {
    await client.put(bucket, `${prefix}/warm-${index}`, payload);
    await client.get(bucket, `${prefix}/warm-${index}`);
  });
}

/**
 * `in-process-s3rver:<directory>` as the endpoint runs s3rver inside this load generator's process
 * (sharing its thread), which is how s3rver figures are often quoted; the benchmark reports both.
 */
async function resolveEndpoint(endpoint: string): Promise<{ url: string; stop(): Promise<void> }> {
  if (!endpoint.startsWith('in-process-s3rver:')) return { url: endpoint, stop: async () => undefined };
  const port = await freePort();
  const instance = new S3rver({ port, address: '127.0.0.1', silent: true, directory: endpoint.slice('in-process-s3rver:'.length) });
  await instance.run();
  return { url: `http://127.0.0.1:${port}`, stop: () => instance.close() };
}

const usage = 'usage: load.ts <endpoint> <access-key> <secret-key> <small-ops> <large-objects> <phases> [http|sdk]';

async function main(): Promise<void> {
  const [target, accessKeyId, secretAccessKey, smallOpsText, largeObjectsText, phasesText, clientText = 'http'] = process.argv.slice(2);
  if (!target || !accessKeyId || !secretAccessKey) throw new Error(usage);
  if (clientText !== 'http' && clientText !== 'sdk') throw new Error(`unknown client ${clientText}; ${usage}`);
  const resolved = await resolveEndpoint(target);
  try {
    const client = createLoadClient(clientText, { endpoint: resolved.url, accessKeyId, secretAccessKey });
    try {
      await measure(client, smallOpsText, largeObjectsText, phasesText);
    } finally {
      client.destroy();
    }
  } finally {
    await resolved.stop();
  }
}

async function measure(client: LoadClient, smallOpsText: string | undefined, largeObjectsText: string | undefined, phasesText: string | undefined): Promise<void> {
  const smallOps = Number(smallOpsText ?? 3000);
  const largeObjects = Number(largeObjectsText ?? 8);
  const phases = new Set((phasesText ?? 'small-put,small-get,large-put,large-get').split(','));
  const bucket = `bench-${randomUUID().slice(0, 8)}`;
  const result: Record<string, number> = {};
  const cpu: Record<string, number> = {};
  /**
   * Runs one timed phase between `phase <name> start` and `phase <name> end` lines (the benchmark
   * reads the server's CPU time at each), recording the rate and this process's CPU ms per
   * operation.
   */
  async function phase(name: string, count: number, concurrency: number, seconds: number, task: (index: number) => Promise<void>): Promise<{ done: number; perSecond: number }> {
    console.log(`phase ${name} start`);
    const before = process.cpuUsage();
    const outcome = await drive(count, concurrency, seconds, task);
    const used = process.cpuUsage(before);
    console.log(`phase ${name} end ${outcome.done}`);
    cpu[name] = (used.user + used.system) / 1000 / Math.max(1, outcome.done);
    return outcome;
  }
  await client.createBucket(bucket);
  const small = payloadOf(Buffer.alloc(4 * KiB, 's'));
  if (phases.has('small-put') || phases.has('small-get')) await warmUp(client, bucket, 'small', small, smallWarmUpPairs, 32, smallSeconds);
  let smallStored = smallOps;
  if (phases.has('small-put')) {
    const puts = await phase('smallPut', smallOps, 32, smallSeconds, (index) => client.put(bucket, `small/${index}`, small));
    result.smallPut = puts.perSecond;
    smallStored = puts.done;
  }
  if (phases.has('small-get')) {
    const gets = await phase('smallGet', smallStored, 32, smallSeconds, (index) => expectLength(client.get(bucket, `small/${index}`), 4 * KiB));
    result.smallGet = gets.perSecond;
  }
  const large = phases.has('large-put') || phases.has('large-get') ? payloadOf(Buffer.alloc(64 * MiB, 'L')) : undefined;
  if (large) await warmUp(client, bucket, 'large', large, largeWarmUpPairs, 4, largeSeconds);
  let largeStored = largeObjects;
  if (phases.has('large-put')) {
    const puts = await phase('largePut', largeObjects, 4, largeSeconds, (index) => client.put(bucket, `large/${index}`, large!));
    result.largePut = (puts.perSecond * 64 * MiB) / 1e6;
    largeStored = puts.done;
  }
  if (phases.has('large-get')) {
    const gets = await phase('largeGet', largeStored, 4, largeSeconds, (index) => expectLength(client.get(bucket, `large/${index}`), 64 * MiB));
    result.largeGet = (gets.perSecond * 64 * MiB) / 1e6;
  }
  console.log(JSON.stringify({ ...result, cpu }));
}

/** Fails when an object read back is not as long as it was written. */
async function expectLength(reading: Promise<number>, expected: number): Promise<void> {
  const length = await reading;
  if (length !== expected) throw new Error(`read ${length} bytes of an object of ${expected}`);
}

await main();
