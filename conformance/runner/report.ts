/**
 * Conformance results: a terminal summary per SPEC section, JUnit XML and JSON for CI, a
 * self-contained HTML page, and two reports side by side (`--compare a.json b.json`).
 */
import { XMLBuilder } from 'fast-xml-parser';
import type { Capabilities } from './capabilities.js';

export interface CheckResult {
  id: string;
  spec: string;
  title: string;
  suite: string;
  /** `s3` (AWS-documented behaviour) or `svc` (SPEC.md's own rules). */
  profile?: 's3' | 'svc';
  /** The AWS page, ceph/s3-tests case or SPEC.md section the expectation rests on. */
  source?: string;
  outcome: 'passed' | 'failed' | 'skipped' | 'not-applicable';
  message?: string;
  /** For a failure: the last request the check sent, the target's answer, and what was expected. */
  request?: string;
  answer?: string;
  expected?: string;
  durationMs: number;
}

export interface Report {
  target: string;
  seed: number;
  /** The profile run: s3, svc or all. */
  profile?: string;
  startedAt: string;
  durationMs: number;
  results: CheckResult[];
  /** Set when the run itself could not finish (cleanup problems included). */
  notes: string[];
  /** What the probes found before the run (absent in managed-only reports). */
  capabilities?: Capabilities;
}

type Counts = Record<CheckResult['outcome'], number>;

/** Counts per SPEC section (or S3 operation), in first-seen order. */
export function countsBySection(report: Report): Map<string, Counts> {
  const sections = new Map<string, Counts>();
  for (const result of report.results) {
    const entry = sections.get(result.spec) ?? { passed: 0, failed: 0, skipped: 0, 'not-applicable': 0 };
    entry[result.outcome] += 1;
    sections.set(result.spec, entry);
  }
  return sections;
}

/** The lines that explain a verdict: what went wrong, the request, the answer, what was expected and on what authority. */
export function explanation(result: CheckResult): string[] {
  return [
    ...(result.message ? [result.message] : []),
    ...(result.request ? [`request:  ${result.request}`] : []),
    ...(result.answer ? [`answer:   ${result.answer}`] : []),
    ...(result.expected ? [`expected: ${result.expected}`] : []),
    ...(result.source ? [`source:   ${result.source}`] : []),
  ];
}

const verdict = (counts: Counts) => (counts.failed > 0 ? 'FAIL' : counts.passed > 0 ? 'pass' : counts['not-applicable'] > 0 ? 'n/a' : 'skip');

/** Plain-text columns, padded to the widest cell. */
export function textTable(headers: string[], rows: string[][]): string[] {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd();
  return [line(headers), ...rows.map(line)];
}

