/**
 * `npm run bench -- --cluster --compare=<git ref>`: this checkout's build against the build of
 * another commit, fairly on a machine whose other work comes and goes.
 *
 *   npm run bench -- --cluster --compare=<ref> [--compare-env=NAME=VALUE[,NAME=VALUE]]... [--compare-again] [--targets=four|one|one,four] [--rounds=R] [--quick] [other flags of bench/cluster.ts]
 *
 * The ref is checked out into a temporary worktree (`git worktree add --detach`), built there with
 * this checkout's node_modules linked in, and removed at the end. Each `--compare-env` adds this
 * checkout's build once more with those variables set (SVC_DRIVE_MAX_TIMEOUT=0: no drive
 * deadline); `--compare-again` adds it once more as it is (`after again`), so that the run
 * measures its own noise: after ÷ after again differs from 1 only by chance. For each target (four nodes by default) every build's servers run at once and the
 * builds take turns (bench/cluster.ts, measureTarget): each warm-up and each timed phase is run by
 * one build right after another, in the order given in the first round and reversed in the next
 * (compare.ts, roundOrder), so each ratio of two builds' figures is taken within seconds, under
 * the same background load, and neither build always goes first.
 *
 * After every round it prints, per phase, the ratios of throughput and of server CPU per
 * operation (summed over the nodes) for each pair compared: after ÷ before, each variant ÷
 * before, after ÷ each variant (what the variant's setting costs); each round's ratio, their
 * median and range; and the machine's load during each build's measurement. `--compare=HEAD`
 * compares a commit's build with a second build of itself. The probe (round trips one
 * operation at a time) runs in the first round only: the load does not move it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../conformance/harness/server-process.js';
import { buildIsCurrent } from '../conformance/harness/entry.js';
import { measureTarget, phaseNames, targetLabels, phases, printSetup, printTarget, settingsOf, type Build, type Phase, type TargetFigures, type TargetName } from './cluster.js';
import { pairsOf, parseEnvList, ratioSummary, ratioText, roundOrder, type RatioSummary } from './compare.js';

function git(args: string[], cwd = repoRoot): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** Another commit's build, in a temporary worktree. */
interface CheckedOut {
  commit: string;
  /** Its server, to start in place of this checkout's. */
  script: string;
  remove(): void;
}

