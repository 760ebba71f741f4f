/** Conformance results: a terminal summary per SPEC section, JUnit XML and JSON for CI. */
import { XMLBuilder } from 'fast-xml-parser';

export interface CheckResult {
  id: string;
  spec: string;
  title: string;
  suite: string;
  outcome: 'passed' | 'failed' | 'skipped';
  message?: string;
  durationMs: number;
}

export interface Report {
  target: string;
  seed: number;
  startedAt: string;
  durationMs: number;
  results: CheckResult[];
  /** Set when the run itself could not finish (cleanup problems included). */
  notes: string[];
}

export function summaryTable(report: Report): string {
  const sections = new Map<string, { passed: number; failed: number; skipped: number }>();
  for (const result of report.results) {
    const entry = sections.get(result.spec) ?? { passed: 0, failed: 0, skipped: 0 };
    entry[result.outcome] += 1;
    sections.set(result.spec, entry);
  }
  const rows = [...sections].map(([spec, counts]) => [spec, counts.failed > 0 ? 'FAIL' : counts.passed > 0 ? 'pass' : 'skip', String(counts.passed), String(counts.failed), String(counts.skipped)]);
  const headers = ['SPEC SECTION', 'RESULT', 'PASSED', 'FAILED', 'SKIPPED'];
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd();
  const failed = report.results.filter((result) => result.outcome === 'failed');
  const totals = (outcome: CheckResult['outcome']) => report.results.filter((result) => result.outcome === outcome).length;
  return [
    line(headers),
    ...rows.map(line),
    '',
    ...failed.map((result) => `FAILED ${result.id} (${result.spec}): ${result.message}`),
    ...report.notes.map((note) => `note: ${note}`),
    `${totals('passed')} passed, ${totals('failed')} failed, ${totals('skipped')} skipped against ${report.target} (seed ${report.seed}, ${(report.durationMs / 1000).toFixed(1)} s)`,
  ].join('\n');
}

export function junitXml(report: Report): string {
  const suites = [...new Set(report.results.map((result) => result.suite))];
  const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@', format: true, suppressEmptyNode: true });
  const document = {
    '?xml': { '@version': '1.0', '@encoding': 'UTF-8' },
    testsuites: {
      '@name': `svc conformance against ${report.target}`,
      '@tests': report.results.length,
      '@failures': report.results.filter((result) => result.outcome === 'failed').length,
      '@skipped': report.results.filter((result) => result.outcome === 'skipped').length,
      '@time': (report.durationMs / 1000).toFixed(3),
      testsuite: suites.map((suite) => {
        const results = report.results.filter((result) => result.suite === suite);
        return {
          '@name': suite,
          '@tests': results.length,
          '@failures': results.filter((result) => result.outcome === 'failed').length,
          '@skipped': results.filter((result) => result.outcome === 'skipped').length,
          testcase: results.map((result) => ({
            '@name': `${result.id}: ${result.title}`,
            '@classname': `${suite}.${result.spec}`,
            '@time': (result.durationMs / 1000).toFixed(3),
            ...(result.outcome === 'failed' ? { failure: { '@message': result.message ?? 'failed', '#text': result.message ?? '' } } : {}),
            ...(result.outcome === 'skipped' ? { skipped: { '@message': result.message ?? '' } } : {}),
          })),
        };
      }),
    },
  };
  return builder.build(document) as string;
}
