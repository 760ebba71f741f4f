/**
 * A managed property suite is one check whose cases fast-check draws from the run's seed. Each
 * case launches what it needs, so cases are few (`--runs`, or the suite's default) and a failure
 * is not shrunk (every shrink step would launch again): the failing case is printed as drawn, with
 * the seed and run count that replay it.
 */
import fc from 'fast-check';
import { CheckFailure, type Check, type Target } from '../runner/check.js';
import type { Launcher } from './deployment.js';

export interface PropertySuite<T> {
  id: string;
  spec: string;
  title: string;
  /** Cases per run when --runs is not given. */
  defaultRuns: number;
  cases: fc.Arbitrary<T>;
  /**
   * Cases that together cover the whole domain, built from the seed. When --runs is at least their
   * number they run first (in order), and the remaining runs are drawn.
   */
  sweep?(seed: number): T[];
  describe(value: T): string;
  /** Throws (CheckFailure or any error) when the case breaks the property. */
  run(value: T, launcher: Launcher): Promise<void>;
}

/** The check that runs `suite` on `launcher`, seeded by the run (`--seed`), sized by `--runs`. */
export function propertyCheck<T>(suite: PropertySuite<T>, launcher: Launcher, options: { runs?: number; progress?: (line: string) => void } = {}): Check {
  return {
    id: suite.id,
    spec: suite.spec,
    title: suite.title,
    async run(target: Target) {
      const seed = target.options.seed;
      const runs = options.runs ?? suite.defaultRuns;
      let index = 0;
      const property = fc.asyncProperty(suite.cases, async (value) => {
        index += 1;
        options.progress?.(`  ${suite.id} case ${index}/${runs} (${launcher.name}): ${suite.describe(value)}`);
        await suite.run(value, launcher);
      });
      const sweep = suite.sweep?.(seed) ?? [];
      const examples = sweep.length > 0 && runs >= sweep.length ? sweep.map((value): [T] => [value]) : [];
      // Examples count within numRuns: they are the first runs.
      const details = await fc.check(property, { seed, numRuns: runs, examples, endOnFailure: true });
      if (!details.failed) return;
      const value = details.counterexample?.[0] as T | undefined;
      const error = details.errorInstance as Error | undefined;
      const logs = (error as { logs?: string } | undefined)?.logs;
      if (logs) options.progress?.(`  ${suite.id}: the failing deployment's last log lines\n${logs}`);
      const what = error instanceof CheckFailure ? error.message : `${error?.name ?? 'Error'}: ${error?.message ?? 'no error recorded'}`;
      throw new CheckFailure(`${what} — case ${value === undefined ? '?' : suite.describe(value)} (run ${details.numRuns} of ${runs}, ${launcher.name}); replay with --seed ${seed} --runs ${runs}`);
    },
  };
}
