/**
 * `npm run conformance -- --endpoint URL --access-key K --secret-key S [--suite s3,admin,iam,model]
 *   [--profile s3|svc|all] [--markdown FILE] [--seed N] [--runs N] [--budget 60s] [--junit FILE] [--json FILE] [--html FILE]
 *   [--allow-admin-mutations] [--kms-key-id KEY] [--ssec-over-http] [--managed process|container]`, or `--compare a.json b.json`.
 *
 * Black-box: checks a deployment it did not start. Managed: starts its own cluster, runs the
 * black-box suites against it with mutations allowed, then the managed suites that need control of
 * drives and nodes.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { s3Checks } from './suites/s3.js';
import { adminChecks } from './suites/admin.js';
import { iamChecks } from './suites/iam.js';
import { runSuites, type SuiteRun } from './runner/run.js';
import { compareReports, htmlReport, junitXml, markdownReport, summaryTable, type Report } from './runner/report.js';
import { profileNames, type Profile } from './runner/check.js';
import { modelChecks } from './model/s3-model-run.js';

const usageText = `usage: npm run conformance -- --endpoint <url> --access-key <key> --secret-key <secret>
         [--profile s3|svc|all] [--suite s3,admin,iam,model] [--only <id prefix,...>] [--except <id prefix,...>] [--seed <n>] [--runs <n>] [--budget <duration>]
         [--junit <file>] [--json <file>] [--html <file>] [--markdown <file>] [--allow-admin-mutations]
         [--kms-key-id <key>] [--ssec-over-http]
       npm run conformance -- --managed process|container [--suite ...] [--seed <n>] [--runs <n>] [--junit <file>] [--json <file>]
       npm run conformance -- --compare <a.json> <b.json>

Profiles: s3 (only behaviour AWS documents, each check naming its source: run it against any S3
server), svc (SPEC.md's own rules: health endpoints, storage-class refusal, admin API, IAM routes,
quorum, inline and layout rules), all (the default: both).

--only keeps the checks whose id starts with one of the given prefixes (s3.conditional-write.,s3.bucket.);
--except leaves those out. A reverse proxy can change a request before the server sees it: Caddy
and other Go servers forward a body-less PUT with Content-Length: 0, so behind one
s3.put.missing-content-length judges the proxy, not the server (leave it out with --except).

Encryption (the s3.sse. checks): SSE-S3 checks run when the target answers an SSE-S3 PUT;
--kms-key-id names a KMS key of the target for the SSE-KMS checks (n/a without one); SSE-C checks
run when the target takes a customer key (AWS does over TLS only: an https endpoint).
--ssec-over-http says the target is a test deployment that takes customer keys over plain HTTP
(svc with SVC_KMS_ALLOW_INSECURE_SSEC=on): the check that plain HTTP is refused is then skipped.

Suites: s3 (S3 semantics), admin (admin API semantics; checks that start or stop rebalance or
decommission run only with --allow-admin-mutations), iam (users, policies, groups, service
accounts and delegated administration through the admin API's IAM routes; each check makes and
removes its own identities; needs the admin API and the IAM routes), model (random S3 command sequences against
an in-memory model: --runs sequences, default 20, within --budget such as 90s, 10m or 1h), and
with --managed the property suites quorum, inline, layout, recovery, exclusion and over-time (each launches
its own deployments: --runs cases each, default per suite; a failure prints the case and the
--seed and --runs that replay it).`;

/** The usage text with the name the command was started by. */
let usage = usageText;

export const blackBoxSuites: Record<string, SuiteRun> = {
  s3: { suite: 's3', checks: s3Checks },
  admin: { suite: 'admin', checks: adminChecks },
  iam: { suite: 'iam', checks: iamChecks },
  model: { suite: 'model', checks: modelChecks },
};

/** `90s`, `10m`, `1h` or plain seconds, in milliseconds; NaN when malformed. */
export function parseDurationMs(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match) return NaN;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  return Number(match[1]) * unit;
}

async function compareFiles(paths: string[]): Promise<number> {
  if (paths.length !== 2) {
    console.error(`conformance: --compare takes two JSON reports\n${usage}`);
    return 2;
  }
  try {
    const [left, right] = await Promise.all(paths.map(async (path) => JSON.parse(await readFile(path, 'utf8')) as Report));
    console.log(compareReports(left!, right!));
    return 0;
  } catch (error) {
    console.error(`conformance: cannot compare: ${(error as Error).message}`);
    return 2;
  }
}

