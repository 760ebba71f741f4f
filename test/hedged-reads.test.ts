/**
 * Hedged shard reads (src/object/shard-hedge.ts): a GET asks K shards, asks parity too when one
 * is late, and decodes from the first K that verify. The gathering on its own, then erasure sets
 * on in-memory drives, some slow, hung (never answering a shard read until the plan changes) or
 * failing: the bytes come back whole, or the read fails closed when fewer than K shards can be
 * read; a hung drive costs a read the hedge delay once, then is asked last.
 */
import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { collect, chunked, makeTestSet, patternBytes, type TestSet } from './helpers/erasure-set.js';
import type { ObjectReader } from '../src/object/index.js';
import { waitFor } from './helpers/poll.js';
import { isSvcError } from '../src/errors/index.js';
import { gatherFirst, shardReadStatsOf } from '../src/object/shard-hedge.js';
import { readBuffers } from '../src/object/read-buffers.js';
import { objectDir } from '../src/object/paths.js';
import { decodeXlMeta } from '../src/format/xl-meta.js';
import type { FaultOptions, OperationFault } from '../fault-injection/faulty-drive.js';
import { KiB } from '../src/util/limits.js';

let current: TestSet | undefined;
afterEach(async () => {
  for (const drive of current?.faulty ?? []) drive.clearFaults();
  await current?.cleanup();
  current = undefined;
});

/** A read that answers when told to. */
function deferred<T>(): { promise: Promise<T>; answer(value: T): void } {
  let answer!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (answer = resolve));
  return { promise, answer };
}

describe('gathering the first K answers', () => {
  it('asks one more candidate for a late read, takes the first K, and hands a late answer back', async () => {
    const reads = new Map([1, 2, 3, 4].map((candidate) => [candidate, deferred<string | undefined>()]));
    const asked: number[] = [];
    const unused: string[] = [];
    const late: number[][] = [];
    const gathering = gatherFirst<string>({
      candidates: [1, 2, 3, 4],
      needed: 2,
      delayMs: 5,
      read: (candidate) => {
        asked.push(candidate);
        return reads.get(candidate)!.promise;
      },
      onUnused: (answer) => unused.push(answer),
      onLate: (candidates) => late.push(candidates),
    });
    reads.get(2)!.answer('two');
    reads.get(3)!.answer('three'); // answers as soon as it is asked
    const gathered = await gathering;
    expect(late).toEqual([[1]]);
    expect([...gathered.answers.entries()]).toEqual([[2, 'two'], [3, 'three']]);
    expect(gathered.hedged).toBe(1);
    expect(asked).toEqual([1, 2, 3]);
    reads.get(1)!.answer('one, late');
    await waitFor('the late answer handed back', () => unused.length === 1);
    expect(unused).toEqual(['one, late']);
  });

  it('replaces a failed read at once and ends with fewer than K when every candidate failed', async () => {
    const gathered = await gatherFirst<string>({
      candidates: [1, 2, 3],
      needed: 2,
      delayMs: Infinity,
      read: async (candidate) => (candidate === 2 ? 'two' : candidate === 1 ? undefined : Promise.reject(new Error('drive gone'))),
      onUnused: () => undefined,
      onLate: () => undefined,
    });
    expect([...gathered.answers.keys()]).toEqual([2]);
    expect(gathered.failed.sort()).toEqual([1, 3]);
    expect(gathered.hedged).toBe(0);
  });
});

type DriveState = 'healthy' | 'slow' | 'hung' | 'offline' | 'eio' | 'corrupt';
const failing: DriveState[] = ['offline', 'eio', 'corrupt'];

function planOf(state: DriveState, slowMs: number): FaultOptions {
  const shardReads = (fault: OperationFault): FaultOptions => ({ operations: { readRange: fault } });
  switch (state) {
    case 'healthy': return {};
    case 'slow': return shardReads({ latencyMs: slowMs });
    case 'hung': return shardReads({ hang: true });
    case 'offline': return { offline: true };
    case 'eio': return shardReads({ error: 'EIO' });
    case 'corrupt': return shardReads({ corruptReads: { bitFlips: 1 } });
  }
}

/** A reader's bytes, copied, each chunk given back as it is taken (so every read buffer can come back). */
async function readAll(reader: ObjectReader): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of reader.body) {
    chunks.push(Buffer.from(chunk));
    reader.release(chunk);
  }
  return new Uint8Array(Buffer.concat(chunks));
}

/** Shard index (1-based; data shards are 1..K) of each slot's copy of the object. */
async function shardIndexes(test: TestSet, bucket: string, key: string): Promise<number[]> {
  return Promise.all(test.inner.map(async (drive) => decodeXlMeta(await drive.readFile(`${objectDir(bucket, key)}/xl.meta`)).versions[0]!.erasure!.index));
}

const blockSizeBytes = 64 * KiB;

