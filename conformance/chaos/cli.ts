/**
 * `npm run chaos -- --scenario NAME|all [--seed N] [--size N] [--managed process]`: runs chaos
 * scenarios on clusters it starts itself. A failure prints the seed and the fault timeline (a pass
 * too with SVC_CHAOS_TIMELINE=on); the same seed replays the same traffic and faults at the same
 * points of it (scenarios.ts says what a seed does not fix).
 *
 * `--duration 10m` (ms, s, m or h) runs the chosen scenarios (all by default) in turn, each with a
 * fresh seed, until the time is up (a scenario in flight finishes), then prints a summary per
 * scenario: runs, writes acknowledged, refused by cause, problems, and the seeds that failed. With
 * `--seed` the fresh seeds are drawn from it, so the whole loop replays.
 */
import { parseArgs } from 'node:util';
import { createPrng } from '../../src/util/prng.js';
import { runScenario, scenarios, type ChaosResult } from './scenarios.js';

const usage = `usage: npm run chaos -- --scenario <name>|<prefix>*|all [--seed <n>] [--size <n>] [--managed process]
       npm run chaos -- --duration <n>(ms|s|m|h) [--scenario <name>|all] [--seed <n>] [--size <n>]
scenarios: ${Object.keys(scenarios).join(', ')}`;

export interface Output {
  log(line: string): void;
  error(line: string): void;
}

interface Options {
  names: string[];
  seed: number;
  size: number;
  durationMs?: number;
}

export async function main(argv: string[], out: Output = console): Promise<number> {
  const options = parseOptions(argv, out);
  if (typeof options === 'number') return options;
  if (options.durationMs !== undefined) return runForDuration(options as Options & { durationMs: number }, out);
  let failed = 0;
  for (const name of options.names) {
    out.error(`chaos ${name} (seed ${options.seed}, size ${options.size}) ...`);
    const result = await runScenario(name, options.seed, options.size);
    const verdict = result.problems.length === 0 ? 'pass' : 'FAIL';
    out.log(`${verdict}  ${name}: ${result.acknowledged} writes acknowledged, ${result.refused} refused${refusalText(result.refusals)}`);
    if (result.problems.length > 0) {
      failed += 1;
      out.log(`  seed ${options.seed} (replay: ${replayCommand(name, options.seed, options.size)})`);
      for (const problem of result.problems) out.log(`  problem: ${problem}`);
      for (const event of result.timeline) out.log(`  ${event}`);
    } else if (process.env.SVC_CHAOS_TIMELINE === 'on') {
      for (const event of result.timeline) out.log(`  ${event}`);
    }
  }
  return failed > 0 ? 1 : 0;
}

/** The options, or an exit code after printing why they cannot run (or the usage, asked for). */
function parseOptions(argv: string[], out: Output): Options | number {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: argv, options: { scenario: { type: 'string' }, seed: { type: 'string' }, size: { type: 'string' }, managed: { type: 'string' }, duration: { type: 'string' }, help: { type: 'boolean' } }, strict: true }));
  } catch (error) {
    out.error(`chaos: ${(error as Error).message}\n${usage}`);
    return 2;
  }
  if (values.help) {
    out.log(usage);
    return 0;
  }
  if (values.managed !== undefined && values.managed !== 'process') {
    out.error(`chaos: the scenarios need the process harness (they kill nodes and inject drive faults); --managed ${values.managed} is not available\n${usage}`);
    return 2;
  }
  const durationMs = values.duration === undefined ? undefined : parseDurationMs(values.duration as string);
  if (durationMs === null) {
    out.error(`chaos: --duration is a whole number with a unit: ms, s, m or h (for example 10m), not '${values.duration}'\n${usage}`);
    return 2;
  }
  const scenario = (values.scenario as string | undefined) ?? (durationMs !== undefined ? 'all' : undefined);
  const names = scenario === 'all' ? Object.keys(scenarios) : scenario?.endsWith('*') ? Object.keys(scenarios).filter((name) => name.startsWith(scenario.slice(0, -1))) : [scenario].filter((name): name is string => name !== undefined);
  if (names.length === 0 || names.some((name) => !scenarios[name])) {
    out.error(`chaos: choose --scenario from: ${Object.keys(scenarios).join(', ')}, or all\n${usage}`);
    return 2;
  }
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
  const size = values.size === undefined ? 1 : Number(values.size);
  if (!Number.isSafeInteger(seed) || !Number.isSafeInteger(size) || size < 1) {
    out.error(`chaos: --seed and --size are whole numbers (size at least 1)\n${usage}`);
    return 2;
  }
  return { names, seed, size, ...(durationMs !== undefined ? { durationMs } : {}) };
}

