/**
 * Escalation through the console and the admin API, as a probe found it: a user allowed only
 * to create users cannot mint one with stronger policies (or take over an existing user by giving
 * it a new secret), and a user holding only admin:ServerInfo learns nothing about objects it may
 * not read and starts no lifecycle cycle. Each refusal is 403 AccessDenied and leaves every user,
 * policy and object as it was; the same calls with the extra rights go through.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, PutBucketLifecycleConfigurationCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFor } from './helpers/server-process.js';
import { signIn, startConsoleServer, type ConsoleServer, type ConsoleSession } from './helpers/console-client.js';
import { admin } from './helpers/admin-client.js';

const iam = '/svc/admin/v4/iam';
let root: string;
let running: ConsoleServer;
let s3: S3Client;
let rootSession: ConsoleSession;

const policy = (actions: string[], resource = '*') => ({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: actions, Resource: [resource] }] });

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-escalation-'));
  running = await startConsoleServer([join(root, 'd{1...4}')]);
  s3 = s3ClientFor(running.server.url);
  await s3.send(new CreateBucketCommand({ Bucket: 'ref' }));
  await s3.send(new PutObjectCommand({ Bucket: 'ref', Key: 'secret/a.txt', Body: 'for admins only' }));
  await s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: 'ref', LifecycleConfiguration: { Rules: [{ ID: 'old', Status: 'Enabled', Filter: { Prefix: 'tmp/' }, Expiration: { Days: 1 } }] } }));
  rootSession = await signIn(running.consoleUrl);
  const setup: [string, unknown][] = [
    ['policies/createuser', { document: JSON.stringify(policy(['admin:CreateUser', 'admin:ListUsers'])) }],
    ['policies/serverinfo', { document: JSON.stringify(policy(['admin:ServerInfo'])) }],
  ];
  for (const [path, body] of setup) expect((await rootSession.call('PUT', path, { body })).status).toBe(200);
  for (const [accessKey, policies] of [['cuser', ['createuser']], ['infouser', ['serverinfo']], ['boss', ['consoleAdmin']]] as const) {
    expect((await rootSession.call('POST', 'users', { body: { accessKey, secretKey: `${accessKey}-secret-1`, policies } })).status).toBe(200);
  }
}, 120_000);

afterAll(async () => {
  await running?.server.kill();
  await rm(root, { recursive: true, force: true });
});

async function users(): Promise<unknown> {
  return (await rootSession.call('GET', 'users')).body.users.map((user: Record<string, unknown>) => [user.accessKey, user.enabled, user.policies, user.groups]);
}

describe('admin:CreateUser alone', () => {
  it('cannot create a user with policies in the console: 403 naming admin:AttachUserOrGroupPolicy, no user made', async () => {
    const cuser = await signIn(running.consoleUrl, { accessKey: 'cuser', secretKey: 'cuser-secret-1' });
    const before = await users();
    const answer = await cuser.call('POST', 'users', { body: { accessKey: 'evilu', secretKey: 'evilsecret1', policies: ['consoleAdmin'] } });
    expect(answer.status, JSON.stringify(answer.body)).toBe(403);
    expect(answer.body).toMatchObject({ Code: 'AccessDenied' });
    expect(answer.body.Message).toContain('admin:AttachUserOrGroupPolicy');
    expect(await users()).toEqual(before);
    // A user without policies it may create.
    expect((await cuser.call('POST', 'users', { body: { accessKey: 'plainu', secretKey: 'plainsecret1' } })).status).toBe(200);
  });

  it('cannot do it through the admin API either, nor take over a stronger user by giving it a new secret', async () => {
    const credentials = { accessKeyId: 'cuser', secretAccessKey: 'cuser-secret-1' };
    const before = await users();
    const minted = await admin(running.server.url, 'POST', `${iam}/user/add`, '', { credentials, body: JSON.stringify({ accessKey: 'evil2', secretKey: 'evilsecret2', policies: ['consoleAdmin'] }) });
    expect(minted.status).toBe(403);
    const takeover = await admin(running.server.url, 'POST', `${iam}/user/add`, '', { credentials, body: JSON.stringify({ accessKey: 'boss', secretKey: 'now-it-is-mine' }) });
    expect(takeover.status, JSON.stringify(takeover.body)).toBe(403);
    expect(takeover.body.Message).toContain('admin:AttachUserOrGroupPolicy');
    expect(await users()).toEqual(before);
    // boss still signs in with its own secret.
    await signIn(running.consoleUrl, { accessKey: 'boss', secretKey: 'boss-secret-1' });
  });

  it('nor make a service account of another user', async () => {
    const credentials = { accessKeyId: 'cuser', secretAccessKey: 'cuser-secret-1' };
    const answer = await admin(running.server.url, 'POST', `${iam}/svcacct/add`, '', { credentials, body: JSON.stringify({ parent: 'boss' }) });
    expect(answer.status).toBe(403);
    expect((await admin(running.server.url, 'GET', `${iam}/svcacct/list`, 'parent=boss')).body.serviceAccounts).toEqual([]);
  });
});

describe('admin:ServerInfo alone', () => {
  it('sees no placement of an object it may not read, runs no lifecycle cycle, lists no keys through a what-if scope', async () => {
    const info = await signIn(running.consoleUrl, { accessKey: 'infouser', secretKey: 'infouser-secret-1' });
    const placement = await info.call('GET', 'admin/v4/object/placement?bucket=ref&key=secret/a.txt');
    expect(placement.status, JSON.stringify(placement.body)).toBe(403);
    expect(placement.body.Message).toContain('s3:GetObject');
    expect(JSON.stringify(placement.body)).not.toContain('"etag"');
    const lifecycleBefore = (await rootSession.call('GET', 'admin/v4/lifecycle/status')).body;
    const run = await info.call('POST', 'admin/v4/lifecycle/run');
    expect(run.status).toBe(403);
    expect(run.body.Message).toContain('admin:Lifecycle');
    expect((await rootSession.call('GET', 'admin/v4/lifecycle/status')).body.last).toEqual(lifecycleBefore.last);
    const scoped = await info.call('POST', 'admin/v4/simulate/failure', { body: { scope: { bucket: 'ref' } } });
    expect(scoped.status).toBe(403);
    expect(JSON.stringify(scoped.body)).not.toContain('secret/a.txt');
    // What it may see: the cluster without objects.
    expect((await info.call('POST', 'admin/v4/simulate/failure', { body: {} })).status).toBe(200);
    expect((await info.call('GET', 'overview')).status).toBe(200);
  });

  it('through the admin API: the same refusals, and placement passes once the user may read the object', async () => {
    const credentials = { accessKeyId: 'infouser', secretAccessKey: 'infouser-secret-1' };
    expect((await admin(running.server.url, 'GET', '/svc/admin/v4/object/placement', 'bucket=ref&key=secret/a.txt', { credentials })).status).toBe(403);
    expect((await admin(running.server.url, 'POST', '/svc/admin/v4/lifecycle/run', '', { credentials })).status).toBe(403);
    expect((await rootSession.call('PUT', 'policies/ref-read', { body: { document: JSON.stringify(policy(['s3:GetObject'], 'arn:aws:s3:::ref/*')) } })).status).toBe(200);
    expect((await rootSession.call('PUT', 'users/infouser/policies/ref-read')).status).toBe(200);
    const allowed = await admin(running.server.url, 'GET', '/svc/admin/v4/object/placement', 'bucket=ref&key=secret/a.txt', { credentials });
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
    expect(allowed.body.key).toBe('secret/a.txt');
  });
});
