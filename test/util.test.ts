import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseByteSize } from '../src/util/sizes.js';
import { createPrng } from '../src/util/prng.js';
import { isSvcError } from '../src/errors/index.js';
import { nextRequestId } from '../src/api/request-line.js';

describe('parseByteSize', () => {
  it('parses binary and decimal units', () => {
    expect(parseByteSize('128KiB')).toBe(128 * 1024);
    expect(parseByteSize('1MB')).toBe(1_000_000);
    expect(parseByteSize('4096')).toBe(4096);
    expect(parseByteSize('1gib')).toBe(1024 ** 3);
  });
  it('rejects garbage with InvalidConfiguration', () => {
    for (const bad of ['', 'KiB', '12 parsecs', '-1KiB', '1e3']) {
      let thrown: unknown;
      try { parseByteSize(bad); } catch (error) { thrown = error; }
      expect(isSvcError(thrown, 'InvalidConfiguration'), bad).toBe(true);
    }
  });
});

describe('createPrng', () => {
  it('replays the same sequence for the same seed', () => {
    fc.assert(fc.property(fc.integer(), (seed) => {
      const a = createPrng(seed);
      const b = createPrng(seed);
      for (let i = 0; i < 20; i += 1) expect(a.next()).toBe(b.next());
    }));
  });
});

describe('nextRequestId', () => {
  it('gives 16 upper-case hex digits, a new id every call, with one prefix per process', () => {
    const ids = Array.from({ length: 10_000 }, () => nextRequestId());
    for (const id of ids) expect(id).toMatch(/^[0-9A-F]{16}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids.map((id) => id.slice(0, 8))).size).toBe(1);
  });
});
