/**
 * Bucket replication between two svc deployments (real processes, AWS SDK and boto3 as clients):
 * remote targets checked at add (wrong credentials, no versioning: refused by name; the secret
 * never answered); every version, its metadata, content type, tags, retention and legal hold, and
 * delete markers arrive with the source's version ids and times (version lists compared); statuses
 * COMPLETED on the source and REPLICA on the target; a refused request replicates nothing; a
 * resync copies what existed before the rule; two deployments replicating to each other settle
 * with no loop; SSE-S3 and SSE-KMS versions arrive decrypted and sealed again on the target (SSE-KMS
 * under the rule's replica key), an SSE-C version stays FAILED; s3:Replication:* events reach a
 * webhook. Outages are in replication-outage.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  CompleteMultipartUploadCommand, CopyObjectCommand, CreateBucketCommand, CreateMultipartUploadCommand, DeleteObjectCommand, GetObjectCommand, GetObjectTaggingCommand,
  HeadObjectCommand, PutBucketNotificationConfigurationCommand, PutBucketReplicationCommand, PutObjectCommand, PutObjectLegalHoldCommand, PutObjectTaggingCommand, UploadPartCommand,
} from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { sdkErrorOf } from './helpers/codes.js';
import { waitFor } from './helpers/poll.js';
import { addTarget, replicate, replicationStatus, sameVersions, versionedBucket, versionList } from './helpers/replication.js';
import { rcIn } from './helpers/rc-process.js';
import { parseExposition, sampleValue } from './helpers/metrics.js';

let rootA: string;
let rootB: string;
let a: SvcProcess;
let b: SvcProcess;
const { ok, rc } = rcIn(() => rootA);
const env = { SVC_PROMETHEUS_AUTH_TYPE: 'public', SVC_KMS_ALLOW_INSECURE_SSEC: 'on' };
const envA = { ...env, SVC_KMS_SECRET_KEY: `source-key:${randomBytes(32).toString('base64')}` };
const envB = { ...env, SVC_KMS_SECRET_KEY: `target-key:${randomBytes(32).toString('base64')}` };
/** What the webhook received: one parsed message per request. */
const hooked: { EventName: string; Records: Record<string, any>[] }[] = [];
let webhook: Server;

const startA = (port?: number) => startSvc({ args: [join(rootA, 'd{1...4}')], env: envA, ...(port !== undefined ? { port } : {}) });
const startB = (port?: number) => startSvc({ args: [join(rootB, 'd{1...4}')], env: envB, ...(port !== undefined ? { port } : {}) });

/** The AWS error name a call fails with; 'no error' when it succeeds. */
const codeOf = async (work: Promise<unknown>): Promise<string> => (await sdkErrorOf(work)).name ?? 'no error';

const same = (sourceBucket: string, targetBucket: string, timeoutMs?: number) => sameVersions(() => a, sourceBucket, () => b, targetBucket, timeoutMs);

beforeAll(async () => {
  rootA = await mkdtemp(join(tmpdir(), 'svc-replication-a-'));
  rootB = await mkdtemp(join(tmpdir(), 'svc-replication-b-'));
  webhook = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      hooked.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      response.end();
    });
  });
  await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
  [a, b] = await Promise.all([startA(), startB()]);
  await versionedBucket(a, 'src', true);
  await versionedBucket(b, 'dst', true);
  await s3ClientFor(b.url).send(new CreateBucketCommand({ Bucket: 'unversioned' }));
}, 60_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  webhook?.close();
  for (const root of [rootA, rootB]) if (root) await rm(root, { recursive: true, force: true });
}, 30_000);

