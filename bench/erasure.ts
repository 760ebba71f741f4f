/**
 * `npm run bench:erasure`: erasure-coding speed on this machine, each figure beside a raw
 * single-core baseline measured in the same run. MB = 10^6 bytes of object data.
 */
import { mkdtemp, rm, open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { createReedSolomonCodec } from '../src/erasure/rs-codec.js';
import { wasmKernel } from '../src/erasure/wasm-kernel.js';
import { splitBlock } from '../src/erasure/layout.js';
import { xxh64 } from '../src/util/hashing.js';
import { ErasureSet, LocalNamespaceLocker } from '../src/object/index.js';
import { createFsDrive } from '../backends/fs/fs-drive.js';
import { freshReference } from '../test/helpers/reference-rs.js';

const MiB = 1024 * 1024;
const block = new Uint8Array(MiB).map((_, index) => (index * 2654435761) >>> 24);

/** Runs `action` repeatedly for about `seconds`, returns MB/s of `bytesPerRun`. */
function rate(bytesPerRun: number, action: () => void, seconds = 1): number {
  action();
  let runs = 0;
  const started = performance.now();
  while (performance.now() - started < seconds * 1000) {
    action();
    runs += 1;
  }
  return (bytesPerRun * runs) / ((performance.now() - started) / 1000) / 1e6;
}

function shardsFor(k: number, m: number): Uint8Array[] {
  const shards = splitBlock(block, k).map((shard) => new Uint8Array(shard));
  for (let index = 0; index < m; index += 1) shards.push(new Uint8Array(shards[0]!.length));
  return shards;
}

interface Row {
  what: string;
  mbPerSecond: number;
  baseline: string;
  baselineMbPerSecond: number;
}

function codecRows(memcpy: number): Row[] {
  const rows: Row[] = [];
  for (const [k, m] of [[12, 4], [4, 2], [2, 2]] as const) {
    for (const kernel of ['wasm', 'typescript'] as const) {
      if (kernel === 'wasm' && !wasmKernel) continue;
      const codec = createReedSolomonCodec(k, m, { kernel });
      const shards = shardsFor(k, m);
      rows.push({ what: `encode ${k}+${m} (${kernel})`, mbPerSecond: rate(MiB, () => codec.encode(shards)), baseline: 'memcpy', baselineMbPerSecond: memcpy });
      const lose = Array.from({ length: m }, (_, index) => index); // worst case: data shards lost
      rows.push({
        what: `reconstruct ${k}+${m} (${kernel}, ${m} data shards lost)`,
        mbPerSecond: rate(MiB, () => codec.reconstruct(shards.map((shard, index) => (lose.includes(index) ? null : shard)), { dataOnly: true })),
        baseline: 'memcpy',
        baselineMbPerSecond: memcpy,
      });
    }
    const all = new Uint8Array(shardsFor(k, m).reduce((sum, shard) => sum + shard.length, 0));
    all.set(block.subarray(0, Math.min(block.length, all.length)));
    const reference = freshReference(); // encode on a reused instance is correct; reconstruct is not
    rows.push({
      what: `encode ${k}+${m} (reference wasm package)`,
      mbPerSecond: rate(MiB, () => reference.encode(all, k, m)),
      baseline: 'memcpy',
      baselineMbPerSecond: memcpy,
    });
  }
  return rows;
}

async function fileWriteRate(dir: string, sizeBytes: number): Promise<number> {
  const path = join(dir, `plain-${randomUUID()}`);
  const started = performance.now();
  const handle = await open(path, 'w');
  for (let offset = 0; offset < sizeBytes; offset += MiB) await handle.write(block);
  await handle.sync();
  await handle.close();
  const seconds = (performance.now() - started) / 1000;
  await rm(path);
  return sizeBytes / seconds / 1e6;
}

async function wholeSetRows(): Promise<Row[]> {
  const root = await mkdtemp(join(tmpdir(), 'svc-bench-'));
  try {
    const drives = await Promise.all([0, 1, 2, 3].map((index) => createFsDrive(join(root, `d${index}`))));
    const set = new ErasureSet({
      poolIndex: 0, setIndex: 0, drives, deploymentId: randomUUID(), locker: new LocalNamespaceLocker(), clock: { nowMs: () => Date.now() },
      newId: randomUUID, standardParity: 2, rrsParity: 1, blockSizeBytes: MiB, listQuorum: 'optimal',
    });
    await set.makeBucketDir('bench');
    const sizeBytes = 256 * MiB;
    async function* body(): AsyncGenerator<Uint8Array> {
      for (let offset = 0; offset < sizeBytes; offset += MiB) yield block;
    }
    const plain = await fileWriteRate(root, sizeBytes * 2); // N/K = 2: the bytes a 2+2 set writes
    let started = performance.now();
    await set.putObject('bench', 'big', body(), { storageClass: 'STANDARD', versioning: 'unversioned', sizeBytes });
    const put = sizeBytes / ((performance.now() - started) / 1000) / 1e6;
    started = performance.now();
    const reader = await set.getObject('bench', 'big');
    for await (const chunk of reader.body) void chunk;
    const get = sizeBytes / ((performance.now() - started) / 1000) / 1e6;
    return [
      { what: 'set put 256 MiB, 4 fs drives, EC 2+2', mbPerSecond: put, baseline: 'fsync’d file write of the same bytes x N/K', baselineMbPerSecond: plain / 2 },
      { what: 'set get 256 MiB, 4 fs drives, EC 2+2', mbPerSecond: get, baseline: 'memcpy', baselineMbPerSecond: rate(MiB, () => new Uint8Array(MiB).set(block)) },
    ];
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const target = new Uint8Array(MiB);
  const memcpy = rate(MiB, () => target.set(block));
  const rows = codecRows(memcpy);
  rows.push({ what: 'bitrot hash xxh64', mbPerSecond: rate(MiB, () => xxh64(block)), baseline: 'memcpy', baselineMbPerSecond: memcpy });
  rows.push(...(await wholeSetRows()));
  const width = Math.max(...rows.map((row) => row.what.length));
  console.log(`${'measurement'.padEnd(width)}  ${'MB/s'.padStart(8)}  ${'baseline MB/s'.padStart(14)}  ratio  baseline`);
  for (const row of rows) {
    console.log(
      `${row.what.padEnd(width)}  ${row.mbPerSecond.toFixed(0).padStart(8)}  ${row.baselineMbPerSecond.toFixed(0).padStart(14)}  ${(row.mbPerSecond / row.baselineMbPerSecond).toFixed(2).padStart(5)}  ${row.baseline}`,
    );
  }
}

await main();