const unitsMs: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `90s`, `10m`, `1h` as milliseconds; null when not of that form (or zero). */
export function parseDurationMs(text: string): number | null {
  const match = /^(\d+)(ms|s|m|h)$/.exec(text.trim());
  if (!match) return null;
  const value = Number(match[1]) * unitsMs[match[2]!]!;
  return value > 0 && Number.isSafeInteger(value) ? value : null;
}

/** What the duration loop gathers per scenario. */
export interface ScenarioTally {
  runs: number;
  acknowledged: number;
  refused: number;
  refusals: Record<string, number>;
  problems: number;
  failedSeeds: number[];
  elapsedMs: number;
}

async function runForDuration(options: Options & { durationMs: number }, out: Output): Promise<number> {
  const started = Date.now();
  const seeds = createPrng(options.seed);
  const tallies = new Map(options.names.map((name): [string, ScenarioTally] => [name, { runs: 0, acknowledged: 0, refused: 0, refusals: {}, problems: 0, failedSeeds: [], elapsedMs: 0 }]));
  out.error(`chaos for ${options.durationMs / 1000} s (seeds drawn from ${options.seed}, size ${options.size}): ${options.names.join(', ')}`);
  for (let turn = 0; Date.now() - started < options.durationMs; turn += 1) {
    const name = options.names[turn % options.names.length]!;
    const seed = seeds.int(2 ** 31);
    const runStarted = Date.now();
    const result = await runOnce(name, seed, options.size);
    const tally = tallies.get(name)!;
    addResult(tally, result, Date.now() - runStarted);
    out.error(`  ${name} seed ${seed}: ${result.problems.length === 0 ? 'pass' : `FAIL (${result.problems.length} problems: ${result.problems[0]})`}, ${result.acknowledged} acknowledged`);
  }
  for (const line of durationSummary(tallies, options.size, Date.now() - started)) out.log(line);
  return [...tallies.values()].some((tally) => tally.failedSeeds.length > 0) ? 1 : 0;
}

/** One run; a scenario that throws is a failed run whose problem is the error. */
async function runOnce(name: string, seed: number, size: number): Promise<ChaosResult> {
  try {
    return await runScenario(name, seed, size);
  } catch (error) {
    return { scenario: name, seed, problems: [`the run stopped: ${error instanceof Error ? error.message : String(error)}`], timeline: [], acknowledged: 0, refused: 0, refusals: {} };
  }
}

function addResult(tally: ScenarioTally, result: ChaosResult, elapsedMs: number): void {
  tally.runs += 1;
  tally.acknowledged += result.acknowledged;
  tally.refused += result.refused;
  for (const [cause, count] of Object.entries(result.refusals)) tally.refusals[cause] = (tally.refusals[cause] ?? 0) + count;
  tally.problems += result.problems.length;
  if (result.problems.length > 0) tally.failedSeeds.push(result.seed);
  tally.elapsedMs += elapsedMs;
}

/** The summary table of a duration run, then a replay command per failed seed. */
export function durationSummary(tallies: Map<string, ScenarioTally>, size: number, elapsedMs: number): string[] {
  const rows = [...tallies].map(([name, tally]) => [
    name,
    String(tally.runs),
    String(tally.acknowledged),
    `${tally.refused}${refusalText(tally.refusals)}`,
    String(tally.problems),
    tally.failedSeeds.length === 0 ? '-' : tally.failedSeeds.join(' '),
    `${(tally.elapsedMs / 1000).toFixed(0)} s`,
  ]);
  const header = ['scenario', 'runs', 'acknowledged', 'refused (by cause)', 'problems', 'failed seeds', 'time'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd();
  const lines = [`chaos summary: ${[...tallies.values()].reduce((sum, tally) => sum + tally.runs, 0)} runs in ${(elapsedMs / 1000).toFixed(0)} s at size ${size}`, line(header), ...rows.map(line)];
  for (const [name, tally] of tallies) for (const seed of tally.failedSeeds) lines.push(`replay: ${replayCommand(name, seed, size)}`);
  return lines;
}

function refusalText(refusals: Record<string, number>): string {
  const why = Object.entries(refusals).map(([reason, count]) => `${count} ${reason}`).join(', ');
  return why ? ` (${why})` : '';
}

function replayCommand(name: string, seed: number, size: number): string {
  return `npm run chaos -- --scenario ${name} --seed ${seed} --size ${size}`;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').at(-1)!)) {
  process.exitCode = await main(process.argv.slice(2));
}