describe('erasure set: hedged reads over slow, hung and failing drives', () => {
  it('property: the bytes come back whole, or the read fails closed with fewer than K readable shards', async () => {
    const scenario = fc
      .record({ drives: fc.integer({ min: 2, max: 8 }), parityFraction: fc.double({ min: 0, max: 0.5, noNaN: true }) })
      .chain(({ drives, parityFraction }) =>
        fc.record({
          drives: fc.constant(drives),
          parity: fc.constant(Math.floor(drives * parityFraction)),
          sizeBytes: fc.constantFrom(1, 1000, blockSizeBytes - 1, blockSizeBytes + 1, 3 * blockSizeBytes + 12_345),
          states: fc.array(fc.constantFrom<DriveState>('healthy', 'healthy', 'slow', 'hung', 'offline', 'eio', 'corrupt'), { minLength: drives, maxLength: drives }),
          slowMs: fc.integer({ min: 1, max: 40 }),
          rangeStart: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
          rangeShare: fc.double({ min: 0, max: 1, noNaN: true }),
          seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        }),
      );
    const seed = Number(process.env.SVC_PROPERTY_SEED ?? Date.now() % 2 ** 31);
    console.log(`hedged-read property seed ${seed} (SVC_PROPERTY_SEED=${seed} replays it)`);
    let hedgedRuns = 0;
    let failedRuns = 0;
    // Both sides drawn whatever the seed: a hung drive in each slot in turn (one of them holds a data
    // shard), and too few readable drives.
    type Drawn = { drives: number; parity: number; sizeBytes: number; states: DriveState[]; slowMs: number; rangeStart: number; rangeShare: number; seed: number };
    const examples: [Drawn][] = [
      ...[0, 1, 2, 3].map((hung): [Drawn] => [{ drives: 4, parity: 2, sizeBytes: 3 * blockSizeBytes + 12_345, states: [0, 1, 2, 3].map((slot): DriveState => (slot === hung ? 'hung' : 'healthy')), slowMs: 5, rangeStart: 0, rangeShare: 1, seed: 7 }]),
      [{ drives: 4, parity: 1, sizeBytes: 1000, states: ['offline', 'eio', 'healthy', 'healthy'], slowMs: 5, rangeStart: 0, rangeShare: 1, seed: 7 }],
    ];
    try {
      await fc.assert(
        fc.asyncProperty(scenario, async ({ drives, parity, sizeBytes, states, slowMs, rangeStart, rangeShare, seed: bytesSeed }) => {
          const k = drives - parity;
          const readable = states.filter((state) => !failing.includes(state)).length;
          // A hung drive is never waited out: where the others alone fall short of K, it only slows.
          const fixed = [...states];
          for (let slot = 0; slot < drives && readable >= k && fixed.filter((state) => state !== 'hung' && !failing.includes(state)).length < k; slot += 1) {
            if (fixed[slot] === 'hung') fixed[slot] = 'slow';
          }
          const test = (current = await makeTestSet({ drives, parity, blockSizeBytes, inlineBlockOverrideBytes: 0 }));
          const bytes = patternBytes(sizeBytes, bytesSeed);
          await test.set.putObject('bucket', 'object', chunked(bytes), { storageClass: 'STANDARD', versioning: 'unversioned', sizeBytes });
          const indexes = await shardIndexes(test, 'bucket', 'object');
          const offset = Math.floor(rangeStart * sizeBytes);
          const length = Math.max(1, Math.floor(rangeShare * (sizeBytes - offset)));
          const buffersBefore = readBuffers.outstanding;
          fixed.forEach((state, slot) => test.faulty[slot]!.setFaults(planOf(state, slowMs)));
          let read: Uint8Array | undefined;
          let error: unknown;
          try {
            read = await readAll(await test.set.getObject('bucket', 'object', { range: { offset, length } }));
          } catch (thrown) {
            error = thrown;
          }
          const context = `${drives} drives EC:${parity}, ${sizeBytes} bytes [${offset}, +${length}), drives ${fixed.join(',')}`;
          if (readable < k) {
            expect(isSvcError(error, 'ErasureReadQuorum'), `${context}: ${String(error)}`).toBe(true);
            failedRuns += 1;
          } else {
            expect(error, context).toBeUndefined();
            expect(Buffer.from(read!).equals(Buffer.from(bytes.subarray(offset, offset + length))), context).toBe(true);
            // A hung drive holding a data shard was asked first: only a hedge got the read past it.
            const hungData = fixed.some((state, slot) => state === 'hung' && indexes[slot]! <= k);
            if (hungData) {
              expect(shardReadStatsOf(test.set.config).hedgedReads, context).toBeGreaterThan(0);
              hedgedRuns += 1;
            }
          }
          // Released, the hung reads end; every buffer comes back (a failed read's is dropped, not leaked).
          for (const drive of test.faulty) drive.clearFaults();
          await waitFor('every read buffer back', () => readBuffers.outstanding === buffersBefore);
          await test.cleanup();
          current = undefined;
        }),
        {
          seed,
          numRuns: 80,
          examples,
        },
      );
    } catch (error) {
      throw new Error(`hedged-read property failed with seed ${seed}: ${(error as Error).message}`);
    }
    // The property means something only if both sides were drawn.
    expect(hedgedRuns).toBeGreaterThan(0);
    expect(failedRuns).toBeGreaterThan(0);
  }, 120_000);

  it('a drive hung on shard reads costs one hedge, then is asked last', async () => {
    const test = (current = await makeTestSet({ drives: 4, parity: 2, blockSizeBytes, inlineBlockOverrideBytes: 0 }));
    const bytes = patternBytes(5 * blockSizeBytes + 7, 7);
    await test.set.putObject('bucket', 'object', chunked(bytes), { storageClass: 'STANDARD', versioning: 'unversioned', sizeBytes: bytes.length });
    const slot = (await shardIndexes(test, 'bucket', 'object')).indexOf(1);
    test.faulty[slot]!.setFaults({ operations: { readRange: { hang: true } } });
    const stats = shardReadStatsOf(test.set.config);
    const readWhole = async (): Promise<void> => {
      expect(Buffer.from(await collect((await test.set.getObject('bucket', 'object')).body)).equals(Buffer.from(bytes))).toBe(true);
    };
    await readWhole();
    const hedged = stats.hedgedReads;
    expect(hedged).toBeGreaterThan(0);
    for (let round = 0; round < 3; round += 1) await readWhole();
    expect(stats.hedgedReads).toBe(hedged);
    expect(test.repairs).toEqual([]);
  });
});