describe('remote targets', () => {
  it('refuses wrong credentials and a target bucket without versioning by name; stores a good one without answering its secret', async () => {
    const wrong = await addTarget(a, 'src', b, 'dst', { accessKeyId: testCredentials.accessKeyId, secretAccessKey: 'not-the-secret' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.Code).toBe('RemoteTargetCredentialsRefused');
    const unversioned = await addTarget(a, 'src', b, 'unversioned');
    expect(unversioned.body.Code).toBe('RemoteTargetNotVersioned');

    const added = await addTarget(a, 'src', b, 'dst');
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect(added.body.target).toMatchObject({ sourceBucket: 'src', endpoint: b.url, targetBucket: 'dst', accessKey: testCredentials.accessKeyId });
    await ok('alias', 'set', 'a', a.url, testCredentials.accessKeyId, testCredentials.secretAccessKey);
    const listing = await ok('admin', 'replicate', 'ls', 'a/src');
    expect(listing).toContain(added.body.target.arn);
    const json = await ok('admin', 'replicate', 'ls', 'a', '--json');
    expect(json).not.toContain(testCredentials.secretAccessKey);
    const again = await rc('admin', 'replicate', 'add', 'a/src', '--remote-bucket', `${b.url.replace('://', `://${testCredentials.accessKeyId}:${testCredentials.secretAccessKey}@`)}/dst`);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('RemoteTargetExists');
    await replicate(a, 'src', 'dst');
  });
});

describe('replicating', () => {
  it('every version, its metadata, tags, retention, legal hold and delete markers arrive with their ids and times; statuses COMPLETED and REPLICA', async () => {
    const s3 = s3ClientFor(a.url);
    const until = new Date(Date.now() + 86_400_000);
    const first = await s3.send(new PutObjectCommand({ Bucket: 'src', Key: 'doc.txt', Body: 'one', ContentType: 'text/plain', Metadata: { owner: 'ann' }, Tagging: 'a=1', CacheControl: 'max-age=60' }));
    const second = await s3.send(new PutObjectCommand({ Bucket: 'src', Key: 'doc.txt', Body: 'two', ObjectLockMode: 'GOVERNANCE', ObjectLockRetainUntilDate: until }));
    await s3.send(new PutObjectTaggingCommand({ Bucket: 'src', Key: 'doc.txt', VersionId: first.VersionId, Tagging: { TagSet: [{ Key: 'a', Value: '2' }] } }));
    await s3.send(new PutObjectLegalHoldCommand({ Bucket: 'src', Key: 'doc.txt', VersionId: second.VersionId, LegalHold: { Status: 'ON' } }));
    const upload = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'src', Key: 'parts.bin', ContentType: 'application/x-parts' }));
    const part = await s3.send(new UploadPartCommand({ Bucket: 'src', Key: 'parts.bin', UploadId: upload.UploadId, PartNumber: 1, Body: 'x'.repeat(1000) }));
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'src', Key: 'parts.bin', UploadId: upload.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] } }));
    await s3.send(new CopyObjectCommand({ Bucket: 'src', Key: 'copy.txt', CopySource: `src/doc.txt?versionId=${first.VersionId}` }));
    await s3.send(new PutObjectCommand({ Bucket: 'src', Key: 'gone.txt', Body: 'soon deleted' }));
    const marker = await s3.send(new DeleteObjectCommand({ Bucket: 'src', Key: 'gone.txt' }));
    expect(marker.DeleteMarker).toBe(true);

    const versions = await same('src', 'dst');
    expect(versions.filter((line) => line.endsWith('marker'))).toHaveLength(1);
    const target = s3ClientFor(b.url);
    const replicaFirst = await target.send(new HeadObjectCommand({ Bucket: 'dst', Key: 'doc.txt', VersionId: first.VersionId }));
    expect(replicaFirst).toMatchObject({ ContentType: 'text/plain', Metadata: { owner: 'ann' }, CacheControl: 'max-age=60', ReplicationStatus: 'REPLICA' });
    expect((await target.send(new GetObjectTaggingCommand({ Bucket: 'dst', Key: 'doc.txt', VersionId: first.VersionId }))).TagSet).toEqual([{ Key: 'a', Value: '2' }]);
    const replicaSecond = await target.send(new HeadObjectCommand({ Bucket: 'dst', Key: 'doc.txt', VersionId: second.VersionId }));
    expect(replicaSecond).toMatchObject({ ObjectLockMode: 'GOVERNANCE', ObjectLockLegalHoldStatus: 'ON', ReplicationStatus: 'REPLICA' });
    const sourceSecond = await s3.send(new HeadObjectCommand({ Bucket: 'src', Key: 'doc.txt', VersionId: second.VersionId }));
    expect(replicaSecond.ObjectLockRetainUntilDate?.toISOString()).toBe(sourceSecond.ObjectLockRetainUntilDate?.toISOString());
    expect(await (await target.send(new GetObjectCommand({ Bucket: 'dst', Key: 'parts.bin' }))).Body!.transformToString()).toBe('x'.repeat(1000));
    for (const version of [first.VersionId, second.VersionId]) {
      await waitFor(`doc.txt ${version} reads COMPLETED on the source`, async () => (await s3.send(new HeadObjectCommand({ Bucket: 'src', Key: 'doc.txt', VersionId: version }))).ReplicationStatus === 'COMPLETED');
    }
    const boto = await python(`
import boto3
s3 = boto3.client('s3', endpoint_url='${b.url}', aws_access_key_id='${testCredentials.accessKeyId}', aws_secret_access_key='${testCredentials.secretAccessKey}', region_name='us-east-1')
print(s3.head_object(Bucket='dst', Key='copy.txt')['ReplicationStatus'])
`);
    expect(boto).toBe('REPLICA');
    const metrics = parseExposition(await (await fetch(`${a.url}/svc/metrics/node`)).text());
    const id = (await replicationStatus(a, 'src')).targets[0].arn.split(':')[4];
    expect(sampleValue(metrics, 'svc_replication_completed_total', { target: id })).toBeGreaterThanOrEqual(versions.length);
    expect(sampleValue(metrics, 'svc_replication_pending_tasks', { target: id })).toBe(0);
  });

  it('a refused request replicates nothing; replica headers need s3:ReplicateObject', async () => {
    await admin(a.url, 'POST', '/svc/admin/v4/iam/user/add', '', { body: JSON.stringify({ accessKey: 'reader', secretKey: 'reader-secret-1', policies: ['readonly'] }) });
    const reader = s3ClientFor(a.url, { credentials: { accessKeyId: 'reader', secretAccessKey: 'reader-secret-1' } });
    expect(await codeOf(reader.send(new PutObjectCommand({ Bucket: 'src', Key: 'refused.txt', Body: 'no' })))).toBe('AccessDenied');
    const before = (await replicationStatus(a, 'src')).targets[0].completed;

    await admin(b.url, 'POST', '/svc/admin/v4/iam/policy/create', 'name=put-only', { body: JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:PutObject'], Resource: ['arn:aws:s3:::dst/*'] }] }) });
    await admin(b.url, 'POST', '/svc/admin/v4/iam/user/add', '', { body: JSON.stringify({ accessKey: 'writer', secretKey: 'writer-secret-1', policies: ['put-only'] }) });
    const writer = s3ClientFor(b.url, { credentials: { accessKeyId: 'writer', secretAccessKey: 'writer-secret-1' } });
    const forged = new PutObjectCommand({ Bucket: 'dst', Key: 'forged.txt', Body: 'forged' });
    forged.middlewareStack.add((next) => async (args) => {
      Object.assign((args.request as { headers: Record<string, string> }).headers, { 'x-svc-replica-version-id': '00000000-0000-0000-0000-000000000001', 'x-svc-replica-mtime-ms': '1000' });
      return next(args);
    }, { step: 'build' });
    expect(await codeOf(writer.send(forged))).toBe('AccessDenied');
    const plain = await writer.send(new PutObjectCommand({ Bucket: 'dst', Key: 'plain.txt', Body: 'allowed' }));
    expect(await codeOf(s3ClientFor(b.url).send(new HeadObjectCommand({ Bucket: 'dst', Key: 'forged.txt' })))).toBe('NotFound');
    expect(await codeOf(s3ClientFor(b.url).send(new HeadObjectCommand({ Bucket: 'dst', Key: 'refused.txt' })))).toBe('NotFound');
    expect((await replicationStatus(a, 'src')).targets[0].completed).toBe(before);
    // The allowed write is removed for good, so that the target's bucket lists only replicas again.
    await s3ClientFor(b.url).send(new DeleteObjectCommand({ Bucket: 'dst', Key: 'plain.txt', VersionId: plain.VersionId }));
  });

  it('a resync copies what the bucket held before its rule, with progress', async () => {
    await versionedBucket(a, 'old');
    await versionedBucket(b, 'old-copy');
    const s3 = s3ClientFor(a.url);
    for (let index = 0; index < 6; index += 1) await s3.send(new PutObjectCommand({ Bucket: 'old', Key: `before/${index}`, Body: `before ${index}` }));
    await s3.send(new DeleteObjectCommand({ Bucket: 'old', Key: 'before/5' }));
    expect((await addTarget(a, 'old', b, 'old-copy')).status).toBe(200);
    await replicate(a, 'old', 'old-copy');
    expect(await versionList(s3ClientFor(b.url), 'old-copy')).toEqual([]);
    const output = await ok('admin', 'replicate', 'resync', 'a/old', '--watch');
    expect(output).toContain('completed');
    await same('old', 'old-copy');
    const resync = (await replicationStatus(a, 'old')).resyncs[0];
    expect(resync).toMatchObject({ bucket: 'old', bucketArn: 'arn:aws:s3:::old-copy', status: 'completed', keys: 6, queued: 7 });
  }, 60_000);
});

describe('existing objects', () => {
  it('a rule with ExistingObjectReplication enabled starts a resync by itself', async () => {
    await versionedBucket(a, 'auto');
    await versionedBucket(b, 'auto-copy');
    for (let index = 0; index < 3; index += 1) await s3ClientFor(a.url).send(new PutObjectCommand({ Bucket: 'auto', Key: `early/${index}`, Body: `early ${index}` }));
    expect((await addTarget(a, 'auto', b, 'auto-copy')).status).toBe(200);
    await replicate(a, 'auto', 'auto-copy', true);
    expect(await same('auto', 'auto-copy')).toHaveLength(3);
    await waitFor('the resync reads completed', async () => (await replicationStatus(a, 'auto')).resyncs[0]?.status === 'completed');
  });
});

describe('encrypted versions and replication events', () => {
  it('SSE-S3 and SSE-KMS versions arrive sealed again on the target; SSE-C stays FAILED; each outcome reaches a webhook', async () => {
    await versionedBucket(a, 'sealed');
    await versionedBucket(b, 'sealed-copy');
    expect((await addTarget(a, 'sealed', b, 'sealed-copy')).status).toBe(200);
    const hook = `http://127.0.0.1:${(webhook.address() as { port: number }).port}/events`;
    const target = await admin(a.url, 'POST', '/svc/admin/v4/event/target/add', '', { body: JSON.stringify({ type: 'webhook', id: 'replication', settings: { ENDPOINT: hook } }) });
    expect(target.status, JSON.stringify(target.body)).toBe(200);
    const s3 = s3ClientFor(a.url);
    await s3.send(new PutBucketNotificationConfigurationCommand({ Bucket: 'sealed', NotificationConfiguration: { QueueConfigurations: [{ Id: 'replication', QueueArn: 'arn:svc:sqs::replication:webhook', Events: ['s3:Replication:*'] }] } }));
    await s3.send(new PutBucketReplicationCommand({
      Bucket: 'sealed',
      ReplicationConfiguration: {
        Role: '',
        Rules: [{
          ID: 'sealed', Priority: 1, Status: 'Enabled', Filter: { Prefix: '' }, DeleteMarkerReplication: { Status: 'Enabled' },
          SourceSelectionCriteria: { SseKmsEncryptedObjects: { Status: 'Enabled' } },
          Destination: { Bucket: 'arn:aws:s3:::sealed-copy', EncryptionConfiguration: { ReplicaKmsKeyID: 'target-key' } },
        }],
      },
    }));
    const customerKey = randomBytes(32);
    const ssec = { SSECustomerAlgorithm: 'AES256', SSECustomerKey: customerKey.toString('base64'), SSECustomerKeyMD5: createHash('md5').update(customerKey).digest('base64') };
    const withS3 = await s3.send(new PutObjectCommand({ Bucket: 'sealed', Key: 'sse-s3.txt', Body: 'sealed by the deployment', ServerSideEncryption: 'AES256', Metadata: { kind: 's3' } }));
    const withKms = await s3.send(new PutObjectCommand({ Bucket: 'sealed', Key: 'sse-kms.txt', Body: 'sealed by a named key', ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'source-key' }));
    const withCustomer = await s3.send(new PutObjectCommand({ Bucket: 'sealed', Key: 'sse-c.txt', Body: 'sealed by the client', ...ssec }));

    const copy = s3ClientFor(b.url);
    await waitFor('the SSE-S3 and SSE-KMS versions reached the target', async () => (await versionList(copy, 'sealed-copy')).length === 2);
    const replicaS3 = await copy.send(new GetObjectCommand({ Bucket: 'sealed-copy', Key: 'sse-s3.txt', VersionId: withS3.VersionId }));
    expect(replicaS3).toMatchObject({ ServerSideEncryption: 'AES256', ReplicationStatus: 'REPLICA', Metadata: { kind: 's3' } });
    expect(await replicaS3.Body!.transformToString()).toBe('sealed by the deployment');
    const replicaKms = await copy.send(new GetObjectCommand({ Bucket: 'sealed-copy', Key: 'sse-kms.txt', VersionId: withKms.VersionId }));
    expect(replicaKms).toMatchObject({ ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'target-key', ReplicationStatus: 'REPLICA' });
    expect(await replicaKms.Body!.transformToString()).toBe('sealed by a named key');
    await waitFor('the SSE-C version reads FAILED on the source', async () => (await s3.send(new HeadObjectCommand({ Bucket: 'sealed', Key: 'sse-c.txt', ...ssec }))).ReplicationStatus === 'FAILED');
    expect(await codeOf(copy.send(new HeadObjectCommand({ Bucket: 'sealed-copy', Key: 'sse-c.txt' })))).toBe('NotFound');
    expect((await replicationStatus(a, 'sealed')).targets[0]).toMatchObject({ completed: 2, unsupported: 1 });

    const records = await waitFor('three replication events reached the webhook', async () => {
      const seen = hooked.map((message) => message.Records[0]!).filter((record) => record.s3.bucket.name === 'sealed');
      return seen.length >= 3 ? seen : undefined;
    });
    const byVersion = new Map(records.map((record) => [record.s3.object.versionId, record]));
    for (const version of [withS3.VersionId, withKms.VersionId]) {
      expect(byVersion.get(version)).toMatchObject({ eventName: 'Replication:OperationCompletedReplication', replicationEventData: { destinationBucket: 'arn:aws:s3:::sealed-copy', s3Operation: 's3:ReplicateObject', replicationRuleId: 'sealed' } });
    }
    const failed = byVersion.get(withCustomer.VersionId)!;
    expect(failed.eventName).toBe('Replication:OperationFailedReplication');
    expect(failed.replicationEventData.failureReason).toContain('SSE-C');
    expect(failed.userIdentity.principalId).toBe('svc:replication');
  });
});

describe('two-way replication', () => {
  it('two deployments replicating to each other settle with no loop', async () => {
    await Promise.all([versionedBucket(a, 'both'), versionedBucket(b, 'both')]);
    expect((await addTarget(a, 'both', b, 'both')).status).toBe(200);
    expect((await addTarget(b, 'both', a, 'both')).status).toBe(200);
    await Promise.all([replicate(a, 'both', 'both'), replicate(b, 'both', 'both')]);
    const fromA = await s3ClientFor(a.url).send(new PutObjectCommand({ Bucket: 'both', Key: 'from-a', Body: 'a' }));
    const fromB = await s3ClientFor(b.url).send(new PutObjectCommand({ Bucket: 'both', Key: 'from-b', Body: 'b' }));
    await waitFor('from-a reached the other side', () => codeOf(s3ClientFor(b.url).send(new HeadObjectCommand({ Bucket: 'both', Key: 'from-a', VersionId: fromA.VersionId }))).then((code) => code === 'no error'));
    await s3ClientFor(b.url).send(new PutObjectTaggingCommand({ Bucket: 'both', Key: 'from-a', VersionId: fromA.VersionId, Tagging: { TagSet: [{ Key: 'seen', Value: 'b' }] } }));
    const settled = await waitFor('both sides hold both keys, once each, and their queues are empty', async () => {
      const [onA, onB] = await Promise.all([versionList(s3ClientFor(a.url), 'both'), versionList(s3ClientFor(b.url), 'both')]);
      const [statusA, statusB] = await Promise.all([replicationStatus(a, 'both'), replicationStatus(b, 'both')]);
      const idle = statusA.targets[0].queued === 0 && statusB.targets[0].queued === 0;
      return idle && onA.length === 2 && JSON.stringify(onA) === JSON.stringify(onB) ? { onA, statusA, statusB } : undefined;
    }, { timeoutMs: 30_000, intervalMs: 100 });
    expect(settled.onA.map((line) => line.split(' ').slice(0, 2).join(' '))).toEqual([`from-a ${fromA.VersionId}`, `from-b ${fromB.VersionId}`]);
    expect((await s3ClientFor(a.url).send(new GetObjectTaggingCommand({ Bucket: 'both', Key: 'from-a' }))).TagSet).toEqual([{ Key: 'seen', Value: 'b' }]);
    // Settled: ten status reads in a row find both queues empty and nothing more completed (a loop keeps them busy).
    const completed = settled.statusA.targets[0].completed + settled.statusB.targets[0].completed;
    expect(completed).toBe(3);
    for (let read = 0; read < 10; read += 1) {
      const [laterA, laterB] = await Promise.all([replicationStatus(a, 'both'), replicationStatus(b, 'both')]);
      expect(laterA.targets[0].completed + laterB.targets[0].completed).toBe(completed);
      expect(laterA.targets[0].queued + laterB.targets[0].queued).toBe(0);
    }
    expect(await versionList(s3ClientFor(a.url), 'both')).toHaveLength(2);
    expect((await s3ClientFor(a.url).send(new HeadObjectCommand({ Bucket: 'both', Key: 'from-b' }))).ReplicationStatus).toBe('REPLICA');
    expect((await s3ClientFor(b.url).send(new HeadObjectCommand({ Bucket: 'both', Key: 'from-b' }))).ReplicationStatus).toBe('COMPLETED');
  });
});

async function python(script: string): Promise<string> {
  const { stdout } = await promisify(execFile)('python3', ['-c', script]);
  return stdout.trim();
}
