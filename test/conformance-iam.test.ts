/**
 * The conformance suite's IAM section against a real svc process: every check passes, and the
 * run leaves no user, policy, group or bucket behind. Against
 * a target without an admin API (s3rver) every IAM check is not applicable, with the probe's reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListBucketsCommand } from '@aws-sdk/client-s3';
import { runSuites } from '../conformance/runner/run.js';
import { Target } from '../conformance/runner/check.js';
import { iamChecks } from '../conformance/suites/iam.js';
import { startS3rver, s3rverCredentials } from '../conformance/harness/s3rver-process.js';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';

const credentials = { accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey };
const iamSuite = [{ suite: 'iam', checks: iamChecks }];

let root: string;
let server: SvcProcess;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-conf-iam-'));
  server = await startSvc({ args: [join(root, 'd{1...4}')], env: { SVC_CONSOLE_ENABLE: 'false' } });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('conformance: the IAM section', () => {
  it('passes against svc and removes every user, policy, group and bucket it made', async () => {
    const report = await runSuites({ endpoint: server.url, ...credentials, seed: 7, allowAdminMutations: false }, iamSuite);
    expect(report.capabilities!.iam).toMatchObject({ present: true });
    expect(report.results.map((result) => result.id)).toEqual(iamChecks.map((check) => check.id));
    expect(report.results.filter((result) => result.outcome !== 'passed').map((result) => `${result.id}: ${result.outcome} ${result.message}`)).toEqual([]);
    expect(report.notes).toEqual([]);
    const target = new Target({ endpoint: server.url, ...credentials, seed: 1 });
    const users = (await target.admin('GET', '/svc/admin/v4/iam/users')).body.users as { accessKey: string }[];
    const policies = (await target.admin('GET', '/svc/admin/v4/iam/policies')).body.policies as { name: string }[];
    const groups = (await target.admin('GET', '/svc/admin/v4/iam/groups')).body.groups as { name: string }[];
    const accounts = (await target.admin('GET', '/svc/admin/v4/iam/svcacct/list')).body.serviceAccounts as unknown[];
    const buckets = (await s3ClientFor(server.url).send(new ListBucketsCommand({}))).Buckets ?? [];
    expect({ users, policies: policies.map((policy) => policy.name).filter((name) => name.startsWith('conf-')), groups, accounts, buckets }).toEqual({ users: [], policies: [], groups: [], accounts: [], buckets: [] });
  }, 120_000);

  it('is not applicable, with the reason, against a target without the admin API and its IAM routes', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'svc-conf-iam-s3rver-'));
    const s3rver = await startS3rver(directory);
    try {
      const report = await runSuites({ endpoint: s3rver.url, ...s3rverCredentials, seed: 7, allowAdminMutations: false }, iamSuite);
      expect(report.capabilities!.iam.present).toBe(false);
      expect(report.capabilities!.iam.detail).toMatch(/^GET \/svc\/admin\/v4\/iam\/users answered \d+/);
      expect(report.results.map((result) => result.outcome)).toEqual(iamChecks.map(() => 'not-applicable'));
      for (const result of report.results) expect(result.message).toMatch(/^target lacks admin \(.*\), iam \(GET \/svc\/admin\/v4\/iam\/users answered \d+/);
    } finally {
      await s3rver.stop();
      await rm(directory, { recursive: true, force: true });
    }
  }, 60_000);
});
