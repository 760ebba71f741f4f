/**
 * Put/Get/DeleteBucketReplication on one server, through the AWS SDK and boto3: AWS's XML round
 * trip (filters, priorities, delete-marker and existing-object replication, destination), and
 * each refusal by its AWS code with nothing changed: versioning not enabled, malformed XML, a
 * destination no remote target serves, no configuration, a caller without the action, suspending
 * versioning under a configuration, SSE-KMS selection without a replica key (and the reverse). A remote target that cannot be reached is refused by name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  CreateBucketCommand, DeleteBucketReplicationCommand, GetBucketReplicationCommand, PutBucketReplicationCommand, PutBucketVersioningCommand,
  type ReplicationConfiguration,
} from '@aws-sdk/client-s3';
import { freePort, s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { sdkErrorOf } from './helpers/codes.js';
import { routeS3Request } from '../src/api/s3/router.js';
import { permissionsOf } from '../src/api/s3/access.js';
import { sendSigned } from '../src/cli/rc/signed-request.js';

let root: string;
let server: SvcProcess;
const s3 = () => s3ClientFor(server.url);

/** The AWS error name a call fails with; 'no error' when it succeeds. */
const codeOf = async (work: Promise<unknown>): Promise<string> => (await sdkErrorOf(work)).name ?? 'no error';

const rule = (destination: string, extra: Record<string, unknown> = {}) => ({
  ID: 'all', Priority: 1, Status: 'Enabled' as const, Filter: { Prefix: '' }, DeleteMarkerReplication: { Status: 'Enabled' as const }, Destination: { Bucket: destination }, ...extra,
});

async function putRaw(bucket: string, xml: string): Promise<{ status: number; text: string }> {
  const answer = await sendSigned({ endpoint: server.url, accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey, method: 'PUT', path: `/${bucket}`, rawQuery: 'replication', body: xml });
  return { status: answer.status, text: answer.text };
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-replication-config-'));
  server = await startSvc({ args: [join(root, 'd{1...4}')] });
  for (const bucket of ['source', 'plain', 'copy']) await s3().send(new CreateBucketCommand({ Bucket: bucket }));
  await s3().send(new PutBucketVersioningCommand({ Bucket: 'source', VersioningConfiguration: { Status: 'Enabled' } }));
  await s3().send(new PutBucketVersioningCommand({ Bucket: 'copy', VersioningConfiguration: { Status: 'Enabled' } }));
}, 60_000);

afterAll(async () => {
  await server?.stop();
  if (root) await rm(root, { recursive: true, force: true });
}, 30_000);

describe('the router and the actions', () => {
  it('routes ?replication and names the actions AWS names (a delete is a put)', () => {
    const route = (method: string) => routeS3Request({ method, rawPath: '/b', query: new URLSearchParams('replication'), headers: {} });
    expect(route('GET')).toEqual({ kind: 'GetBucketReplication', bucket: 'b' });
    expect(route('PUT')).toEqual({ kind: 'PutBucketReplication', bucket: 'b' });
    expect(route('DELETE')).toEqual({ kind: 'DeleteBucketReplication', bucket: 'b' });
    expect(permissionsOf(route('GET'), new URLSearchParams())).toEqual([{ action: 's3:GetReplicationConfiguration', bucket: 'b' }]);
    expect(permissionsOf(route('PUT'), new URLSearchParams())).toEqual([{ action: 's3:PutReplicationConfiguration', bucket: 'b' }]);
    expect(permissionsOf(route('DELETE'), new URLSearchParams())).toEqual([{ action: 's3:PutReplicationConfiguration', bucket: 'b' }]);
  });
});

