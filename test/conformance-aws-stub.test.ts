/**
 * The checks whose expectations follow AWS give AWS's verdict against a server that answers the
 * way AWS documents (test/fixtures/aws-stub.ts), fail with their explanation against one that
 * does not, and the svc profile's rules are apart from the s3 profile.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { XMLParser } from 'fast-xml-parser';
import { runSuites } from '../conformance/runner/run.js';
import { s3Checks } from '../conformance/suites/s3.js';
import { recentChecks } from '../conformance/suites/s3/recent.js';
import { htmlReport, junitXml, markdownReport, summaryTable, type Report } from '../conformance/runner/report.js';
import { profileOf } from '../conformance/runner/check.js';
import { startAwsStub } from './fixtures/aws-stub.js';
import { normalRules } from '../conformance/suites/s3/lifecycle.js';

const credentials = { accessKey: 'AKIDSTUB', secretKey: 'stub-secret' };
const corrected = ['svc.health', 'svc.storage-class.reject', 's3.bucket.create-twice', 's3.object-lock.bucket', 's3.lifecycle.put-get-delete'];
const suite = (ids: string[]) => [{ suite: 's3', checks: s3Checks.filter((check) => ids.includes(check.id)) }];
const outcomes = (report: Report) => Object.fromEntries(report.results.map((result) => [result.id, result.outcome]));
const explain = (report: Report) => report.results.filter((result) => result.outcome !== 'passed').map((result) => `${result.id}: ${result.message}`).join('\n');

let stub: Awaited<ReturnType<typeof startAwsStub>>;
beforeAll(async () => {
  stub = await startAwsStub();
});
afterAll(async () => {
  await stub?.close();
});

describe('checks corrected against AWS, against a server that answers as AWS documents', () => {
  it('pass where AWS would, and the svc rules (no /health, GLACIER accepted) fail only in the svc profile', async () => {
    const all = await runSuites({ endpoint: stub.url, ...credentials, seed: 9, allowAdminMutations: false }, suite(corrected));
    expect(outcomes(all), explain(all)).toEqual({
      'svc.health': 'failed',
      'svc.storage-class.reject': 'failed',
      's3.bucket.create-twice': 'passed',
      's3.object-lock.bucket': 'passed',
      's3.lifecycle.put-get-delete': 'passed',
    });
    expect(all.results.filter((result) => result.id.startsWith('svc.')).every((result) => result.profile === 'svc' && result.source?.startsWith('SPEC.md: '))).toBe(true);
    const s3 = await runSuites({ endpoint: stub.url, ...credentials, seed: 9, allowAdminMutations: false, profile: 's3' }, suite(corrected));
    expect(outcomes(s3), explain(s3)).toEqual({ 's3.bucket.create-twice': 'passed', 's3.object-lock.bucket': 'passed', 's3.lifecycle.put-get-delete': 'passed' });
    expect(s3.profile).toBe('s3');
    expect(s3.notes).toEqual([]);
  });

  it("re-creating one's own bucket is judged by the region HeadBucket names: 409 BucketAlreadyOwnedByYou outside us-east-1 passes", async () => {
    const elsewhere = await startAwsStub({ region: 'eu-west-1' });
    try {
      const report = await runSuites({ endpoint: elsewhere.url, ...credentials, seed: 9, allowAdminMutations: false, profile: 's3' }, suite(['s3.bucket.create-twice']));
      expect(outcomes(report), explain(report)).toEqual({ 's3.bucket.create-twice': 'passed' });
    } finally {
      await elsewhere.close();
    }
  });

  it('fail against answers AWS does not give, printing the request, the answer, the expectation and the source in every format', async () => {
    const wrong = await startAwsStub({ createTwiceConflict: true, zeroDaysInvalidArgument: true });
    try {
      const report = await runSuites({ endpoint: wrong.url, ...credentials, seed: 9, allowAdminMutations: false, profile: 's3' }, suite(corrected));
      expect(outcomes(report)).toEqual({ 's3.bucket.create-twice': 'failed', 's3.object-lock.bucket': 'failed', 's3.lifecycle.put-get-delete': 'passed' });
      const twice = report.results.find((result) => result.id === 's3.bucket.create-twice')!;
      expect(twice.message).toMatch(/in us-east-1 answered BucketAlreadyExists \(409\), expected 200/);
      expect(twice.request).toMatch(/^CreateBucketCommand: PUT \/conf-/);
      expect(twice.answer).toMatch(/^409 BucketAlreadyExists/);
      expect(twice.expected).toBe(twice.title);
      expect(twice.source).toContain('https://docs.aws.amazon.com/AmazonS3/latest/API/API_CreateBucket.html');
      expect(twice.source).toContain('test_bucket_create_exists');
      const lock = report.results.find((result) => result.id === 's3.object-lock.bucket')!;
      expect(lock.message).toMatch(/a default retention of 0 days answered InvalidArgument \(400\), expected InvalidRetentionPeriod \(400\)/);
      expect(lock.request).toMatch(/PutObjectLockConfigurationCommand: PUT \/conf-\S+\?object-lock/);
      expect(lock.source).toContain('test_object_lock_put_obj_lock_invalid_days');
      const text = summaryTable(report);
      for (const line of ['request:  CreateBucketCommand: PUT', 'answer:   409 BucketAlreadyExists', 'expected: creating one', 'source:   https://docs.aws.amazon.com/AmazonS3/latest/API/API_CreateBucket.html']) expect(text).toContain(line);
      const junit = new XMLParser({ ignoreAttributes: false }).parse(junitXml(report));
      const cases = [].concat(junit.testsuites.testsuite.testcase) as { '@_name': string; failure?: { '#text': string }; properties: { property: { '@_name': string; '@_value': string }[] } }[];
      const junitTwice = cases.find((entry) => entry['@_name'].startsWith('s3.bucket.create-twice'))!;
      expect(junitTwice.failure!['#text']).toContain('answer:   409 BucketAlreadyExists');
      expect(junitTwice.properties.property.find((property) => property['@_name'] === 'source')!['@_value']).toContain('API_CreateBucket.html');
      const html = htmlReport(report);
      expect(html).toContain('<a href="https://docs.aws.amazon.com/AmazonS3/latest/API/API_CreateBucket.html">');
      expect(html).toContain('answer:   409 BucketAlreadyExists');
      const markdown = markdownReport(report);
      expect(markdown).toMatch(/^## Conformance of http:\/\/127\.0\.0\.1:\d+\n\n1 passed, 2 failed, 0 skipped, 0 not applicable \(profile s3, seed 9/);
      expect(markdown).toContain('| S3 CreateBucket | FAIL | 0 | 1 | 0 | 0 |');
      expect(markdown).toContain('<details><summary><code>s3.bucket.create-twice</code>');
      expect(markdown).toContain('source:   https://docs.aws.amazon.com/AmazonS3/latest/API/API_CreateBucket.html');
    } finally {
      await wrong.close();
    }
  });
});

describe('checks of the 2024-26 APIs', () => {
  it('each passes against AWS-documented answers, none judged n/a', async () => {
    const report = await runSuites({ endpoint: stub.url, ...credentials, seed: 9, allowAdminMutations: false }, [{ suite: 's3', checks: s3Checks.filter((check) => recentChecks.some((recent) => recent.id === check.id)) }]);
    expect(report.results.length).toBe(recentChecks.length);
    // The multipart ones need the multipart capability, which the stub's probe shows.
    expect(report.results.filter((result) => result.outcome !== 'passed').map((result) => `${result.id}: ${result.message}`)).toEqual([]);
    expect(report.results.every((result) => result.profile === 's3' && /^https:\/\/docs\.aws\.amazon\.com\//.test(result.source!))).toBe(true);
  }, 60_000);
});

describe('profiles', () => {
  it('every s3-profile check names an AWS page or a ceph/s3-tests case; svc.* checks are of the svc profile', () => {
    for (const check of s3Checks) {
      if (profileOf(check) === 's3') expect(check.source, check.id).toMatch(/^https:\/\/(docs\.aws\.amazon\.com\/AmazonS3\/|github\.com\/ceph\/s3-tests\/)/);
      expect(profileOf(check), check.id).toBe(check.id.startsWith('svc.') ? 'svc' : 's3');
    }
  });
});

describe('lifecycle rules compared by meaning', () => {
  it('equal across the normalisations a server may make, different when an action or filter differs', () => {
    const sent = [
      { ID: 'a', Status: 'Enabled' as const, Filter: { Prefix: '' }, Expiration: { Days: 3 } },
      { ID: 'b', Status: 'Enabled' as const, Filter: { And: { Prefix: 'logs/', Tags: [{ Key: 'z', Value: '1' }, { Key: 'a', Value: '2' }] } }, Expiration: { Days: 1 } },
      { ID: 'c', Status: 'Disabled' as const, Filter: { And: { Prefix: 'one/' } }, Expiration: { Days: 2 } },
    ];
    const stored = [
      { ID: 'c', Status: 'Disabled' as const, Filter: { Prefix: 'one/' }, Expiration: { Days: 2 } },
      { ID: 'a', Status: 'Enabled' as const, Filter: {}, Expiration: { Days: 3 } },
      { ID: 'b', Status: 'Enabled' as const, Filter: { And: { Prefix: 'logs/', Tags: [{ Key: 'a', Value: '2' }, { Key: 'z', Value: '1' }] } }, Expiration: { Days: 1 } },
    ];
    expect(normalRules(stored)).toBe(normalRules(sent));
    expect(normalRules([{ ID: 'a', Status: 'Enabled', Prefix: '', Expiration: { Days: 3 } } as never, ...stored.slice(0, 1), stored[2]!])).toBe(normalRules(sent));
    expect(normalRules([{ ...stored[1]!, Expiration: { Days: 4 } }, stored[0]!, stored[2]!])).not.toBe(normalRules(sent));
    expect(normalRules([{ ...stored[0]!, Filter: { Prefix: 'two/' } }, stored[1]!, stored[2]!])).not.toBe(normalRules(sent));
  });
});
