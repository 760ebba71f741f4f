/**
 * `npm run bench`: S3 PUT and GET through the AWS SDK against a real server on 4 fs drives (EC:2),
 * each figure beside limits measured in the same run on the same disk (plain fsync'd writes,
 * durable small-file creates, a bare node:http server) and beside the s3rver package as a peer
 * (it neither erasure-codes nor fsyncs). Every loop is bounded in count and time.
 */
import { createServer } from 'node:http';
import { mkdtemp, open, rename, rm, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import S3rver from 's3rver';
import { startSvc, freePort } from '../test/helpers/server-process.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const smallOps = 3000;
const smallSeconds = 10;
const largeObjects = 8;

function client(endpoint: string, credentials = { accessKeyId: 'testadmin', secretAccessKey: 'testadmin-secret' }): S3Client {
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

async function s3Figures(endpoint: string, credentials?: { accessKeyId: string; secretAccessKey: string }) {
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
  const largePut = await drive(largeObjects, 4, 120, (index) => s3.send(new PutObjectCommand({ Bucket: bucket, Key: `large/${index}`, Body: large })).then(() => undefined));
  const largeGet = await drive(largePut.done, 4, 120, async (index) => {
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: `large/${index}` }));
    for await (const chunk of object.Body as AsyncIterable<Uint8Array>) void chunk;
  });
  s3.destroy();
  return { smallPut: smallPut.perSecond, smallGet: smallGet.perSecond, largePut: (largePut.perSecond * 64 * MiB) / 1e6, largeGet: (largeGet.perSecond * 64 * MiB) / 1e6 };
}

/** fsync'd sequential write rate of this disk, MB/s. */
async function rawWriteMbPerSecond(dir: string, bytes: number): Promise<number> {
  const block = Buffer.alloc(MiB, 'w');
  const path = join(dir, 'raw.bin');
  const started = performance.now();
  const handle = await open(path, 'w');
  for (let written = 0; written < bytes; written += MiB) await handle.write(block);
  await handle.sync();
  await handle.close();
  const seconds = (performance.now() - started) / 1000;
  await rm(path);
  return bytes / seconds / 1e6;
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

/** A bare node:http server that discards bodies: the HTTP ceiling of this machine for 4 KiB PUTs. */
async function bareHttpPutsPerSecond(): Promise<number> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.end());
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const body = Buffer.alloc(4 * KiB, 'h');
  const result = await drive(smallOps, 32, smallSeconds, async () => {
    const response = await fetch(`http://127.0.0.1:${port}/x`, { method: 'PUT', body });
    await response.arrayBuffer();
  });
  await new Promise((resolve) => server.close(resolve));
  return result.perSecond;
}

async function s3rverFigures(dir: string) {
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
  return `${what.padEnd(26)} ${value.toFixed(0).padStart(7)} ${unit.padEnd(6)} ${refs}`;
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'svc-bench-'));
  const n = 4;
  const k = 2;
  try {
    const raw = await rawWriteMbPerSecond(root, 512 * MiB);
    const creates = await durableCreatesPerSecond(root);
    const bare = await bareHttpPutsPerSecond();
    const peer = await s3rverFigures(root);
    const server = await startSvc({ args: [join(root, 'd{1...4}')], env: { SVC_OBS_LOGGER_LEVEL: 'warn', ...(process.env.UV_THREADPOOL_SIZE ? { UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE } : {}) } });
    let ours;
    try {
      ours = await s3Figures(server.url);
    } finally {
      await server.stop();
    }
    console.log(`limits on this machine: fsync'd write ${raw.toFixed(0)} MB/s, durable 4 KiB creates ${creates.toFixed(0)}/s, bare http 4 KiB PUT ${bare.toFixed(0)}/s`);
    console.log(`svc: 4 fs drives, EC ${k}+${n - k}; load: AWS SDK, 4 KiB x32 concurrent, 64 MiB x4 concurrent\n`);
    console.log(row('small PUT (4 KiB)', ours.smallPut, 'op/s', [['durable creates / N', creates / n], ['bare http', bare], ['s3rver', peer.smallPut]]));
    console.log(row('small GET (4 KiB)', ours.smallGet, 'op/s', [['s3rver', peer.smallGet]]));
    console.log(row('large PUT (64 MiB)', ours.largePut, 'MB/s', [["fsync'd write x K/N", (raw * k) / n], ['s3rver', peer.largePut]]));
    console.log(row('large GET (64 MiB)', ours.largeGet, 'MB/s', [['s3rver', peer.largeGet]]));
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();