export function summaryTable(report: Report): string {
  const rows = [...countsBySection(report)].map(([spec, counts]) => [spec, verdict(counts), String(counts.passed), String(counts.failed), String(counts.skipped), String(counts['not-applicable'])]);
  const failed = report.results.filter((result) => result.outcome === 'failed');
  const totals = (outcome: CheckResult['outcome']) => report.results.filter((result) => result.outcome === outcome).length;
  const absent = Object.entries(report.capabilities ?? {}).filter(([, state]) => !state.present);
  return [
    ...textTable(['SPEC SECTION / S3 OPERATION', 'RESULT', 'PASSED', 'FAILED', 'SKIPPED', 'N/A'], rows),
    '',
    ...absent.map(([name, state]) => `not offered: ${name} (${state.detail})`),
    ...failed.map((result) => [`FAILED ${result.id} (${result.spec}): ${result.message}`, ...explanation(result).slice(result.message ? 1 : 0).map((line) => `    ${line}`)].join('\n')),
    ...report.notes.map((note) => `note: ${note}`),
    `${totals('passed')} passed, ${totals('failed')} failed, ${totals('skipped')} skipped, ${totals('not-applicable')} not applicable against ${report.target} (seed ${report.seed}, ${(report.durationMs / 1000).toFixed(1)} s)`,
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
      '@skipped': report.results.filter((result) => result.outcome === 'skipped' || result.outcome === 'not-applicable').length,
      '@time': (report.durationMs / 1000).toFixed(3),
      testsuite: suites.map((suite) => {
        const results = report.results.filter((result) => result.suite === suite);
        return {
          '@name': suite,
          '@tests': results.length,
          '@failures': results.filter((result) => result.outcome === 'failed').length,
          '@skipped': results.filter((result) => result.outcome === 'skipped' || result.outcome === 'not-applicable').length,
          testcase: results.map((result) => ({
            '@name': `${result.id}: ${result.title}`,
            '@classname': `${suite}.${result.spec}`,
            '@time': (result.durationMs / 1000).toFixed(3),
            ...(result.source || result.profile ? { properties: { property: [...(result.profile ? [{ '@name': 'profile', '@value': result.profile }] : []), ...(result.source ? [{ '@name': 'source', '@value': result.source }] : [])] } } : {}),
            ...(result.outcome === 'failed' ? { failure: { '@message': result.message ?? 'failed', '#text': explanation(result).join('\n') } } : {}),
            ...(result.outcome === 'skipped' || result.outcome === 'not-applicable' ? { skipped: { '@message': `${result.outcome === 'not-applicable' ? 'not applicable: ' : ''}${result.message ?? ''}` } } : {}),
          })),
        };
      }),
    },
  };
  return builder.build(document) as string;
}

/** Two reports side by side, section by section, then every check whose outcome differs. */
export function compareReports(left: Report, right: Report): string {
  const a = countsBySection(left);
  const b = countsBySection(right);
  const cell = (counts: Counts | undefined) => (counts ? `${verdict(counts)} ${counts.passed}/${counts.passed + counts.failed}${counts['not-applicable'] ? ` (${counts['not-applicable']} n/a)` : ''}` : '-');
  const sections = [...new Set([...a.keys(), ...b.keys()])];
  const rows = sections.map((section) => [section, cell(a.get(section)), cell(b.get(section))]);
  const byId = new Map(right.results.map((result) => [result.id, result]));
  const differing = left.results.filter((result) => byId.get(result.id)?.outcome !== result.outcome);
  const total = (report: Report) => `${report.results.filter((result) => result.outcome === 'passed').length} passed, ${report.results.filter((result) => result.outcome === 'failed').length} failed, ${report.results.filter((result) => result.outcome === 'not-applicable').length} n/a`;
  return [
    `A: ${left.target} (${total(left)})`,
    `B: ${right.target} (${total(right)})`,
    '',
    ...textTable(['SPEC SECTION / S3 OPERATION', 'A passed/run', 'B passed/run'], rows),
    '',
    ...differing.map((result) => `${result.id}: A ${result.outcome}, B ${byId.get(result.id)?.outcome ?? 'absent'}${byId.get(result.id)?.message ? ` — ${byId.get(result.id)!.message}` : ''}`),
  ].join('\n');
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Escaped text whose URLs are links. */
const linked = (text: string) => text.split(/(https?:\/\/[^\s;,)]+)/).map((part, index) => (index % 2 === 1 ? `<a href="${escapeHtml(part)}">${escapeHtml(part)}</a>` : escapeHtml(part))).join('');

