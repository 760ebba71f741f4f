/**
 * The pure parts of the cluster bench's comparison of builds (bench/compare.ts): the order builds
 * run in each round, the turns their load processes take, and the ratios judged over the rounds.
 * No bench is started here.
 */
import { describe, expect, it } from 'vitest';
import { pairsOf, parseEnvList, ratioSummary, ratioText, roundOrder, Turns } from '../bench/compare.js';

describe('the order of the builds in each round', () => {
  it('two builds run A then B, then B then A, alternating', () => {
    expect([0, 1, 2, 3].map((round) => roundOrder(['A', 'B'], round))).toEqual([['A', 'B'], ['B', 'A'], ['A', 'B'], ['B', 'A']]);
  });

  it('every pair of three builds runs in both orders over two rounds, and the input is left as it was', () => {
    const builds = ['before', 'after', 'variant'];
    const firstOf = (order: string[], a: string, b: string): string => (order.indexOf(a) < order.indexOf(b) ? a : b);
    const [first, second] = [roundOrder(builds, 0), roundOrder(builds, 1)];
    for (const [a, b] of [['before', 'after'], ['before', 'variant'], ['after', 'variant']] as const) expect(firstOf(first, a, b)).not.toBe(firstOf(second, a, b));
    expect(builds).toEqual(['before', 'after', 'variant']);
  });
});

describe('ratios over rounds', () => {
  it('takes each ratio within its round, then the median, the extremes and the spread', () => {
    const summary = ratioSummary([110, 90, 200], [100, 100, 160]);
    expect(summary.rounds).toEqual([1.1, 0.9, 1.25]);
    expect(summary.median).toBe(1.1);
    expect(summary.low).toBe(0.9);
    expect(summary.high).toBe(1.25);
    expect(summary.spread).toBeCloseTo(0.35, 10);
    expect(ratioText(summary)).toBe('x1.10 (0.90-1.25)');
  });

  it('an even number of rounds has the middle two averaged; one round has no spread and no range', () => {
    expect(ratioSummary([1, 2, 3, 4], [1, 1, 1, 1]).median).toBe(2.5);
    const one = ratioSummary([96], [100]);
    expect(one.spread).toBe(0);
    expect(ratioText(one)).toBe('x0.96');
  });

  it('figures that do not pair up are an error', () => {
    expect(() => ratioSummary([1, 2], [1])).toThrow(/as many figures after as before/);
    expect(() => ratioSummary([], [])).toThrow(/at least one/);
  });

  it('compares after with before, each variant with before, and after with each variant', () => {
    expect(pairsOf(2)).toEqual([[1, 0]]);
    expect(pairsOf(3)).toEqual([[1, 0], [2, 0], [1, 2]]);
  });
});

describe('--compare-env', () => {
  it('reads NAME=VALUE items, a value keeping any = of its own', () => {
    expect(parseEnvList('SVC_DRIVE_MAX_TIMEOUT=0')).toEqual({ SVC_DRIVE_MAX_TIMEOUT: '0' });
    expect(parseEnvList('A=1,B_2=x=y')).toEqual({ A: '1', B_2: 'x=y' });
  });

  it('anything else is a named error', () => {
    for (const bad of ['SVC_DRIVE_MAX_TIMEOUT', '=0', '1A=2', 'A=1,']) expect(() => parseEnvList(bad), bad).toThrow(/--compare-env=.*NAME=VALUE/);
  });
});

describe('turns', () => {
  it('grants each step to one contestant after another, whatever order they ask in', async () => {
    const turns = new Turns(['A', 'B', 'C'], ['warm-up', 'put']);
    const granted: string[] = [];
    const run = async (who: string): Promise<void> => {
      for (const step of ['warm-up', 'put']) {
        await turns.take(who, step);
        granted.push(`${who} ${step}`);
        await Promise.resolve(); // others ask meanwhile
        turns.end(who, step);
      }
    };
    await Promise.all([run('C'), run('B'), run('A')]);
    expect(granted).toEqual(['A warm-up', 'B warm-up', 'C warm-up', 'A put', 'B put', 'C put']);
  });

  it('one contestant alone never waits', async () => {
    const turns = new Turns(['only'], ['warm-up', 'put', 'get']);
    for (const step of ['warm-up', 'put', 'get']) {
      await turns.take('only', step);
      turns.end('only', step);
    }
  });

  it('ending a turn that is not running is an error, and so is a turn not in the schedule or passed', async () => {
    const turns = new Turns(['A', 'B'], ['put']);
    expect(() => turns.end('B', 'put')).toThrow(/B at put is not the turn running/);
    await expect(turns.take('A', 'get')).rejects.toThrow(/no turn of A at get/);
    turns.end('A', 'put');
    await expect(turns.take('A', 'put')).rejects.toThrow(/has passed/);
  });

  it('a failure rejects every turn waited for and every one asked for later', async () => {
    const turns = new Turns(['A', 'B', 'C'], ['put']);
    const waiting = [turns.take('B', 'put'), turns.take('C', 'put')];
    turns.fail(new Error('the load generator of A failed'));
    await Promise.all(waiting.map((wait) => expect(wait).rejects.toThrow('the load generator of A failed')));
    await expect(turns.take('A', 'put')).rejects.toThrow('the load generator of A failed');
  });
});
