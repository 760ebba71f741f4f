/**
 * Bucket lifecycle on a real server: the configuration API through the AWS SDK (and raw requests
 * for documents the SDK would not send), named errors that leave the stored configuration
 * intact, rules that survive a restart, and the scanner started by the admin route on a server
 * whose lifecycle clock runs two days ahead (SVC_LIFECYCLE_CLOCK_OFFSET, the test harness's
 * hook), its progress in the status route and in `rc admin lifecycle status`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand, DeleteBucketLifecycleCommand, DeleteObjectCommand, GetBucketLifecycleConfigurationCommand, HeadObjectCommand, ListObjectsV2Command, ListObjectVersionsCommand,
  PutBucketLifecycleConfigurationCommand, PutBucketVersioningCommand, PutObjectCommand, type LifecycleRule, type S3Client,
} from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { signedRequest } from './helpers/raw-s3.js';
import { rcIn } from './helpers/rc-process.js';
import { permissionsOf } from '../src/api/s3/access.js';
import { lifecycleRoutes } from '../src/api/admin/lifecycle.js';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';

/** Checks an admin answer against the route's declared answer schema. */
function fitsSchema(path: string, answer: unknown): void {
  const ajv = new Ajv({ strict: false });
  (addFormats as unknown as (ajv: Ajv) => void)(ajv);
  const route = lifecycleRoutes.find((candidate) => candidate.path === path)!;
  const validate = ajv.compile(route.schema.response);
  expect(validate(answer), JSON.stringify(validate.errors)).toBe(true);
  expect(ajv.compile(route.schema.response)(route.schema.example.response)).toBe(true);
}

