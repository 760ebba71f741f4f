/**
 * Object Ownership and ACLs through the AWS SDK, raw HTTP and the AWS CLI: ownership controls
 * put, read and removed (BucketOwnerEnforced by default); canned ACLs, grant headers and
 * AccessControlPolicy bodies on buckets and objects where ACLs count, refused under
 * BucketOwnerEnforced; grants judged with the policies (an explicit Deny wins, anonymous readers
 * let in by AllUsers, users by their canonical id or AuthenticatedUsers), the public access
 * block's ACL settings honoured, and GetBucketPolicyStatus seeing public ACLs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CopyObjectCommand, CreateBucketCommand, CreateMultipartUploadCommand, DeleteBucketOwnershipControlsCommand, DeleteBucketPolicyCommand, DeletePublicAccessBlockCommand,
  GetBucketAclCommand, GetBucketOwnershipControlsCommand, GetBucketPolicyStatusCommand, GetObjectAclCommand, GetObjectCommand, PutBucketAclCommand,
  PutBucketOwnershipControlsCommand, PutBucketPolicyCommand, PutObjectAclCommand, PutObjectCommand, PutPublicAccessBlockCommand, UploadPartCommand, CompleteMultipartUploadCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { sdkErrorOf } from './helpers/codes.js';
import { signedRequest } from './helpers/raw-s3.js';
import { missingPythonModule, missingTool, runTool } from './helpers/external-tools.js';

const allUsers = 'http://acs.amazonaws.com/groups/global/AllUsers';
const authenticatedUsers = 'http://acs.amazonaws.com/groups/global/AuthenticatedUsers';
const reader = { accessKeyId: 'acl-reader', secretAccessKey: 'acl-reader-secret' };
const stranger = { accessKeyId: 'acl-stranger', secretAccessKey: 'acl-stranger-secret' };
const writer = { accessKeyId: 'acl-writer', secretAccessKey: 'acl-writer-secret' };

let root: string;
let server: SvcProcess;
let s3: S3Client;
let asReader: S3Client;
let asStranger: S3Client;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-acl-'));
  server = await startSvc({ args: [join(root, 'd{1...4}')], env: { SVC_CONSOLE_ENABLE: 'false' } });
  s3 = s3ClientFor(server.url);
  // Both users hold a policy that gives them nothing in these buckets: what they get, ACLs give.
  const created = await admin(server.url, 'POST', '/svc/admin/v4/iam/policy/create', 'name=elsewhere', { body: JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::elsewhere/*' }] }) });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const writes = await admin(server.url, 'POST', '/svc/admin/v4/iam/policy/create', 'name=puts-only', { body: JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 's3:PutObject', Resource: 'arn:aws:s3:::shared-acl/*' }] }) });
  expect(writes.status, JSON.stringify(writes.body)).toBe(200);
  for (const [user, policy] of [[reader, 'elsewhere'], [stranger, 'elsewhere'], [writer, 'puts-only']] as const) {
    const added = await admin(server.url, 'POST', '/svc/admin/v4/iam/user/add', '', { body: JSON.stringify({ accessKey: user.accessKeyId, secretKey: user.secretAccessKey, policies: [policy] }) });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
  }
  asReader = s3ClientFor(server.url, { credentials: reader });
  asStranger = s3ClientFor(server.url, { credentials: stranger });
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

const anonymous = async (path: string): Promise<number> => (await fetch(`${server.url}${path}`)).status;
const grantsOf = (grants: { Grantee?: { ID?: string; URI?: string }; Permission?: string }[] | undefined): string[] =>
  (grants ?? []).map((grant) => `${grant.Grantee?.URI ?? grant.Grantee?.ID}:${grant.Permission}`).sort();
const isPublic = async (Bucket: string): Promise<boolean | undefined> => (await s3.send(new GetBucketPolicyStatusCommand({ Bucket }))).PolicyStatus?.IsPublic;

describe('Object Ownership', () => {
  it('new buckets are BucketOwnerEnforced; controls can be put, read and deleted', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'owned' }));
    expect((await s3.send(new GetBucketOwnershipControlsCommand({ Bucket: 'owned' }))).OwnershipControls?.Rules).toEqual([{ ObjectOwnership: 'BucketOwnerEnforced' }]);
    await s3.send(new PutBucketOwnershipControlsCommand({ Bucket: 'owned', OwnershipControls: { Rules: [{ ObjectOwnership: 'ObjectWriter' }] } }));
    expect((await s3.send(new GetBucketOwnershipControlsCommand({ Bucket: 'owned' }))).OwnershipControls?.Rules).toEqual([{ ObjectOwnership: 'ObjectWriter' }]);
    await s3.send(new DeleteBucketOwnershipControlsCommand({ Bucket: 'owned' }));
    expect(await sdkErrorOf(s3.send(new GetBucketOwnershipControlsCommand({ Bucket: 'owned' })))).toEqual({ name: 'OwnershipControlsNotFoundError', status: 404 });
    expect(await sdkErrorOf(s3.send(new GetBucketOwnershipControlsCommand({ Bucket: 'no-such-bucket' })))).toEqual({ name: 'NoSuchBucket', status: 404 });
  });

  it('CreateBucket takes x-amz-object-ownership; a bad value or a public ACL under BucketOwnerEnforced is refused and creates nothing', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'preferred', ObjectOwnership: 'BucketOwnerPreferred' }));
    expect((await s3.send(new GetBucketOwnershipControlsCommand({ Bucket: 'preferred' }))).OwnershipControls?.Rules).toEqual([{ ObjectOwnership: 'BucketOwnerPreferred' }]);
    const bad = await signedRequest(server.url, { method: 'PUT', path: '/bad-ownership', headers: { 'x-amz-object-ownership': 'Everyone' } });
    expect([bad.status, bad.body]).toEqual([400, expect.stringContaining('<Code>InvalidArgument</Code>')]);
    expect(await sdkErrorOf(s3.send(new CreateBucketCommand({ Bucket: 'public-enforced', ACL: 'public-read' })))).toEqual({ name: 'InvalidBucketAclWithObjectOwnership', status: 400 });
    expect(await sdkErrorOf(s3.send(new GetBucketAclCommand({ Bucket: 'public-enforced' })))).toEqual({ name: 'NoSuchBucket', status: 404 });
    // The owner's full control is no ACL at all: accepted.
    await s3.send(new CreateBucketCommand({ Bucket: 'enforced-private', ACL: 'private' }));
  });

  it('malformed controls are MalformedXML; BucketOwnerEnforced is refused while the bucket ACL grants others', async () => {
    for (const body of ['<OwnershipControls/>', '<OwnershipControls><Rule><ObjectOwnership>Nobody</ObjectOwnership></Rule></OwnershipControls>', 'not xml']) {
      const answer = await signedRequest(server.url, { method: 'PUT', path: '/owned', query: { ownershipControls: '' }, body });
      expect([answer.status, answer.body]).toEqual([400, expect.stringContaining('<Code>MalformedXML</Code>')]);
    }
    await s3.send(new CreateBucketCommand({ Bucket: 'grants-others', ObjectOwnership: 'ObjectWriter', ACL: 'public-read' }));
    expect(await sdkErrorOf(s3.send(new PutBucketOwnershipControlsCommand({ Bucket: 'grants-others', OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] } })))).toEqual({ name: 'InvalidBucketAclWithObjectOwnership', status: 400 });
    expect((await s3.send(new GetBucketOwnershipControlsCommand({ Bucket: 'grants-others' }))).OwnershipControls?.Rules).toEqual([{ ObjectOwnership: 'ObjectWriter' }]);
  });

  it('a user without s3:PutBucketOwnershipControls is refused and nothing changes', async () => {
    expect(await sdkErrorOf(asStranger.send(new PutBucketOwnershipControlsCommand({ Bucket: 'preferred', OwnershipControls: { Rules: [{ ObjectOwnership: 'ObjectWriter' }] } })))).toEqual({ name: 'AccessDenied', status: 403 });
    expect(await sdkErrorOf(asStranger.send(new GetBucketOwnershipControlsCommand({ Bucket: 'preferred' })))).toEqual({ name: 'AccessDenied', status: 403 });
    expect((await s3.send(new GetBucketOwnershipControlsCommand({ Bucket: 'preferred' }))).OwnershipControls?.Rules).toEqual([{ ObjectOwnership: 'BucketOwnerPreferred' }]);
  });
});

describe('ACLs under BucketOwnerEnforced', () => {
  it('reads answer the owner\'s full control; any other ACL is AccessControlListNotSupported and changes nothing', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'enforced' }));
    await s3.send(new PutObjectCommand({ Bucket: 'enforced', Key: 'doc', Body: 'text' }));
    const acl = await s3.send(new GetBucketAclCommand({ Bucket: 'enforced' }));
    expect(grantsOf(acl.Grants)).toEqual([`${testCredentials.accessKeyId}:FULL_CONTROL`]);
    expect(acl.Owner?.ID).toBe(testCredentials.accessKeyId);
    const refusals = [
      () => s3.send(new PutBucketAclCommand({ Bucket: 'enforced', ACL: 'public-read' })),
      () => s3.send(new PutBucketAclCommand({ Bucket: 'enforced', GrantRead: `uri="${allUsers}"` })),
      () => s3.send(new PutObjectAclCommand({ Bucket: 'enforced', Key: 'doc', ACL: 'authenticated-read' })),
      () => s3.send(new PutObjectAclCommand({ Bucket: 'enforced', Key: 'doc', AccessControlPolicy: { Owner: acl.Owner, Grants: [{ Grantee: { Type: 'Group', URI: allUsers }, Permission: 'READ' }] } })),
      () => s3.send(new PutObjectCommand({ Bucket: 'enforced', Key: 'public', Body: 'x', ACL: 'public-read' })),
      () => s3.send(new CopyObjectCommand({ Bucket: 'enforced', Key: 'copy', CopySource: 'enforced/doc', ACL: 'public-read' })),
      () => s3.send(new CreateMultipartUploadCommand({ Bucket: 'enforced', Key: 'multi', ACL: 'public-read-write' })),
    ];
    for (const refusal of refusals) expect(await sdkErrorOf(refusal())).toEqual({ name: 'AccessControlListNotSupported', status: 400 });
    expect(await sdkErrorOf(s3.send(new GetObjectCommand({ Bucket: 'enforced', Key: 'public' })))).toMatchObject({ status: 404 });
    expect(await anonymous('/enforced/doc')).toBe(403);
    await s3.send(new PutObjectCommand({ Bucket: 'enforced', Key: 'owner-full', Body: 'x', ACL: 'bucket-owner-full-control' }));
    await s3.send(new PutBucketAclCommand({ Bucket: 'enforced', ACL: 'private' }));
  });
});

describe('ACLs where they count', () => {
  it('a public-read bucket lists for anonymous callers; its objects stay private until given public-read', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'open', ObjectOwnership: 'ObjectWriter', ACL: 'public-read' }));
    expect(grantsOf((await s3.send(new GetBucketAclCommand({ Bucket: 'open' }))).Grants)).toEqual([`${allUsers}:READ`, `${testCredentials.accessKeyId}:FULL_CONTROL`]);
    await s3.send(new PutObjectCommand({ Bucket: 'open', Key: 'private.txt', Body: 'hidden' }));
    await s3.send(new PutObjectCommand({ Bucket: 'open', Key: 'public.txt', Body: 'shown', ACL: 'public-read' }));
    const listing = await fetch(`${server.url}/open?list-type=2`);
    expect(listing.status).toBe(200);
    expect(await listing.text()).toContain('<Key>public.txt</Key>');
    expect(await anonymous('/open/private.txt')).toBe(403);
    const read = await fetch(`${server.url}/open/public.txt`);
    expect([read.status, await read.text()]).toEqual([200, 'shown']);
    // Anonymous callers may read, not write: READ on a bucket is listing.
    expect((await fetch(`${server.url}/open/new.txt`, { method: 'PUT', body: 'x' })).status).toBe(403);
    expect(grantsOf((await s3.send(new GetObjectAclCommand({ Bucket: 'open', Key: 'public.txt' }))).Grants)).toEqual([`${allUsers}:READ`, `${testCredentials.accessKeyId}:FULL_CONTROL`]);
    await s3.send(new PutObjectAclCommand({ Bucket: 'open', Key: 'public.txt', ACL: 'private' }));
    expect(await anonymous('/open/public.txt')).toBe(403);
    await s3.send(new PutBucketAclCommand({ Bucket: 'open', ACL: 'private' }));
    expect(await anonymous('/open?list-type=2')).toBe(403);
  });

  it('grants by canonical id and to AuthenticatedUsers let users in; a copy and a multipart upload take the ACL they ask for', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'shared-acl', ObjectOwnership: 'BucketOwnerPreferred' }));
    await s3.send(new PutObjectCommand({ Bucket: 'shared-acl', Key: 'for-reader', Body: 'r', GrantRead: `id="${reader.accessKeyId}"` }));
    expect(await (await asReader.send(new GetObjectCommand({ Bucket: 'shared-acl', Key: 'for-reader' }))).Body!.transformToString()).toBe('r');
    expect(await sdkErrorOf(asStranger.send(new GetObjectCommand({ Bucket: 'shared-acl', Key: 'for-reader' })))).toEqual({ name: 'AccessDenied', status: 403 });
    // READ does not reach the ACL itself.
    expect(await sdkErrorOf(asReader.send(new GetObjectAclCommand({ Bucket: 'shared-acl', Key: 'for-reader' })))).toEqual({ name: 'AccessDenied', status: 403 });
    await s3.send(new CopyObjectCommand({ Bucket: 'shared-acl', Key: 'signed-in', CopySource: 'shared-acl/for-reader', ACL: 'authenticated-read' }));
    expect(await (await asStranger.send(new GetObjectCommand({ Bucket: 'shared-acl', Key: 'signed-in' }))).Body!.transformToString()).toBe('r');
    expect(await anonymous('/shared-acl/signed-in')).toBe(403);
    const upload = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'shared-acl', Key: 'multi', GrantFullControl: `id="${reader.accessKeyId}"` }));
    const part = await s3.send(new UploadPartCommand({ Bucket: 'shared-acl', Key: 'multi', UploadId: upload.UploadId, PartNumber: 1, Body: 'm' }));
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'shared-acl', Key: 'multi', UploadId: upload.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] } }));
    expect(await (await asReader.send(new GetObjectCommand({ Bucket: 'shared-acl', Key: 'multi' }))).Body!.transformToString()).toBe('m');
    expect(grantsOf((await asReader.send(new GetObjectAclCommand({ Bucket: 'shared-acl', Key: 'multi' }))).Grants)).toEqual([`${reader.accessKeyId}:FULL_CONTROL`]);
    // WRITE on the bucket lets a user put objects; WRITE_ACP lets it change the bucket's ACL.
    expect(await sdkErrorOf(asReader.send(new PutObjectCommand({ Bucket: 'shared-acl', Key: 'by-reader', Body: 'w' })))).toEqual({ name: 'AccessDenied', status: 403 });
    await s3.send(new PutBucketAclCommand({ Bucket: 'shared-acl', GrantWrite: `id="${reader.accessKeyId}"`, GrantReadACP: `id="${reader.accessKeyId}"` }));
    await asReader.send(new PutObjectCommand({ Bucket: 'shared-acl', Key: 'by-reader', Body: 'w' }));
    expect(grantsOf((await asReader.send(new GetBucketAclCommand({ Bucket: 'shared-acl' }))).Grants)).toEqual([`${reader.accessKeyId}:READ_ACP`, `${reader.accessKeyId}:WRITE`]);
    expect(await sdkErrorOf(asReader.send(new PutBucketAclCommand({ Bucket: 'shared-acl', ACL: 'public-read' })))).toEqual({ name: 'AccessDenied', status: 403 });
  });

  it('an explicit Deny in the bucket policy wins over an ACL grant', async () => {
    await s3.send(new PutBucketPolicyCommand({ Bucket: 'shared-acl', Policy: JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Deny', Principal: '*', Action: 's3:GetObject', Resource: 'arn:aws:s3:::shared-acl/signed-in' }] }) }));
    expect(await sdkErrorOf(asStranger.send(new GetObjectCommand({ Bucket: 'shared-acl', Key: 'signed-in' })))).toEqual({ name: 'AccessDenied', status: 403 });
    expect(await (await asReader.send(new GetObjectCommand({ Bucket: 'shared-acl', Key: 'for-reader' }))).Body!.transformToString()).toBe('r');
    await s3.send(new DeleteBucketPolicyCommand({ Bucket: 'shared-acl' }));
  });

  it('an ACL on a write needs s3:PutObjectAcl besides s3:PutObject; refused, nothing is stored', async () => {
    const asWriter = s3ClientFor(server.url, { credentials: writer });
    expect(await sdkErrorOf(asWriter.send(new PutObjectCommand({ Bucket: 'shared-acl', Key: 'by-writer', Body: 'w', ACL: 'public-read' })))).toEqual({ name: 'AccessDenied', status: 403 });
    expect(await sdkErrorOf(s3.send(new GetObjectCommand({ Bucket: 'shared-acl', Key: 'by-writer' })))).toMatchObject({ status: 404 });
    await asWriter.send(new PutObjectCommand({ Bucket: 'shared-acl', Key: 'by-writer', Body: 'w' }));
  });

  it('an AccessControlPolicy body sets the grants; bad bodies and headers get AWS\'s errors and change nothing', async () => {
    const owner = { ID: testCredentials.accessKeyId };
    await s3.send(new PutObjectAclCommand({ Bucket: 'shared-acl', Key: 'for-reader', AccessControlPolicy: { Owner: owner, Grants: [{ Grantee: { Type: 'Group', URI: allUsers }, Permission: 'READ' }, { Grantee: { Type: 'CanonicalUser', ID: owner.ID }, Permission: 'FULL_CONTROL' }] } }));
    expect(await anonymous('/shared-acl/for-reader')).toBe(200);
    const before = grantsOf((await s3.send(new GetObjectAclCommand({ Bucket: 'shared-acl', Key: 'for-reader' }))).Grants);
    const acl = (grant: string): string => `<AccessControlPolicy><Owner><ID>${owner.ID}</ID></Owner><AccessControlList>${grant}</AccessControlList></AccessControlPolicy>`;
    const cases: [Parameters<typeof signedRequest>[1], string][] = [
      [{ method: 'PUT', path: '/shared-acl/for-reader', query: { acl: '' }, body: acl(`<Grant><Grantee><URI>${allUsers}</URI></Grantee><Permission>EVERYTHING</Permission></Grant>`) }, 'MalformedACLError'],
      [{ method: 'PUT', path: '/shared-acl/for-reader', query: { acl: '' }, body: acl('<Grant><Grantee><EmailAddress>someone@example.com</EmailAddress></Grantee><Permission>READ</Permission></Grant>') }, 'UnresolvableGrantByEmailAddress'],
      [{ method: 'PUT', path: '/shared-acl/for-reader', query: { acl: '' }, body: acl('<Grant><Grantee><URI>http://acs.amazonaws.com/groups/global/Nobody</URI></Grantee><Permission>READ</Permission></Grant>') }, 'InvalidArgument'],
      [{ method: 'PUT', path: '/shared-acl/for-reader', query: { acl: '' }, headers: { 'x-amz-acl': 'public-read', 'x-amz-grant-read': `uri="${allUsers}"` } }, 'InvalidRequest'],
      [{ method: 'PUT', path: '/shared-acl/for-reader', query: { acl: '' }, headers: { 'x-amz-acl': 'world-readable' } }, 'InvalidArgument'],
      [{ method: 'PUT', path: '/shared-acl/for-reader', query: { acl: '' } }, 'MalformedACLError'],
    ];
    for (const [request, code] of cases) {
      const answer = await signedRequest(server.url, request);
      expect([answer.status, answer.body], JSON.stringify(request)).toEqual([400, expect.stringContaining(`<Code>${code}</Code>`)]);
    }
    expect(grantsOf((await s3.send(new GetObjectAclCommand({ Bucket: 'shared-acl', Key: 'for-reader' }))).Grants)).toEqual(before);
  });

  it('IgnorePublicAcls shuts out public grants, BlockPublicAcls refuses new ones; policy status sees public ACLs', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'blocked', ObjectOwnership: 'ObjectWriter' }));
    expect(await isPublic('blocked')).toBe(false);
    await s3.send(new PutBucketAclCommand({ Bucket: 'blocked', ACL: 'public-read' }));
    await s3.send(new PutObjectCommand({ Bucket: 'blocked', Key: 'page', Body: 'p', ACL: 'public-read' }));
    expect(await isPublic('blocked')).toBe(true);
    expect(await anonymous('/blocked/page')).toBe(200);
    await s3.send(new PutPublicAccessBlockCommand({ Bucket: 'blocked', PublicAccessBlockConfiguration: { IgnorePublicAcls: true } }));
    expect(await anonymous('/blocked/page')).toBe(403);
    expect(await anonymous('/blocked')).toBe(403);
    expect(await isPublic('blocked')).toBe(false);
    await s3.send(new PutPublicAccessBlockCommand({ Bucket: 'blocked', PublicAccessBlockConfiguration: { BlockPublicAcls: true } }));
    expect(await anonymous('/blocked/page')).toBe(200);
    expect(await sdkErrorOf(s3.send(new PutObjectCommand({ Bucket: 'blocked', Key: 'other', Body: 'o', ACL: 'public-read' })))).toEqual({ name: 'AccessDenied', status: 403 });
    expect(await sdkErrorOf(s3.send(new PutBucketAclCommand({ Bucket: 'blocked', ACL: 'public-read-write' })))).toEqual({ name: 'AccessDenied', status: 403 });
    expect(await sdkErrorOf(s3.send(new GetObjectCommand({ Bucket: 'blocked', Key: 'other' })))).toMatchObject({ status: 404 });
    expect(grantsOf((await s3.send(new GetBucketAclCommand({ Bucket: 'blocked' }))).Grants)).toEqual([`${allUsers}:READ`, `${testCredentials.accessKeyId}:FULL_CONTROL`]);
    await s3.send(new DeletePublicAccessBlockCommand({ Bucket: 'blocked' }));
    await s3.send(new PutBucketAclCommand({ Bucket: 'blocked', ACL: 'private' }));
    expect(await isPublic('blocked')).toBe(false);
    await s3.send(new PutBucketPolicyCommand({ Bucket: 'blocked', Policy: JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: 'arn:aws:s3:::blocked/*' }] }) }));
    expect(await isPublic('blocked')).toBe(true);
  });
});

const missingAws = missingTool('aws', 'awscli');
const missingBoto3 = missingPythonModule('boto3', 'python3-boto3');
if (missingAws) console.warn(`skipping AWS CLI ACL tests: ${missingAws}`);
if (missingBoto3) console.warn(`skipping boto3 ACL tests: ${missingBoto3}`);

const run = (command: string, args: string[], env: Record<string, string> = {}): string => runTool(command, args, env, () => server.logs().slice(-3000));

describe.skipIf(missingAws !== undefined)('AWS CLI', () => {
  it('put-object --acl public-read serves anonymous readers where ACLs count, and is refused where they do not', async () => {
    const env = { AWS_ACCESS_KEY_ID: testCredentials.accessKeyId, AWS_SECRET_ACCESS_KEY: testCredentials.secretAccessKey, AWS_DEFAULT_REGION: 'us-east-1', AWS_EC2_METADATA_DISABLED: 'true' };
    const aws = (...args: string[]): string => run('aws', ['--endpoint-url', server.url, ...args], env);
    const file = join(root, 'cli-body.txt');
    await writeFile(file, 'from the cli');
    aws('s3api', 'create-bucket', '--bucket', 'cli-acl', '--object-ownership', 'ObjectWriter');
    aws('s3api', 'put-object', '--bucket', 'cli-acl', '--key', 'open.txt', '--body', file, '--acl', 'public-read');
    const read = await fetch(`${server.url}/cli-acl/open.txt`);
    expect([read.status, await read.text()]).toEqual([200, 'from the cli']);
    const acl = JSON.parse(aws('s3api', 'get-object-acl', '--bucket', 'cli-acl', '--key', 'open.txt')) as { Grants: { Grantee: { URI?: string }; Permission: string }[] };
    expect(acl.Grants.some((grant) => grant.Grantee.URI === allUsers && grant.Permission === 'READ')).toBe(true);
    expect(() => aws('s3api', 'put-object', '--bucket', 'enforced', '--key', 'cli.txt', '--body', file, '--acl', 'public-read')).toThrow(/AccessControlListNotSupported/);
  });
});

describe.skipIf(missingBoto3 !== undefined)('boto3', () => {
  it('ownership controls, canned ACLs, grants and policy status answer as AWS documents', () => {
    const script = join(import.meta.dirname, 'clients', 'boto3_acl.py');
    const seen = JSON.parse(run('python3', [script, server.url, testCredentials.accessKeyId, testCredentials.secretAccessKey, 'boto3-acl'])) as Record<string, unknown>;
    expect(seen).toEqual({
      defaultOwnership: 'BucketOwnerEnforced',
      enforcedRefusal: ['AccessControlListNotSupported', 400],
      createRefusal: ['InvalidBucketAclWithObjectOwnership', 400],
      ownership: 'ObjectWriter',
      bucketGrants: [`${allUsers}:READ`, `${testCredentials.accessKeyId}:FULL_CONTROL`],
      objectGrants: [`${authenticatedUsers}:READ`, `${testCredentials.accessKeyId}:FULL_CONTROL`],
      isPublic: true,
      anonymousList: 200,
      deletedControls: ['OwnershipControlsNotFoundError', 404],
    });
  });
});
