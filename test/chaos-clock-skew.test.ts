/**
 * The clock-skew scenario (conformance/chaos/clock-skew.ts) catches a store whose version order
 * follows the writer's clock: the build with the write path's "dated after the newest version"
 * rule removed is run under skewed clocks, and the linearizability checker must name a key.
 * (The scenario itself, on the unaltered build, runs with the others in chaos.test.ts.)
 */
import { afterAll, describe, expect, it } from 'vitest';
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clockSkew, fakeClockUnavailable } from '../conformance/chaos/clock-skew.js';
import { repoRoot } from '../conformance/harness/server-process.js';
import { createPrng } from '../src/util/prng.js';

const unavailable = fakeClockUnavailable();
if (unavailable && process.env.CI) throw new Error(`CI requires faketime for the clock-skew scenario: ${unavailable}`);

const made: string[] = [];
afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

/** A copy of the build in which a write is dated by its node's clock alone. */
async function buildWithoutDateBump(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'svc-clock-mutant-'));
  made.push(root);
  await cp(join(repoRoot, 'dist'), join(root, 'dist'), { recursive: true, filter: (source) => !source.includes('console-ui') });
  await cp(join(repoRoot, 'package.json'), join(root, 'package.json'));
  await symlink(join(repoRoot, 'node_modules'), join(root, 'node_modules'));
  const path = join(root, 'dist/src/object/put-object.js');
  const from = 'if (bumpModTime && version.modTimeMs <= newest)';
  const text = await readFile(path, 'utf8');
  expect(text.split(from).length - 1, `'${from}' in dist/src/object/put-object.js (the source moved: update this test)`).toBe(1);
  await writeFile(path, text.replace(from, 'if (false)'));
  return join(root, 'dist/src/cli/svc.js');
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
