/**
 * The compression case of `npm run bench` (docs/compression.md, docs/benchmarks.md):
 *
 * - the codec alone: a 64 MiB text-like body (JSON log lines) compressed block by block as a PUT
 *   compresses it (1 MiB zstd frames, level 1): wall-clock MB/s two blocks at a time on the thread
 *   pool, and MB per CPU-second one block at a time (one core's rate, which other work on a shared
 *   machine does not lower as it lowers the wall clock's), judged against the goal of 200 MB/s;
 *   decompression; the ratio;
 * - through the server: one svc (4 fs drives, EC 2+2, SVC_COMPRESSION_ENABLE=on) takes 64 MiB
 *   PUTs and GETs of that body under a key it compresses (`.json`) and under one it stores as
 *   sent (`.bin`), turn about in the same round, so the two rates share the machine's moment.
 *
 *   npm run bench [-- --quick]              (after the S3 rounds)
 *   npm run bench -- --compression [--quick] (this case alone)
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { availableParallelism, loadavg } from 'node:os';
import { startSvc, testCredentials } from '../conformance/harness/server-process.js';
import { CompressionIndex, compressStream, compressedRangeOf, decompressStream } from '../src/format/compressed-blocks.js';
import { createLoadClient, payloadOf, type ClientKind } from './clients.js';
import { median } from './shared.js';

const MiB = 1024 * 1024;
const goalMbPerSecond = 200;

/** JSON log lines: text-like, repetitive as logs are, with numbers that change. */
export function textLikeBody(sizeBytes: number): Buffer {
  const body = Buffer.alloc(sizeBytes);
  let offset = 0;
  for (let line = 0; offset < sizeBytes; line += 1) {
    const text = `{"time":"2026-11-29T07:${String(Math.floor(line / 60) % 60).padStart(2, '0')}:${String(line % 60).padStart(2, '0')}.${String(line % 1000).padStart(3, '0')}Z","level":"${line % 17 === 0 ? 'warn' : 'info'}","request":"${(line * 2654435761 >>> 0).toString(16)}","method":"GET","path":"/bucket-${line % 7}/objects/${(line * 7919) % 100_003}.json","status":${line % 23 === 0 ? 404 : 200},"bytes":${(line * 104_729) % 1_000_000},"ms":${(line * 31) % 977}}\n`;
    offset += body.write(text, offset, Math.min(text.length, sizeBytes - offset), 'latin1');
  }
  return body;
}

async function* once(bytes: Buffer): AsyncGenerator<Uint8Array> {
  // Handed on in 64 KiB pieces, as a request body arrives.
  for (let offset = 0; offset < bytes.length; offset += 64 * 1024) yield bytes.subarray(offset, offset + 64 * 1024);
}

async function drain(stream: AsyncIterable<Uint8Array>): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

interface CodecFigures {
  /** Wall-clock MB/s, two blocks at a time on the thread pool (as a PUT runs it). */
  compressMbPerSecond: number;
  /** MB per CPU-second of the process, one block at a time: one core's rate, whatever else the machine runs. */
  compressMbPerCpuSecond: number;
  decompressMbPerSecond: number;
  decompressMbPerCpuSecond: number;
  storedShare: number;
}

/** Median wall-clock and CPU rates of `repeats` runs over the body. */
async function rates(bytes: number, repeats: number, run: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let turn = 0; turn < repeats; turn += 1) {
    const cpuBefore = process.cpuUsage();
    const started = process.hrtime.bigint();
    await run();
    const used = process.cpuUsage(cpuBefore);
    wall.push(bytes / 1e6 / (Number(process.hrtime.bigint() - started) / 1e9));
    cpu.push(bytes / 1e6 / ((used.user + used.system) / 1e6));
  }
  return { wall: median(wall), cpu: median(cpu) };
}

async function codecFigures(body: Buffer, repeats: number): Promise<CodecFigures> {
  const index = new CompressionIndex();
  const stored = Buffer.concat(await drain(compressStream(once(body), index, 2)));
  const info = index.record()!;
  const whole = compressedRangeOf(info, { offset: 0, length: body.length });
  const twoAtATime = await rates(body.length, repeats, () => drain(compressStream(once(body), new CompressionIndex(), 2)));
  const oneAtATime = await rates(body.length, repeats, () => drain(compressStream(once(body), new CompressionIndex(), 1)));
  const decompress = await rates(body.length, repeats, () => drain(decompressStream(once(stored), info, whole)));
  return {
    compressMbPerSecond: twoAtATime.wall,
    compressMbPerCpuSecond: oneAtATime.cpu,
    decompressMbPerSecond: decompress.wall,
    decompressMbPerCpuSecond: decompress.cpu,
    storedShare: stored.length / body.length,
  };
}

