/**
 * STS AssumeRole on the S3 listener against a real server: the AWS CLI and boto3 assume a role and
 * use the temporary credentials (listing, reading, presigned URLs, a POST-policy upload), which act
 * as the user cut down by the session policy; every request with a session token is checked
 * (expired by the moved identity clock, altered, sealed by another deployment, its user disabled
 * or given a new secret, on S3 and the admin API alike); a session cannot assume again, root cannot
 * assume at all, and a service account's session keeps the account's inline limit. The AWS SDK's
 * own STS client assumes a role too; the checks of answer shapes and refusals send raw STS forms
 * (test/helpers/sts-client.ts) so that every parameter can be wrong.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { missingPythonModule, missingTool } from './helpers/external-tools.js';
import { credentialsOf, stsCall, stsErrorCode, type StsCredentials } from './helpers/sts-client.js';
import { SessionTokens } from '../src/ops/session-tokens.js';
import { AssumeRoleCommand, STSClient, STSServiceException } from '@aws-sdk/client-sts';

const missing = { aws: missingTool('aws', 'awscli'), boto3: missingPythonModule('boto3', 'python3-boto3') };
for (const [tool, reason] of Object.entries(missing)) if (reason) console.warn(`skipping ${tool} tests: ${reason}`);

const iam = '/svc/admin/v4/iam';
const bucket = 'sts-bucket';
const alice = { accessKeyId: 'alice', secretAccessKey: 'alice-secret-1' };
/** Alice may read the bucket and write anywhere in it; sessions below cut this down. */
const aliceRights = {
  Version: '2012-10-17',
  Statement: [
    { Effect: 'Allow', Action: ['s3:ListBucket'], Resource: [`arn:aws:s3:::${bucket}`] },
    { Effect: 'Allow', Action: ['s3:GetObject', 's3:PutObject'], Resource: [`arn:aws:s3:::${bucket}/*`] },
  ],
};
/** A session policy: listing, and reading and writing under `shared/` only. */
const sharedOnly = JSON.stringify({
  Version: '2012-10-17',
  Statement: [
    { Effect: 'Allow', Action: ['s3:ListBucket'], Resource: [`arn:aws:s3:::${bucket}`] },
    { Effect: 'Allow', Action: ['s3:GetObject', 's3:PutObject'], Resource: [`arn:aws:s3:::${bucket}/shared/*`] },
  ],
});

let root: string;
let server: SvcProcess;
const rootS3 = (): S3Client => s3ClientFor(server.url);
const sessionS3 = (credentials: StsCredentials): S3Client => s3ClientFor(server.url, { credentials: credentials as { accessKeyId: string; secretAccessKey: string } });

async function adminOk(method: 'GET' | 'POST', path: string, rawQuery: string, body?: unknown): Promise<Record<string, any>> {
  const answer = await admin(server.url, method, path, rawQuery, body === undefined ? {} : { body: JSON.stringify(body) });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}

async function assumeRole(credentials: StsCredentials, parameters: Record<string, string> = {}): Promise<StsCredentials> {
  return credentialsOf(await stsCall(server.url, { Action: 'AssumeRole', DurationSeconds: '900', ...parameters }, credentials));
}

/** The S3 error code of a call that must fail (undefined when it succeeded). */
async function s3Failure(call: Promise<unknown>): Promise<{ code: string; status: number | undefined } | undefined> {
  try {
    await call;
    return undefined;
  } catch (error) {
    if (!(error instanceof S3ServiceException)) throw error;
    return { code: error.name, status: error.$metadata.httpStatusCode };
  }
}

