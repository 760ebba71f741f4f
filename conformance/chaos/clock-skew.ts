/**
 * Clocks that disagree: a four-node cluster of real processes, each run under libfaketime
 * (Debian's `faketime`) with its own offset from the machine's clock, drawn from the seed within
 * the bound svc documents (docs/chaos.md: nodes' clocks within 15 minutes of each other, the
 * lifetime of an internode token and the S3 signature skew AWS allows). Midway one node is
 * restarted with its clock set back further than any write so far, as a node whose clock jumped
 * back. The bucket is versioned (in an unversioned one a write replaces the one version, whatever
 * its date). Each phase opens with writes in turn, one after the other, through the nodes from the
 * clock furthest ahead to the one furthest behind, then a read through every node: the last write
 * must be the object's newest version. Then the history of concurrent clients (recorded-phases.ts)
 * runs, and the whole must be linearizable: a version's place among an object's versions never
 * follows the clock of the node that wrote it, since a write under the object's lock is dated after
 * the newest version it finds.
 */
import { execFileSync } from 'node:child_process';
import { startProcessCluster } from '../harness/process-cluster.js';
import { runRecordedPhases, writesInTurn } from './recorded-phases.js';
import type { Tally } from './history-checker.js';
import type { ChaosContext } from './steps.js';

/** Why nodes cannot get clocks of their own here, or undefined. */
export function fakeClockUnavailable(): string | undefined {
  try {
    execFileSync('faketime', ['-f', '+1s', 'true'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'faketime (Debian package faketime) is not installed';
  }
}

/** The command a node with this clock offset runs under (the monotonic clock, which timers use, is left alone). */
function underClock(offsetSeconds: number): string[] {
  return ['env', 'FAKETIME_DONT_FAKE_MONOTONIC=1', 'faketime', '-f', `${offsetSeconds >= 0 ? '+' : ''}${offsetSeconds}s`];
}

/** The nodes from the clock furthest ahead to the one furthest behind. */
const byClock = (offsets: number[]): number[] => offsets.map((offset, index) => ({ offset, index })).sort((a, b) => b.offset - a.offset).map(({ index }) => index);

/** `script`: the nodes run this built `svc.js` (an altered copy of the build, to show the checker catches what it should). */
export function clockSkew(options: { script?: string } = {}) {
  return async (context: ChaosContext): Promise<{ problems: string[]; checker: Tally }> => {
    const unavailable = fakeClockUnavailable();
    if (unavailable) throw new Error(`clock-skew gives each node a clock of its own: ${unavailable}`);
    // Offsets within the documented bound: one node behind, one well ahead, two near the machine's clock.
    const offsets = [-(30 + context.prng.int(150)), 0, 30 + context.prng.int(270), context.prng.int(61) - 30].sort(() => context.prng.next() - 0.5);
    const cluster = await startProcessCluster({ nodes: offsets.length, drivesPerNode: 2, env: { SVC_CONSOLE_ENABLE: 'false' }, wrap: (index) => underClock(offsets[index]!), ...(options.script ? { script: options.script } : {}) });
    try {
      context.note(`node clocks: ${offsets.map((offset, index) => `node ${index + 1} ${offset >= 0 ? '+' : ''}${offset} s`).join(', ')}`);
      const jumper = context.prng.int(offsets.length);
      const result = await runRecordedPhases(context, cluster.nodes.map((node) => node!), offsets.map((_, index) => `node ${index + 1}`), [
        { name: 'skewed clocks', probe: (clients) => writesInTurn(clients, byClock(offsets), byClock(offsets), `clock-skew ${context.seed}`) },
        {
          name: 'after a clock jumped back',
          before: async () => {
            await cluster.stop(jumper);
            offsets[jumper] = offsets[jumper]! - 120 - context.prng.int(120);
            await cluster.start(jumper);
            return `node ${jumper + 1} restarted with its clock at ${offsets[jumper]} s`;
          },
          probe: (clients) => writesInTurn(clients, byClock(offsets), byClock(offsets), `clock-skew ${context.seed}`),
        },
      ], { versioned: true });
      return { problems: result.problems, checker: { acknowledged: result.acknowledged, refused: result.refused, refusals: new Map(Object.entries(result.refusals)) } };
    } finally {
      await cluster.destroy();
    }
  };
}