/** One HTML page, no external assets: a summary per section, then every check (failures open). */
export function htmlReport(report: Report): string {
  const sections = [...countsBySection(report)];
  const colour: Record<CheckResult['outcome'], string> = { passed: '#1a7f37', failed: '#cf222e', skipped: '#6e7781', 'not-applicable': '#9a6700' };
  const summary = sections.map(([spec, counts]) => `<tr><td><a href="#${encodeURIComponent(spec)}">${escapeHtml(spec)}</a></td><td class="${verdict(counts)}">${verdict(counts)}</td><td>${counts.passed}</td><td>${counts.failed}</td><td>${counts.skipped}</td><td>${counts['not-applicable']}</td></tr>`).join('\n');
  const details = sections
    .map(([spec, counts]) => {
      const items = report.results
        .filter((result) => result.spec === spec)
        .map((result) => `<li><span style="color:${colour[result.outcome]}">${result.outcome}</span> <code>${escapeHtml(result.id)}</code> ${escapeHtml(result.title)} <small>${result.durationMs} ms</small>${result.source ? ` <small>source: ${linked(result.source)}</small>` : ''}${result.message ? `<pre>${escapeHtml(explanation(result).filter((line) => !line.startsWith('source:')).join('\n'))}</pre>` : ''}</li>`)
        .join('\n');
      return `<details id="${encodeURIComponent(spec)}"${counts.failed > 0 ? ' open' : ''}><summary>${escapeHtml(spec)} — ${verdict(counts)}</summary><ul>${items}</ul></details>`;
    })
    .join('\n');
  const capabilities = Object.entries(report.capabilities ?? {}).map(([name, state]) => `<li>${escapeHtml(name)}: ${state.present ? 'yes' : '<b>no</b>'} — ${escapeHtml(state.detail)}</li>`).join('\n');
  const count = (outcome: CheckResult['outcome']) => report.results.filter((result) => result.outcome === outcome).length;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>svc conformance: ${escapeHtml(report.target)}</title>
<style>body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:2px 8px;text-align:left}.FAIL{color:#cf222e;font-weight:bold}.pass{color:#1a7f37}pre{white-space:pre-wrap;background:#f6f8fa;padding:4px}summary{cursor:pointer;font-weight:600}</style></head>
<body><h1>Conformance of ${escapeHtml(report.target)}</h1>
<p>${count('passed')} passed, ${count('failed')} failed, ${count('skipped')} skipped, ${count('not-applicable')} not applicable; profile ${escapeHtml(report.profile ?? 'all')}; seed ${report.seed}; started ${escapeHtml(report.startedAt)}; ${(report.durationMs / 1000).toFixed(1)} s.</p>
<h2>Capabilities</h2><ul>${capabilities}</ul>
<h2>By section</h2><table><tr><th>SPEC section / S3 operation</th><th>result</th><th>passed</th><th>failed</th><th>skipped</th><th>n/a</th></tr>
${summary}</table>
<h2>Checks</h2>
${details}
${report.notes.map((note) => `<p>note: ${escapeHtml(note)}</p>`).join('\n')}
</body></html>
`;
}

const markdownCell = (text: string) => text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

/** A Markdown summary for pasting into an issue: totals, a table per section, then every failure explained. */
export function markdownReport(report: Report): string {
  const count = (outcome: CheckResult['outcome']) => report.results.filter((result) => result.outcome === outcome).length;
  const rows = [...countsBySection(report)].map(([spec, counts]) => `| ${markdownCell(spec)} | ${verdict(counts)} | ${counts.passed} | ${counts.failed} | ${counts.skipped} | ${counts['not-applicable']} |`);
  const failures = report.results.filter((result) => result.outcome === 'failed');
  const absent = Object.entries(report.capabilities ?? {}).filter(([, state]) => !state.present);
  return [
    `## Conformance of ${report.target}`,
    '',
    `${count('passed')} passed, ${count('failed')} failed, ${count('skipped')} skipped, ${count('not-applicable')} not applicable (profile ${report.profile ?? 'all'}, seed ${report.seed}, ${(report.durationMs / 1000).toFixed(1)} s, ${report.startedAt}).`,
    '',
    '| section | result | passed | failed | skipped | n/a |',
    '|---|---|---|---|---|---|',
    ...rows,
    ...(absent.length > 0 ? ['', '**Not offered:**', '', ...absent.map(([name, state]) => `- ${name}: ${markdownCell(state.detail)}`)] : []),
    ...(failures.length > 0 ? ['', '### Failures', '', ...failures.flatMap((result) => [`<details><summary><code>${result.id}</code>: ${markdownCell(result.title)}</summary>`, '', '```', ...explanation(result), '```', '</details>', ''])] : []),
    ...report.notes.map((note) => `> note: ${markdownCell(note)}`),
    '',
  ].join('\n');
}
