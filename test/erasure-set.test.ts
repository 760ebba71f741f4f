import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { collect, chunked, filesOn, makeTestSet, patternBytes, type TestSet } from './helpers/erasure-set.js';
import { isSvcError } from '../src/errors/index.js';
import { readQuorum, writeQuorum } from '../src/erasure/geometry.js';
import { tmpDir } from '../src/drive/index.js';
import { MiB, KiB } from '../src/util/limits.js';
import { readBuffers } from '../src/object/read-buffers.js';
import { LocalNamespaceLocker } from '../src/object/index.js';

const block = MiB;
let current: TestSet | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  let thrown: unknown;
  try {
    await promise;
  } catch (error) {
    thrown = error;
  }
  expect(isSvcError(thrown) ? thrown.code : String(thrown)).toBe(code);
}

async function tmpEntries(test: TestSet): Promise<number> {
  let count = 0;
  for (const drive of test.inner) count += (await drive.listDir(tmpDir).catch(() => [])).length;
  return count;
}

/** Geometries the spec allows: N in 1..16, M in 0..N/2. */
const geometry = fc
  .integer({ min: 1, max: 16 })
  .chain((drives) => fc.record({ drives: fc.constant(drives), parity: fc.integer({ min: 0, max: Math.floor(drives / 2) }) }));
const sizes = fc.constantFrom(0, 1, 4 * KiB + 3, block - 1, block, block + 1, 2 * block + 12_345);

