import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { expandEllipsis, hasEllipsis } from '../src/util/ellipsis.js';
import { planLayout, hostFailureWarning, describeLayout } from '../src/cluster/layout.js';
import { isSvcError } from '../src/errors/index.js';

function ruleOf(action: () => unknown): string {
  try {
    action();
    return 'accepted';
  } catch (error) {
    return isSvcError(error) ? String(error.details.rule ?? error.code) : String(error);
  }
}

/** An independent expander: recursive string building over a parsed token list. */
type Token = { literal: string } | { values: string[] };
function oracleExpand(tokens: Token[]): string[] {
  if (tokens.length === 0) return [''];
  const [head, ...rest] = tokens;
  const tails = oracleExpand(rest);
  const heads = 'literal' in head! ? [head.literal] : head!.values;
  return heads.flatMap((value) => tails.map((tail) => value + tail));
}

const literal = fc.stringMatching(/^[a-z0-9:/._-]{0,6}$/).map((text) => ({ literal: text }));
const numeric = fc.record({ start: fc.integer({ min: 0, max: 30 }), count: fc.integer({ min: 1, max: 5 }), pad: fc.boolean() }).map(({ start, count, pad }) => {
  const width = pad ? String(start + count - 1).length + 1 : 0;
  const values = Array.from({ length: count }, (_, index) => String(start + index).padStart(width, '0'));
  return { text: `{${String(start).padStart(width, '0')}...${String(start + count - 1).padStart(width, '0')}}`, token: { values } as Token };
});
const letters = fc.record({ start: fc.integer({ min: 0, max: 20 }), count: fc.integer({ min: 1, max: 5 }) }).map(({ start, count }) => {
  const values = Array.from({ length: count }, (_, index) => String.fromCharCode(97 + start + index));
  return { text: `{${values[0]}...${values.at(-1)}}`, token: { values } as Token };
});

describe('ellipsis expansion', () => {
  it('is exactly the cartesian product in order (leftmost range slowest)', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(literal.map((l) => ({ text: l.literal, token: l as Token })), numeric, letters), { minLength: 1, maxLength: 5 }), (parts) => {
        const pattern = parts.map((part) => part.text).join('');
        fc.pre(pattern !== '');
        expect(expandEllipsis(pattern)).toEqual(oracleExpand(parts.map((part) => part.token)));
      }),
    );
  });

  it('keeps zero padding and expands letters', () => {
    expect(expandEllipsis('/d{01...03}')).toEqual(['/d01', '/d02', '/d03']);
    expect(expandEllipsis('{a...c}')).toEqual(['a', 'b', 'c']);
    expect(expandEllipsis('http://node{1...2}:9000/data{1...2}')).toEqual([
      'http://node1:9000/data1', 'http://node1:9000/data2', 'http://node2:9000/data1', 'http://node2:9000/data2',
    ]);
    expect(hasEllipsis('/d{1...4}')).toBe(true);
    expect(hasEllipsis('/data')).toBe(false);
  });

  it('rejects malformed ranges naming the pattern', () => {
    for (const bad of ['/d{3...1}', '/d{a...3}', '/d{1..3}', '/d{1...3', '/d1...3}', '', '/d{...3}', '/d{aa...bb}']) {
      expect(ruleOf(() => expandEllipsis(bad)), bad).toBe('ellipsis-syntax');
    }
  });
});

const validWidths = (count: number): number[] => Array.from({ length: 15 }, (_, index) => index + 2).filter((width) => count % width === 0);

