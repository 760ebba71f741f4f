/**
 * The count of checks per profile in the README and docs/conformance.md is what the runner
 * reports: the table between the counts markers equals the one made from the suites, and each of
 * its totals is the number of checks the runner selects for that profile.
 */
import { describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { s3Checks } from '../conformance/suites/s3.js';
import { adminChecks } from '../conformance/suites/admin.js';
import { iamChecks } from '../conformance/suites/iam.js';
import { modelChecks } from '../conformance/model/s3-model-run.js';
import { selectProfile } from '../conformance/runner/run.js';
import { between, countsMarkers, countsTable } from '../conformance/runner/results-table.js';
import { repoRoot } from './helpers/server-process.js';

const suites = [
  { suite: 's3', checks: s3Checks },
  { suite: 'admin', checks: adminChecks },
  { suite: 'iam', checks: iamChecks },
  { suite: 'model', checks: modelChecks },
];
const selected = (profile: 's3' | 'svc' | 'all') => selectProfile(suites, profile).reduce((sum, suite) => sum + suite.checks.length, 0);

describe('the documented check counts', () => {
  it.each(['README.md', 'docs/conformance.md'])('%s lists the checks per profile as the runner counts them', async (file) => {
    const table = between(await readFile(join(repoRoot, file), 'utf8'), countsMarkers);
    expect(table, 'run scripts/conformance-results.ts').toBe(countsTable(suites));
    const total = /\| \*\*total\*\* \| (\d+) \| (\d+) \| (\d+) \|/.exec(table)!;
    expect(total.slice(1).map(Number)).toEqual([selected('s3'), selected('svc'), selected('all')]);
    expect(selected('s3') + selected('svc')).toBe(selected('all'));
  });

  it('no check id is used twice', () => {
    const ids = suites.flatMap((suite) => suite.checks.map((check) => check.id));
    expect(ids.length).toBe(new Set(ids).size);
  });
});
