/**
 * Object lock through a real server and the AWS SDK: the bucket configuration, retention and
 * legal hold per version, the lock headers of PUT, copy and multipart, every refusal with AWS's
 * error and the data intact afterwards, the governance bypass (header and permission), and the
 * lock state after a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetBucketVersioningCommand,
  GetObjectCommand,
  GetObjectLegalHoldCommand,
  GetObjectLockConfigurationCommand,
  GetObjectRetentionCommand,
  HeadObjectCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  PutObjectLegalHoldCommand,
  PutObjectLockConfigurationCommand,
  PutObjectRetentionCommand,
  UploadPartCommand,
  type ObjectLockRetentionMode,
  type S3Client,
} from '@aws-sdk/client-s3';
import { sendSigned } from '../src/cli/rc/signed-request.js';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { missingTool } from './helpers/external-tools.js';
import { waitFor } from './helpers/poll.js';

const missingAws = missingTool('aws', 'awscli');
const dayMs = 24 * 60 * 60 * 1000;
const noBypass = { accessKeyId: 'no-bypass', secretAccessKey: 'no-bypass-secret' };
const mayBypass = { accessKeyId: 'may-bypass', secretAccessKey: 'may-bypass-secret' };
const reader = { accessKeyId: 'reader', secretAccessKey: 'reader-secret' };

let root: string;
let server: SvcProcess;
let s3: S3Client;
let pattern: string;

/** `<error name> <status>` of a failed call, or `ok`. */
async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    const failure = error as { name: string; $metadata?: { httpStatusCode?: number } };
    return `${failure.name} ${failure.$metadata?.httpStatusCode}`;
  }
}

async function text(client: S3Client, bucket: string, key: string, versionId?: string): Promise<string> {
  const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key, VersionId: versionId }));
  return object.Body!.transformToString();
}

async function lockBucket(name: string): Promise<string> {
  await s3.send(new CreateBucketCommand({ Bucket: name, ObjectLockEnabledForBucket: true }));
  return name;
}

async function putLocked(bucket: string, key: string, body: string, mode: ObjectLockRetentionMode, untilMs: number): Promise<string> {
  const put = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ObjectLockMode: mode, ObjectLockRetainUntilDate: new Date(untilMs) }));
  return put.VersionId!;
}

const signedRaw = (method: 'PUT' | 'GET', path: string, rawQuery: string, body: string) =>
  sendSigned({ endpoint: server.url, accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey, method, path, rawQuery, body });

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-object-lock-'));
  pattern = join(root, 'd{1...4}');
  server = await startSvc({ args: [pattern], env: { SVC_CONSOLE_ENABLE: 'false' } });
  s3 = s3ClientFor(server.url);
  const policy = JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      { Effect: 'Allow', Action: ['s3:*'], Resource: ['arn:aws:s3:::*'] },
      { Effect: 'Deny', Action: ['s3:BypassGovernanceRetention'], Resource: ['arn:aws:s3:::*'] },
    ],
  });
  expect((await admin(server.url, 'POST', '/svc/admin/v4/iam/policy/create', 'name=all-but-bypass', { body: policy })).status).toBe(200);
  for (const [user, policies] of [[noBypass, ['all-but-bypass']], [mayBypass, ['readwrite']], [reader, ['readonly']]] as const) {
    const added = await admin(server.url, 'POST', '/svc/admin/v4/iam/user/add', '', { body: JSON.stringify({ accessKey: user.accessKeyId, secretKey: user.secretAccessKey, policies }) });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
  }
}, 60_000);

afterAll(async () => {
  await server?.kill();
  await rm(root, { recursive: true, force: true });
});