let root: string;
let server: SvcProcess;
let s3: S3Client;
const args = (): string[] => [join(root, 'd{1...4}')];
const env = { SVC_CONSOLE_ENABLE: 'false', SVC_LIFECYCLE_OBJECTS_PER_SECOND: '5' };

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-lifecycle-'));
  server = await startSvc({ args: args(), env });
  s3 = s3ClientFor(server.url);
}, 60_000);
afterAll(async () => {
  await server?.kill();
  await rm(root, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function failure(promise: Promise<unknown>): Promise<{ name: string; status: number | undefined }> {
  try {
    await promise;
  } catch (error) {
    const caught = error as { name: string; $metadata?: { httpStatusCode?: number } };
    return { name: caught.name, status: caught.$metadata?.httpStatusCode };
  }
  throw new Error('expected a failure');
}

const rules: LifecycleRule[] = [
  { ID: 'logs', Status: 'Enabled', Filter: { Prefix: 'logs/' }, Expiration: { Days: 30 } },
  { ID: 'history', Status: 'Enabled', Filter: { And: { Prefix: 'docs/', Tags: [{ Key: 'keep', Value: 'no' }], ObjectSizeGreaterThan: 10 } }, NoncurrentVersionExpiration: { NoncurrentDays: 7, NewerNoncurrentVersions: 3 } },
  { ID: 'uploads', Status: 'Disabled', Filter: {}, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 2 } },
  { ID: 'markers', Status: 'Enabled', Filter: { ObjectSizeLessThan: 1000 }, Expiration: { ExpiredObjectDeleteMarker: true } },
  { ID: 'dated', Status: 'Enabled', Filter: { Tag: { Key: 'tmp', Value: 'yes' } }, Expiration: { Date: new Date('2040-01-01T00:00:00Z') } },
];

function putRaw(bucket: string, body: string) {
  return signedRequest(server.url, { method: 'PUT', path: `/${bucket}`, query: { lifecycle: '' }, body, headers: { 'content-type': 'application/xml' } });
}

const bad: [string, string, string][] = [
  ['not XML', '<LifecycleConfiguration><Rule>', 'MalformedXML'],
  ['no rule', '<LifecycleConfiguration></LifecycleConfiguration>', 'MalformedXML'],
  ['bad status', '<LifecycleConfiguration><Rule><ID>a</ID><Status>On</Status><Filter></Filter><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>', 'MalformedXML'],
  ['two filter conditions without And', '<LifecycleConfiguration><Rule><ID>a</ID><Status>Enabled</Status><Filter><Prefix>a</Prefix><ObjectSizeLessThan>5</ObjectSizeLessThan></Filter><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>', 'MalformedXML'],
  ['Days and Date', '<LifecycleConfiguration><Rule><ID>a</ID><Status>Enabled</Status><Filter></Filter><Expiration><Days>1</Days><Date>2040-01-01T00:00:00Z</Date></Expiration></Rule></LifecycleConfiguration>', 'MalformedXML'],
  ['zero days', '<LifecycleConfiguration><Rule><ID>a</ID><Status>Enabled</Status><Filter></Filter><Expiration><Days>0</Days></Expiration></Rule></LifecycleConfiguration>', 'InvalidArgument'],
  ['date not at midnight', '<LifecycleConfiguration><Rule><ID>a</ID><Status>Enabled</Status><Filter></Filter><Expiration><Date>2040-01-01T10:00:00Z</Date></Expiration></Rule></LifecycleConfiguration>', 'InvalidArgument'],
  ['duplicate ids', '<LifecycleConfiguration><Rule><ID>a</ID><Status>Enabled</Status><Filter></Filter><Expiration><Days>1</Days></Expiration></Rule><Rule><ID>a</ID><Status>Enabled</Status><Filter></Filter><Expiration><Days>2</Days></Expiration></Rule></LifecycleConfiguration>', 'InvalidArgument'],
  ['sizes the wrong way round', '<LifecycleConfiguration><Rule><ID>a</ID><Status>Enabled</Status><Filter><And><ObjectSizeGreaterThan>10</ObjectSizeGreaterThan><ObjectSizeLessThan>10</ObjectSizeLessThan></And></Filter><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>', 'InvalidArgument'],
  ['too many newer versions', '<LifecycleConfiguration><Rule><ID>a</ID><Status>Enabled</Status><Filter></Filter><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays><NewerNoncurrentVersions>101</NewerNoncurrentVersions></NoncurrentVersionExpiration></Rule></LifecycleConfiguration>', 'InvalidArgument'],
  ['no action', '<LifecycleConfiguration><Rule><ID>a</ID><Status>Enabled</Status><Filter></Filter></Rule></LifecycleConfiguration>', 'InvalidRequest'],
  ['abort with tags', '<LifecycleConfiguration><Rule><ID>a</ID><Status>Enabled</Status><Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule></LifecycleConfiguration>', 'InvalidRequest'],
  ['duplicate tag keys', '<LifecycleConfiguration><Rule><ID>a</ID><Status>Enabled</Status><Filter><And><Tag><Key>k</Key><Value>1</Value></Tag><Tag><Key>k</Key><Value>2</Value></Tag></And></Filter><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>', 'InvalidRequest'],
  ['a transition', '<LifecycleConfiguration><Rule><ID>a</ID><Status>Enabled</Status><Filter></Filter><Transition><Days>1</Days><StorageClass>GLACIER</StorageClass></Transition></Rule></LifecycleConfiguration>', 'InvalidStorageClass'],
];

describe('lifecycle configuration API', () => {
  it('stores, returns and deletes a configuration; a bucket without one answers NoSuchLifecycleConfiguration', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'config' }));
    expect(await failure(s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'config' })))).toEqual({ name: 'NoSuchLifecycleConfiguration', status: 404 });
    await s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: 'config', LifecycleConfiguration: { Rules: rules } }));
    const stored = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'config' }));
    expect(stored.Rules).toEqual(rules);
    await s3.send(new DeleteBucketLifecycleCommand({ Bucket: 'config' }));
    expect(await failure(s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'config' })))).toEqual({ name: 'NoSuchLifecycleConfiguration', status: 404 });
    expect(await failure(s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'no-such-bucket' })))).toEqual({ name: 'NoSuchBucket', status: 404 });
  });

  it('answers each rule in the form it was sent: a rule-level Prefix, an empty Filter Prefix, And of one condition', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'as-sent' }));
    const sent: LifecycleRule[] = [
      { ID: 'legacy', Prefix: '', Status: 'Enabled', Expiration: { Days: 3 } },
      { ID: 'empty-prefix', Filter: { Prefix: '' }, Status: 'Enabled', Expiration: { Days: 4 } },
      { ID: 'and-of-one', Filter: { And: { Prefix: 'logs/' } }, Status: 'Disabled', Expiration: { Days: 5 } },
      { ID: 'and-of-two', Filter: { And: { Prefix: 'tmp/', Tags: [{ Key: 'k', Value: 'v' }] } }, Status: 'Enabled', Expiration: { Days: 6 } },
    ];
    await s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: 'as-sent', LifecycleConfiguration: { Rules: sent } }));
    expect((await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'as-sent' }))).Rules).toEqual(sent);
    await s3.send(new DeleteBucketLifecycleCommand({ Bucket: 'as-sent' }));
  });

  it('refuses bad configurations with AWS\'s error names and keeps the previous configuration', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'strict' }));
    await s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: 'strict', LifecycleConfiguration: { Rules: rules.slice(0, 2) } }));
    for (const [what, body, code] of bad) {
      const answer = await putRaw('strict', body);
      expect([what, answer.status, /<Code>([^<]+)<\/Code>/.exec(answer.body)?.[1]]).toEqual([what, code === 'NotImplemented' ? 501 : 400, code]);
    }
    expect((await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'strict' }))).Rules).toEqual(rules.slice(0, 2));
  });

  it('names the policy actions AWS uses (a delete is a put)', () => {
    const query = new URLSearchParams('lifecycle');
    expect(permissionsOf({ kind: 'PutBucketLifecycleConfiguration', bucket: 'b' }, query)).toEqual([{ action: 's3:PutLifecycleConfiguration', bucket: 'b' }]);
    expect(permissionsOf({ kind: 'GetBucketLifecycleConfiguration', bucket: 'b' }, query)).toEqual([{ action: 's3:GetLifecycleConfiguration', bucket: 'b' }]);
    expect(permissionsOf({ kind: 'DeleteBucketLifecycle', bucket: 'b' }, query)).toEqual([{ action: 's3:PutLifecycleConfiguration', bucket: 'b' }]);
  });
});