async function bytesUnder(directory: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(directory, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}

interface ServerFigures {
  put: { compressed: number; plain: number };
  get: { compressed: number; plain: number };
  /** Bytes on the drives for one object, compressed against plain. */
  storedShare: number;
}

async function serverFigures(dir: string, body: Buffer, objects: number, client: ClientKind): Promise<ServerFigures> {
  const server = await startSvc({ entry: 'build', args: [join(dir, 'svc-compression{1...4}')], env: { SVC_OBS_LOGGER_LEVEL: 'warn', SVC_COMPRESSION_ENABLE: 'on' } });
  const s3 = await createLoadClient(client, { endpoint: server.url, ...testCredentials });
  try {
    await s3.createBucket('bench');
    const payload = payloadOf(body);
    const rates = { put: { compressed: [] as number[], plain: [] as number[] }, get: { compressed: [] as number[], plain: [] as number[] } };
    const timed = async (run: () => Promise<unknown>): Promise<number> => {
      const started = process.hrtime.bigint();
      await run();
      return body.length / 1e6 / (Number(process.hrtime.bigint() - started) / 1e9);
    };
    for (let turn = 0; turn < objects; turn += 1) {
      // Turn about, each first every other turn.
      for (const kind of turn % 2 === 0 ? (['compressed', 'plain'] as const) : (['plain', 'compressed'] as const)) {
        const key = `${kind}-${turn}.${kind === 'compressed' ? 'json' : 'bin'}`;
        rates.put[kind].push(await timed(() => s3.put('bench', key, payload)));
      }
    }
    for (let turn = 0; turn < objects; turn += 1) {
      for (const kind of turn % 2 === 0 ? (['plain', 'compressed'] as const) : (['compressed', 'plain'] as const)) {
        const key = `${kind}-${turn}.${kind === 'compressed' ? 'json' : 'bin'}`;
        rates.get[kind].push(await timed(async () => {
          const length = await s3.get('bench', key);
          if (length !== body.length) throw new Error(`GET ${key}: ${length} bytes, not ${body.length}`);
        }));
      }
    }
    const onDrive = (key: string) => Promise.all([1, 2, 3, 4].map((drive) => bytesUnder(join(dir, `svc-compression${drive}`, 'bench', key)))).then((sizes) => sizes.reduce((a, b) => a + b, 0));
    const storedShare = (await onDrive('compressed-0.json')) / (await onDrive('plain-0.bin'));
    return {
      put: { compressed: median(rates.put.compressed), plain: median(rates.put.plain) },
      get: { compressed: median(rates.get.compressed), plain: median(rates.get.plain) },
      storedShare,
    };
  } finally {
    s3.destroy();
    await server.stop();
  }
}

/** Runs the case in `dir` and prints it. */
export async function runCompressionBench(dir: string, options: { quick: boolean; client: ClientKind }): Promise<void> {
  const body = textLikeBody(64 * MiB);
  const codec = await codecFigures(body, options.quick ? 3 : 7);
  const server = await serverFigures(dir, body, options.quick ? 3 : 8, options.client);
  const verdict = codec.compressMbPerCpuSecond >= goalMbPerSecond ? 'met    ' : 'not met';
  console.log(`\ncompression: a 64 MiB text-like body (JSON log lines), zstd level 1 in 1 MiB blocks; medians of ${options.quick ? 3 : 7} runs; load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores`);
  console.log(`  codec: compress ${codec.compressMbPerCpuSecond.toFixed(0)} MB per CPU-second (one core's rate), ${codec.compressMbPerSecond.toFixed(0)} MB/s wall clock (2 blocks at a time); decompress ${codec.decompressMbPerCpuSecond.toFixed(0)} MB per CPU-second, ${codec.decompressMbPerSecond.toFixed(0)} MB/s; stored ${(codec.storedShare * 100).toFixed(1)}% of the body`);
  console.log(`  svc, the same body under a compressed key and a plain one, turn about (${options.quick ? 3 : 8} each): PUT ${server.put.compressed.toFixed(0)} MB/s compressed against ${server.put.plain.toFixed(0)} plain (x${(server.put.compressed / server.put.plain).toFixed(2)}), GET ${server.get.compressed.toFixed(0)} against ${server.get.plain.toFixed(0)} (x${(server.get.compressed / server.get.plain).toFixed(2)}); on the drives ${(server.storedShare * 100).toFixed(1)}% of the plain object's bytes`);
  console.log(`${verdict}  compression ${codec.compressMbPerCpuSecond.toFixed(0).padStart(6)} MB per CPU-second >= ${goalMbPerSecond}: x${(codec.compressMbPerCpuSecond / goalMbPerSecond).toFixed(2)}`);
}
