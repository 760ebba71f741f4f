/**
 * The clock-skew scenario (conformance/chaos/clock-skew.ts) catches a store whose version order
 * follows the writer's clock: the build with the write path's "dated after the newest version"
 * rule removed is run under skewed clocks, and the linearizability checker must name a key (the
 * writes in turn through the nodes that open each phase make this certain for every seed).
 * (The scenario itself, on the unaltered build, runs with the others in chaos.test.ts.)
 */
import { afterAll, describe, expect, it } from 'vitest';
import { clockSkew, fakeClockUnavailable } from '../conformance/chaos/clock-skew.js';
import { createPrng } from '../src/util/prng.js';
import { copyOfBuild, removeBuildCopies } from './helpers/build-copy.js';

const unavailable = fakeClockUnavailable();
if (unavailable && process.env.CI) throw new Error(`CI requires faketime for the clock-skew scenario: ${unavailable}`);

afterAll(removeBuildCopies);

/** A copy of the build in which a write is dated by its node's clock alone. */
async function buildWithoutDateBump(): Promise<string> {
  const copy = await copyOfBuild('svc-clock-mutant-');
  await copy.replace('src/object/put-object.js', 'if (bumpModTime && version.modTimeMs <= newest)', 'if (false)');
  return copy.script;
}

describe('clock-skew scenario', () => {
  it.skipIf(unavailable !== undefined)(`catches versions ordered by the writers' clocks${unavailable ? ` (skipped: ${unavailable})` : ''}`, async () => {
    const script = await buildWithoutDateBump();
    const seed = 2026;
    const timeline: string[] = [];
    const { problems } = await clockSkew({ script })({ seed, prng: createPrng(seed), size: 2, timeline, round: 0, note: (event) => timeline.push(event) });
    expect(problems.some((problem) => problem.includes('not linearizable')), `seed ${seed}\n${timeline.join('\n')}`).toBe(true);
  }, 300_000);
});
