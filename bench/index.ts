/**
 * `npm run bench`: S3 PUT and GET through the AWS SDK against the built server on 4 fs drives
 * (EC 2+2), each figure beside limits measured in the same run on the same machine:
 *
 * - raw write: the same bytes x N/K written by plain file writes with fsync (512 MiB, 1 MiB writes);
 * - raw read: 512 MiB read back by plain 1 MiB file reads from a file not in the page cache (as
 *   shard files are: they are written around it);
 * - durable creates: create + write + fsync + rename of 4 KiB files, 16 at a time, divided by N;
 * - bare HTTP: the same AWS SDK load against a node:http server that discards PUT bodies and
 *   answers GETs from memory: what the client and HTTP cost on this machine before any storage;
 * - the s3rver package as a peer (it neither erasure-codes nor fsyncs).
 *
 * Then the goals are checked and printed. Every loop is bounded in count and time. The machine is
 * shared by the load generator and the server; figures move between runs, so read each against the
 * limits of its own run. `--quick` makes a short run (fewer operations) for a first look.
 */
import { createServer, type Server } from 'node:http';
import { mkdtemp, open, readFile, rename, rm, mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import S3rver from 's3rver';
import { startSvc, freePort, repoRoot } from '../conformance/harness/server-process.js';
import { openDirectWriter } from '../backends/fs/direct-io.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const quick = process.argv.includes('--quick');
const smallOps = quick ? 600 : 3000;
const smallSeconds = quick ? 4 : 10;
const largeObjects = quick ? 4 : 8;
const largeSeconds = 120;
const drives = 4;
const dataShards = 2;

type Credentials = { accessKeyId: string; secretAccessKey: string };

function client(endpoint: string, credentials: Credentials = { accessKeyId: 'testadmin', secretAccessKey: 'testadmin-secret' }): S3Client {
  return new S3Client({
    endpoint, region: 'us-east-1', forcePathStyle: true, credentials, maxAttempts: 1,
    requestHandler: new NodeHttpHandler({ httpAgent: { maxSockets: 64, keepAlive: true } as never }),
  });
}

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

interface S3Figures {
  smallPut: number;
  smallGet: number;
  largePut: number;
  largeGet: number;
}

async function s3Figures(endpoint: string, credentials?: Credentials): Promise<S3Figures> {
  const s3 = client(endpoint, credentials);
  const bucket = `bench-${randomUUID().slice(0, 8)}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const small = Buffer.alloc(4 * KiB, 's');
  const smallPut = await drive(smallOps, 32, smallSeconds, (index) => s3.send(new PutObjectCommand({ Bucket: bucket, Key: `small/${index}`, Body: small })).then(() => undefined));
  const smallGet = await drive(smallPut.done, 32, smallSeconds, async (index) => {
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: `small/${index}` }));
    await object.Body!.transformToByteArray();
  });
  const large = Buffer.alloc(64 * MiB, 'L');
  const largePut = await drive(largeObjects, 4, largeSeconds, (index) => s3.send(new PutObjectCommand({ Bucket: bucket, Key: `large/${index}`, Body: large })).then(() => undefined));
  const largeGet = await drive(largePut.done, 4, largeSeconds, async (index) => {
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: `large/${index}` }));
    for await (const chunk of object.Body as AsyncIterable<Uint8Array>) void chunk;
  });
  s3.destroy();
  return { smallPut: smallPut.perSecond, smallGet: smallGet.perSecond, largePut: (largePut.perSecond * 64 * MiB) / 1e6, largeGet: (largeGet.perSecond * 64 * MiB) / 1e6 };
}

/** fsync'd sequential write rate of this disk through the page cache, MB/s. */
async function rawWriteMbPerSecond(dir: string, bytes: number): Promise<number> {
  const block = Buffer.alloc(MiB, 'w');
  const path = join(dir, 'raw-write.bin');
  const started = performance.now();
  const handle = await open(path, 'w');
  for (let written = 0; written < bytes; written += MiB) await handle.write(block);
  await handle.sync();
  await handle.close();
  const seconds = (performance.now() - started) / 1000;
  await rm(path);
  return bytes / seconds / 1e6;
}

/** Plain 1 MiB reads of a file whose pages are not in memory (written around the page cache), MB/s. */
async function rawReadMbPerSecond(dir: string, bytes: number): Promise<number> {
  const path = join(dir, 'raw-read.bin');
  const writer = await openDirectWriter(path);
  const block = Buffer.alloc(MiB, 'r');
  if (writer) {
    for (let written = 0; written < bytes; written += MiB) await writer.write(block);
    await writer.close();
  } else {
    const handle = await open(path, 'w'); // no O_DIRECT here: the reads may come from memory
    for (let written = 0; written < bytes; written += MiB) await handle.write(block);
    await handle.close();
  }
  const buffer = Buffer.allocUnsafe(MiB);
  const started = performance.now();
  const handle = await open(path, 'r');
  let total = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buffer, 0, MiB, null);
    if (bytesRead === 0) break;
    total += bytesRead;
  }
  await handle.close();
  const seconds = (performance.now() - started) / 1000;
  await rm(path);
  return total / seconds / 1e6;
}

/** Durable 4 KiB creates per second (create, write, fsync, rename), 16 at a time. */
async function durableCreatesPerSecond(dir: string): Promise<number> {
  await mkdir(join(dir, 'creates'), { recursive: true });
  const data = Buffer.alloc(4 * KiB, 'c');
  const result = await drive(2000, 16, 5, async (index) => {
    const tmp = join(dir, 'creates', `${index}.tmp`);
    const handle = await open(tmp, 'w');
    await handle.write(data);
    await handle.sync();
    await handle.close();
    await rename(tmp, join(dir, 'creates', `${index}`));
  });
  return result.perSecond;
}

/**
 * The same SDK load against a node:http server that stores nothing: 4 KiB PUTs (bodies
 * discarded) and 64 MiB GETs (answered from memory). The ceiling the client and HTTP set here.
 */
async function bareHttpFigures(): Promise<{ smallPut: number; largeGet: number }> {
  const payload = Buffer.alloc(64 * MiB, 'g');
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      if (request.method === 'GET') {
        response.writeHead(200, { 'content-length': payload.length, 'content-type': 'application/octet-stream', etag: '"bare"' });
        response.end(payload);
      } else {
        response.writeHead(200, { etag: '"bare"' });
        response.end();
      }
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const s3 = client(`http://127.0.0.1:${port}`);
  try {
    const body = Buffer.alloc(4 * KiB, 'h');
    const puts = await drive(smallOps, 32, smallSeconds, (index) => s3.send(new PutObjectCommand({ Bucket: 'bare', Key: `small/${index}`, Body: body })).then(() => undefined));
    const gets = await drive(largeObjects, 4, largeSeconds, async (index) => {
      const object = await s3.send(new GetObjectCommand({ Bucket: 'bare', Key: `large/${index}` }));
      for await (const chunk of object.Body as AsyncIterable<Uint8Array>) void chunk;
    });
    return { smallPut: puts.perSecond, largeGet: (gets.perSecond * 64 * MiB) / 1e6 };
  } finally {
    s3.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
}

async function s3rverFigures(dir: string): Promise<S3Figures> {
  const port = await freePort();
  const instance = new S3rver({ port, address: '127.0.0.1', silent: true, directory: join(dir, 's3rver') });
  await instance.run();
  try {
    return await s3Figures(`http://127.0.0.1:${port}`, { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' });
  } finally {
    await instance.close();
  }
}

function row(what: string, value: number, unit: string, references: [string, number][]): string {
  const refs = references.map(([name, reference]) => `${name} ${reference.toFixed(0)} (x${(value / reference).toFixed(2)})`).join('; ');
  return `${what.padEnd(20)} ${value.toFixed(0).padStart(6)} ${unit.padEnd(5)} ${refs}`;
}

function goal(what: string, value: number, target: number, targetText: string): string {
  const met = value >= target;
  return `${met ? 'met    ' : 'not met'}  ${what.padEnd(20)} ${value.toFixed(0).padStart(6)} >= ${targetText} = ${target.toFixed(0)} (x${(value / target).toFixed(2)})`;
}

/**
 * Where the last run's end is noted. Right after a run deletes its thousands of files, ext4 is
 * slower to find free inodes for some minutes (it skips recently freed ones), which lowers every
 * small-object figure and the durable-create limit of the next run.
 */
const lastRunMarker = join(tmpdir(), 'svc-bench-last-run');
const settleMinutes = 5;

async function warnIfRecent(): Promise<void> {
  const endedMs = Number(await readFile(lastRunMarker, 'utf8').catch(() => '0'));
  const minutes = (Date.now() - endedMs) / 60_000;
  if (minutes < settleMinutes) console.log(`note: the last run ended ${minutes.toFixed(1)} minutes ago; small-object figures read low for about ${settleMinutes} minutes after a run deletes its files\n`);
}

async function main(): Promise<void> {
  if (!existsSync(join(repoRoot, 'dist/src/cli/svc.js'))) throw new Error('no build in dist/: run npm install (or npm run build) first');
  await warnIfRecent();
  const root = await mkdtemp(join(tmpdir(), 'svc-bench-'));
  try {
    const rawWrite = await rawWriteMbPerSecond(root, 512 * MiB);
    const rawRead = await rawReadMbPerSecond(root, 512 * MiB);
    const creates = await durableCreatesPerSecond(root);
    const bare = await bareHttpFigures();
    const peer = await s3rverFigures(root);
    settleDisk(); // s3rver leaves its writes in the page cache; they must not be flushed during our run
    const server = await startSvc({ entry: 'build', args: [join(root, `d{1...${drives}}`)], env: { SVC_OBS_LOGGER_LEVEL: 'warn', ...passThrough('UV_THREADPOOL_SIZE', 'SVC_CODING_THREADS') } });
    let ours: S3Figures;
    try {
      ours = await s3Figures(server.url);
    } finally {
      await server.stop();
    }
    const k = dataShards;
    const n = drives;
    console.log(`machine: ${availableParallelism()} cores, node ${process.versions.node}; load: AWS SDK, 4 KiB x32 concurrent, 64 MiB x4 concurrent${quick ? ' (quick run)' : ''}`);
    console.log(`limits: fsync'd write ${rawWrite.toFixed(0)} MB/s, uncached read ${rawRead.toFixed(0)} MB/s, durable 4 KiB creates ${creates.toFixed(0)}/s, bare http 4 KiB PUT ${bare.smallPut.toFixed(0)}/s and 64 MiB GET ${bare.largeGet.toFixed(0)} MB/s`);
    console.log(`svc: ${n} fs drives, EC ${k}+${n - k}, built server\n`);
    console.log(row('small PUT (4 KiB)', ours.smallPut, 'op/s', [['durable creates / N', creates / n], ['bare http', bare.smallPut], ['s3rver', peer.smallPut]]));
    console.log(row('small GET (4 KiB)', ours.smallGet, 'op/s', [['s3rver', peer.smallGet]]));
    console.log(row('large PUT (64 MiB)', ours.largePut, 'MB/s', [["fsync'd write x K/N", (rawWrite * k) / n], ['s3rver', peer.largePut]]));
    console.log(row('large GET (64 MiB)', ours.largeGet, 'MB/s', [['uncached read', rawRead], ['bare http', bare.largeGet], ['s3rver', peer.largeGet]]));
    console.log('\ngoals:');
    console.log(goal('small PUT', ours.smallPut, (0.7 * creates) / n, '0.70 x durable creates / N'));
    console.log(goal('small GET', ours.smallGet, 1.5 * peer.smallGet, '1.5 x s3rver'));
    console.log(goal('large PUT', ours.largePut, (0.6 * rawWrite * k) / n, "0.60 x fsync'd write x K/N"));
    console.log(goal('large PUT', ours.largePut, peer.largePut, 's3rver'));
    console.log(goal('large GET', ours.largeGet, peer.largeGet, 's3rver'));
    console.log(goal('large GET', ours.largeGet, 0.5 * rawRead, '0.50 x uncached read'));
  } finally {
    await rm(root, { recursive: true, force: true });
    await writeFile(lastRunMarker, String(Date.now()));
  }
}

/** Writes out every dirty page of the machine (sync(1)), so one phase's writes do not land in the next. */
function settleDisk(): void {
  execFileSync('sync');
}

function passThrough(...names: string[]): Record<string, string> {
  return Object.fromEntries(names.flatMap((name) => (process.env[name] !== undefined ? [[name, process.env[name]!]] : [])));
}

await main();
