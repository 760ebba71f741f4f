/**
 * STS AssumeRoleWithWebIdentity against a real OpenID provider (oidc-provider on loopback) and a
 * real server: an ID token the provider issued becomes temporary credentials holding the
 * policies its `policy` claim names (an array or a comma-separated string), usable over S3 with
 * `jwt:<claim>` condition keys; a token signed by another key, one for another audience, one past
 * its expiry (the identity clock moved) and one naming no known policy are refused with AWS's
 * codes. boto3 makes the call as an application would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3ServiceException } from '@aws-sdk/client-s3';
import { SignJWT, decodeProtectedHeader, generateKeyPair } from 'jose';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { idTokenFor, otherClientId, startTestIdp, type TestIdp } from './helpers/oidc-idp.js';
import { AssumeRoleWithWebIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { admin } from './helpers/admin-client.js';
import { missingPythonModule } from './helpers/external-tools.js';
import { credentialsOf, stsCall, stsErrorCode, type StsCredentials } from './helpers/sts-client.js';

const missingBoto3 = missingPythonModule('boto3', 'python3-boto3');
if (missingBoto3) console.warn(`skipping boto3 tests: ${missingBoto3}`);

const bucket = 'web-bucket';
let root: string;
let idp: TestIdp;
let server: SvcProcess;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-sts-web-'));
  idp = await startTestIdp([]);
  server = await startSvc({
    args: [join(root, 'd{1...4}')],
    env: {
      SVC_FAULT_INJECTION: 'on',
      SVC_IDENTITY_OPENID_CONFIG_URL: `${idp.issuer}/.well-known/openid-configuration`,
      SVC_IDENTITY_OPENID_CLIENT_ID: idp.clientId,
      SVC_IDENTITY_OPENID_CLIENT_SECRET: idp.clientSecret,
      SVC_IDENTITY_OPENID_CLAIM_POLICY: 'policy',
    },
  });
  await s3ClientFor(server.url).send(new CreateBucketCommand({ Bucket: bucket }));
  await s3ClientFor(server.url).send(new PutObjectCommand({ Bucket: bucket, Key: 'readme.txt', Body: 'for readers' }));
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await idp?.close();
  await rm(root, { recursive: true, force: true });
});

function assumeWithToken(token: string, parameters: Record<string, string> = {}) {
  return stsCall(server.url, { Action: 'AssumeRoleWithWebIdentity', WebIdentityToken: token, RoleSessionName: 'web', DurationSeconds: '900', ...parameters });
}

async function s3Code(credentials: StsCredentials, command: GetObjectCommand | PutObjectCommand): Promise<string> {
  try {
    await s3ClientFor(server.url, { credentials: credentials as { accessKeyId: string; secretAccessKey: string } }).send(command as never);
    return 'ok';
  } catch (error) {
    if (error instanceof S3ServiceException) return error.name;
    throw error;
  }
}

describe('AssumeRoleWithWebIdentity', () => {
  it('through the AWS SDK for JavaScript v3 STS client (an unsigned call): readonly reads and cannot write', async () => {
    const sts = new STSClient({ endpoint: server.url, region: 'us-east-1', credentials: { accessKeyId: 'unused', secretAccessKey: 'unused-secret' } });
    const answer = await sts.send(new AssumeRoleWithWebIdentityCommand({ RoleArn: 'arn:aws:iam::000000000000:role/web', RoleSessionName: 'sdk', WebIdentityToken: await idTokenFor(idp, 'carol'), DurationSeconds: 900 }));
    expect(answer.SubjectFromWebIdentityToken).toBe('carol');
    const session = { accessKeyId: answer.Credentials!.AccessKeyId!, secretAccessKey: answer.Credentials!.SecretAccessKey!, sessionToken: answer.Credentials!.SessionToken! };
    expect(await s3Code(session, new GetObjectCommand({ Bucket: bucket, Key: 'readme.txt' }))).toBe('ok');
    expect(await s3Code(session, new PutObjectCommand({ Bucket: bucket, Key: 'by-sdk.txt', Body: 'x' }))).toBe('AccessDenied');
    const forged = await sts.send(new AssumeRoleWithWebIdentityCommand({ RoleArn: 'arn:aws:iam::000000000000:role/web', RoleSessionName: 'sdk', WebIdentityToken: 'not.a.token' })).then(() => undefined, (error: { name?: string }) => error.name);
    expect(forged).toBe('InvalidIdentityTokenException');
  });

  it("issues credentials holding the token's policies: readonly reads and cannot write", async () => {
    const answer = await assumeWithToken(await idTokenFor(idp, 'carol'));
    const result = answer.xml.AssumeRoleWithWebIdentityResponse?.AssumeRoleWithWebIdentityResult;
    expect(answer.status, answer.text).toBe(200);
    expect(result.SubjectFromWebIdentityToken).toBe('carol');
    expect(result.AssumedRoleUser.Arn).toContain('/oidc:carol/web');
    const session = credentialsOf(answer);
    expect(await s3Code(session, new GetObjectCommand({ Bucket: bucket, Key: 'readme.txt' }))).toBe('ok');
    expect(await s3Code(session, new PutObjectCommand({ Bucket: bucket, Key: 'by-carol.txt', Body: 'x' }))).toBe('AccessDenied');
    const head = await s3ClientFor(server.url).send(new HeadObjectCommand({ Bucket: bucket, Key: 'by-carol.txt' })).then(() => 'stored', (error: S3ServiceException) => error.name);
    expect(head).toBe('NotFound');
  });

  it('reads a comma-separated policy claim, skipping names the deployment does not have', async () => {
    const session = credentialsOf(await assumeWithToken(await idTokenFor(idp, 'dave')));
    expect(await s3Code(session, new PutObjectCommand({ Bucket: bucket, Key: 'by-dave.txt', Body: 'dave' }))).toBe('ok');
  });

  it('lets a session policy test the token claims as jwt:<claim> condition keys', async () => {
    const onlyFor = (name: string) => JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject'], Resource: [`arn:aws:s3:::${bucket}/*`], Condition: { StringEquals: { 'jwt:preferred_username': name } } }] });
    const token = await idTokenFor(idp, 'carol');
    const carolOnly = credentialsOf(await assumeWithToken(token, { Policy: onlyFor('carol') }));
    expect(await s3Code(carolOnly, new GetObjectCommand({ Bucket: bucket, Key: 'readme.txt' }))).toBe('ok');
    const someoneElse = credentialsOf(await assumeWithToken(token, { Policy: onlyFor('mallory') }));
    expect(await s3Code(someoneElse, new GetObjectCommand({ Bucket: bucket, Key: 'readme.txt' }))).toBe('AccessDenied');
  });

  it('refuses a token naming no known policy, or none at all, with IDPRejectedClaim', async () => {
    for (const user of ['erin', 'alice']) {
      const refused = await assumeWithToken(await idTokenFor(idp, user));
      expect([refused.status, stsErrorCode(refused)], user).toEqual([403, 'IDPRejectedClaim']);
      expect(refused.xml.ErrorResponse.Error.Type).toBe('Sender');
    }
  });

  it('refuses a token signed by another key, or issued for another audience, with InvalidIdentityToken', async () => {
    const genuine = await idTokenFor(idp, 'carol');
    const { privateKey } = await generateKeyPair('RS256');
    const forged = await new SignJWT({ policy: ['readonly'], preferred_username: 'carol' })
      .setProtectedHeader({ alg: 'RS256', kid: decodeProtectedHeader(genuine).kid! })
      .setIssuer(idp.issuer)
      .setAudience(idp.clientId)
      .setSubject('carol')
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(privateKey);
    const refused = await assumeWithToken(forged);
    expect([refused.status, stsErrorCode(refused)]).toEqual([400, 'InvalidIdentityToken']);
    expect(refused.xml.ErrorResponse.Error.Message).toContain('signature');
    const otherAudience = await assumeWithToken(await idTokenFor(idp, 'carol', otherClientId));
    expect([otherAudience.status, stsErrorCode(otherAudience)]).toEqual([400, 'InvalidIdentityToken']);
    expect(otherAudience.xml.ErrorResponse.Error.Message).toContain('aud');
    const garbage = await assumeWithToken('not.a.token');
    expect(stsErrorCode(garbage)).toBe('InvalidIdentityToken');
  });

  it('refuses a token past its expiry by the identity clock with ExpiredTokenException; its sessions expire too', async () => {
    const token = await idTokenFor(idp, 'carol');
    const session = credentialsOf(await assumeWithToken(token));
    // The provider's ID tokens last 600 s; sessions at least 900 s (not capped by the token's expiry).
    const moved = await admin(server.url, 'POST', '/svc/admin/v4/faults/clock', '', { body: JSON.stringify({ offsetMs: 700_000 }) });
    expect(moved.status).toBe(200);
    try {
      const refused = await assumeWithToken(token);
      expect([refused.status, stsErrorCode(refused)]).toEqual([400, 'ExpiredTokenException']);
      expect(await s3Code(session, new GetObjectCommand({ Bucket: bucket, Key: 'readme.txt' }))).toBe('ok');
      await admin(server.url, 'POST', '/svc/admin/v4/faults/clock', '', { body: JSON.stringify({ offsetMs: 901_000 }) });
      expect(await s3Code(session, new GetObjectCommand({ Bucket: bucket, Key: 'readme.txt' }))).toBe('ExpiredToken');
    } finally {
      await admin(server.url, 'POST', '/svc/admin/v4/faults/clock', '', { body: JSON.stringify({ offsetMs: 0 }) });
    }
  });

  it.skipIf(missingBoto3 !== undefined)('works from boto3, which sends it unsigned', async () => {
    const script = join(root, 'web_identity.py');
    await writeFile(script, [
      'import json, sys, boto3',
      'from botocore import UNSIGNED',
      'from botocore.config import Config',
      'endpoint, token, bucket = sys.argv[1:4]',
      "sts = boto3.client('sts', endpoint_url=endpoint, region_name='us-east-1', config=Config(signature_version=UNSIGNED))",
      "c = sts.assume_role_with_web_identity(RoleArn='arn:xxx:iam::xxx:role/x', RoleSessionName='boto3', WebIdentityToken=token, DurationSeconds=900)['Credentials']",
      "s3 = boto3.client('s3', endpoint_url=endpoint, aws_access_key_id=c['AccessKeyId'], aws_secret_access_key=c['SecretAccessKey'], aws_session_token=c['SessionToken'], region_name='us-east-1', config=Config(s3={'addressing_style': 'path'}))",
      "print(json.dumps({'read': s3.get_object(Bucket=bucket, Key='readme.txt')['Body'].read().decode()}))",
    ].join('\n'));
    const { AWS_CA_BUNDLE: _bundle, ...inherited } = process.env;
    const output = execFileSync('python3', [script, server.url, await idTokenFor(idp, 'carol'), bucket], { env: { ...inherited, AWS_EC2_METADATA_DISABLED: 'true' }, encoding: 'utf8' });
    expect(JSON.parse(output)).toEqual({ read: 'for readers' });
  });
});
