/**
 * Mutation check: does the conformance suite catch a broken store? Each case copies the build
 * (dist/) to a temporary directory, alters one place of the compiled JavaScript with an exact
 * replacement that must match once (a source that moved fails here loudly, it is not skipped),
 * starts servers from the copy and runs the suites that should notice. The test passes when the
 * named checks fail against each mutant, and all of them pass against the unaltered build.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runSuites, type SuiteRun } from '../conformance/runner/run.js';
import type { Report } from '../conformance/runner/report.js';
import { s3Checks } from '../conformance/suites/s3.js';
import { modelChecks } from '../conformance/model/s3-model-run.js';
import { iamChecks } from '../conformance/suites/iam.js';
import { managedSuiteRuns } from '../conformance/managed/suites.js';
import { processLauncher } from '../conformance/managed/deployment.js';
import { repoRoot, startSvc, testCredentials } from './helpers/server-process.js';

interface Mutation {
  name: string;
  /** File under dist/, the exact text to replace (must occur once) and its replacement. */
  file: string;
  from: string;
  to: string;
  /** Black-box checks run against one server of the mutant (four drives), or managed suites. */
  checks?: (id: string) => boolean;
  managed?: { names: string[]; runs: number };
  /** Checks that must fail against the mutant. */
  caughtBy: string[];
}

const mutations: Mutation[] = [
  {
    name: 'a read quorum off by one (K + 1 shards needed)',
    file: 'src/erasure/geometry.js',
    from: 'return dataShards;',
    to: 'return dataShards + 1;',
    managed: { names: ['quorum'], runs: 1 },
    caughtBy: ['managed.quorum-formulas'],
  },
  {
    name: 'a lost delete marker (acknowledged, never written)',
    file: 'src/object/delete-object.js',
    from: 'return { meta: upsertVersion(meta, marker), garbageDataDirs',
    to: 'return { meta, garbageDataDirs',
    checks: (id) => id.startsWith('s3.versioning.'),
    caughtBy: ['s3.versioning.delete-markers', 's3.versioning.current-is-marker', 's3.versioning.list-hides-marked'],
  },
  {
    name: 'a listing that skips the last key of a truncated page',
    file: 'src/api/s3/handlers/listing.js',
    from: 'page.truncated = true;',
    to: 'page.truncated = true; page.objects.pop();',
    checks: (id) => id.startsWith('s3.list'),
    caughtBy: ['s3.listing.order-and-paging', 's3.list.v2.all.pages-of-2', 's3.list.v1.all.pages-of-3'],
  },
  {
    name: 'the versioned inline budget divided by 4 instead of 8',
    file: 'src/util/limits.js',
    from: 'inlineVersionedDivisor: 8,',
    to: 'inlineVersionedDivisor: 4,',
    managed: { names: ['inline'], runs: 1 },
    caughtBy: ['managed.inline-thresholds'],
  },
  {
    name: 'retention that no longer locks a version (legal holds still do)',
    file: 'src/object/object-lock-fields.js',
    from: 'return lock.legalHold || (lock.retention !== undefined && lock.retention.retainUntilMs > nowMs);',
    to: 'return lock.legalHold;',
    managed: { names: ['over-time'], runs: 1 },
    caughtBy: ['managed.over-time'],
  },
  ...iamMutations(),
];

/** IAM defects, each one check of the IAM section must notice (run with the IAM checks it names). */
function iamMutations(): Mutation[] {
  const only = (...ids: string[]) => ({ checks: (id: string) => ids.includes(id), caughtBy: ids });
  return [
    { name: 'an explicit Deny that no longer wins', file: 'src/iam/evaluate.js', from: "if (statement.effect === 'Deny')", to: 'if (false)', ...only('iam.policy.deny-wins') },
    { name: 'a user disable acknowledged but not applied', file: 'src/ops/iam-store.js', from: 'user.enabled = enabled;', to: 'user.enabled = true;', ...only('iam.user.disabled-refused') },
    { name: "a disabled group whose policies still apply", file: 'src/ops/iam-store.js', from: '.filter((group) => group.enabled && group.members.includes(accessKey))', to: '.filter((group) => group.members.includes(accessKey))', ...only('iam.group.policies-follow-membership') },
    { name: "a service account's inline policy ignored", file: 'src/iam/principal.js', from: 'for (const limit of principal?.limits ?? [])', to: 'for (const limit of [])', ...only('iam.service-account.lifecycle') },
    { name: 'a user added with policies without admin:AttachUserOrGroupPolicy', file: 'src/ops/iam-guard.js', from: 'return need(...(policies.length > 0 ? [admin.attachUserOrGroupPolicy] : [])', to: 'return need(...([])', ...only('iam.admin.delegated') },
    { name: 'anyone adds service accounts for anyone', file: 'src/ops/iam-guard.js', from: 'if (isOwner(caller, parent))', to: 'if (true)', ...only('iam.service-account.ownership') },
    { name: 'readonly that also writes', file: 'src/iam/builtin.js', from: "Action: ['s3:GetBucketLocation', 's3:GetObject', 's3:ListBucket', 's3:ListAllMyBuckets']", to: "Action: ['s3:GetBucketLocation', 's3:GetObject', 's3:ListBucket', 's3:ListAllMyBuckets', 's3:PutObject']", ...only('iam.readonly.refuses-writes') },
  ];
}

