/**
 * `npm run chaos -- --scenario NAME|all [--seed N] [--size N] [--managed process]`: runs chaos
 * scenarios on clusters it starts itself. A failure prints the seed and the fault timeline; the
 * same seed replays the same traffic and faults at the same points of it (scenarios.ts says what
 * a seed does not fix).
 */
import { parseArgs } from 'node:util';
import { runScenario, scenarios } from './scenarios.js';

const usage = `usage: npm run chaos -- --scenario <name>|all [--seed <n>] [--size <n>] [--managed process]
scenarios: ${Object.keys(scenarios).join(', ')}`;

export async function main(argv: string[]): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: argv, options: { scenario: { type: 'string' }, seed: { type: 'string' }, size: { type: 'string' }, managed: { type: 'string' }, help: { type: 'boolean' } }, strict: true }));
  } catch (error) {
    console.error(`chaos: ${(error as Error).message}\n${usage}`);
    return 2;
  }
  if (values.help) {
    console.log(usage);
    return 0;
  }
  if (values.managed !== undefined && values.managed !== 'process') {
    console.error(`chaos: the scenarios need the process harness (they kill nodes and inject drive faults); --managed ${values.managed} is not available\n${usage}`);
    return 2;
  }
  const names = values.scenario === 'all' ? Object.keys(scenarios) : [values.scenario as string | undefined].filter((name): name is string => name !== undefined);
  if (names.length === 0 || names.some((name) => !scenarios[name])) {
    console.error(`chaos: choose --scenario from: ${Object.keys(scenarios).join(', ')}, or all\n${usage}`);
    return 2;
  }
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
  const size = values.size === undefined ? 1 : Number(values.size);
  if (!Number.isSafeInteger(seed) || !Number.isSafeInteger(size) || size < 1) {
    console.error(`chaos: --seed and --size are whole numbers (size at least 1)\n${usage}`);
    return 2;
  }
  let failed = 0;
  for (const name of names) {
    console.error(`chaos ${name} (seed ${seed}, size ${size}) ...`);
    const result = await runScenario(name, seed, size);
    const verdict = result.problems.length === 0 ? 'pass' : 'FAIL';
    const why = Object.entries(result.refusals).map(([reason, count]) => `${count} ${reason}`).join(', ');
    console.log(`${verdict}  ${name}: ${result.acknowledged} writes acknowledged, ${result.refused} refused${why ? ` (${why})` : ''}`);
    if (result.problems.length > 0) {
      failed += 1;
      console.log(`  seed ${seed} (replay: npm run chaos -- --scenario ${name} --seed ${seed} --size ${size})`);
      for (const problem of result.problems) console.log(`  problem: ${problem}`);
      for (const event of result.timeline) console.log(`  ${event}`);
    }
  }
  return failed > 0 ? 1 : 0;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').at(-1)!)) {
  process.exitCode = await main(process.argv.slice(2));
}