describe('the scanner on a real server', () => {
  it('expires nothing before its time; after a restart two days ahead the kept rules expire objects, noncurrent versions and markers', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'expiring' }));
    for (const key of ['old/a', 'old/b', 'keep/c']) await s3.send(new PutObjectCommand({ Bucket: 'expiring', Key: key, Body: key }));
    await s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: 'expiring', LifecycleConfiguration: { Rules: [{ ID: 'old', Status: 'Enabled', Filter: { Prefix: 'old/' }, Expiration: { Days: 1 } }] } }));
    // x-amz-expiration: when the rule expires an object and which rule it is (next midnight UTC after a day).
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'expiring', Key: 'old/a' }));
    const due = new Date((Math.floor((head.LastModified!.getTime() + 86_400_000) / 86_400_000) + 1) * 86_400_000);
    expect(head.Expiration).toBe(`expiry-date="${due.toUTCString()}", rule-id="old"`);
    expect((await s3.send(new PutObjectCommand({ Bucket: 'expiring', Key: 'old/put', Body: 'x' }))).Expiration).toMatch(/^expiry-date="[^"]+ 00:00:00 GMT", rule-id="old"$/);
    await s3.send(new DeleteObjectCommand({ Bucket: 'expiring', Key: 'old/put' }));
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'expiring', Key: 'keep/c' }))).Expiration).toBeUndefined();
    await s3.send(new CreateBucketCommand({ Bucket: 'history' }));
    await s3.send(new PutBucketVersioningCommand({ Bucket: 'history', VersioningConfiguration: { Status: 'Enabled' } }));
    await s3.send(new PutObjectCommand({ Bucket: 'history', Key: 'k', Body: 'one' }));
    const latest = await s3.send(new PutObjectCommand({ Bucket: 'history', Key: 'k', Body: 'two' }));
    await s3.send(new PutObjectCommand({ Bucket: 'history', Key: 'gone', Body: 'x' }));
    await s3.send(new DeleteObjectCommand({ Bucket: 'history', Key: 'gone' }));
    const historyRules: LifecycleRule[] = [{ ID: 'nc', Status: 'Enabled', Filter: {}, NoncurrentVersionExpiration: { NoncurrentDays: 1 }, Expiration: { ExpiredObjectDeleteMarker: true } }];
    await s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: 'history', LifecycleConfiguration: { Rules: historyRules } }));

    // Only the buckets with rules are walked (strict, expiring, history of the five), and only the keys
    // under the rules' prefixes: old/a and old/b, not keep/c; every key of history (its rule has none).
    const today = await runToEnd();
    expect(today).toMatchObject({ trigger: 'manual', bucketsScanned: 3, objectsScanned: 4, restoredCopiesEnded: 0, repairWalk: false, errors: 0, expired: { currentVersions: 0, noncurrentVersions: 0, deleteMarkers: 0 } });

    await server.stop();
    server = await startSvc({ args: args(), env: { ...env, SVC_LIFECYCLE_CLOCK_OFFSET: '2d' } });
    s3 = s3ClientFor(server.url);
    expect((await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'history' }))).Rules).toEqual(historyRules);

    const started = await admin(server.url, 'POST', '/svc/admin/v4/lifecycle/run');
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    fitsSchema('/svc/admin/v4/lifecycle/run', started.body);
    const again = await admin(server.url, 'POST', '/svc/admin/v4/lifecycle/run');
    expect([again.status, again.body.Code]).toEqual([409, 'LifecycleScanRunning']);
    // Five keys at five a second: the status shows the cycle under way before it ends.
    const midway = await admin(server.url, 'GET', '/svc/admin/v4/lifecycle/status');
    expect(midway.body).toMatchObject({ running: true, objectsPerSecond: 5, current: { trigger: 'manual', finishedAt: null } });
    fitsSchema('/svc/admin/v4/lifecycle/status', midway.body);
    const later = await waitIdle();
    expect(later).toMatchObject({ bucketsScanned: 3, objectsScanned: 4, errors: 0, expired: { currentVersions: 2, noncurrentVersions: 2, deleteMarkers: 1, multipartUploads: 0 } });
    expect(Date.parse(later.judgedAt) - Date.parse(later.startedAt)).toBeGreaterThan(47 * 3_600_000);
    fitsSchema('/svc/admin/v4/lifecycle/status', (await admin(server.url, 'GET', '/svc/admin/v4/lifecycle/status')).body);

    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'expiring' }));
    expect(listed.Contents?.map((item) => item.Key)).toEqual(['keep/c']);
    const versions = await s3.send(new ListObjectVersionsCommand({ Bucket: 'history' }));
    expect(versions.Versions?.map((item) => [item.Key, item.VersionId])).toEqual([['k', latest.VersionId]]);
    expect(versions.DeleteMarkers ?? []).toEqual([]);

    const home = await mkdtemp(join(tmpdir(), 'svc-lifecycle-rc-'));
    try {
      const { ok } = rcIn(() => home);
      await ok('alias', 'set', 'local', server.url, testCredentials.accessKeyId, testCredentials.secretAccessKey);
      const shown = await ok('admin', 'lifecycle', 'status', 'local');
      expect(shown).toContain('lifecycle scanner: idle, 5 objects/s at most');
      expect(shown).toMatch(/last\s+manual\s+\S+\s+\S+\s+3\s+4\s+2\s+2\s+1\s+0\s+0\s+0\s+0/);
      const json = JSON.parse(await ok('admin', 'lifecycle', 'status', 'local', '--json'));
      expect(json.last.expired).toEqual(later.expired);
      // run --watch starts a cycle and follows it to its end: nothing is left to expire.
      const followed = await ok('admin', 'lifecycle', 'run', 'local', '--watch');
      expect(followed).toMatch(/last\s+manual\s+\S+\s+\S+\s+3\s+\d+\s+0\s+0\s+0\s+0\s+0\s+0\s+0/);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  }, 120_000);
});

async function runToEnd(): Promise<Record<string, any>> {
  const started = await admin(server.url, 'POST', '/svc/admin/v4/lifecycle/run');
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  return waitIdle();
}

async function waitIdle(): Promise<Record<string, any>> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(100)) {
    const status = await admin(server.url, 'GET', '/svc/admin/v4/lifecycle/status');
    if (status.body.running === false) return status.body.last;
  }
  throw new Error('the lifecycle cycle did not end');
}