let built = '';
const made: string[] = [];

beforeAll(async () => {
  await promisify(execFile)(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: repoRoot });
  built = join(repoRoot, 'dist');
}, 120_000);
afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

/** A copy of dist/ with one replacement; throws unless `from` occurs exactly once. */
async function buildMutant(mutation: Mutation): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'svc-mutant-'));
  made.push(root);
  await cp(built, join(root, 'dist'), { recursive: true, filter: (source) => !source.includes('console-ui') });
  await cp(join(repoRoot, 'package.json'), join(root, 'package.json'));
  await symlink(join(repoRoot, 'node_modules'), join(root, 'node_modules'));
  const path = join(root, 'dist', mutation.file);
  const text = await readFile(path, 'utf8');
  const count = text.split(mutation.from).length - 1;
  if (count !== 1) throw new Error(`mutation "${mutation.name}": '${mutation.from}' occurs ${count} times in dist/${mutation.file} (expected once): the source moved, update the mutation`);
  await writeFile(path, text.replace(mutation.from, mutation.to));
  return join(root, 'dist/src/cli/svc.js');
}

async function runAgainst(mutation: Mutation, script: string | undefined): Promise<Report> {
  const launcher = processLauncher(script ? { script } : { entry: 'build' });
  const options = { accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey, seed: 21, runs: 10, allowAdminMutations: false };
  if (mutation.managed) {
    return runSuites({ ...options, endpoint: 'http://127.0.0.1:0', skipProbe: true }, managedSuiteRuns(launcher, mutation.managed));
  }
  const root = await mkdtemp(join(tmpdir(), 'svc-mutant-data-'));
  const server = await startSvc({ args: [join(root, 'd{1...4}')], env: { SVC_CONSOLE_ENABLE: 'false' }, ...(script ? { script } : { entry: 'build' }) });
  try {
    const suites: SuiteRun[] = [{ suite: 's3', checks: [...s3Checks, ...modelChecks, ...iamChecks].filter((check) => mutation.checks!(check.id)) }];
    return await runSuites({ ...options, endpoint: server.url }, suites);
  } finally {
    await server.kill();
    await rm(root, { recursive: true, force: true });
  }
}

const failedIds = (report: Report) => report.results.filter((result) => result.outcome === 'failed').map((result) => result.id);

describe('mutation check: the conformance suite catches a deliberately broken svc', () => {
  it.each(mutations.map((mutation) => [mutation.name, mutation] as const))('%s', async (_, mutation) => {
    const script = await buildMutant(mutation);
    const mutant = await runAgainst(mutation, script);
    const failed = failedIds(mutant);
    console.log(`mutant "${mutation.name}": ${failed.length} failed check(s): ${failed.join(', ')}`);
    for (const id of mutation.caughtBy) expect(failed, `${id} should fail against the mutant`).toContain(id);
    if (mutation.managed) {
      // A property suite's failure names the case and how to replay it; the replay finds the same.
      const message = mutant.results.find((result) => result.id === mutation.caughtBy[0])!.message!;
      expect(message).toMatch(/— case .+ replay with --seed 21 --runs 1$/);
      expect((await runAgainst(mutation, script)).results[0]!.message).toBe(message);
    }
  }, 180_000);

  // Every check that catches a mutant passes on the unaltered build, so each failure above is its
  // mutation's: one server and one managed run for all of them, instead of one per mutant.
  it('the checks that catch the mutants pass on the unaltered build', async () => {
    const checked = mutations.filter((mutation) => mutation.checks);
    const black = await runAgainst({ ...checked[0]!, checks: (id) => checked.some((mutation) => mutation.checks!(id)) }, undefined);
    const managed = await runAgainst({ ...mutations[0]!, managed: { names: mutations.flatMap((mutation) => mutation.managed?.names ?? []), runs: 1 } }, undefined);
    for (const report of [black, managed]) expect(failedIds(report), JSON.stringify(report.results.filter((result) => result.outcome === 'failed'))).toEqual([]);
    const ran = [...black.results, ...managed.results].filter((result) => result.outcome === 'passed').map((result) => result.id);
    for (const id of mutations.flatMap((mutation) => mutation.caughtBy)) expect(ran, `${id} should pass on the unaltered build`).toContain(id);
  }, 300_000);
});