async function stored(key: string): Promise<boolean> {
  const failure = await s3Failure(rootS3().send(new HeadObjectCommand({ Bucket: bucket, Key: key })));
  if (failure && failure.status !== 404) throw new Error(`HEAD ${key}: ${failure.code}`);
  return failure === undefined;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-sts-'));
  server = await startSvc({ args: [join(root, 'd{1...4}')], env: { SVC_FAULT_INJECTION: 'on', SVC_AUDIT_FILE: join(root, 'audit.jsonl') } });
  await rootS3().send(new CreateBucketCommand({ Bucket: bucket }));
  await rootS3().send(new PutObjectCommand({ Bucket: bucket, Key: 'shared/hello.txt', Body: 'hello from root' }));
  await rootS3().send(new PutObjectCommand({ Bucket: bucket, Key: 'private/secret.txt', Body: 'not for sessions' }));
  await adminOk('POST', `${iam}/policy/create`, 'name=sts-bucket-rw', aliceRights);
  await adminOk('POST', `${iam}/user/add`, '', { accessKey: alice.accessKeyId, secretKey: alice.secretAccessKey, policies: ['sts-bucket-rw'] });
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

function run(command: string, args: string[], env: Record<string, string>): { ok: boolean; stdout: string; stderr: string } {
  const { AWS_CA_BUNDLE: _bundle, AWS_PROFILE: _profile, ...inherited } = process.env;
  try {
    return { ok: true, stdout: execFileSync(command, args, { env: { ...inherited, AWS_DEFAULT_REGION: 'us-east-1', AWS_EC2_METADATA_DISABLED: 'true', ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }), stderr: '' };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    return { ok: false, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

describe.skipIf(missing.aws !== undefined)('the AWS CLI', () => {
  it('assumes a role and lists, reads and is refused a write outside the session policy with the temporary credentials', async () => {
    const aliceEnv = { AWS_ACCESS_KEY_ID: alice.accessKeyId, AWS_SECRET_ACCESS_KEY: alice.secretAccessKey };
    const assumed = run('aws', ['sts', 'assume-role', '--endpoint-url', server.url, '--role-arn', 'arn:xxx:iam::xxx:role/x', '--role-session-name', 'cli', '--duration-seconds', '900', '--policy', sharedOnly, '--output', 'json'], aliceEnv);
    expect(assumed.ok, assumed.stderr).toBe(true);
    const { Credentials: credentials, AssumedRoleUser: user } = JSON.parse(assumed.stdout);
    expect(credentials.AccessKeyId).toMatch(/^[A-Za-z0-9]{20}$/);
    expect(Date.parse(credentials.Expiration) - Date.now()).toBeGreaterThan(890_000);
    expect(Date.parse(credentials.Expiration) - Date.now()).toBeLessThanOrEqual(900_000);
    expect(user.Arn).toContain('/alice/cli');
    const sessionEnv = { AWS_ACCESS_KEY_ID: credentials.AccessKeyId, AWS_SECRET_ACCESS_KEY: credentials.SecretAccessKey, AWS_SESSION_TOKEN: credentials.SessionToken };
    const aws = (...args: string[]) => run('aws', ['--endpoint-url', server.url, ...args], sessionEnv);
    const listed = aws('s3', 'ls', `s3://${bucket}/shared/`);
    expect(listed.ok, listed.stderr).toBe(true);
    expect(listed.stdout).toContain('hello.txt');
    const read = aws('s3', 'cp', `s3://${bucket}/shared/hello.txt`, '-');
    expect(read.stdout).toBe('hello from root');
    const file = join(root, 'cli-upload.txt');
    await writeFile(file, 'written by a session');
    expect(aws('s3', 'cp', file, `s3://${bucket}/shared/cli.txt`).ok).toBe(true);
    const refused = aws('s3', 'cp', file, `s3://${bucket}/private/cli.txt`);
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain('AccessDenied');
    expect(await stored('shared/cli.txt')).toBe(true);
    expect(await stored('private/cli.txt')).toBe(false);
    // The same credentials without their token are not a key this server knows.
    const tokenless = run('aws', ['--endpoint-url', server.url, 's3', 'ls', `s3://${bucket}/`], { AWS_ACCESS_KEY_ID: credentials.AccessKeyId, AWS_SECRET_ACCESS_KEY: credentials.SecretAccessKey });
    expect(tokenless.stderr).toContain('InvalidAccessKeyId');
  });
});

const boto3Script = `
import json, sys, boto3, botocore
from botocore.config import Config
endpoint, key, secret, bucket, policy = sys.argv[1:6]
config = Config(signature_version='s3v4', s3={'addressing_style': 'path'}, retries={'max_attempts': 1})
sts = boto3.client('sts', endpoint_url=endpoint, aws_access_key_id=key, aws_secret_access_key=secret, region_name='us-east-1')
answer = sts.assume_role(RoleArn='arn:xxx:iam::xxx:role/x', RoleSessionName='boto3', DurationSeconds=900, Policy=policy)
c = answer['Credentials']
s3 = boto3.client('s3', endpoint_url=endpoint, aws_access_key_id=c['AccessKeyId'], aws_secret_access_key=c['SecretAccessKey'], aws_session_token=c['SessionToken'], region_name='us-east-1', config=config)
out = {'read': s3.get_object(Bucket=bucket, Key='shared/hello.txt')['Body'].read().decode()}
try:
    s3.put_object(Bucket=bucket, Key='private/boto3.txt', Body=b'x')
    out['refused'] = None
except botocore.exceptions.ClientError as error:
    out['refused'] = error.response['Error']['Code']
out['presignedGet'] = s3.generate_presigned_url('get_object', Params={'Bucket': bucket, 'Key': 'shared/hello.txt'}, ExpiresIn=300)
out['post'] = s3.generate_presigned_post(bucket, 'shared/posted.txt', ExpiresIn=300)
try:
    sts.assume_role(RoleArn='arn:xxx:iam::xxx:role/x', RoleSessionName='bad', Policy='{"Version": "2012-10-17", "Statement": [{"Effect": "Perhaps"}]}')
except botocore.exceptions.ClientError as error:
    out['badPolicy'] = error.response['Error']['Code']
print(json.dumps(out))
`;

describe.skipIf(missing.boto3 !== undefined)('boto3', () => {
  it('assumes a role; the session reads, is refused outside its policy, and its presigned GET and POST policy work', async () => {
    const script = join(root, 'sts_boto3.py');
    await writeFile(script, boto3Script);
    const ran = run('python3', [script, server.url, alice.accessKeyId, alice.secretAccessKey, bucket, sharedOnly], {});
    expect(ran.ok, ran.stderr).toBe(true);
    const seen = JSON.parse(ran.stdout);
    expect(seen.read).toBe('hello from root');
    expect(seen.refused).toBe('AccessDenied');
    expect(seen.badPolicy).toBe('MalformedPolicyDocument');
    expect(await stored('private/boto3.txt')).toBe(false);
    expect(seen.presignedGet).toContain('X-Amz-Security-Token=');
    const presigned = await fetch(seen.presignedGet);
    expect(presigned.status).toBe(200);
    expect(await presigned.text()).toBe('hello from root');
    const form = new FormData();
    for (const [name, value] of Object.entries(seen.post.fields as Record<string, string>)) form.append(name, value);
    expect(Object.keys(seen.post.fields)).toContain('x-amz-security-token');
    form.append('file', new Blob(['posted by a session']), 'posted.txt');
    const posted = await fetch(seen.post.url, { method: 'POST', body: form });
    expect(posted.status, await posted.text()).toBe(204);
    const back = await rootS3().send(new GetObjectCommand({ Bucket: bucket, Key: 'shared/posted.txt' }));
    expect(await back.Body!.transformToString()).toBe('posted by a session');
  });
});

describe('the AWS SDK for JavaScript v3 STS client', () => {
  it('assumes a role with a session policy; the S3 client then acts as the session, within the policy', async () => {
    const sts = new STSClient({ endpoint: server.url, region: 'us-east-1', credentials: alice });
    const answer = await sts.send(new AssumeRoleCommand({ RoleArn: 'arn:aws:iam::000000000000:role/any', RoleSessionName: 'sdk', DurationSeconds: 900, Policy: sharedOnly }));
    const expiresInMs = answer.Credentials!.Expiration!.getTime() - Date.now();
    expect(expiresInMs).toBeGreaterThan(880_000);
    expect(expiresInMs).toBeLessThanOrEqual(900_000);
    const session = { accessKeyId: answer.Credentials!.AccessKeyId!, secretAccessKey: answer.Credentials!.SecretAccessKey!, sessionToken: answer.Credentials!.SessionToken! };
    const s3 = new S3Client({ endpoint: server.url, region: 'us-east-1', forcePathStyle: true, credentials: session });
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'shared/by-sdk.txt', Body: 'sdk' }));
    expect(await (await rootS3().send(new GetObjectCommand({ Bucket: bucket, Key: 'shared/by-sdk.txt' }))).Body!.transformToString()).toBe('sdk');
    expect(await s3Failure(s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'outside-by-sdk.txt', Body: 'no' })))).toMatchObject({ code: 'AccessDenied', status: 403 });
    expect(await stored('outside-by-sdk.txt')).toBe(false);
    // The SDK's STS client signs as root too; root may not assume (a session acting as root could not be limited).
    const asRoot = new STSClient({ endpoint: server.url, region: 'us-east-1', credentials: testCredentials });
    const refused = await asRoot.send(new AssumeRoleCommand({ RoleArn: 'arn:aws:iam::000000000000:role/any', RoleSessionName: 'root' })).then(() => undefined, (error: unknown) => error);
    expect(refused).toBeInstanceOf(STSServiceException);
    expect((refused as STSServiceException).name).toBe('AccessDenied');
    // Both calls are in the audit log as STS calls: alice's allowed, root's denied.
    const auditLines = async () => (await readFile(join(root, 'audit.jsonl'), 'utf8')).split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, any>);
    const deadline = Date.now() + 5_000;
    let stsEntries: Record<string, any>[] = [];
    while (Date.now() < deadline && stsEntries.length < 2) {
      stsEntries = (await auditLines().catch(() => [])).filter((entry) => entry.surface === 'sts');
      if (stsEntries.length < 2) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(stsEntries).toEqual(expect.arrayContaining([
      expect.objectContaining({ api: 'AssumeRole', actions: ['sts:AssumeRole'], outcome: 'allowed', principal: expect.objectContaining({ accessKey: 'alice' }) }),
      expect.objectContaining({ api: 'AssumeRole', outcome: 'denied', httpStatus: 403, principal: expect.objectContaining({ kind: 'root' }) }),
    ]));
    expect(JSON.stringify(stsEntries)).not.toContain(answer.Credentials!.SessionToken!);
  });
});

