/**
 * `npm run conformance -- --endpoint URL --access-key K --secret-key S [--suite s3,admin]
 *   [--seed N] [--junit FILE] [--json FILE] [--allow-admin-mutations] [--managed process|container]`
 *
 * Black-box: checks a deployment it did not start. Managed: starts its own cluster, runs the
 * black-box suites against it with mutations allowed, then the managed suites that need control of
 * drives and nodes.
 */
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { s3Checks } from './suites/s3.js';
import { adminChecks } from './suites/admin.js';
import { runSuites, type SuiteRun } from './runner/run.js';
import { junitXml, summaryTable, type Report } from './runner/report.js';
import { managedSuites } from './managed/suites.js';

const usage = `usage: npm run conformance -- --endpoint <url> --access-key <key> --secret-key <secret>
         [--suite s3,admin] [--seed <n>] [--junit <file>] [--json <file>] [--allow-admin-mutations]
       npm run conformance -- --managed process|container [--suite ...] [--seed <n>] [--junit <file>] [--json <file>]

Suites: s3 (S3 semantics), admin (admin API semantics; checks that start or stop rebalance or
decommission run only with --allow-admin-mutations), and with --managed also quorum, inline,
layout, recovery.`;

export const blackBoxSuites: Record<string, SuiteRun> = {
  s3: { suite: 's3', checks: s3Checks },
  admin: { suite: 'admin', checks: adminChecks },
};

export async function main(argv: string[]): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        endpoint: { type: 'string' },
        'access-key': { type: 'string' },
        'secret-key': { type: 'string' },
        suite: { type: 'string' },
        seed: { type: 'string' },
        junit: { type: 'string' },
        json: { type: 'string' },
        'allow-admin-mutations': { type: 'boolean' },
        managed: { type: 'string' },
        help: { type: 'boolean' },
      },
      strict: true,
    }));
  } catch (error) {
    console.error(`conformance: ${(error as Error).message}\n${usage}`);
    return 2;
  }
  if (values.help) {
    console.log(usage);
    return 0;
  }
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
  if (!Number.isSafeInteger(seed)) {
    console.error(`conformance: --seed must be an integer\n${usage}`);
    return 2;
  }
  const wanted = (values.suite as string | undefined)?.split(',').map((name) => name.trim()).filter(Boolean);
  const progress = (line: string) => console.error(line);
  let report: Report;
  if (values.managed !== undefined) {
    if (values.managed !== 'process' && values.managed !== 'container') {
      console.error(`conformance: --managed is 'process' or 'container'\n${usage}`);
      return 2;
    }
    report = await managedSuites({ harness: values.managed, seed, ...(wanted ? { suites: wanted } : {}), progress });
  } else {
    if (!values.endpoint || !values['access-key'] || !values['secret-key']) {
      console.error(`conformance: --endpoint, --access-key and --secret-key are required (or --managed)\n${usage}`);
      return 2;
    }
    try {
      new URL(values.endpoint as string);
    } catch {
      console.error(`conformance: --endpoint '${values.endpoint}' is not a URL`);
      return 2;
    }
    const names = wanted ?? Object.keys(blackBoxSuites);
    const unknown = names.filter((name) => !blackBoxSuites[name]);
    if (unknown.length > 0) {
      console.error(`conformance: unknown suite(s) ${unknown.join(', ')} (black-box suites: ${Object.keys(blackBoxSuites).join(', ')})`);
      return 2;
    }
    report = await runSuites(
      { endpoint: (values.endpoint as string).replace(/\/$/, ''), accessKey: values['access-key'] as string, secretKey: values['secret-key'] as string, seed, allowAdminMutations: values['allow-admin-mutations'] === true, progress },
      names.map((name) => blackBoxSuites[name]!),
    );
  }
  console.log(summaryTable(report));
  if (values.junit) await writeFile(values.junit as string, junitXml(report));
  if (values.json) await writeFile(values.json as string, `${JSON.stringify(report, null, 2)}\n`);
  return report.results.some((result) => result.outcome === 'failed') ? 1 : 0;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').at(-1)!)) {
  process.exitCode = await main(process.argv.slice(2));
}