describe('erasure set: any K of N shards rebuild the object', () => {
  it('reads back byte-identical with up to M drives offline, and fails closed with fewer than K', async () => {
    await fc.assert(
      fc.asyncProperty(geometry, sizes, fc.integer({ min: 0, max: 2 ** 31 - 1 }), async ({ drives, parity }, sizeBytes, seed) => {
        const test = (current = await makeTestSet({ drives, parity }));
        try {
          const bytes = patternBytes(sizeBytes, seed);
          await test.set.putObject('bucket', 'object', chunked(bytes), { storageClass: 'STANDARD', versioning: 'unversioned', sizeBytes });
          const k = drives - parity;
          const offline = shuffle(drives, seed).slice(0, parity);
          for (const slot of offline) test.faulty[slot]!.setFaults({ offline: true });
          const reader = await test.set.getObject('bucket', 'object');
          expect(Buffer.from(await collect(reader.body)).equals(Buffer.from(bytes))).toBe(true);
          // One more drive offline leaves K - 1 shards: the read must fail closed.
          const extra = shuffle(drives, seed + 1).find((slot) => !offline.includes(slot))!;
          test.faulty[extra]!.setFaults({ offline: true });
          expect(drives - offline.length - 1).toBe(k - 1);
          await expectCode(test.set.getObject('bucket', 'object').then((r) => collect(r.body)), 'ErasureReadQuorum');
        } finally {
          await test.cleanup();
          current = undefined;
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe('erasure set: write quorum', () => {
  it('a put with f failing drives succeeds iff N - f >= write quorum, and a failed put leaves nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        geometry,
        fc.constantFrom(0, 100, 300 * KiB, block + 7),
        fc.integer({ min: 0, max: 16 }),
        fc.constantFrom('offline', 'EIO', 'ENOSPC'),
        fc.integer({ min: 1, max: 1000 }),
        async ({ drives, parity }, sizeBytes, failingWanted, fault, seed) => {
          const failing = Math.min(failingWanted, drives);
          const test = (current = await makeTestSet({ drives, parity }));
          try {
            const slots = shuffle(drives, seed).slice(0, failing);
            for (const slot of slots) {
              test.faulty[slot]!.setFaults(fault === 'offline' ? { offline: true } : { operations: { '*': { error: fault as 'EIO' | 'ENOSPC' } } });
            }
            const k = drives - parity;
            const bytes = patternBytes(sizeBytes, seed);
            const put = test.set.putObject('bucket', 'key', chunked(bytes), { storageClass: 'STANDARD', versioning: 'unversioned', sizeBytes });
            if (drives - failing >= writeQuorum(k, parity)) {
              await put;
              for (const slot of slots) test.faulty[slot]!.clearFaults();
              const reader = await test.set.getObject('bucket', 'key');
              expect(Buffer.from(await collect(reader.body)).equals(Buffer.from(bytes))).toBe(true);
            } else {
              await expectCode(put, 'ErasureWriteQuorum');
              for (const slot of slots) test.faulty[slot]!.clearFaults();
              expect(await filesOn(test.inner, 'bucket')).toEqual([]);
              expect(await tmpEntries(test)).toBe(0);
              await expectCode(test.set.headObject('bucket', 'key'), 'NoSuchKey');
            }
          } finally {
            await test.cleanup();
            current = undefined;
          }
        },
      ),
      { numRuns: 80 },
    );
  });

  it('a failed overwrite leaves the previous version readable', async () => {
    const test = (current = await makeTestSet({ drives: 4, parity: 2 }));
    const first = patternBytes(2 * block, 1);
    await test.set.putObject('bucket', 'key', chunked(first), { storageClass: 'STANDARD', versioning: 'unversioned' });
    for (const slot of [0, 1]) test.faulty[slot]!.setFaults({ operations: { writeFileAtomic: { error: 'EIO' } } });
    await expectCode(
      test.set.putObject('bucket', 'key', chunked(patternBytes(2 * block, 2)), { storageClass: 'STANDARD', versioning: 'unversioned' }),
      'ErasureWriteQuorum',
    );
    for (const slot of [0, 1]) test.faulty[slot]!.clearFaults();
    const reader = await test.set.getObject('bucket', 'key');
    expect(Buffer.from(await collect(reader.body)).equals(Buffer.from(first))).toBe(true);
  });
});

describe('erasure set: bitrot', () => {
  it('detects up to M corrupted shards, returns correct bytes and asks for repair', async () => {
    await fc.assert(
      fc.asyncProperty(geometry.filter((g) => g.parity > 0), sizes.filter((s) => s > 0), fc.integer({ min: 1, max: 1000 }), async ({ drives, parity }, sizeBytes, seed) => {
        const test = (current = await makeTestSet({ drives, parity }));
        try {
          const bytes = patternBytes(sizeBytes, seed);
          await test.set.putObject('bucket', 'obj', chunked(bytes), { storageClass: 'STANDARD', versioning: 'unversioned' });
          const corrupt = shuffle(drives, seed).slice(0, parity);
          for (const slot of corrupt) test.faulty[slot]!.setFaults({ operations: { readRange: { corruptReads: { bitFlips: 3 } }, readFile: { corruptReads: { bitFlips: 0 } } } });
          const reader = await test.set.getObject('bucket', 'obj');
          expect(Buffer.from(await collect(reader.body)).equals(Buffer.from(bytes))).toBe(true);
        } finally {
          await test.cleanup();
          current = undefined;
        }
      }),
      { numRuns: 40 },
    );
  });
});

describe('erasure set: inline data', () => {
  it('keeps an object inline exactly when its per-shard size is within the budget', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 16 }).chain((drives) => fc.record({ drives: fc.constant(drives), parity: fc.integer({ min: 0, max: Math.floor(drives / 2) }) })),
        fc.boolean(),
        fc.option(fc.constantFrom(16 * KiB, 64 * KiB, 200 * KiB), { nil: undefined }),
        fc.integer({ min: 0, max: 300 * KiB }),
        async ({ drives, parity }, versioned, override, sizeBytes) => {
          const test = (current = await makeTestSet({ drives, parity, ...(override ? { inlineBlockOverrideBytes: override } : {}) }));
          try {
            const k = drives - parity;
            const info = await test.set.putObject('bucket', 'o', chunked(patternBytes(sizeBytes, 3)), {
              storageClass: 'STANDARD',
              versioning: versioned ? 'enabled' : 'unversioned',
            });
            const budget = Math.floor((override ?? Math.min(Math.floor((256 * KiB) / k), 128 * KiB)) / (versioned ? 8 : 1));
            expect(info.inline).toBe(Math.ceil(sizeBytes / k) <= budget);
            const dataFiles = (await filesOn(test.inner, 'bucket')).filter((path) => path.includes('/part.'));
            expect(dataFiles.length === 0).toBe(info.inline);
          } finally {
            await test.cleanup();
            current = undefined;
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('erasure set: range reads', () => {
  it('a range read of a 100 MiB object reads only the blocks the range touches, each shard file opened once', async () => {
    const reads: { path: string; offset: number; length: number }[] = [];
    let opened = 0;
    const test = (current = await makeTestSet({
      drives: 4,
      parity: 2,
      wrap: (drive) => ({
        ...bind(drive),
        readRange: (path: string, offset: number, length: number) => {
          reads.push({ path: `${drive.endpoint}:${path}`, offset, length });
          return drive.readRange(path, offset, length);
        },
        openReader: async (path: string) => {
          opened += 1;
          const reader = await drive.openReader(path);
          return {
            read: (offset: number, length: number, into?: Uint8Array) => {
              reads.push({ path: `${drive.endpoint}:${path}`, offset, length });
              return reader.read(offset, length, into);
            },
            close: () => reader.close(),
          };
        },
      }),
    }));
    const sizeBytes = 100 * MiB;
    const bytes = patternBytes(sizeBytes, 9);
    await test.set.putObject('bucket', 'big', chunked(bytes, MiB), { storageClass: 'STANDARD', versioning: 'unversioned' });
    reads.length = 0;
    const offset = 37 * MiB + 1000;
    const length = 6 * MiB; // touches blocks 37 to 43
    const reader = await test.set.getObject('bucket', 'big', { range: { offset, length } });
    const got = await collect(reader.body);
    expect(Buffer.from(got).equals(Buffer.from(bytes.subarray(offset, offset + length)))).toBe(true);
    // K = 2 data shard files, no parity needed, each opened once.
    expect(opened).toBe(2);
    expect(new Set(reads.map((read) => read.path)).size).toBe(2);
    const chunkBytes = 8 + MiB / 2;
    for (const path of new Set(reads.map((read) => read.path))) {
      const ofFile = reads.filter((read) => read.path === path).sort((a, b) => a.offset - b.offset);
      // Blocks 37..43 and nothing else, in runs: the first block alone, then runs of 4.
      expect(ofFile.map((read) => [read.offset / chunkBytes, read.length / chunkBytes])).toEqual([[37, 1], [38, 4], [42, 2]]);
    }
  });
});

describe('erasure set: reads in runs of blocks', () => {
  const objectBytes = 9 * MiB + 4321; // a first block, two runs of four, a short last block

  it('property: any range reads back exact with up to M slots offline or corrupt, and every read buffer goes back', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 8 }).chain((drives) => fc.record({ drives: fc.constant(drives), parity: fc.integer({ min: 1, max: Math.floor(drives / 2) }) })),
        fc.integer({ min: 0, max: objectBytes - 1 }),
        fc.integer({ min: 1, max: objectBytes }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        async ({ drives, parity }, offset, wanted, seed) => {
          const test = (current = await makeTestSet({ drives, parity }));
          try {
            const bytes = patternBytes(objectBytes, seed);
            await test.set.putObject('bucket', 'runs', chunked(bytes, 3 * MiB + 17), { storageClass: 'STANDARD', versioning: 'unversioned' });
            const failing = shuffle(drives, seed).slice(0, seed % (parity + 1));
            failing.forEach((slot, position) =>
              test.faulty[slot]!.setFaults(position % 2 === 0 ? { offline: true } : { operations: { readRange: { corruptReads: { bitFlips: 1 } } } }),
            );
            const length = Math.min(wanted, objectBytes - offset);
            const before = readBuffers.outstanding;
            const reader = await test.set.getObject('bucket', 'runs', { range: { offset, length } });
            const chunks: Uint8Array[] = [];
            for await (const chunk of reader.body) {
              chunks.push(Buffer.from(chunk)); // copied: a released chunk's memory serves later reads
              reader.release(chunk);
            }
            expect(Buffer.concat(chunks).equals(Buffer.from(bytes.subarray(offset, offset + length)))).toBe(true);
            expect(readBuffers.outstanding).toBe(before);
          } finally {
            await test.cleanup();
            current = undefined;
          }
        },
      ),
      { numRuns: 25 },
    );
  });

  it('a reader stopped after its first chunk gives every buffer back, the run being read ahead included', async () => {
    const test = (current = await makeTestSet({ drives: 4, parity: 2 }));
    await test.set.putObject('bucket', 'runs', chunked(patternBytes(objectBytes, 5), MiB), { storageClass: 'STANDARD', versioning: 'unversioned' });
    const before = readBuffers.outstanding;
    const reader = await test.set.getObject('bucket', 'runs');
    for await (const chunk of reader.body) {
      reader.release(chunk);
      break; // the generator is closed with the next run still being read
    }
    expect(readBuffers.outstanding).toBe(before);
  });
});

describe('erasure set: versions and deletes', () => {
  it('delete markers and version deletes need a majority, not read quorum', async () => {
    const test = (current = await makeTestSet({ drives: 4, parity: 2 }));
    await test.set.putObject('bucket', 'k', chunked(patternBytes(10, 1)), { storageClass: 'STANDARD', versioning: 'enabled' });
    test.faulty[0]!.setFaults({ offline: true });
    test.faulty[1]!.setFaults({ offline: true });
    await expectCode(test.set.deleteObject('bucket', 'k', { versioning: 'enabled' }), 'ErasureWriteQuorum');
    test.faulty[1]!.clearFaults();
    const marker = await test.set.deleteObject('bucket', 'k', { versioning: 'enabled' });
    expect(marker.deleteMarker).toBe(true);
    await expectCode(test.set.headObject('bucket', 'k'), 'NoSuchKey');
  });

  it('keeps every version on a versioned bucket and removes one by id', async () => {
    const test = (current = await makeTestSet({ drives: 6, parity: 3 }));
    const one = await test.set.putObject('bucket', 'k', chunked(patternBytes(2 * block, 1)), { storageClass: 'STANDARD', versioning: 'enabled' });
    const two = await test.set.putObject('bucket', 'k', chunked(patternBytes(100, 2)), { storageClass: 'STANDARD', versioning: 'enabled' });
    expect(one.versionId).not.toBe(two.versionId);
    const first = await test.set.getObject('bucket', 'k', { versionId: one.versionId });
    expect(Buffer.from(await collect(first.body)).equals(Buffer.from(patternBytes(2 * block, 1)))).toBe(true);
    expect(first.info.isLatest).toBe(false);
    await test.set.deleteObject('bucket', 'k', { versioning: 'enabled', versionId: one.versionId });
    await expectCode(test.set.headObject('bucket', 'k', one.versionId), 'NoSuchVersion');
    expect((await test.set.headObject('bucket', 'k')).versionId).toBe(two.versionId);
    expect((await filesOn(test.inner, 'bucket')).filter((path) => path.includes('/part.'))).toEqual([]);
  });
});

describe('erasure set: ordering within one millisecond', () => {
  it('a version written later is newer even when the clock has not moved', async () => {
    const test = (current = await makeTestSet({ drives: 4, parity: 2, nowMs: () => 1_700_000_000_000 }));
    const ids: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      ids.push((await test.set.putObject('bucket', 'k', chunked(patternBytes(10, index)), { storageClass: 'STANDARD', versioning: 'enabled' })).versionId);
    }
    const marker = await test.set.deleteObject('bucket', 'k', { versioning: 'enabled' });
    const listed: string[] = [];
    for await (const entry of test.set.list('bucket', { prefix: '' })) if (entry.kind === 'object') listed.push(...entry.versions.map((version) => version.versionId));
    expect(listed).toEqual([marker.versionId, ...ids.reverse()]);
  });
});

describe('erasure set: listing', () => {
  it('lists keys in UTF-8 byte order with directory objects and common prefixes', async () => {
    const test = (current = await makeTestSet({ drives: 4, parity: 1 }));
    const keys = ['a', 'a-b', 'a/b', 'a/c/d', 'a.b', 'ab', 'dir/', 'dir/x', 'z', '\u00e9', 'b/\u{1f600}'];
    for (const key of keys) await test.set.putObject('bucket', key, chunked(patternBytes(5, 1)), { storageClass: 'STANDARD', versioning: 'unversioned' });
    const listed: string[] = [];
    for await (const entry of test.set.list('bucket', { prefix: '' })) listed.push(entry.key);
    const expected = [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect(listed).toEqual(expected);
    const top: string[] = [];
    for await (const entry of test.set.list('bucket', { prefix: '', delimiter: '/' })) top.push(`${entry.kind}:${entry.key}`);
    expect(top).toEqual(['object:a', 'object:a-b', 'object:a.b', 'prefix:a/', 'object:ab', 'prefix:b/', 'prefix:dir/', 'object:z', 'object:\u00e9']);
  });
});

function shuffle(count: number, seed: number): number[] {
  const slots = Array.from({ length: count }, (_, index) => index);
  let state = seed >>> 0 || 1;
  for (let index = slots.length - 1; index > 0; index -= 1) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    const other = state % (index + 1);
    [slots[index], slots[other]] = [slots[other]!, slots[index]!];
  }
  return slots;
}

function bind<T extends object>(target: T): T {
  const bound = {} as Record<string, unknown>;
  let proto: object | null = target;
  while (proto && proto !== Object.prototype) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const value = (target as Record<string, unknown>)[name];
      if (typeof value === 'function' && !(name in bound) && name !== 'constructor') bound[name] = (value as (...args: unknown[]) => unknown).bind(target);
      else if (!(name in bound) && typeof value !== 'function') bound[name] = value;
    }
    proto = Object.getPrototypeOf(proto) as object | null;
  }
  return bound as T;
}

describe('erasure set on fs drives', () => {
  it('property subset: reads back with M drives offline, fails closed below K, and a failed put leaves nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 8 }).chain((drives) => fc.record({ drives: fc.constant(drives), parity: fc.integer({ min: 1, max: Math.floor(drives / 2) }) })),
        fc.constantFrom(1, 70_000, block + 1),
        fc.integer({ min: 1, max: 1000 }),
        async ({ drives, parity }, sizeBytes, seed) => {
          const test = (current = await makeTestSet({ drives, parity, backend: 'fs' }));
          try {
            const bytes = patternBytes(sizeBytes, seed);
            await test.set.putObject('bucket', 'a/b', chunked(bytes), { storageClass: 'STANDARD', versioning: 'unversioned' });
            const offline = shuffle(drives, seed).slice(0, parity + 1);
            for (const slot of offline.slice(0, parity)) test.faulty[slot]!.setFaults({ offline: true });
            const reader = await test.set.getObject('bucket', 'a/b');
            expect(Buffer.from(await collect(reader.body)).equals(Buffer.from(bytes))).toBe(true);
            test.faulty[offline[parity]!]!.setFaults({ offline: true });
            await expectCode(test.set.headObject('bucket', 'a/b'), 'ErasureReadQuorum');
            await expectCode(test.set.putObject('bucket', 'c', chunked(bytes), { storageClass: 'STANDARD', versioning: 'unversioned' }), 'ErasureWriteQuorum');
            for (const slot of offline) test.faulty[slot]!.clearFaults();
            expect((await filesOn(test.inner, 'bucket/c')).length).toBe(0);
            expect(await tmpEntries(test)).toBe(0);
          } finally {
            await test.cleanup();
            current = undefined;
          }
        },
      ),
      { numRuns: 12 },
    );
  });
});

