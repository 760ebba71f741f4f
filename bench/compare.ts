/**
 * The pure parts of comparing builds of the server on a shared machine (bench/cluster-compare.ts):
 * the order the builds run in each round, the turns they take phase by phase, and the ratios of
 * their figures taken within each round with the median and spread over the rounds.
 */
import { median } from './shared.js';

/**
 * The order the contestants run in round `index` (from 0): as given in even rounds, reversed in
 * odd ones. Every pair of contestants then runs in both orders over two rounds, so neither gains
 * from going first (a cooler machine, a disk not yet busy flushing) or last.
 */
export function roundOrder<T>(contestants: readonly T[], index: number): T[] {
  return index % 2 === 0 ? [...contestants] : [...contestants].reverse();
}

/** Ratios taken within each round, and what they say over the rounds. */
export interface RatioSummary {
  /** `after / before` of each round, in round order. */
  rounds: number[];
  median: number;
  low: number;
  high: number;
  /** The highest round's ratio less the lowest's: how far the rounds disagree. */
  spread: number;
}

/** `after[i] / before[i]` for each round i, with their median, extremes and spread. */
export function ratioSummary(after: readonly number[], before: readonly number[]): RatioSummary {
  if (after.length !== before.length || after.length === 0) throw new Error(`ratios need as many figures after as before, at least one (${after.length} and ${before.length})`);
  const rounds = after.map((value, index) => value / before[index]!);
  const low = Math.min(...rounds);
  const high = Math.max(...rounds);
  return { rounds, median: median(rounds), low, high, spread: high - low };
}

/** `x1.02 (0.97-1.05)`: a median ratio and the range of the rounds' ratios (the range left out for one round). */
export function ratioText(summary: RatioSummary): string {
  return `x${summary.median.toFixed(2)}${summary.rounds.length > 1 ? ` (${summary.low.toFixed(2)}-${summary.high.toFixed(2)})` : ''}`;
}

/**
 * The pairs compared, `[a, b]` for a ÷ b, of `builds` builds by index (before, after, then the
 * variants of after: other settings, or the same again): after ÷ before, each variant ÷ before,
 * and after ÷ each variant (what the variant's setting costs, or, for the same again, the noise).
 */
export function pairsOf(builds: number): [number, number][] {
  const variants = Array.from({ length: Math.max(0, builds - 2) }, (_, index) => index + 2);
  return [[1, 0], ...variants.map((variant): [number, number] => [variant, 0]), ...variants.map((variant): [number, number] => [1, variant])];
}

/**
 * Names and values of environment variables from `NAME=VALUE[,NAME=VALUE...]` (`--compare-env`).
 * Anything else is an Error naming what is wrong.
 */
export function parseEnvList(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const item of text.split(',')) {
    const equals = item.indexOf('=');
    const name = equals < 0 ? item : item.slice(0, equals);
    if (equals < 0 || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`--compare-env=${text}: each item must be NAME=VALUE (a variable name, then its value), separated by commas`);
    env[name] = item.slice(equals + 1);
  }
  return env;
}

/**
 * Turns in a fixed schedule: for each step in order, each contestant in order. A contestant
 * waits with `take` until every turn before its own has ended, and ends its turn with `end`; so
 * one contestant at a time runs a step, and the contestants' runs of one step come one right
 * after another, under the same background load.
 */
export class Turns<C> {
  private readonly schedule: { contestant: C; step: string }[];
  /** The index in `schedule` of the turn running or about to run. */
  private position = 0;
  private readonly waiting = new Map<number, { resolve: () => void; reject: (error: unknown) => void }>();
  private failure: { error: unknown } | undefined;

  constructor(contestants: readonly C[], steps: readonly string[]) {
    this.schedule = steps.flatMap((step) => contestants.map((contestant) => ({ contestant, step })));
  }

  /** Resolves when `contestant`'s turn at `step` comes: every turn before it has ended. */
  async take(contestant: C, step: string): Promise<void> {
    if (this.failure) throw this.failure.error;
    const index = this.indexOf(contestant, step);
    if (index < this.position) throw new Error(`the turn of ${String(contestant)} at ${step} has passed`);
    if (index > this.position) await new Promise<void>((resolve, reject) => this.waiting.set(index, { resolve: () => resolve(), reject }));
  }

  /** Ends `contestant`'s turn at `step`, which must be the one running; the next turn starts. */
  end(contestant: C, step: string): void {
    const running = this.schedule[this.position];
    if (!running || running.contestant !== contestant || running.step !== step) throw new Error(`${String(contestant)} at ${step} is not the turn running`);
    this.position += 1;
    const next = this.waiting.get(this.position);
    this.waiting.delete(this.position);
    next?.resolve();
  }

  /** Stops the schedule: every turn waited for, and every one asked for later, fails with `error`. */
  fail(error: unknown): void {
    this.failure ??= { error };
    for (const waiter of this.waiting.values()) waiter.reject(this.failure.error);
    this.waiting.clear();
  }

  private indexOf(contestant: C, step: string): number {
    const index = this.schedule.findIndex((turn) => turn.contestant === contestant && turn.step === step);
    if (index < 0) throw new Error(`no turn of ${String(contestant)} at ${step} in the schedule`);
    return index;
  }
}
