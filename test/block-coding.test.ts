import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { codecFor, defaultCodecId } from '../src/erasure/codecs.js';
import { frameChunk } from '../src/erasure/bitrot.js';
import { splitBlock } from '../src/erasure/layout.js';
import { isSvcError } from '../src/errors/index.js';
import { tmpDir } from '../src/drive/index.js';
import { writeQuorum } from '../src/erasure/geometry.js';
import { mainThreadCoding, WorkerCoding, type BlockCoding, type DigestAlgorithm } from '../src/object/index.js';
import { collect, chunked, filesOn, makeTestSet, patternBytes } from './helpers/erasure-set.js';
import { KiB, MiB } from '../src/util/limits.js';

const threads = new WorkerCoding(2);
afterAll(() => threads.close());

/** The frames of one block as the format defines them: split, zero-pad, encode, frame each shard. */
function referenceFrames(block: Uint8Array, k: number, m: number): Buffer[] {
  const shards = splitBlock(block, k);
  for (let index = 0; index < m; index += 1) shards.push(new Uint8Array(shards[0]!.length));
  codecFor(defaultCodecId, k, m).encode(shards);
  return shards.map((shard) => Buffer.from(frameChunk(shard)));
}

async function codeAll(coding: BlockCoding, k: number, m: number, blockSize: number, blocks: Uint8Array[], algorithms: DigestAlgorithm[]) {
  const session = coding.open(k, m, algorithms);
  const frames: Buffer[][] = [];
  for (const block of blocks) {
    const buffers = coding.acquireBuffers(blockSize, k, k + m);
    buffers.block.set(block);
    frames.push((await session.code(buffers, block.length)).map((frame) => Buffer.from(frame)));
    coding.releaseBuffers(buffers);
  }
  return { frames, digests: await session.finish() };
}

const execFileAsync = promisify(execFile);

