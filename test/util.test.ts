import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseByteSize } from '../src/util/sizes.js';
import { createPrng } from '../src/util/prng.js';
import { isSvcError } from '../src/errors/index.js';
import { nextRequestId } from '../src/api/request-line.js';
import { Limiter } from '../src/util/concurrency.js';

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

describe('Limiter', () => {
  it('keeps at most its limit of tasks in flight across callers, runs every task, and passes failures through', async () => {
    await fc.assert(fc.asyncProperty(fc.integer({ min: 1, max: 5 }), fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 30 }), async (limit, delaysMs) => {
      const limiter = new Limiter(limit);
      let running = 0;
      let peak = 0;
      const results = await Promise.allSettled(delaysMs.map((delayMs, index) => limiter.run(async () => {
        running += 1;
        peak = Math.max(peak, running);
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        running -= 1;
        if (index % 7 === 6) throw new Error(`task ${index}`);
        return index;
      })));
      expect(peak).toBeLessThanOrEqual(limit);
      expect(running).toBe(0);
      results.forEach((result, index) => expect(result.status).toBe(index % 7 === 6 ? 'rejected' : 'fulfilled'));
    }), { numRuns: 30 });
  });
});
