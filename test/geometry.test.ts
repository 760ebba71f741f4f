import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  defaultRrsParity, defaultStandardParity, deleteQuorum, geometryFor, inlineShardBudgetBytes, isInline, maxParity, readQuorum, systemMetadataParity, writeQuorum,
} from '../src/erasure/geometry.js';
import { isSvcError } from '../src/errors/index.js';

const KiB = 1024;

/** The SPEC "Limits" and geometry tables, written out literally as the oracle. */
const standardByWidth: Record<number, number> = { 1: 0, 2: 1, 3: 1, 4: 2, 5: 2, 6: 3, 7: 3, 8: 4, 9: 4, 10: 4, 11: 4, 12: 4, 13: 4, 14: 4, 15: 4, 16: 4 };
const oracle = {
  readQuorum: (n: number, m: number) => (m === 0 ? n : n - m),
  writeQuorum: (n: number, m: number) => (m === 0 ? n : n - m === m ? n - m + 1 : n - m),
  deleteQuorum: (n: number) => Math.floor(n / 2) + 1,
};

describe('geometry rules match the SPEC tables', () => {
  it('for every width 1..16 and every parity 0..N/2', () => {
    for (let n = 1; n <= 16; n += 1) {
      expect(defaultStandardParity(n)).toBe(standardByWidth[n]);
      expect(defaultRrsParity(n)).toBe(n === 1 ? 0 : 1);
      expect(maxParity(n)).toBe(Math.floor(n / 2));
      expect(systemMetadataParity(n)).toBe(Math.floor(n / 2));
      for (let m = 0; m <= Math.floor(n / 2); m += 1) {
        const k = n - m;
        const geometry = geometryFor(n, m);
        expect(geometry).toEqual({ setDriveCount: n, dataShards: k, parityShards: m, readQuorum: oracle.readQuorum(n, m), writeQuorum: oracle.writeQuorum(n, m), deleteQuorum: oracle.deleteQuorum(n) });
        expect(readQuorum(k, m)).toBe(oracle.readQuorum(n, m));
        expect(writeQuorum(k, m)).toBe(oracle.writeQuorum(n, m));
        expect(deleteQuorum(n)).toBe(oracle.deleteQuorum(n));
      }
    }
  });

  it('holds the consequences SPEC spells out', () => {
    expect(geometryFor(16, 4)).toMatchObject({ dataShards: 12, readQuorum: 12 });
    expect(geometryFor(2, 1)).toMatchObject({ dataShards: 1, parityShards: 1, readQuorum: 1, writeQuorum: 2 });
    expect(geometryFor(4, 0)).toMatchObject({ readQuorum: 4, writeQuorum: 4, deleteQuorum: 3 });
  });

  it('refuses parity above N/2 and widths outside 1..16', () => {
    for (const [n, m] of [[4, 3], [16, 9], [0, 0], [17, 1], [3, -1], [2.5, 1]]) {
      let thrown: unknown;
      try {
        geometryFor(n!, m!);
      } catch (error) {
        thrown = error;
      }
      expect(isSvcError(thrown, 'InvalidArgument'), `${n}+${m}`).toBe(true);
    }
  });
});

describe('inline budget', () => {
  it('is min(256 KiB / K, 128 KiB), or the override, divided by 8 when versioned', () => {
    expect(inlineShardBudgetBytes({ dataShards: 4, versioned: false })).toBe(64 * KiB);
    expect(inlineShardBudgetBytes({ dataShards: 1, versioned: false })).toBe(128 * KiB);
    expect(inlineShardBudgetBytes({ dataShards: 4, versioned: true })).toBe(8 * KiB);
    expect(inlineShardBudgetBytes({ dataShards: 12, versioned: false, inlineBlockOverrideBytes: 200 * KiB })).toBe(200 * KiB);
  });

  it('an object is inline exactly when ceil(size / K) fits the budget', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 16 }), fc.boolean(), fc.option(fc.integer({ min: 0, max: 512 * KiB }), { nil: undefined }), fc.integer({ min: 0, max: 4 * 1024 * KiB }), (k, versioned, override, size) => {
        const base = override ?? Math.min(Math.floor((256 * KiB) / k), 128 * KiB);
        const budget = Math.floor(base / (versioned ? 8 : 1));
        expect(inlineShardBudgetBytes({ dataShards: k, versioned, inlineBlockOverrideBytes: override })).toBe(budget);
        expect(isInline(size, k, budget)).toBe(Math.ceil(size / k) <= budget);
      }),
    );
  });
});