describe('AssumeRole', () => {
  it('answers STS XML with credentials that expire when asked, and refuses bad parameters with STS errors', async () => {
    const answer = await stsCall(server.url, { Action: 'AssumeRole', DurationSeconds: '1800', RoleSessionName: 'xml-check' }, alice);
    expect(answer.status).toBe(200);
    const result = answer.xml.AssumeRoleResponse.AssumeRoleResult;
    expect(answer.xml.AssumeRoleResponse.ResponseMetadata.RequestId).toMatch(/\S/);
    expect(result.AssumedRoleUser.AssumedRoleId).toBe(`${result.Credentials.AccessKeyId}:xml-check`);
    expect(Math.abs(Date.parse(result.Credentials.Expiration) - (Date.now() + 1_800_000))).toBeLessThan(10_000);
    const refusals: [Record<string, string>, string, number][] = [
      [{ DurationSeconds: '899' }, 'ValidationError', 400],
      [{ DurationSeconds: '43201' }, 'ValidationError', 400],
      [{ DurationSeconds: 'soon' }, 'ValidationError', 400],
      [{ Policy: JSON.stringify({ ...JSON.parse(sharedOnly), Padding: 'x'.repeat(2100) }) }, 'PackedPolicyTooLarge', 400],
      [{ Policy: '{"Version": "2012-10-17", "Statement": [{"Effect": "Perhaps"}]}' }, 'MalformedPolicyDocument', 400],
      [{ Action: 'GetCallerIdentity' }, 'InvalidAction', 400],
    ];
    for (const [parameters, code, status] of refusals) {
      const refused = await stsCall(server.url, { Action: 'AssumeRole', ...parameters }, alice);
      expect([refused.status, stsErrorCode(refused)], JSON.stringify(parameters)).toEqual([status, code]);
      expect(refused.xml.ErrorResponse.Error.Type).toBe('Sender');
      expect(refused.xml.ErrorResponse.RequestId).toMatch(/\S/);
    }
  });

  it('needs a signature scoped to the sts service, by a user: not unsigned, not scoped to s3, not root, not a session', async () => {
    expect(stsErrorCode(await stsCall(server.url, { Action: 'AssumeRole' }))).toBe('AccessDenied');
    const s3Scoped = await stsCall(server.url, { Action: 'AssumeRole' }, alice, 's3');
    expect([s3Scoped.status, stsErrorCode(s3Scoped)]).toEqual([403, 'AccessDenied']);
    expect(s3Scoped.xml.ErrorResponse.Error.Message).toContain("needs 'sts'");
    const asRoot = await stsCall(server.url, { Action: 'AssumeRole' }, testCredentials);
    expect([asRoot.status, stsErrorCode(asRoot)]).toEqual([403, 'AccessDenied']);
    expect(asRoot.xml.ErrorResponse.Error.Message).toContain('root credentials cannot assume a role');
    const session = await assumeRole(alice);
    const again = await stsCall(server.url, { Action: 'AssumeRole' }, session);
    expect([again.status, stsErrorCode(again)]).toEqual([403, 'AccessDenied']);
    expect(again.xml.ErrorResponse.Error.Message).toContain('a session cannot assume a role');
    // An S3 request signed for sts is refused too.
    const url = new URL(server.url);
    const signer = new SignatureV4({ service: 'sts', region: 'us-east-1', credentials: alice, sha256: Sha256, uriEscapePath: false });
    const signed = await signer.sign({ method: 'GET', protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: `/${bucket}/shared/hello.txt`, headers: { host: url.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } });
    const { host: _host, ...headers } = signed.headers;
    const wrongService = await fetch(`${server.url}/${bucket}/shared/hello.txt`, { headers });
    expect(wrongService.status).toBe(403);
    expect(await wrongService.text()).toContain('this request needs');
  });

  it("keeps a service account's inline policy as a limit of its sessions", async () => {
    const account = { accessKeyId: 'alice-reader', secretAccessKey: 'alice-reader-secret' };
    const readOnly = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject'], Resource: [`arn:aws:s3:::${bucket}/*`] }] };
    await adminOk('POST', `${iam}/svcacct/add`, '', { parent: 'alice', accessKey: account.accessKeyId, secretKey: account.secretAccessKey, policy: readOnly });
    const session = await assumeRole(account);
    const read = await sessionS3(session).send(new GetObjectCommand({ Bucket: bucket, Key: 'shared/hello.txt' }));
    expect(await read.Body!.transformToString()).toBe('hello from root');
    // Alice may write there, the account may not: nor may its session.
    expect(await s3Failure(sessionS3(session).send(new PutObjectCommand({ Bucket: bucket, Key: 'shared/by-account-session.txt', Body: 'x' })))).toEqual({ code: 'AccessDenied', status: 403 });
    expect(await stored('shared/by-account-session.txt')).toBe(false);
    // The session ends with its account.
    await adminOk('POST', `${iam}/svcacct/update`, `accessKey=${account.accessKeyId}`, { enabled: false });
    expect(await s3Failure(sessionS3(session).send(new GetObjectCommand({ Bucket: bucket, Key: 'shared/hello.txt' })))).toEqual({ code: 'InvalidAccessKeyId', status: 403 });
  });
});

