/**
 * A clean read of an inline object in a set spread over nodes asks a write quorum of drives
 * (this node's own, then whole peers) and reads the rest only when they do not all agree. The
 * property: whatever the drives hold (any mix of an older version, a newer one, no xl.meta,
 * a corrupt inline shard, a drive offline), a GET answers exactly what it answers when every drive
 * is asked: the same bytes, or the same error.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeXlMeta, encodeXlMeta } from '../src/format/xl-meta.js';
import { distributionFor } from '../src/erasure/layout.js';
import { writeQuorum } from '../src/erasure/geometry.js';
import { objectDir, xlMetaPathIn } from '../src/object/paths.js';
import { isSvcError } from '../src/errors/index.js';
import type { Drive } from '../src/drive/index.js';
import { chunked, collect, makeTestSet, patternBytes, type TestSet } from './helpers/erasure-set.js';

/** The drive, served by `peer` (or by this node when undefined), counting its xl.meta reads. */
function onPeer(drive: Drive, peer: string | undefined, reads: number[], slot: number): Drive {
  return new Proxy(drive, {
    get(target, property) {
      if (property === 'peer') return peer;
      const value = Reflect.get(target, property) as unknown;
      if (property === 'readFile') {
        return (path: string) => {
          if (path.endsWith('xl.meta')) reads[slot] = (reads[slot] ?? 0) + 1;
          return target.readFile(path);
        };
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

interface Spread {
  test: TestSet;
  /** xl.meta reads per slot since the last reset. */
  reads: number[];
}

/** A set of `drives` at `parity`, its slots in nodes of `perNode` drives; the first node is this one. `perNode` 0: all on this node. */
async function spreadSet(drives: number, parity: number, perNode: number): Promise<Spread> {
  const reads: number[] = [];
  const test = await makeTestSet({
    drives,
    parity,
    wrap: (base, slot) => onPeer(base, perNode === 0 || slot < perNode ? undefined : `node${Math.floor(slot / perNode)}`, reads, slot),
  });
  return { test, reads };
}

const put = (test: TestSet, key: string, bytes: Uint8Array) => test.set.putObject('bucket', key, chunked(bytes, 997), { storageClass: 'STANDARD', versioning: 'unversioned' });

/** A GET's outcome: which version's bytes came back, or the error's code. */
async function outcome(test: TestSet, key: string, versions: Uint8Array[]): Promise<string> {
  try {
    const body = Buffer.from(await collect((await test.set.getObject('bucket', key)).body));
    const index = versions.findIndex((bytes) => body.equals(Buffer.from(bytes)));
    return index >= 0 ? `v${index + 1}` : 'other bytes';
  } catch (error) {
    return isSvcError(error) ? error.code : String(error);
  }
}

type DriveState = 'old' | 'new' | 'missing' | 'corrupt' | 'offline';

/**
 * Writes v1 then v2 of `key`, keeping each drive's xl.meta after each, then leaves every drive as
 * `states` says: a mix no sequence of writes, failures and repairs is excluded from reaching.
 */
async function layDown(test: TestSet, key: string, v1: Uint8Array, v2: Uint8Array, states: DriveState[]): Promise<void> {
  const path = xlMetaPathIn(objectDir('bucket', key));
  await put(test, key, v1);
  const old = await Promise.all(test.inner.map((drive) => drive.readFile(path)));
  await put(test, key, v2);
  const fresh = await Promise.all(test.inner.map((drive) => drive.readFile(path)));
  for (const [slot, state] of states.entries()) {
    const drive = test.inner[slot]!;
    if (state === 'old') await drive.writeFileAtomic(path, old[slot]!);
    if (state === 'missing') await drive.deleteFile(path);
    if (state === 'corrupt') {
      const meta = decodeXlMeta(fresh[slot]!);
      const inline = meta.versions[0]!.inlineData!;
      inline[inline.length - 1] ^= 0x40; // a data byte of the last chunk: its bitrot hash fails
      await drive.writeFileAtomic(path, encodeXlMeta(meta));
    }
    if (state === 'offline') test.faulty[slot]!.setFaults({ offline: true });
  }
}

const geometry = fc
  .integer({ min: 4, max: 16 })
  .chain((drives) => fc.record({ drives: fc.constant(drives), parity: fc.integer({ min: 1, max: Math.floor(drives / 2) }), perNode: fc.integer({ min: 1, max: Math.max(1, Math.floor(drives / 2)) }) }));
const stateOf = fc.constantFrom<DriveState>('old', 'new', 'new', 'new', 'missing', 'corrupt', 'offline');

describe('a clean read asks a write quorum of drives first', () => {
  it('answers what asking every drive answers, whatever the drives hold', async () => {
    await fc.assert(
      fc.asyncProperty(geometry, fc.array(stateOf, { minLength: 16, maxLength: 16 }), fc.integer({ min: 1, max: 6000 }), fc.integer({ min: 1, max: 1_000_000 }), async ({ drives, parity, perNode }, allStates, sizeBytes, seed) => {
        const states = allStates.slice(0, drives);
        const v1 = patternBytes(sizeBytes, seed);
        const v2 = patternBytes(sizeBytes + 1, seed + 1);
        const spread = await spreadSet(drives, parity, perNode);
        const single = await spreadSet(drives, parity, 0);
        try {
          await layDown(spread.test, 'key', v1, v2, states);
          await layDown(single.test, 'key', v1, v2, states);
          expect(await outcome(spread.test, 'key', [v1, v2])).toBe(await outcome(single.test, 'key', [v1, v2]));
        } finally {
          await spread.test.cleanup();
          await single.test.cleanup();
        }
      }),
      { numRuns: 120 },
    );
  });

  it('reads a write quorum: this node\'s drives and the peers holding most data shards, one peer not asked at all', async () => {
    const { test, reads } = await spreadSet(16, 4, 4);
    try {
      const keys = Array.from({ length: 12 }, (_, index) => `key-${index}`);
      for (const [index, key] of keys.entries()) await put(test, key, patternBytes(4096, index + 1));
      for (const [index, key] of keys.entries()) {
        reads.length = 0;
        expect(await outcome(test, key, [patternBytes(4096, index + 1)])).toBe('v1');
        const asked = Array.from({ length: 16 }, (_, slot) => slot).filter((slot) => (reads[slot] ?? 0) > 0);
        expect(asked).toHaveLength(writeQuorum(12, 4));
        expect(asked.slice(0, 4)).toEqual([0, 1, 2, 3]);
        const skipped = [1, 2, 3].filter((node) => !asked.includes(node * 4));
        expect(skipped).toHaveLength(1);
        // No peer that was asked holds fewer of the key's data shards than the one skipped.
        const distribution = distributionFor(key, 16);
        const dataOn = (node: number) => [0, 1, 2, 3].filter((offset) => distribution[node * 4 + offset]! <= 12).length;
        for (const node of [1, 2, 3].filter((node) => node !== skipped[0])) expect(dataOn(node)).toBeGreaterThanOrEqual(dataOn(skipped[0]!));
      }
      expect(test.repairs).toEqual([]);
    } finally {
      await test.cleanup();
    }
  });

  it('asks every drive when one asked holds a corrupt inline shard, serves the right bytes and asks for that drive\'s repair', async () => {
    const { test, reads } = await spreadSet(16, 4, 4);
    try {
      const bytes = patternBytes(4096, 9);
      await layDown(test, 'key', bytes, bytes, Array.from({ length: 16 }, (_, slot) => (slot === 2 ? 'corrupt' : 'new')));
      reads.length = 0;
      expect(await outcome(test, 'key', [bytes])).toBe('v1');
      expect(reads.filter((count) => count > 0)).toHaveLength(16);
      const distribution = distributionFor('key', 16);
      // Slot 2's shard is read only when it is a data shard (parity is read when data fails).
      if (distribution[2]! <= 12) expect(test.repairs).toEqual([expect.objectContaining({ key: 'key', reason: 'read-corrupt-shards', slots: [2] })]);
    } finally {
      await test.cleanup();
    }
  });

  it('asks every drive on a set all on this node, and when the set has no parity', async () => {
    for (const [parity, perNode] of [[4, 0], [0, 4]] as const) {
      const { test, reads } = await spreadSet(16, parity, perNode);
      try {
        await put(test, 'key', patternBytes(4096, 3));
        reads.length = 0;
        expect(await outcome(test, 'key', [patternBytes(4096, 3)])).toBe('v1');
        expect(reads.filter((count) => count > 0)).toHaveLength(16);
      } finally {
        await test.cleanup();
      }
    }
  });
});