describe('layout rules', () => {
  it('every accepted layout satisfies every rule; every broken rule is named', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ drives: fc.integer({ min: 1, max: 40 }), ellipsis: fc.boolean(), hosts: fc.integer({ min: 0, max: 4 }) }), { minLength: 1, maxLength: 3 }),
        fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }),
        (pools, pinned) => {
          const args = pools.map((pool, index) => {
            if (!pool.ellipsis) return pool.drives === 1 ? `/mnt/p${index}` : `/mnt/p${index}/d${pool.drives}`;
            if (pool.hosts > 0) return `http://h{1...${pool.hosts}}:9000/p${index}/d{1...${pool.drives}}`;
            return `/mnt/p${index}/d{1...${pool.drives}}`;
          });
          const counts = pools.map((pool) => (pool.ellipsis ? pool.drives * Math.max(pool.hosts, 1) : 1));
          // The oracle: which rule (if any) the SPEC says this launch breaks, checked in order.
          let expected = 'accepted';
          if (args.length > 1 && pools.some((pool) => !pool.ellipsis)) expected = 'multi-pool-needs-ellipsis';
          else if (args.length === 1 && !pools[0]!.ellipsis) expected = 'accepted';
          else if (args.length > 1 && counts.some((count) => count < 2)) expected = 'single-drive-in-multi-pool';
          else if (counts.some((count) => count < 2)) expected = 'min-two-drives';
          else if (pinned !== undefined && counts.some((count) => pinned < 2 || pinned > 16 || count % pinned !== 0)) expected = 'set-drive-count-invalid';
          else if (pinned === undefined && counts.some((count) => validWidths(count).length === 0)) expected = 'no-valid-set-width';
          const outcome = ruleOf(() => planLayout(args, pinned === undefined ? {} : { setDriveCount: pinned }));
          expect(outcome).toBe(expected);
          if (outcome !== 'accepted') return;
          const layout = planLayout(args, pinned === undefined ? {} : { setDriveCount: pinned });
          layout.pools.forEach((pool, index) => {
            expect(pool.endpoints.length).toBe(counts[index]);
            expect(pool.setCount * pool.setDriveCount).toBe(pool.endpoints.length);
            pool.sets.forEach((set) => expect(set.length).toBe(pool.setDriveCount));
            if (!layout.singleDrive) {
              expect(pool.setDriveCount).toBeGreaterThanOrEqual(2);
              expect(pool.setDriveCount).toBeLessThanOrEqual(16);
              if (pinned !== undefined) expect(pool.setDriveCount).toBe(pinned);
              else expect(validWidths(pool.endpoints.length)).toContain(pool.setDriveCount);
            }
          });
          const all = layout.pools.flatMap((pool) => pool.endpoints.map((endpoint) => endpoint.raw));
          expect(new Set(all).size).toBe(all.length);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('names each rule on its own example', () => {
    expect(ruleOf(() => planLayout(['/a{1...4}', '/b']))).toBe('multi-pool-needs-ellipsis');
    expect(ruleOf(() => planLayout(['/d{3...3}']))).toBe('min-two-drives');
    expect(ruleOf(() => planLayout(['/a{1...4}', '/b{1...1}']))).toBe('single-drive-in-multi-pool');
    expect(ruleOf(() => planLayout(['http://127.0.0.1:9602/path']))).toBe('single-drive-needs-local-path');
    expect(ruleOf(() => planLayout(['/a{1...4}', '/a{4...5}']))).toBe('duplicate-endpoint');
    expect(ruleOf(() => planLayout(['/a/{1...2}', '/a/{x...y}', '/a/{1...2}']))).toBe('duplicate-endpoint');
    expect(ruleOf(() => planLayout(['/a{1...17}']))).toBe('no-valid-set-width');
    expect(ruleOf(() => planLayout(['/a{1...8}'], { setDriveCount: 3 }))).toBe('set-drive-count-invalid');
    expect(ruleOf(() => planLayout(['/a{1...32}'], { setDriveCount: 32 }))).toBe('set-drive-count-invalid');
    expect(ruleOf(() => planLayout(['{/a,http://h:9000/b}{1...2}'.replace('{/a,http://h:9000/b}', 'http://h:9000/b')]))).toBe('accepted');
    expect(ruleOf(() => planLayout([]))).toBe('no-endpoints');
  });

  it('chooses the widest width, spread evenly over hosts, and describes it', () => {
    expect(planLayout(['/d{1...32}']).pools[0]!.setDriveCount).toBe(16);
    expect(planLayout(['/d{1...12}']).pools[0]!.setDriveCount).toBe(12);
    expect(planLayout(['/d{1...18}']).pools[0]!.setDriveCount).toBe(9);
    expect(planLayout(['http://n{1...4}:9000/d{1...4}']).pools[0]!.setDriveCount).toBe(16);
    expect(planLayout(['http://n{1...5}:9000/d{1...4}']).pools[0]!.setDriveCount).toBe(10);
    const single = planLayout(['./data']);
    expect(single.singleDrive && single.legacy).toBe(true);
    expect(single.pools[0]!.setDriveCount).toBe(1);
    const local = planLayout(['/d{1...4}']);
    const mayLose = (args: string, parity: number) => hostFailureWarning(planLayout([args]).pools[0]!, { standard: parity, rrs: 0 })?.hostsMayLose.standard;
    expect(hostFailureWarning(local.pools[0]!, { standard: 2, rrs: 1 })).toMatchObject({ hosts: 1, hostsMayLose: { standard: 0, rrs: 0 } });
    expect(hostFailureWarning(local.pools[0]!, { standard: 2, rrs: 1 })!.message).toContain('host_failure_data_unavailable: pool 0 spans 1 host(s); hosts it may lose and keep data readable: none for STANDARD EC:2');
    expect(mayLose('http://n{1...4}:9000/d{1...4}', 4)).toBe(1);
    expect(mayLose('http://n{1...4}:9000/d{1...4}', 3)).toBe(0);
    expect(mayLose('http://n{1...8}:9000/d{1...2}', 4)).toBe(2);
    expect(mayLose('http://n{1...4}:9000/d{1...2}', 0)).toBe(0);
    expect(hostFailureWarning(single.pools[0]!, { standard: 0, rrs: 0 })).toBeUndefined();
    expect(describeLayout(local, [{ standard: 2, rrs: 1 }])).toContain('4 drive(s) in 1 set(s) of 4');
  });
});