describe('PutBucketReplication refusals', () => {
  it('a bucket without a configuration answers ReplicationConfigurationNotFoundError', async () => {
    expect(await codeOf(s3().send(new GetBucketReplicationCommand({ Bucket: 'source' })))).toBe('ReplicationConfigurationNotFoundError');
  });

  it('versioning not enabled on the source: InvalidRequest', async () => {
    const configuration: ReplicationConfiguration = { Role: '', Rules: [rule('arn:aws:s3:::copy')] };
    expect(await codeOf(s3().send(new PutBucketReplicationCommand({ Bucket: 'plain', ReplicationConfiguration: configuration })))).toBe('InvalidRequest');
  });

  it('a destination no remote target serves: InvalidArgument, nothing stored', async () => {
    const configuration: ReplicationConfiguration = { Role: '', Rules: [rule('arn:aws:s3:::copy')] };
    expect(await codeOf(s3().send(new PutBucketReplicationCommand({ Bucket: 'source', ReplicationConfiguration: configuration })))).toBe('InvalidArgument');
    expect(await codeOf(s3().send(new GetBucketReplicationCommand({ Bucket: 'source' })))).toBe('ReplicationConfigurationNotFoundError');
  });

  it('malformed XML: MalformedXML', async () => {
    for (const body of ['<ReplicationConfiguration><Rule><Status>Maybe</Status></Rule></ReplicationConfiguration>', '<ReplicationConfiguration><Role/></ReplicationConfiguration>', '<ReplicationConfiguration><Rule>', '<Other/>']) {
      const answer = await putRaw('source', body);
      expect(answer.status, body).toBe(400);
      expect(answer.text, body).toContain('<Code>MalformedXML</Code>');
    }
  });
});