describe('every request with a session token is checked', () => {
  const read = (credentials: StsCredentials) => s3Failure(sessionS3(credentials).send(new GetObjectCommand({ Bucket: bucket, Key: 'shared/hello.txt' })));

  it('refuses an expired session with ExpiredToken, on S3 and on the admin API', async () => {
    const session = await assumeRole(alice);
    expect(await read(session)).toBeUndefined();
    await adminOk('POST', '/svc/admin/v4/faults/clock', '', { offsetMs: 901_000 });
    try {
      expect(await read(session)).toEqual({ code: 'ExpiredToken', status: 400 });
      const presigned = await fetch(await presignedGet(session));
      expect(presigned.status).toBe(400);
      expect(await presigned.text()).toContain('<Code>ExpiredToken</Code>');
      const onAdmin = await admin(server.url, 'GET', `${iam}/users`, '', { credentials: session });
      expect(onAdmin.status).toBe(403);
      expect(onAdmin.body.Message).toContain('ExpiredToken');
    } finally {
      await adminOk('POST', '/svc/admin/v4/faults/clock', '', { offsetMs: 0 });
    }
    expect(await read(session)).toBeUndefined();
  });

  it('refuses an altered token and one sealed by another deployment with InvalidToken', async () => {
    const session = await assumeRole(alice);
    const token = session.sessionToken!;
    const at = token.length - 10;
    const flipped = `${token.slice(0, at)}${token[at] === 'A' ? 'B' : 'A'}${token.slice(at + 1)}`;
    expect(await read({ ...session, sessionToken: flipped })).toEqual({ code: 'InvalidToken', status: 400 });
    // Another deployment seals with its own root keys: the same session, sealed there.
    const now = Date.now();
    const foreign = new SessionTokens({ accessKey: 'other-root', secretKey: 'other-root-secret' }).seal({ accessKey: session.accessKeyId, secretKey: session.secretAccessKey, parent: 'alice', issuedMs: now, expiresMs: now + 900_000 });
    expect(await read({ ...session, sessionToken: foreign })).toEqual({ code: 'InvalidToken', status: 400 });
    // A real token with another session's keys.
    const other = await assumeRole(alice);
    expect(await read({ ...other, sessionToken: token })).toEqual({ code: 'InvalidToken', status: 400 });
    expect(await read(session)).toBeUndefined();
  });

  it('ends sessions when their user is disabled (for good) or given a new secret', async () => {
    await adminOk('POST', `${iam}/user/add`, '', { accessKey: 'bob', secretKey: 'bob-secret-1', policies: ['sts-bucket-rw'] });
    const bob = { accessKeyId: 'bob', secretAccessKey: 'bob-secret-1' };
    const first = await assumeRole(bob);
    expect(await read(first)).toBeUndefined();
    await adminOk('POST', `${iam}/user/disable`, 'accessKey=bob');
    expect(await read(first)).toEqual({ code: 'InvalidAccessKeyId', status: 403 });
    await adminOk('POST', `${iam}/user/enable`, 'accessKey=bob');
    expect(await read(first)).toEqual({ code: 'InvalidAccessKeyId', status: 403 });
    const second = await assumeRole(bob);
    expect(await read(second)).toBeUndefined();
    await adminOk('POST', `${iam}/user/add`, '', { accessKey: 'bob', secretKey: 'bob-secret-2' });
    expect(await read(second)).toEqual({ code: 'InvalidAccessKeyId', status: 403 });
  });

  it("lets a session of a user with admin actions call the admin API, within the user's rights", async () => {
    await adminOk('POST', `${iam}/user/add`, '', { accessKey: 'carol', secretKey: 'carol-secret-1', policies: ['consoleAdmin'] });
    const session = await assumeRole({ accessKeyId: 'carol', secretAccessKey: 'carol-secret-1' });
    const users = await admin(server.url, 'GET', `${iam}/users`, '', { credentials: session });
    expect(users.status).toBe(200);
    expect(users.body.users.map((user: { accessKey: string }) => user.accessKey)).toContain('alice');
    const aliceSession = await assumeRole(alice);
    const refused = await admin(server.url, 'GET', `${iam}/users`, '', { credentials: aliceSession });
    expect(refused.status).toBe(403);
  });
});

async function presignedGet(credentials: StsCredentials): Promise<string> {
  const { getSignedUrl } = await import('@aws-sdk/s3-request-presigner');
  return getSignedUrl(sessionS3(credentials), new GetObjectCommand({ Bucket: bucket, Key: 'shared/hello.txt' }), { expiresIn: 300 });
}