describe('block coding on threads and on the event loop', () => {
  it('property: both give the format\'s frames and the digests of the whole body, for any geometry and block sizes', async () => {
    const blockSize = 64 * KiB;
    const geometry = fc.integer({ min: 1, max: 12 }).chain((k) => fc.record({ k: fc.constant(k), m: fc.integer({ min: 0, max: k }) }));
    const lengths = fc.array(fc.oneof(fc.constant(blockSize), fc.integer({ min: 1, max: blockSize })), { minLength: 1, maxLength: 4 });
    const algorithms = fc.subarray<DigestAlgorithm>(['sha256', 'sha1', 'crc32', 'crc32c']);
    await fc.assert(
      fc.asyncProperty(geometry, lengths, algorithms, fc.integer({ min: 1, max: 10_000 }), async ({ k, m }, sizes, wanted, seed) => {
        const blocks = sizes.map((size, index) => patternBytes(size, seed + index));
        const body = Buffer.concat(blocks);
        const onThreads = await codeAll(threads, k, m, blockSize, blocks, wanted);
        const onLoop = await codeAll(mainThreadCoding, k, m, blockSize, blocks, wanted);
        const same = (actual: Buffer[] | undefined, expected: Buffer[]): boolean => actual?.length === expected.length && actual.every((frame, index) => frame.equals(expected[index]!));
        blocks.forEach((block, index) => {
          const expected = referenceFrames(block, k, m);
          expect(same(onThreads.frames[index], expected), `thread frames of block ${index}`).toBe(true);
          expect(same(onLoop.frames[index], expected), `event-loop frames of block ${index}`).toBe(true);
        });
        expect(onThreads.digests).toEqual(onLoop.digests);
        expect(onThreads.digests.md5).toBe(createHash('md5').update(body).digest('hex'));
        if (wanted.includes('sha256')) expect(onThreads.digests.sha256).toBe(createHash('sha256').update(body).digest('hex'));
        if (wanted.includes('crc32')) expect(onThreads.digests.crc32).toBe((crc32(body) >>> 0).toString(16).padStart(8, '0'));
        expect(Object.keys(onThreads.digests).sort()).toEqual(['md5', ...wanted].sort());
      }),
      { numRuns: 40 },
    );
  });

  it('property: objects put through coding threads read back byte-identical, and a put below write quorum leaves nothing', async () => {
    const geometry = fc.integer({ min: 2, max: 8 }).chain((drives) => fc.record({ drives: fc.constant(drives), parity: fc.integer({ min: 0, max: Math.floor(drives / 2) }) }));
    await fc.assert(
      fc.asyncProperty(geometry, fc.constantFrom(300 * KiB, MiB, 3 * MiB + 17), fc.integer({ min: 0, max: 8 }), fc.integer({ min: 1, max: 1000 }), async ({ drives, parity }, sizeBytes, failingWanted, seed) => {
        const test = await makeTestSet({ drives, parity, coding: threads });
        try {
          const failing = Math.min(failingWanted, drives);
          for (let slot = 0; slot < failing; slot += 1) test.faulty[slot]!.setFaults({ operations: { '*': { error: 'EIO' } } });
          const bytes = patternBytes(sizeBytes, seed);
          const put = test.set.putObject('bucket', 'key', chunked(bytes), { storageClass: 'STANDARD', versioning: 'unversioned', sizeBytes });
          if (drives - failing >= writeQuorum(drives - parity, parity)) {
            await put;
            for (let slot = 0; slot < failing; slot += 1) test.faulty[slot]!.clearFaults();
            expect(Buffer.from(await collect((await test.set.getObject('bucket', 'key')).body)).equals(Buffer.from(bytes))).toBe(true);
          } else {
            expect(await put.then(() => 'stored', (error: unknown) => (isSvcError(error) ? error.code : String(error)))).toBe('ErasureWriteQuorum');
            for (let slot = 0; slot < failing; slot += 1) test.faulty[slot]!.clearFaults();
            expect(await filesOn(test.inner, 'bucket')).toEqual([]);
          }
        } finally {
          await test.cleanup();
        }
      }),
      { numRuns: 25 },
    );
  });

  it('a coding thread that stops mid-upload fails that upload with nothing left behind; the next upload gets a new thread', async () => {
    const coding = new WorkerCoding(1);
    const test = await makeTestSet({ drives: 4, parity: 2, coding });
    try {
      const bytes = patternBytes(4 * MiB, 7);
      async function* stopsHalfway(): AsyncGenerator<Uint8Array> {
        yield bytes.subarray(0, 2 * MiB);
        await coding.close();
        yield bytes.subarray(2 * MiB);
      }
      const failed = await test.set.putObject('bucket', 'key', stopsHalfway(), { storageClass: 'STANDARD', versioning: 'unversioned', sizeBytes: bytes.length }).then(
        () => 'stored',
        (error: unknown) => (isSvcError(error) ? error.code : String(error)),
      );
      expect(failed).toBe('InternalError');
      expect(await filesOn(test.inner, 'bucket')).toEqual([]);
      for (const drive of test.inner) expect(await drive.listDir(tmpDir).catch(() => [])).toEqual([]);
      await test.set.putObject('bucket', 'key', chunked(bytes), { storageClass: 'STANDARD', versioning: 'unversioned', sizeBytes: bytes.length });
      expect(Buffer.from(await collect((await test.set.getObject('bucket', 'key')).body)).equals(Buffer.from(bytes))).toBe(true);
    } finally {
      await coding.close();
      await test.cleanup();
    }
  });

  it('coding threads start in a server run with V8 options (node --max-old-space-size=...), which threads do not take', async () => {
    const module = new URL('../src/object/index.ts', import.meta.url).href;
    const script = `
      import { WorkerCoding } from ${JSON.stringify(module)};
      const coding = new WorkerCoding(1);
      const session = coding.open(2, 2, ['md5']);
      const buffers = coding.acquireBuffers(1024, 2, 4);
      buffers.block.fill(7, 0, 1024);
      await session.code(buffers, 1024);
      console.log((await session.finish()).md5);
      await coding.close();`;
    const dir = await mkdtemp(join(tmpdir(), 'svc-coding-options-'));
    try {
      await writeFile(join(dir, 'code.mjs'), script);
      const { stdout } = await execFileAsync(process.execPath, ['--max-old-space-size=512', '--import', 'tsx', join(dir, 'code.mjs')], { timeout: 60_000 });
      expect(stdout.trim()).toBe(createHash('md5').update(Buffer.alloc(1024, 7)).digest('hex'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a thread count that is not a whole number of at least 1', () => {
    for (const count of [0, -1, 1.5, Number.NaN]) expect(() => new WorkerCoding(count)).toThrow(/coding threads/);
  });
});