describe('erasure set: GETs and the read lock', () => {
  /** Whether `promise` settles within `ms`. */
  const settlesWithin = (promise: Promise<unknown>, ms: number) => Promise.race([promise.then(() => true, () => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);

  it('reads an inline object every drive agrees on without the lock, and waits for it where shard files are read or drives disagree', async () => {
    const locker = new LocalNamespaceLocker();
    const test = (current = await makeTestSet({ drives: 6, parity: 2, locker }));
    const small = patternBytes(4 * KiB, 5);
    const large = patternBytes(2 * block + 7, 6);
    await test.set.putObject('bucket', 'small', chunked(small), { storageClass: 'STANDARD', versioning: 'unversioned' });
    await test.set.putObject('bucket', 'large', chunked(large), { storageClass: 'STANDARD', versioning: 'unversioned' });

    // A writer holds both keys: an inline GET is answered meanwhile, a GET of shard files waits.
    const releaseSmall = await locker.acquire('bucket/small', 'write');
    const releaseLarge = await locker.acquire('bucket/large', 'write');
    const inline = test.set.getObject('bucket', 'small').then(async (reader) => Buffer.from(await collect(reader.body)));
    expect(await settlesWithin(inline, 2_000)).toBe(true);
    expect((await inline).equals(Buffer.from(small))).toBe(true);
    const streamed = test.set.getObject('bucket', 'large').then(async (reader) => Buffer.from(await collect(reader.body)));
    expect(await settlesWithin(streamed, 300)).toBe(false);
    releaseLarge();
    expect((await streamed).equals(Buffer.from(large))).toBe(true);

    // One drive offline (an answer that is not the agreed version): the GET takes the lock.
    test.faulty[0]!.setFaults({ offline: true });
    const degraded = test.set.getObject('bucket', 'small').then(async (reader) => Buffer.from(await collect(reader.body)));
    expect(await settlesWithin(degraded, 300)).toBe(false);
    releaseSmall();
    expect((await degraded).equals(Buffer.from(small))).toBe(true);
  });
});
