/**
 * The README's cluster figures are written only by scripts/readme-figures.ts from a bench run's
 * JSON: the marked block must parse as that script writes it, and a summary rendered and parsed
 * gives its own medians back.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseClusterBenchSummary, type ClusterBenchSummary } from '../bench/cluster-summary.js';
import { figuresBlock, parseClusterFigures, readmePath, renderClusterFigures, withFigures } from '../scripts/readme-figures.js';

const summary: ClusterBenchSummary = {
  kind: 'svc-cluster-bench',
  version: 1,
  finishedAt: '2026-11-29T03:00:00.000Z',
  cores: 2,
  rounds: 3,
  settings: { smallOps: 1000, largeObjects: 8, warmUpPairs: 6000, client: 'sdk' },
  phases: {
    smallPut: { unit: 'op/s', one: 250.4, four: 209.2, rateRatio: 0.8412, cpuRatio: 1.566 },
    smallGet: { unit: 'op/s', one: 1280, four: 785, rateRatio: 0.62, cpuRatio: 2.15 },
    largePut: { unit: 'MB/s', one: 254, four: 221, rateRatio: 0.88, cpuRatio: 1.2 },
    largeGet: { unit: 'MB/s', one: 947, four: 671, rateRatio: 0.69, cpuRatio: 1.88 },
  },
};

describe('the README cluster figures', () => {
  it('the marked block in README.md parses: four rows of rates and ratios', () => {
    const rows = parseClusterFigures(figuresBlock(readFileSync(readmePath, 'utf8')));
    expect(rows.map((row) => row.name)).toEqual(['4 KiB PUT, 32 at a time', '4 KiB GET, 32 at a time', '64 MiB PUT, 4 at a time', '64 MiB GET, 4 at a time']);
    for (const row of rows) for (const value of [row.one, row.four, row.rateRatio, row.cpuRatio]) expect(value).toBeGreaterThan(0);
  });

  it('a summary rendered into the block reads back as its medians, the rest of the README unchanged', () => {
    const readme = readFileSync(readmePath, 'utf8');
    const rewritten = withFigures(readme, renderClusterFigures(summary));
    const rows = parseClusterFigures(figuresBlock(rewritten));
    expect(rows[0]).toEqual({ name: '4 KiB PUT, 32 at a time', one: 250, four: 209, rateRatio: 0.84, cpuRatio: 1.57 });
    expect(rows[3]).toEqual({ name: '64 MiB GET, 4 at a time', one: 947, four: 671, rateRatio: 0.69, cpuRatio: 1.88 });
    expect(figuresBlock(rewritten)).toContain('Three rounds on this 2-core machine (medians;');
    const outside = (text: string) => text.slice(0, text.indexOf('<!-- bench:cluster -->')) + text.slice(text.indexOf('<!-- /bench:cluster -->'));
    expect(outside(rewritten)).toBe(outside(readme));
  });

  it('without the 64 MiB phases (--large=0) the table has the 4 KiB rows only', () => {
    const { largePut: _put, largeGet: _get, ...small } = summary.phases;
    expect(parseClusterFigures(renderClusterFigures({ ...summary, rounds: 1, phases: small })).map((row) => row.name)).toEqual(['4 KiB PUT, 32 at a time', '4 KiB GET, 32 at a time']);
  });

  it('a bench summary is read strictly', () => {
    expect(parseClusterBenchSummary(JSON.parse(JSON.stringify(summary)))).toEqual(summary);
    expect(() => parseClusterBenchSummary({ ...summary, version: 2 })).toThrow(/version 2 is not supported/);
    expect(() => parseClusterBenchSummary({ ...summary, phases: { smallPut: { ...summary.phases.smallPut, one: 'fast' } } })).toThrow(/phase smallPut is malformed/);
    expect(() => parseClusterBenchSummary({ ...summary, phases: { tinyPut: summary.phases.smallPut } })).toThrow(/unknown phase tinyPut/);
    expect(() => parseClusterFigures('| | one node | four nodes | throughput, four ÷ one | server CPU per operation, four ÷ one |\n| 4 KiB PUT, 32 at a time | fast | 209/s | ×0.84 | ×1.57 |')).toThrow(/does not parse/);
  });
});