describe('object lock', () => {
  it('a bucket created with object lock has versioning on for good; other buckets refuse lock settings', async () => {
    const bucket = await lockBucket('locked');
    expect((await s3.send(new GetBucketVersioningCommand({ Bucket: bucket }))).Status).toBe('Enabled');
    expect((await s3.send(new GetObjectLockConfigurationCommand({ Bucket: bucket }))).ObjectLockConfiguration).toEqual({ ObjectLockEnabled: 'Enabled' });
    expect(await outcome(s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Suspended' } })))).toBe('InvalidBucketState 409');
    expect((await s3.send(new GetBucketVersioningCommand({ Bucket: bucket }))).Status).toBe('Enabled');

    await s3.send(new CreateBucketCommand({ Bucket: 'plain' }));
    await s3.send(new PutObjectCommand({ Bucket: 'plain', Key: 'k', Body: 'plain' }));
    expect(await outcome(s3.send(new GetObjectLockConfigurationCommand({ Bucket: 'plain' })))).toBe('ObjectLockConfigurationNotFoundError 404');
    const enable = { Bucket: 'plain', ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled' as const } };
    expect(await outcome(s3.send(new PutObjectLockConfigurationCommand(enable)))).toBe('InvalidBucketState 409');
    const retention = { Mode: 'GOVERNANCE' as const, RetainUntilDate: new Date(Date.now() + dayMs) };
    expect(await outcome(s3.send(new PutObjectRetentionCommand({ Bucket: 'plain', Key: 'k', Retention: retention })))).toBe('InvalidRequest 400');
    expect(await outcome(s3.send(new PutObjectLegalHoldCommand({ Bucket: 'plain', Key: 'k', LegalHold: { Status: 'ON' } })))).toBe('InvalidRequest 400');
    expect(await outcome(s3.send(new PutObjectCommand({ Bucket: 'plain', Key: 'k', Body: 'replaced', ObjectLockLegalHoldStatus: 'ON' })))).toBe('InvalidRequest 400');
    expect(await text(s3, 'plain', 'k')).toBe('plain');

    // An existing bucket gets object lock once its versioning is enabled, as AWS allows.
    await s3.send(new PutBucketVersioningCommand({ Bucket: 'plain', VersioningConfiguration: { Status: 'Enabled' } }));
    await s3.send(new PutObjectLockConfigurationCommand(enable));
    expect((await s3.send(new GetObjectLockConfigurationCommand({ Bucket: 'plain' }))).ObjectLockConfiguration?.ObjectLockEnabled).toBe('Enabled');
    expect(await outcome(s3.send(new PutBucketVersioningCommand({ Bucket: 'plain', VersioningConfiguration: { Status: 'Suspended' } })))).toBe('InvalidBucketState 409');
  });

  it('default retention: invalid rules are refused with AWS\'s errors; a valid one locks new versions that name none', async () => {
    const bucket = await lockBucket('defaults');
    const rule = (DefaultRetention: Record<string, unknown>) => ({ Bucket: bucket, ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled' as const, Rule: { DefaultRetention } } });
    expect(await outcome(s3.send(new PutObjectLockConfigurationCommand(rule({ Mode: 'GOVERNANCE', Days: 0 }))))).toBe('InvalidRetentionPeriod 400');
    expect(await outcome(s3.send(new PutObjectLockConfigurationCommand(rule({ Mode: 'GOVERNANCE', Years: 0 }))))).toBe('InvalidRetentionPeriod 400');
    expect(await outcome(s3.send(new PutObjectLockConfigurationCommand(rule({ Mode: 'GOVERNANCE', Days: 1, Years: 1 }))))).toBe('MalformedXML 400');
    expect(await outcome(s3.send(new PutObjectLockConfigurationCommand(rule({ Mode: 'FOREVER', Days: 1 }))))).toBe('MalformedXML 400');
    expect(await outcome(s3.send(new PutObjectLockConfigurationCommand(rule({ Mode: 'GOVERNANCE' }))))).toBe('MalformedXML 400');
    // Object lock bodies must carry Content-MD5 or a checksum (the SDK adds one; this request has none).
    const unchecked = await signedRaw('PUT', `/${bucket}`, 'object-lock=', '<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled></ObjectLockConfiguration>');
    expect([unchecked.status, /<Code>(\w+)<\/Code>/.exec(unchecked.text)?.[1]]).toEqual([400, 'InvalidRequest']);
    expect((await s3.send(new GetObjectLockConfigurationCommand({ Bucket: bucket }))).ObjectLockConfiguration?.Rule).toBeUndefined();

    await s3.send(new PutObjectLockConfigurationCommand(rule({ Mode: 'GOVERNANCE', Days: 2 })));
    expect((await s3.send(new GetObjectLockConfigurationCommand({ Bucket: bucket }))).ObjectLockConfiguration?.Rule?.DefaultRetention).toEqual({ Mode: 'GOVERNANCE', Days: 2 });
    const before = Date.now();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'by-default', Body: 'default' }));
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'by-default' }));
    expect(head.ObjectLockMode).toBe('GOVERNANCE');
    expect(head.ObjectLockRetainUntilDate!.getTime()).toBeGreaterThanOrEqual(before + 2 * dayMs - 1000);
    expect(head.ObjectLockRetainUntilDate!.getTime()).toBeLessThanOrEqual(Date.now() + 2 * dayMs + 1000);
    expect(await outcome(s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'by-default', VersionId: head.VersionId })))).toBe('AccessDenied 403');

    // An explicit retention wins over the default.
    const until = Date.now() + 3 * dayMs;
    await putLocked(bucket, 'explicit', 'explicit', 'COMPLIANCE', until);
    const explicit = await s3.send(new GetObjectRetentionCommand({ Bucket: bucket, Key: 'explicit' }));
    expect([explicit.Retention?.Mode, explicit.Retention?.RetainUntilDate?.getTime()]).toEqual(['COMPLIANCE', until]);

    await s3.send(new PutObjectLockConfigurationCommand(rule({ Mode: 'COMPLIANCE', Years: 1 })));
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'a-year', Body: 'year' }));
    const year = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'a-year' }));
    expect(year.ObjectLockMode).toBe('COMPLIANCE');
    expect(Math.round((year.ObjectLockRetainUntilDate!.getTime() - Date.now()) / dayMs)).toBeGreaterThanOrEqual(365);
  });

  it('a locked version cannot be deleted by version id (DeleteObject or DeleteObjects); a delete marker can be added; a PUT adds a version', async () => {
    const bucket = await lockBucket('refusals');
    const versionId = await putLocked(bucket, 'doc', 'locked data', 'GOVERNANCE', Date.now() + dayMs);
    expect(await outcome(s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'doc', VersionId: versionId })))).toBe('AccessDenied 403');
    const batch = await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: [{ Key: 'doc', VersionId: versionId }] } }));
    expect([batch.Deleted ?? [], batch.Errors?.map((error) => [error.Key, error.Code])]).toEqual([[], [['doc', 'AccessDenied']]]);
    expect(await text(s3, bucket, 'doc', versionId)).toBe('locked data');

    // Overwriting in place is impossible: versioning is forced on, so a PUT makes a new version.
    const second = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'doc', Body: 'newer data' }));
    expect(second.VersionId).not.toBe(versionId);
    expect(await text(s3, bucket, 'doc')).toBe('newer data');
    expect(await text(s3, bucket, 'doc', versionId)).toBe('locked data');

    // A delete without a version id only adds a delete marker.
    const marker = await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'doc' }));
    expect(marker.DeleteMarker).toBe(true);
    expect(await text(s3, bucket, 'doc', versionId)).toBe('locked data');
    expect((await s3.send(new GetObjectRetentionCommand({ Bucket: bucket, Key: 'doc', VersionId: versionId }))).Retention?.Mode).toBe('GOVERNANCE');
  });

  it('governance gives way only to the bypass header with s3:BypassGovernanceRetention; compliance never before its date, not even to root', async () => {
    const bucket = await lockBucket('bypass');
    const governed = await putLocked(bucket, 'governed', 'governed', 'GOVERNANCE', Date.now() + dayMs);
    const denied = s3ClientFor(server.url, { credentials: noBypass });
    expect(await outcome(denied.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'governed', VersionId: governed, BypassGovernanceRetention: true })))).toBe('AccessDenied 403');
    const batch = await denied.send(new DeleteObjectsCommand({ Bucket: bucket, BypassGovernanceRetention: true, Delete: { Objects: [{ Key: 'governed', VersionId: governed }] } }));
    expect(batch.Errors?.map((error) => error.Code)).toEqual(['AccessDenied']);
    expect(await outcome(s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'governed', VersionId: governed })))).toBe('AccessDenied 403');
    expect(await text(s3, bucket, 'governed', governed)).toBe('governed');
    const allowed = s3ClientFor(server.url, { credentials: mayBypass });
    await allowed.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'governed', VersionId: governed, BypassGovernanceRetention: true }));
    expect(await outcome(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'governed', VersionId: governed })))).toMatch(/^NotFound|NoSuchVersion/);

    const complied = await putLocked(bucket, 'complied', 'complied', 'COMPLIANCE', Date.now() + dayMs);
    expect(await outcome(s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'complied', VersionId: complied, BypassGovernanceRetention: true })))).toBe('AccessDenied 403');
    const batchByRoot = await s3.send(new DeleteObjectsCommand({ Bucket: bucket, BypassGovernanceRetention: true, Delete: { Objects: [{ Key: 'complied', VersionId: complied }] } }));
    expect(batchByRoot.Errors?.map((error) => error.Code)).toEqual(['AccessDenied']);
    expect(await text(s3, bucket, 'complied', complied)).toBe('complied');

    // Once its date has passed, a compliance version may go.
    const brief = await putLocked(bucket, 'brief', 'brief', 'COMPLIANCE', Date.now() + 1500);
    expect(await outcome(s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'brief', VersionId: brief })))).toBe('AccessDenied 403');
    // Refused (and nothing changed) until the date passes; then the delete goes through.
    await waitFor('the compliance date to pass and the delete to be allowed', async () => (await outcome(s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'brief', VersionId: brief })))) === 'ok', { intervalMs: 100 });
    expect(await outcome(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'brief', VersionId: brief })))).toMatch(/^NotFound|NoSuchVersion/);
  });

  it('retention may be extended; compliance is never shortened nor turned to governance; governance is shortened only with the bypass', async () => {
    const bucket = await lockBucket('retention');
    const until = Date.now() + 2 * dayMs;
    const complied = await putLocked(bucket, 'complied', 'complied', 'COMPLIANCE', until);
    const change = (key: string, VersionId: string, Mode: ObjectLockRetentionMode, untilMs: number, client = s3, BypassGovernanceRetention = false) =>
      outcome(client.send(new PutObjectRetentionCommand({ Bucket: bucket, Key: key, VersionId, BypassGovernanceRetention, Retention: { Mode, RetainUntilDate: new Date(untilMs) } })));
    expect(await change('complied', complied, 'COMPLIANCE', until - dayMs, s3, true)).toBe('AccessDenied 403');
    expect(await change('complied', complied, 'GOVERNANCE', until + dayMs, s3, true)).toBe('AccessDenied 403');
    expect(await change('complied', complied, 'COMPLIANCE', Date.now() - 1000)).toBe('InvalidArgument 400');
    const retentionOf = async (key: string, VersionId: string) => {
      const answer = (await s3.send(new GetObjectRetentionCommand({ Bucket: bucket, Key: key, VersionId }))).Retention!;
      return [answer.Mode, answer.RetainUntilDate!.getTime()];
    };
    expect(await retentionOf('complied', complied)).toEqual(['COMPLIANCE', until]);
    expect(await change('complied', complied, 'COMPLIANCE', until + dayMs)).toBe('ok');
    expect(await retentionOf('complied', complied)).toEqual(['COMPLIANCE', until + dayMs]);

    const governed = await putLocked(bucket, 'governed', 'governed', 'GOVERNANCE', until);
    expect(await change('governed', governed, 'GOVERNANCE', until - dayMs)).toBe('AccessDenied 403');
    expect(await change('governed', governed, 'GOVERNANCE', until - dayMs, s3ClientFor(server.url, { credentials: noBypass }), true)).toBe('AccessDenied 403');
    expect(await retentionOf('governed', governed)).toEqual(['GOVERNANCE', until]);
    expect(await change('governed', governed, 'GOVERNANCE', until - dayMs, s3, true)).toBe('ok');
    expect(await retentionOf('governed', governed)).toEqual(['GOVERNANCE', until - dayMs]);
    // Governance may be raised to compliance without the bypass.
    expect(await change('governed', governed, 'COMPLIANCE', until)).toBe('ok');
    expect(await text(s3, bucket, 'governed', governed)).toBe('governed');

    const plain = (await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'plain', Body: 'p' }))).VersionId!;
    expect(await outcome(s3.send(new GetObjectRetentionCommand({ Bucket: bucket, Key: 'plain', VersionId: plain })))).toBe('NoSuchObjectLockConfiguration 404');
    const unchecked = await signedRaw('PUT', `/${bucket}/plain`, 'retention=', `<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>${new Date(until).toISOString()}</RetainUntilDate></Retention>`);
    expect([unchecked.status, /<Code>(\w+)<\/Code>/.exec(unchecked.text)?.[1]]).toEqual([400, 'InvalidRequest']);
    expect(await outcome(s3.send(new GetObjectRetentionCommand({ Bucket: bucket, Key: 'plain' })))).toBe('NoSuchObjectLockConfiguration 404');
  });

  it('legal hold: ON refuses deletion by anyone, bypass or not; OFF lets the version go', async () => {
    const bucket = await lockBucket('holds');
    const versionId = (await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'held', Body: 'held' }))).VersionId!;
    expect(await outcome(s3.send(new GetObjectLegalHoldCommand({ Bucket: bucket, Key: 'held' })))).toBe('NoSuchObjectLockConfiguration 404');
    await s3.send(new PutObjectLegalHoldCommand({ Bucket: bucket, Key: 'held', VersionId: versionId, LegalHold: { Status: 'ON' } }));
    expect((await s3.send(new GetObjectLegalHoldCommand({ Bucket: bucket, Key: 'held', VersionId: versionId }))).LegalHold?.Status).toBe('ON');
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'held' }))).ObjectLockLegalHoldStatus).toBe('ON');
    // A reader without s3:GetObjectLegalHold reads the object but not its legal hold, as on AWS.
    const asReader = s3ClientFor(server.url, { credentials: reader });
    expect((await asReader.send(new HeadObjectCommand({ Bucket: bucket, Key: 'held' }))).ObjectLockLegalHoldStatus).toBeUndefined();
    const read = await asReader.send(new GetObjectCommand({ Bucket: bucket, Key: 'held' }));
    expect([read.ObjectLockLegalHoldStatus, await read.Body!.transformToString()]).toEqual([undefined, 'held']);
    expect(await outcome(s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'held', VersionId: versionId, BypassGovernanceRetention: true })))).toBe('AccessDenied 403');
    expect(await text(s3, bucket, 'held', versionId)).toBe('held');
    await s3.send(new PutObjectLegalHoldCommand({ Bucket: bucket, Key: 'held', VersionId: versionId, LegalHold: { Status: 'OFF' } }));
    expect((await s3.send(new GetObjectLegalHoldCommand({ Bucket: bucket, Key: 'held', VersionId: versionId }))).LegalHold?.Status).toBe('OFF');
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'held', VersionId: versionId }));
    expect(await outcome(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'held' })))).toBe('NotFound 404');
  });

  it('multipart uploads and copies carry the lock headers of their request (or the bucket default), never the source\'s', async () => {
    const bucket = await lockBucket('carried');
    const until = new Date(Math.floor((Date.now() + dayMs) / 1000) * 1000);
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'multi', ObjectLockMode: 'GOVERNANCE', ObjectLockRetainUntilDate: until, ObjectLockLegalHoldStatus: 'ON' }));
    const part = await s3.send(new UploadPartCommand({ Bucket: bucket, Key: 'multi', UploadId, PartNumber: 1, Body: 'one part' }));
    const done = await s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'multi', UploadId, MultipartUpload: { Parts: [{ ETag: part.ETag, PartNumber: 1 }] } }));
    const multi = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'multi' }));
    expect([multi.ObjectLockMode, multi.ObjectLockRetainUntilDate?.getTime(), multi.ObjectLockLegalHoldStatus]).toEqual(['GOVERNANCE', until.getTime(), 'ON']);
    expect(await outcome(s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'multi', VersionId: done.VersionId })))).toBe('AccessDenied 403');

    await s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'copy-plain', CopySource: `${bucket}/multi` }));
    const plain = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'copy-plain' }));
    expect([plain.ObjectLockMode, plain.ObjectLockLegalHoldStatus]).toEqual([undefined, undefined]);
    await s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'copy-locked', CopySource: `${bucket}/multi`, ObjectLockMode: 'COMPLIANCE', ObjectLockRetainUntilDate: until }));
    const locked = await s3.send(new GetObjectRetentionCommand({ Bucket: bucket, Key: 'copy-locked' }));
    expect([locked.Retention?.Mode, locked.Retention?.RetainUntilDate?.getTime()]).toEqual(['COMPLIANCE', until.getTime()]);
    expect(await text(s3, bucket, 'copy-locked')).toBe('one part');

    // With a default retention, an upload without lock headers gets it at completion.
    await s3.send(new PutObjectLockConfigurationCommand({ Bucket: bucket, ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: 'GOVERNANCE', Days: 1 } } } }));
    const second = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'defaulted' }));
    const piece = await s3.send(new UploadPartCommand({ Bucket: bucket, Key: 'defaulted', UploadId: second.UploadId, PartNumber: 1, Body: 'defaulted' }));
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'defaulted', UploadId: second.UploadId, MultipartUpload: { Parts: [{ ETag: piece.ETag, PartNumber: 1 }] } }));
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'defaulted' }))).ObjectLockMode).toBe('GOVERNANCE');
    await s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'copy-defaulted', CopySource: `${bucket}/copy-plain` }));
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'copy-defaulted' }))).ObjectLockMode).toBe('GOVERNANCE');

    // Bad lock headers are refused before anything is stored.
    expect(await outcome(s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'bad', Body: 'x', ObjectLockMode: 'GOVERNANCE' })))).toBe('InvalidArgument 400');
    expect(await outcome(s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'bad', Body: 'x', ObjectLockMode: 'GOVERNANCE', ObjectLockRetainUntilDate: new Date(Date.now() - dayMs) })))).toBe('InvalidArgument 400');
    expect(await outcome(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'bad' })))).toBe('NotFound 404');
  });

  it.skipIf(missingAws !== undefined)('the aws CLI puts a retained object and reads its retention', async () => {
    const env = { ...process.env, AWS_ACCESS_KEY_ID: testCredentials.accessKeyId, AWS_SECRET_ACCESS_KEY: testCredentials.secretAccessKey, AWS_DEFAULT_REGION: 'us-east-1', AWS_EC2_METADATA_DISABLED: 'true' };
    const aws = (...args: string[]) => spawnSync('aws', ['--endpoint-url', server.url, 's3api', ...args], { env, encoding: 'utf8' });
    await lockBucket('cli-locked');
    const put = aws('put-object', '--bucket', 'cli-locked', '--key', 'k', '--object-lock-mode', 'GOVERNANCE', '--object-lock-retain-until-date', new Date(Date.now() + dayMs).toISOString());
    expect(put.status, put.stderr).toBe(0);
    const got = aws('get-object-retention', '--bucket', 'cli-locked', '--key', 'k');
    expect(got.status, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout).Retention.Mode).toBe('GOVERNANCE');
  });

  it('lock configuration, retention and legal hold survive a restart, and the refusals with them', async () => {
    const bucket = await lockBucket('restarted');
    await s3.send(new PutObjectLockConfigurationCommand({ Bucket: bucket, ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Days: 5 } } } }));
    const kept = (await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'kept', Body: 'kept', ObjectLockLegalHoldStatus: 'ON' }))).VersionId!;
    const before = await s3.send(new GetObjectRetentionCommand({ Bucket: bucket, Key: 'kept' }));
    await server.stop();
    server = await startSvc({ args: [pattern], env: { SVC_CONSOLE_ENABLE: 'false' } });
    s3 = s3ClientFor(server.url);
    expect((await s3.send(new GetObjectLockConfigurationCommand({ Bucket: bucket }))).ObjectLockConfiguration?.Rule?.DefaultRetention).toEqual({ Mode: 'COMPLIANCE', Days: 5 });
    expect((await s3.send(new GetObjectRetentionCommand({ Bucket: bucket, Key: 'kept' }))).Retention).toEqual(before.Retention);
    expect((await s3.send(new GetObjectLegalHoldCommand({ Bucket: bucket, Key: 'kept' }))).LegalHold?.Status).toBe('ON');
    expect(await outcome(s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'kept', VersionId: kept, BypassGovernanceRetention: true })))).toBe('AccessDenied 403');
    expect(await outcome(s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Suspended' } })))).toBe('InvalidBucketState 409');
    expect(await text(s3, bucket, 'kept', kept)).toBe('kept');
  }, 60_000);
});
