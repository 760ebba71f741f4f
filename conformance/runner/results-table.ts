/**
 * The tables the docs keep of the checks and of what several servers make of them: how many
 * checks each profile holds, and per section and profile the verdicts of each target. Written
 * between markers by scripts/conformance-results.ts and read back by the tests, which compare
 * them with what the runner counts and with fresh runs.
 */
import { profileOf, type Check } from './check.js';
import type { Report } from './report.js';

export const countsMarkers = { begin: '<!-- conformance-counts:begin -->', end: '<!-- conformance-counts:end -->' };
export const resultsMarkers = { begin: '<!-- conformance-results:begin -->', end: '<!-- conformance-results:end -->' };

/** Checks per profile and suite, and the totals. */
export function checkCounts(suites: { suite: string; checks: Check[] }[]): { suite: string; s3: number; svc: number }[] {
  return suites.map(({ suite, checks }) => ({ suite, s3: checks.filter((check) => profileOf(check) === 's3').length, svc: checks.filter((check) => profileOf(check) === 'svc').length }));
}

export function countsTable(suites: { suite: string; checks: Check[] }[]): string {
  const rows = checkCounts(suites);
  const sum = (field: 's3' | 'svc') => rows.reduce((total, row) => total + row[field], 0);
  return [
    '| suite | profile s3 | profile svc | all |',
    '|---|---:|---:|---:|',
    ...rows.map((row) => `| \`${row.suite}\` | ${row.s3} | ${row.svc} | ${row.s3 + row.svc} |`),
    `| **total** | ${sum('s3')} | ${sum('svc')} | ${sum('s3') + sum('svc')} |`,
  ].join('\n');
}

/** One target's verdicts per section and profile: `passed/run`, with n/a and skipped counts. */
export function columnOf(report: Report): Map<string, string> {
  const cells = new Map<string, { passed: number; failed: number; na: number; skipped: number }>();
  for (const result of report.results) {
    const row = `${result.spec} | ${result.profile ?? 'svc'}`;
    const cell = cells.get(row) ?? { passed: 0, failed: 0, na: 0, skipped: 0 };
    if (result.outcome === 'passed') cell.passed += 1;
    if (result.outcome === 'failed') cell.failed += 1;
    if (result.outcome === 'not-applicable') cell.na += 1;
    if (result.outcome === 'skipped') cell.skipped += 1;
    cells.set(row, cell);
  }
  return new Map([...cells].map(([row, cell]) => [row, [`${cell.passed}/${cell.passed + cell.failed}`, ...(cell.na ? [`${cell.na} n/a`] : []), ...(cell.skipped ? [`${cell.skipped} skipped`] : [])].join(', ')]));
}

/** Totals of one target in one profile (or all). */
function totals(report: Report, profile: 's3' | 'svc' | 'all'): string {
  const results = report.results.filter((result) => profile === 'all' || (result.profile ?? 'svc') === profile);
  const count = (outcome: string) => results.filter((result) => result.outcome === outcome).length;
  return `${count('passed')} passed, ${count('failed')} failed, ${count('not-applicable')} n/a${count('skipped') ? `, ${count('skipped')} skipped` : ''}`;
}

/** The results table of several targets: per profile the totals, then per section and profile each target's cell. */
export function resultsTable(targets: { name: string; report: Report }[]): string {
  const columns = targets.map(({ name, report }) => ({ name, cells: columnOf(report) }));
  const rows = [...new Set(columns.flatMap((column) => [...column.cells.keys()]))];
  return [
    `| profile | ${targets.map((target) => target.name).join(' | ')} |`,
    `|---|${targets.map(() => '---').join('|')}|`,
    ...(['s3', 'svc', 'all'] as const).map((profile) => `| ${profile} | ${targets.map((target) => totals(target.report, profile)).join(' | ')} |`),
    '',
    `| section | profile | ${targets.map((target) => target.name).join(' | ')} |`,
    `|---|---|${targets.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row} | ${columns.map((column) => column.cells.get(row) ?? '-').join(' | ')} |`),
  ].join('\n');
}

/** The text between two markers of a document. */
export function between(document: string, markers: { begin: string; end: string }): string {
  const start = document.indexOf(markers.begin);
  const end = document.indexOf(markers.end);
  if (start < 0 || end < start) throw new Error(`the markers ${markers.begin} ... ${markers.end} are missing`);
  return document.slice(start + markers.begin.length, end).trim();
}

/** A document with the text between two markers replaced. */
export function replaceBetween(document: string, markers: { begin: string; end: string }, text: string): string {
  between(document, markers);
  return `${document.slice(0, document.indexOf(markers.begin) + markers.begin.length)}\n${text}\n${document.slice(document.indexOf(markers.end))}`;
}

/** One target's column of a results table as written (section | profile -> cell). */
export function documentedColumn(table: string, target: string): Map<string, string> {
  const lines = table.split('\n').filter((line) => line.startsWith('| '));
  const header = lines.find((line) => line.startsWith('| section | profile |'));
  if (!header) throw new Error('no per-section results table');
  const names = header.split('|').slice(1, -1).map((cell) => cell.trim());
  const column = names.indexOf(target);
  if (column < 0) throw new Error(`no column ${target} in the results table`);
  const found = new Map<string, string>();
  for (const line of lines.slice(lines.indexOf(header) + 1)) {
    const cells = line.split(' | ').map((cell) => cell.replace(/^\| ?| ?\|$/g, '').trim());
    if (cells.length !== names.length) continue;
    if (cells[column] !== '-') found.set(`${cells[0]} | ${cells[1]}`, cells[column]!);
  }
  return found;
}

/** The runs the results table records (the same the tests repeat): suites s3, admin and model, mutations allowed. */
export const resultsTargets = {
  svc: { name: 'svc (2 nodes, 2 pools)', seed: 42, runs: 4 },
  s3rver: { name: 's3rver 3.7.1', seed: 9, runs: 3 },
  fauxqs: { name: 'fauxqs 2.4.1', seed: 9, runs: 3 },
} as const;