/** Checks `ref` out into a temporary worktree and builds it there (`npm run build`, this checkout's node_modules linked in). */
function checkOut(ref: string): CheckedOut {
  let commit: string;
  try {
    commit = git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  } catch {
    throw new Error(`--compare=${ref}: not a commit of this repository`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-build-'));
  git(['worktree', 'add', '--detach', dir, commit]);
  const remove = (): void => {
    try {
      git(['worktree', 'remove', '--force', dir]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  try {
    symlinkSync(realpathSync(join(repoRoot, 'node_modules')), join(dir, 'node_modules'));
    console.log(`building ${ref} (${commit.slice(0, 10)}) in ${dir}`);
    execFileSync('npm', ['run', '-s', 'build'], { cwd: dir, stdio: ['ignore', 'inherit', 'inherit'] });
  } catch (error) {
    remove();
    throw error;
  }
  return { commit, script: join(dir, 'dist/src/cli/svc.js'), remove };
}

function targetsOf(args: string[]): TargetName[] {
  const given = args.find((arg) => arg.startsWith('--targets='))?.slice('--targets='.length) ?? 'four';
  const names = given.split(',');
  if (!names.every((name) => name === 'one' || name === 'four')) throw new Error(`--targets=${given}: one, four, or one,four`);
  return [...new Set(names)] as TargetName[];
}

/** Per round, the figures of each build (by index) of each target measured. */
type Round = Partial<Record<TargetName, TargetFigures[]>>;

const serverCpu = (figures: TargetFigures, phase: Phase): number => figures.phases[phase].serverCpuMs.reduce((total, ms) => total + ms, 0);

function compared(rounds: Round[], target: TargetName, phase: Phase, [a, b]: [number, number]): { rate: RatioSummary; cpu: RatioSummary } {
  const of = (build: number, figure: (figures: TargetFigures) => number): number[] => rounds.map((round) => figure(round[target]![build]!));
  return {
    rate: ratioSummary(of(a, (figures) => figures.phases[phase].rate), of(b, (figures) => figures.phases[phase].rate)),
    cpu: ratioSummary(of(a, (figures) => serverCpu(figures, phase)), of(b, (figures) => serverCpu(figures, phase))),
  };
}

function printComparison(builds: Build[], rounds: Round[], targets: TargetName[]): void {
  const pairs = pairsOf(builds.length);
  const pairName = ([a, b]: [number, number]): string => `${builds[a]!.name} ÷ ${builds[b]!.name}`;
  const roundsText = (summary: RatioSummary): string => summary.rounds.map((ratio) => ratio.toFixed(2)).join(', ');
  console.log(`\nafter ${rounds.length} round(s), ratios taken within each round: median (lowest-highest round); throughput above 1 is faster, server CPU per operation above 1 costlier`);
  for (const target of targets) {
    const measured = phases.filter((phase) => rounds.every((round) => round[target]!.every((figures) => figures.phases[phase] !== undefined)));
    console.log(`${targetLabels[target]}:`);
    for (const phase of measured) {
      console.log(`  ${phaseNames[phase]}`);
      for (const [index, round] of rounds.entries()) {
        const each = (figure: (figures: TargetFigures) => string): string => round[target]!.map(figure).join(' / ');
        console.log(`    round ${index + 1}, builds as listed: load average ${each((figures) => figures.phases[phase].loadAverage.toFixed(1))}; other processes ${each((figures) => figures.phases[phase].otherCores.toFixed(2))} cores`);
      }
      for (const pair of pairs) {
        const { rate, cpu } = compared(rounds, target, phase, pair);
        console.log(`    ${pairName(pair).padEnd(48)} throughput ${ratioText(rate).padEnd(18)} rounds ${roundsText(rate).padEnd(24)} server CPU ${ratioText(cpu).padEnd(18)} rounds ${roundsText(cpu)}`);
      }
    }
    // The same medians as a Markdown table, for docs/benchmarks.md.
    console.log(`\n| phase (${targetLabels[target]}) | ${pairs.map((pair) => `${pairName(pair)}: throughput | server CPU`).join(' | ')} |`);
    console.log(`|---|${pairs.map(() => '---:|---:|').join('')}`);
    for (const phase of measured) {
      const cells = pairs.flatMap((pair) => {
        const { rate, cpu } = compared(rounds, target, phase, pair);
        return [ratioText(rate).replace('x', '×'), ratioText(cpu).replace('x', '×')];
      });
      console.log(`| ${phaseNames[phase]} | ${cells.join(' | ')} |`);
    }
  }
}

export async function runClusterCompare(args: string[]): Promise<void> {
  if (!buildIsCurrent()) throw new Error("this checkout's dist/ is missing or older than its sources: npm run build first, so that 'after' is the code as it stands");
  const settings = settingsOf(args);
  const ref = args.find((arg) => arg.startsWith('--compare='))?.slice('--compare='.length);
  if (!ref) throw new Error('--compare=<git ref> names the commit to compare with (a hash, a branch, HEAD~3); --compare-env and --targets go with it');
  const variants = args.filter((arg) => arg.startsWith('--compare-env=')).map((arg) => parseEnvList(arg.slice('--compare-env='.length)));
  const targets = targetsOf(args);
  const checkedOut = checkOut(ref);
  // Stopped by a signal, the worktree still goes (the servers, in this process's group, get the signal too).
  const onSignal = (): void => {
    checkedOut.remove();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const root = await mkdtemp(join(tmpdir(), 'svc-bench-compare-'));
  try {
    const builds: Build[] = [
      { name: 'before', script: checkedOut.script },
      { name: 'after' },
      ...variants.map((env) => ({ name: `after ${Object.entries(env).map(([name, value]) => `${name}=${value}`).join(' ')}`, env })),
      ...(args.includes('--compare-again') ? [{ name: 'after again' }] : []),
    ];
    printSetup(settings);
    console.log(`before: ${ref} (${checkedOut.commit.slice(0, 10)}), built in a temporary worktree; after: this checkout (${git(['describe', '--always', '--dirty'])})`);
    console.log(`builds, in the order of odd rounds (even rounds reverse it): ${builds.map((build) => build.name).join(', ')}\n`);
    const rounds: Round[] = [];
    for (let index = 0; index < settings.rounds; index += 1) {
      const order = roundOrder(builds.map((_, build) => build), index);
      const round: Round = {};
      for (const target of targets) {
        const measured = await measureTarget(target, join(root, `round-${index + 1}`, target), settings, order.map((build) => builds[build]!), { probe: index === 0 });
        const byBuild: TargetFigures[] = [];
        for (const [position, build] of order.entries()) byBuild[build] = measured[position]!;
        round[target] = byBuild;
        console.log(`round ${index + 1} of ${settings.rounds}, ${targetLabels[target]}, in turn: ${order.map((build) => builds[build]!.name).join(', ')}`);
        for (const [build, figures] of byBuild.entries()) printTarget(builds[build]!.name, figures);
      }
      rounds.push(round);
      printComparison(builds, rounds, targets);
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await rm(root, { recursive: true, force: true });
    checkedOut.remove();
  }
}
