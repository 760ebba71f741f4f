/**
 * Rewrites the README's one-node-against-four figures from a cluster bench run:
 *
 *   npm run bench -- --cluster --small=1000 --large=8 --rounds=3 --json=bench.json
 *   npm run readme:figures -- bench.json
 *
 * The figures sit between `<!-- bench:cluster -->` and `<!-- /bench:cluster -->` in README.md;
 * nothing else in the README changes, and the block is never edited by hand
 * (test/readme-figures.test.ts checks that it parses).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseClusterBenchSummary, summaryPhases, type ClusterBenchSummary, type SummaryPhase } from '../bench/cluster-summary.js';

export const readmePath = fileURLToPath(new URL('../README.md', import.meta.url));
export const blockStart = '<!-- bench:cluster -->';
export const blockEnd = '<!-- /bench:cluster -->';

const rowNames: Record<SummaryPhase, string> = {
  smallPut: '4 KiB PUT, 32 at a time',
  smallGet: '4 KiB GET, 32 at a time',
  largePut: '64 MiB PUT, 4 at a time',
  largeGet: '64 MiB GET, 4 at a time',
};
const header = '| | one node | four nodes | throughput, four ÷ one | server CPU per operation, four ÷ one |';

const words = ['no', 'One', 'Two', 'Three', 'Four', 'Five', 'Six', 'Seven', 'Eight', 'Nine'];
const rate = (value: number, unit: string): string => `${Math.round(value).toLocaleString('en-US')}${unit === 'op/s' ? '/s' : ' MB/s'}`;
const ratio = (value: number): string => `×${value.toFixed(2)}`;

/** The README's block for this summary: a sentence on how it was measured, then the table. */
export function renderClusterFigures(summary: ClusterBenchSummary): string {
  const rounds = summary.rounds === 1 ? 'One round' : `${words[summary.rounds] ?? summary.rounds} rounds`;
  const lines = [
    `${rounds} on this ${summary.cores}-core machine (${summary.rounds === 1 ? 'one round' : 'medians'}; the four processes share its cores with the load generator, and each node is warmed up with as many requests as the one node):`,
    '',
    header,
    '|---|---:|---:|---:|---:|',
  ];
  for (const phase of summaryPhases) {
    const figures = summary.phases[phase];
    if (figures) lines.push(`| ${rowNames[phase]} | ${rate(figures.one, figures.unit)} | ${rate(figures.four, figures.unit)} | ${ratio(figures.rateRatio)} | ${ratio(figures.cpuRatio)} |`);
  }
  return lines.join('\n');
}

export interface FigureRow {
  name: string;
  one: number;
  four: number;
  rateRatio: number;
  cpuRatio: number;
}

/** The table rows of a block as numbers; an Error naming the row when one does not parse. */
export function parseClusterFigures(block: string): FigureRow[] {
  const lines = block.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith(header) && !line.startsWith('|---'));
  if (!block.includes(header)) throw new Error('the block has no figures table');
  return lines.map((line) => {
    const cells = line.split('|').slice(1, -1).map((cell) => cell.trim());
    const match = cells.length === 5 && /^(\d[\d,]*)(\/s| MB\/s)$/.exec(cells[1]!) && /^(\d[\d,]*)(\/s| MB\/s)$/.exec(cells[2]!);
    const ratios = cells.slice(3).map((cell) => /^×(\d+\.\d\d)$/.exec(cell ?? ''));
    if (!match || ratios.some((found) => !found) || !Object.values(rowNames).includes(cells[0]!)) throw new Error(`a figures row does not parse: ${line}`);
    const number = (cell: string) => Number(cell.replace(/[^\d]/g, ''));
    return { name: cells[0]!, one: number(cells[1]!), four: number(cells[2]!), rateRatio: Number(ratios[0]![1]), cpuRatio: Number(ratios[1]![1]) };
  });
}

/** The text between the markers. */
export function figuresBlock(readme: string): string {
  const start = readme.indexOf(blockStart);
  const end = readme.indexOf(blockEnd);
  if (start < 0 || end < start) throw new Error(`README.md has no ${blockStart} ... ${blockEnd} block`);
  return readme.slice(start + blockStart.length, end).replace(/^\n/, '').replace(/\n$/, '');
}

/** The README with the block between the markers replaced. */
export function withFigures(readme: string, block: string): string {
  const start = readme.indexOf(blockStart);
  const end = readme.indexOf(blockEnd);
  if (start < 0 || end < start) throw new Error(`README.md has no ${blockStart} ... ${blockEnd} block`);
  return `${readme.slice(0, start + blockStart.length)}\n${block}\n${readme.slice(end)}`;
}

function main(args: string[]): void {
  const [file] = args;
  if (file === undefined) throw new Error('usage: npm run readme:figures -- <summary.json from npm run bench -- --cluster --json=FILE>');
  const summary = parseClusterBenchSummary(JSON.parse(readFileSync(file, 'utf8')));
  const block = renderClusterFigures(summary);
  parseClusterFigures(block);
  writeFileSync(readmePath, withFigures(readFileSync(readmePath, 'utf8'), block));
  console.log(`README.md: the cluster figures of the run that ended ${summary.finishedAt}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    main(process.argv.slice(2));
  } catch (error) {
    console.error(`readme-figures: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