describe('a remote target and a configuration', () => {
  it('a target that does not answer is refused by name and not stored', async () => {
    const port = await freePort();
    const body = JSON.stringify({ bucket: 'source', endpoint: `http://127.0.0.1:${port}`, targetBucket: 'copy', accessKey: 'someone', secretKey: 'some-secret' });
    const answer = await admin(server.url, 'POST', '/svc/admin/v4/replication/target/add', '', { body });
    expect(answer.status).toBe(503);
    expect(answer.body.Code).toBe('RemoteTargetUnreachable');
    expect((await admin(server.url, 'GET', '/svc/admin/v4/replication/target/list', 'bucket=source')).body.targets).toEqual([]);
  });

  it('round-trips AWS XML through the SDK and boto3; suspending versioning is then refused; delete removes it', async () => {
    // The same server is its own target here: what is checked is the configuration, not delivery.
    const added = await admin(server.url, 'POST', '/svc/admin/v4/replication/target/add', '', { body: JSON.stringify({ bucket: 'source', endpoint: server.url, targetBucket: 'copy', ...secretOf() }) });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect(JSON.stringify(added.body)).not.toContain(testCredentials.secretAccessKey);
    const configuration: ReplicationConfiguration = {
      Role: 'arn:aws:iam::000000000000:role/replication',
      Rules: [
        rule('arn:aws:s3:::copy', { ID: 'photos', Priority: 2, Filter: { And: { Prefix: 'photos/', Tags: [{ Key: 'keep', Value: 'yes' }] } }, DeleteMarkerReplication: { Status: 'Disabled' }, ExistingObjectReplication: { Status: 'Enabled' } }),
        rule('arn:aws:s3:::copy', { ID: 'logs', Priority: 1, Filter: { Prefix: 'logs/' }, Destination: { Bucket: 'arn:aws:s3:::copy', StorageClass: 'REDUCED_REDUNDANCY' } }),
      ],
    };
    await s3().send(new PutBucketReplicationCommand({ Bucket: 'source', ReplicationConfiguration: configuration }));
    const got = (await s3().send(new GetBucketReplicationCommand({ Bucket: 'source' }))).ReplicationConfiguration!;
    expect(got.Role).toBe(configuration.Role);
    expect(got.Rules).toEqual([
      { ID: 'photos', Priority: 2, Status: 'Enabled', Filter: { And: { Prefix: 'photos/', Tags: [{ Key: 'keep', Value: 'yes' }] } }, DeleteMarkerReplication: { Status: 'Disabled' }, ExistingObjectReplication: { Status: 'Enabled' }, Destination: { Bucket: 'arn:aws:s3:::copy' } },
      { ID: 'logs', Priority: 1, Status: 'Enabled', Filter: { Prefix: 'logs/' }, DeleteMarkerReplication: { Status: 'Enabled' }, ExistingObjectReplication: { Status: 'Disabled' }, Destination: { Bucket: 'arn:aws:s3:::copy', StorageClass: 'REDUCED_REDUNDANCY' } },
    ]);
    const boto = await python(`
import boto3, json
s3 = boto3.client('s3', endpoint_url='${server.url}', aws_access_key_id='${testCredentials.accessKeyId}', aws_secret_access_key='${testCredentials.secretAccessKey}', region_name='us-east-1')
print(json.dumps([r['ID'] for r in s3.get_bucket_replication(Bucket='source')['ReplicationConfiguration']['Rules']]))
`);
    expect(JSON.parse(boto)).toEqual(['photos', 'logs']);
    expect(await codeOf(s3().send(new PutBucketVersioningCommand({ Bucket: 'source', VersioningConfiguration: { Status: 'Suspended' } })))).toBe('InvalidBucketState');
    const inUse = await admin(server.url, 'POST', '/svc/admin/v4/replication/target/remove', `bucket=source&arn=${encodeURIComponent(added.body.target.arn)}`);
    expect(inUse.body.Code).toBe('RemoteTargetInUse');
    // Two rules with one priority are refused, and the stored configuration stays.
    const duplicate: ReplicationConfiguration = { Role: '', Rules: [rule('arn:aws:s3:::copy', { ID: 'a' }), rule('arn:aws:s3:::copy', { ID: 'b' })] };
    expect(await codeOf(s3().send(new PutBucketReplicationCommand({ Bucket: 'source', ReplicationConfiguration: duplicate })))).toBe('InvalidRequest');
    expect((await s3().send(new GetBucketReplicationCommand({ Bucket: 'source' }))).ReplicationConfiguration!.Rules!.length).toBe(2);
    await python(`
import boto3
s3 = boto3.client('s3', endpoint_url='${server.url}', aws_access_key_id='${testCredentials.accessKeyId}', aws_secret_access_key='${testCredentials.secretAccessKey}', region_name='us-east-1')
s3.delete_bucket_replication(Bucket='source')
`);
    expect(await codeOf(s3().send(new GetBucketReplicationCommand({ Bucket: 'source' })))).toBe('ReplicationConfigurationNotFoundError');
    const removed = await admin(server.url, 'POST', '/svc/admin/v4/replication/target/remove', `bucket=source&arn=${encodeURIComponent(added.body.target.arn)}`);
    expect(removed.body).toEqual({ removed: added.body.target.arn });
  });

  it('SSE-KMS selection and the replica key round-trip; one without the other is refused, nothing stored', async () => {
    const added = await admin(server.url, 'POST', '/svc/admin/v4/replication/target/add', '', { body: JSON.stringify({ bucket: 'source', endpoint: server.url, targetBucket: 'copy', ...secretOf() }) });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    const kms = rule('arn:aws:s3:::copy', { SourceSelectionCriteria: { SseKmsEncryptedObjects: { Status: 'Enabled' } }, Destination: { Bucket: 'arn:aws:s3:::copy', EncryptionConfiguration: { ReplicaKmsKeyID: 'replica-key' } } });
    await s3().send(new PutBucketReplicationCommand({ Bucket: 'source', ReplicationConfiguration: { Role: '', Rules: [kms] } }));
    const got = (await s3().send(new GetBucketReplicationCommand({ Bucket: 'source' }))).ReplicationConfiguration!.Rules![0]!;
    expect(got.SourceSelectionCriteria).toEqual({ SseKmsEncryptedObjects: { Status: 'Enabled' } });
    expect(got.Destination).toEqual({ Bucket: 'arn:aws:s3:::copy', EncryptionConfiguration: { ReplicaKmsKeyID: 'replica-key' } });
    const refusals: [Record<string, unknown>, string][] = [
      [{ SourceSelectionCriteria: { SseKmsEncryptedObjects: { Status: 'Enabled' } } }, 'InvalidRequest'],
      [{ Destination: { Bucket: 'arn:aws:s3:::copy', EncryptionConfiguration: { ReplicaKmsKeyID: 'replica-key' } } }, 'InvalidRequest'],
      [{ SourceSelectionCriteria: { ReplicaModifications: { Status: 'Enabled' } } }, 'NotImplemented'],
    ];
    for (const [extra, code] of refusals) {
      expect(await codeOf(s3().send(new PutBucketReplicationCommand({ Bucket: 'source', ReplicationConfiguration: { Role: '', Rules: [rule('arn:aws:s3:::copy', { ID: 'other', ...extra })] } }))), JSON.stringify(extra)).toBe(code);
    }
    for (const body of [
      '<ReplicationConfiguration><Rule><Status>Enabled</Status><SourceSelectionCriteria><Other/></SourceSelectionCriteria><Destination><Bucket>arn:aws:s3:::copy</Bucket></Destination></Rule></ReplicationConfiguration>',
      '<ReplicationConfiguration><Rule><Status>Enabled</Status><SourceSelectionCriteria><SseKmsEncryptedObjects><Status>On</Status></SseKmsEncryptedObjects></SourceSelectionCriteria><Destination><Bucket>arn:aws:s3:::copy</Bucket></Destination></Rule></ReplicationConfiguration>',
    ]) expect((await putRaw('source', body)).text, body).toContain('<Code>MalformedXML</Code>');
    const spaced = await putRaw('source', '<ReplicationConfiguration><Rule><Status>Enabled</Status><SourceSelectionCriteria><SseKmsEncryptedObjects><Status>Enabled</Status></SseKmsEncryptedObjects></SourceSelectionCriteria><Destination><Bucket>arn:aws:s3:::copy</Bucket><EncryptionConfiguration><ReplicaKmsKeyID>two words</ReplicaKmsKeyID></EncryptionConfiguration></Destination></Rule></ReplicationConfiguration>');
    expect(spaced.text).toContain('<Code>InvalidArgument</Code>');
    expect((await s3().send(new GetBucketReplicationCommand({ Bucket: 'source' }))).ReplicationConfiguration!.Rules![0]!.ID).toBe('all');
    await s3().send(new DeleteBucketReplicationCommand({ Bucket: 'source' }));
    expect((await admin(server.url, 'POST', '/svc/admin/v4/replication/target/remove', `bucket=source&arn=${encodeURIComponent(added.body.target.arn)}`)).status).toBe(200);
  });

  it('a caller without s3:PutReplicationConfiguration is refused and nothing changes', async () => {
    await admin(server.url, 'POST', '/svc/admin/v4/iam/user/add', '', { body: JSON.stringify({ accessKey: 'reader', secretKey: 'reader-secret-1', policies: ['readonly'] }) });
    const reader = s3ClientFor(server.url, { credentials: { accessKeyId: 'reader', secretAccessKey: 'reader-secret-1' } });
    expect(await codeOf(reader.send(new PutBucketReplicationCommand({ Bucket: 'source', ReplicationConfiguration: { Role: '', Rules: [rule('arn:aws:s3:::copy')] } })))).toBe('AccessDenied');
    expect(await codeOf(reader.send(new DeleteBucketReplicationCommand({ Bucket: 'source' })))).toBe('AccessDenied');
    expect(await codeOf(s3().send(new GetBucketReplicationCommand({ Bucket: 'source' })))).toBe('ReplicationConfigurationNotFoundError');
  });
});

function secretOf(): { accessKey: string; secretKey: string } {
  return { accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey };
}

async function python(script: string): Promise<string> {
  const { stdout } = await promisify(execFile)('python3', ['-c', script]);
  return stdout.trim();
}
