/**
 * The SSE package work alone, in one process (docs/benchmarks.md, "SSE-S3 against plain"): 64 MiB
 * sealed and opened as the streams do it (one `node:crypto` cipher per package on the event loop)
 * and as they did before (WebCrypto on the thread pool, 16 packages in flight,
 * bench/sse-offloop.ts), and the MD5 of 64 MiB for scale. Wall-clock MB/s and the process's CPU
 * per MB over all its threads; best of three turns, the two ways turn about.
 *
 *   node --import tsx bench/sse-ciphers.ts
 */
import { createHash, randomBytes } from 'node:crypto';
import { cipherRangeOf, openStream, sealStream } from '../src/format/sse-packages.js';
import { openStreamOffLoop, sealStreamOffLoop } from './sse-offloop.js';

const size = 64 * 1024 * 1024;
const body = randomBytes(size);
const key = { dataKey: randomBytes(32), nonceBase: randomBytes(12) };

/** `bytes` in pieces: 64 KiB as a request body arrives, 512 KiB as an EC 2+2 read hands data shards on. */
async function* pieces(bytes: Uint8Array, length = 64 * 1024): AsyncGenerator<Uint8Array> {
  for (let offset = 0; offset < bytes.length; offset += length) yield bytes.subarray(offset, offset + length);
}

async function drain(stream: AsyncIterable<Uint8Array>): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for await (const chunk of stream) out.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  return out;
}

const best = new Map<string, { mbPerSecond: number; cpuMsPerMb: number }>();

async function measure(name: string, run: () => Promise<unknown>): Promise<void> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await run();
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const mb = size / 1e6;
  const figure = { mbPerSecond: mb / seconds, cpuMsPerMb: (used.user + used.system) / 1000 / mb };
  if (figure.mbPerSecond > (best.get(name)?.mbPerSecond ?? 0)) best.set(name, figure);
}

const sealed = Buffer.concat(await drain(sealStream(pieces(body), key, 1)));
if (!Buffer.concat(await drain(sealStreamOffLoop(pieces(body), key, 1))).equals(sealed)) throw new Error('the two sealers differ');
const read = cipherRangeOf([{ partNumber: 1, plainSizeBytes: size }], { offset: 0, length: size });
if (!Buffer.concat(await drain(openStream(pieces(sealed, 512 * 1024), key, read))).equals(body)) throw new Error('round trip failed');
if (!Buffer.concat(await drain(openStreamOffLoop(pieces(sealed, 512 * 1024), key, read))).equals(body)) throw new Error('round trip failed (thread pool)');
const cases: [string, () => Promise<unknown>][] = [
  ['MD5 (event loop)', async () => createHash('md5').update(body).digest()],
  ['seal, thread pool (before)', () => drain(sealStreamOffLoop(pieces(body), key, 1))],
  ['seal, event loop (now)', () => drain(sealStream(pieces(body), key, 1))],
  ['open, thread pool (before)', () => drain(openStreamOffLoop(pieces(sealed, 512 * 1024), key, read))],
  ['open, event loop (now)', () => drain(openStream(pieces(sealed, 512 * 1024), key, read))],
];
for (let turn = 0; turn < 3; turn += 1) for (const [name, run] of turn % 2 === 0 ? cases : [...cases].reverse()) await measure(name, run);
console.log('64 MiB, best of 3 turns (the machine is shared: compare rows of one run)');
for (const [name, figure] of best) console.log(`${name.padEnd(30)} ${figure.mbPerSecond.toFixed(0).padStart(6)} MB/s  ${figure.cpuMsPerMb.toFixed(2)} CPU ms/MB`);