export async function main(argv: string[], command = 'npm run conformance --'): Promise<number> {
  usage = usageText.replaceAll('npm run conformance --', command);
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        endpoint: { type: 'string' },
        'access-key': { type: 'string' },
        'secret-key': { type: 'string' },
        suite: { type: 'string' },
        seed: { type: 'string' },
        junit: { type: 'string' },
        json: { type: 'string' },
        html: { type: 'string' },
        markdown: { type: 'string' },
        profile: { type: 'string' },
        only: { type: 'string' },
        except: { type: 'string' },
        runs: { type: 'string' },
        budget: { type: 'string' },
        compare: { type: 'boolean' },
        'allow-admin-mutations': { type: 'boolean' },
        'kms-key-id': { type: 'string' },
        'ssec-over-http': { type: 'boolean' },
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
  if (values.compare) return compareFiles(positionals);
  if (positionals.length > 0) {
    console.error(`conformance: unexpected argument '${positionals[0]}'\n${usage}`);
    return 2;
  }
  const runs = values.runs === undefined ? undefined : Number(values.runs);
  const budgetMs = values.budget === undefined ? undefined : parseDurationMs(values.budget as string);
  if ((runs !== undefined && !(Number.isSafeInteger(runs) && runs > 0)) || (budgetMs !== undefined && !(budgetMs > 0))) {
    console.error(`conformance: --runs is a positive integer and --budget a duration such as 90s, 10m or 1h\n${usage}`);
    return 2;
  }
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
  if (!Number.isSafeInteger(seed)) {
    console.error(`conformance: --seed must be an integer\n${usage}`);
    return 2;
  }
  const profile = (values.profile as string | undefined) ?? 'all';
  if (profile !== 'all' && !(profileNames as readonly string[]).includes(profile)) {
    console.error(`conformance: --profile is ${[...profileNames, 'all'].join(', ')}\n${usage}`);
    return 2;
  }
  const prefixes = (value: unknown) => (value as string | undefined)?.split(',').map((prefix) => prefix.trim()).filter(Boolean);
  const only = prefixes(values.only);
  const except = prefixes(values.except) ?? [];
  const chosen = (id: string) => (!only || only.some((prefix) => id.startsWith(prefix))) && !except.some((prefix) => id.startsWith(prefix));
  const wanted = (values.suite as string | undefined)?.split(',').map((name) => name.trim()).filter(Boolean);
  const progress = (line: string) => console.error(line);
  let report: Report;
  if (values.managed !== undefined) {
    if (values.managed !== 'process' && values.managed !== 'container') {
      console.error(`conformance: --managed is 'process' or 'container'\n${usage}`);
      return 2;
    }
    // Managed runs start svc from this repository's build: loaded only here, and absent from the standalone package.
    const managedModule = await import('./managed/suites.js').catch((error: Error) => error);
    if (managedModule instanceof Error) {
      console.error(`conformance: --managed needs a clone of the svc repository (${managedModule.message})`);
      return 2;
    }
    const { managedPropertySuites, managedSuites } = managedModule;
    const known = ['s3', 'admin', 'iam', ...Object.keys(managedPropertySuites)];
    const unknown = (wanted ?? []).filter((name) => !known.includes(name));
    if (unknown.length > 0) {
      console.error(`conformance: unknown suite(s) ${unknown.join(', ')} (with --managed: ${known.join(', ')})`);
      return 2;
    }
    console.error(`seed ${seed} (replay with --seed ${seed}${runs ? ` --runs ${runs}` : ''})`);
    report = await managedSuites({ harness: values.managed, seed, profile: profile as Profile | 'all', ...(runs ? { runs } : {}), ...(wanted ? { suites: wanted } : {}), progress });
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
      { endpoint: (values.endpoint as string).replace(/\/$/, ''), accessKey: values['access-key'] as string, secretKey: values['secret-key'] as string, seed, ...(runs ? { runs } : {}), ...(budgetMs ? { budgetMs } : {}), allowAdminMutations: values['allow-admin-mutations'] === true, ...(values['kms-key-id'] ? { kmsKeyId: values['kms-key-id'] as string } : {}), ...(values['ssec-over-http'] ? { ssecOverHttp: true } : {}), profile: profile as Profile | 'all', progress },
      names.map((name) => blackBoxSuites[name]!).map((suite) => ({ ...suite, checks: suite.checks.filter((check) => chosen(check.id)) })),
    );
  }
  console.log(summaryTable(report));
  if (values.junit) await writeFile(values.junit as string, junitXml(report));
  if (values.html) await writeFile(values.html as string, htmlReport(report));
  if (values.markdown) await writeFile(values.markdown as string, markdownReport(report));
  if (values.json) await writeFile(values.json as string, `${JSON.stringify(report, null, 2)}\n`);
  return report.results.some((result) => result.outcome === 'failed') ? 1 : 0;
}

// Started as `node --import tsx conformance/cli.ts` (never when bundled into the package, whose entry is bin.ts).
if (process.argv[1]?.endsWith('cli.ts') && import.meta.url.endsWith('/cli.ts')) {
  process.exitCode = await main(process.argv.slice(2));
}
