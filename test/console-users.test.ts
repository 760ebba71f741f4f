/**
 * Console sessions of IAM users against a real server: a user's keys sign in to the console and
 * the console acts with that user's policies, judged by the S3 access check. A readonly user
 * sees buckets and objects but cannot upload, delete or open the admin pages (403, nothing
 * changed); a consoleAdmin user can. The Users page's routes: named errors for bad input, the
 * policy validator's message, refusals that change nothing, and a user disabled or removed
 * losing its session at the next request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, HeadObjectCommand, ListMultipartUploadsCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFor } from './helpers/server-process.js';
import { consoleCall, signIn, startConsoleServer, type ConsoleServer, type ConsoleSession } from './helpers/console-client.js';
import { admin as signedAdmin } from './helpers/admin-client.js';

let root: string;
let running: ConsoleServer;
let s3: S3Client;
let admin: ConsoleSession;
const reader = { accessKey: 'reader', secretKey: 'reader-secret-1' };
const operator = { accessKey: 'operator', secretKey: 'operator-secret-1' };
const teamPolicy = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:ListBucket', 's3:GetObject', 's3:PutObject'], Resource: ['arn:aws:s3:::team', 'arn:aws:s3:::team/*'] }] };

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-console-users-'));
  running = await startConsoleServer([join(root, 'd{1...4}')]);
  s3 = s3ClientFor(running.server.url);
  for (const Bucket of ['photos', 'team']) await s3.send(new CreateBucketCommand({ Bucket }));
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'cat.jpg', Body: 'meow' }));
  admin = await signIn(running.consoleUrl);
  for (const [user, policies] of [[reader, ['readonly']], [operator, ['consoleAdmin']]] as const) {
    const added = await admin.call('POST', 'users', { body: { ...user, policies } });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
  }
}, 120_000);
afterAll(async () => {
  await running?.server.kill();
  await rm(root, { recursive: true, force: true });
});

/** The Users page's routes, each with a request that would change something if it were let through. */
const userRoutes = (): { method: string; path: string; body?: unknown }[] => [
  { method: 'GET', path: 'users' },
  { method: 'POST', path: 'users', body: { accessKey: 'sneaky', secretKey: 'sneaky-secret', policies: ['consoleAdmin'] } },
  { method: 'DELETE', path: 'users/operator' },
  { method: 'PUT', path: 'users/operator/enabled', body: { enabled: false } },
  { method: 'PUT', path: 'users/reader/policies/consoleAdmin' },
  { method: 'DELETE', path: 'users/operator/policies/consoleAdmin' },
  { method: 'GET', path: 'policies' },
  { method: 'PUT', path: 'policies/sneaky', body: { document: JSON.stringify(teamPolicy) } },
  { method: 'DELETE', path: 'policies/team' },
];

/** The admin pages' routes (overview, cluster, operations, explorer). */
const adminRoutes = (): { method: string; path: string; body?: unknown }[] => [
  { method: 'GET', path: 'overview' },
  { method: 'GET', path: 'admin/v3/rebalance/status' },
  { method: 'POST', path: 'admin/v3/heal/photos', body: { recursive: true } },
  { method: 'POST', path: 'admin/v3/pools/decommission?pool=0&by-id=true' },
  { method: 'POST', path: 'plan', body: { patterns: ['/plan/d{1...4}'] } },
];

async function usersNow(): Promise<[string, boolean, string[]][]> {
  const answer = await admin.call('GET', 'users');
  return answer.body.users.map((user: { accessKey: string; enabled: boolean; policies: string[] }) => [user.accessKey, user.enabled, user.policies]);
}

async function createdPolicies(): Promise<string[]> {
  const answer = await admin.call('GET', 'policies');
  return answer.body.policies.filter((policy: { builtIn: boolean }) => !policy.builtIn).map((policy: { name: string }) => policy.name);
}

describe('a readonly user in the console', () => {
  it('signs in with its own keys, sees buckets and objects, and is offered only the Buckets page', async () => {
    const session = await signIn(running.consoleUrl, reader);
    const me = await session.call('GET', 'session');
    expect(me.body).toMatchObject({ accessKey: 'reader', kind: 'user', policies: ['readonly'], pages: ['buckets'] });
    expect((await session.call('GET', 'buckets')).body.buckets.map((bucket: { name: string }) => bucket.name)).toEqual(['photos', 'team']);
    expect((await session.call('GET', 'buckets/photos/objects')).body.objects.map((object: { key: string }) => object.key)).toEqual(['cat.jpg']);
    const download = await fetch(`${running.consoleUrl}/svc/console/api/buckets/photos/download?key=cat.jpg`, { headers: { cookie: session.cookie } });
    expect(await download.text()).toBe('meow');
    // Its share link is signed with its own keys: S3 judges it as the reader.
    const share = await session.call('POST', 'buckets/photos/share', { body: { key: 'cat.jpg', expiresSeconds: 60 } });
    expect(share.body.url).toContain('X-Amz-Credential=reader%2F');
    expect(await (await fetch(share.body.url)).text()).toBe('meow');
    const wrong = await consoleCall(running.consoleUrl, 'POST', 'session', { body: { accessKey: 'reader', secretKey: 'not-its-secret' } });
    expect(wrong.body.Code).toBe('ConsoleSignInFailed');
  });

  it('cannot upload, delete, create or change buckets: 403 AccessDenied saying what is missing, and nothing changes', async () => {
    const session = await signIn(running.consoleUrl, reader);
    const refusals: [string, string, { body?: unknown; raw?: Buffer }][] = [
      ['PUT', 'buckets/photos/objects?key=dog.jpg', { raw: Buffer.from('woof') }],
      ['POST', 'buckets/photos/uploads', { body: { key: 'big.bin' } }],
      ['POST', 'buckets/photos/delete', { body: { objects: [{ key: 'cat.jpg' }] } }],
      ['POST', 'buckets', { body: { name: 'readers-bucket' } }],
      ['PUT', 'buckets/photos/versioning', { body: { status: 'enabled' } }],
      ['DELETE', 'buckets/photos?force=true&confirm=photos', {}],
    ];
    for (const [method, path, options] of refusals) {
      const answer = await session.call(method, path, options);
      expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBe(403);
      expect(answer.body.Code).toBe('AccessDenied');
      expect(answer.body.Message).toMatch(/^No policy allows user reader s3:\w+ on arn:aws:s3:::/);
    }
    expect(await (await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: 'cat.jpg' }))).Body!.transformToString()).toBe('meow');
    await expect(s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'dog.jpg' }))).rejects.toThrow();
    expect((await s3.send(new ListMultipartUploadsCommand({ Bucket: 'photos' }))).Uploads ?? []).toEqual([]);
    expect((await admin.call('GET', 'buckets')).body.buckets).toEqual([expect.objectContaining({ name: 'photos', versioning: 'unversioned' }), expect.objectContaining({ name: 'team' })]);
  });

  it('is refused every Users and admin route (403) and nothing changes', async () => {
    const session = await signIn(running.consoleUrl, reader);
    const before = await usersNow();
    for (const route of [...userRoutes(), ...adminRoutes()]) {
      const answer = await session.call(route.method, route.path, route.body === undefined ? {} : { body: route.body });
      expect(answer.status, `${route.method} ${route.path}: ${JSON.stringify(answer.body)}`).toBe(403);
      expect(answer.body.Code).toBe('AccessDenied');
      expect(answer.body.Message).toContain('admin:');
    }
    expect(await usersNow()).toEqual(before);
    expect(await createdPolicies()).toEqual([]);
    expect((await admin.call('GET', 'overview')).body.operations.decommission).toEqual([]);
  });
});

describe('a user with a narrower policy', () => {
  it('sees only the buckets it may list, and writes only where its policy allows', async () => {
    expect((await admin.call('PUT', 'policies/team', { body: { document: JSON.stringify(teamPolicy) } })).status).toBe(200);
    expect((await admin.call('POST', 'users', { body: { accessKey: 'teammate', secretKey: 'teammate-secret', policies: ['team'] } })).status).toBe(200);
    const session = await signIn(running.consoleUrl, { accessKey: 'teammate', secretKey: 'teammate-secret' });
    expect((await session.call('GET', 'buckets')).body.buckets.map((bucket: { name: string }) => bucket.name)).toEqual(['team']);
    expect((await session.call('PUT', 'buckets/team/objects?key=notes.txt', { raw: 'ours' })).status).toBe(200);
    expect((await session.call('PUT', 'buckets/photos/objects?key=notes.txt', { raw: 'not ours' })).status).toBe(403);
    expect((await session.call('GET', 'buckets/photos/objects')).status).toBe(403);
    // In use: the policy cannot be removed until no user holds it.
    const inUse = await admin.call('DELETE', 'policies/team');
    expect(inUse.status).toBe(409);
    expect(inUse.body).toMatchObject({ Code: 'PolicyInUse', Message: expect.stringContaining('teammate') });
    expect((await admin.call('DELETE', 'users/teammate')).status).toBe(200);
    expect((await session.call('GET', 'buckets')).body.Code).toBe('ConsoleSignInRequired');
    expect((await admin.call('DELETE', 'policies/team')).body).toEqual({ removed: 'team' });
    expect(await createdPolicies()).toEqual([]);
  });
});

describe('the admin API', () => {
  it('removes a created policy no user holds, like the console', async () => {
    const document = JSON.stringify(teamPolicy);
    expect((await signedAdmin(running.server.url, 'POST', '/svc/admin/v4/iam/policy/create', 'name=short-lived', { body: document })).status).toBe(200);
    expect((await signedAdmin(running.server.url, 'POST', '/svc/admin/v4/iam/policy/attach', 'policy=short-lived&accessKey=reader')).status).toBe(200);
    const inUse = await signedAdmin(running.server.url, 'POST', '/svc/admin/v4/iam/policy/remove', 'name=short-lived');
    expect([inUse.status, inUse.body.Code]).toEqual([409, 'PolicyInUse']);
    expect((await signedAdmin(running.server.url, 'POST', '/svc/admin/v4/iam/policy/detach', 'policy=short-lived&accessKey=reader')).status).toBe(200);
    expect((await signedAdmin(running.server.url, 'POST', '/svc/admin/v4/iam/policy/remove', 'name=short-lived')).body).toEqual({ removed: 'short-lived' });
    expect((await signedAdmin(running.server.url, 'POST', '/svc/admin/v4/iam/policy/remove', 'name=readonly')).body.Code).toBe('PolicyIsBuiltIn');
    expect(await createdPolicies()).toEqual([]);
  });
});

describe('a consoleAdmin user', () => {
  it('is offered every page and manages users and policies', async () => {
    const session = await signIn(running.consoleUrl, operator);
    expect((await session.call('GET', 'session')).body.pages).toEqual(['overview', 'buckets', 'cluster', 'operations', 'explorer', 'users', 'groups', 'service-accounts']);
    expect((await session.call('GET', 'overview')).status).toBe(200);
    const added = await session.call('POST', 'users', { body: { accessKey: 'temp', secretKey: 'temp-secret-1', policies: ['writeonly'] } });
    expect(added.body.user).toMatchObject({ accessKey: 'temp', enabled: true, policies: ['writeonly'] });
    expect((await session.call('PUT', 'users/temp/policies/readonly')).body.user.policies).toEqual(['writeonly', 'readonly']);
    expect((await session.call('DELETE', 'users/temp/policies/writeonly')).body.user.policies).toEqual(['readonly']);
    expect((await session.call('PUT', 'users/temp/enabled', { body: { enabled: false } })).body.user.enabled).toBe(false);
    expect((await consoleCall(running.consoleUrl, 'POST', 'session', { body: { accessKey: 'temp', secretKey: 'temp-secret-1' } })).body.Code).toBe('ConsoleSignInFailed');
    expect((await session.call('DELETE', 'users/temp')).body).toEqual({ removed: 'temp' });
    expect((await usersNow()).map(([accessKey]) => accessKey)).toEqual(['operator', 'reader']);
  });
});

describe('bad input on the Users routes', () => {
  it('gets a named error naming the field or the rule, and nothing is stored', async () => {
    const before = await usersNow();
    const cases: [string, string, unknown, string, Record<string, unknown>?][] = [
      ['POST', 'users', { secretKey: 'long-enough' }, 'InvalidArgument', { field: 'accessKey' }],
      ['POST', 'users', { accessKey: 'x y', secretKey: 'long-enough' }, 'InvalidUserCredentials'],
      ['POST', 'users', { accessKey: 'shorty', secretKey: 'short' }, 'InvalidUserCredentials'],
      ['POST', 'users', { accessKey: 'newbie', secretKey: 'long-enough', policies: ['no-such-policy'] }, 'NoSuchPolicy'],
      ['POST', 'users', { accessKey: 'newbie', secretKey: 'long-enough', policies: [{ name: 'readonly' }] }, 'InvalidArgument', { field: 'policies.0' }],
      ['POST', 'users', { accessKey: 'reader', secretKey: 'another-secret' }, 'UserAlreadyExists'],
      ['POST', 'users', '{"accessKey":', 'InvalidArgument'],
      ['PUT', 'users/reader/enabled', { enabled: 'perhaps' }, 'InvalidArgument', { field: 'enabled' }],
      ['PUT', 'users/nobody/enabled', { enabled: false }, 'NoSuchUser'],
      ['DELETE', 'users/nobody', undefined, 'NoSuchUser'],
      ['PUT', 'users/reader/policies/no-such-policy', undefined, 'NoSuchPolicy'],
      ['DELETE', 'users/reader/policies/writeonly', undefined, 'NoSuchPolicy'],
      ['PUT', 'policies/readonly', { document: JSON.stringify(teamPolicy) }, 'PolicyIsBuiltIn'],
      ['PUT', 'policies/bad%20name', { document: JSON.stringify(teamPolicy) }, 'InvalidArgument'],
      ['PUT', 'policies/broken', { document: '{"Version": "2012-10-17", "Statement": [' }, 'MalformedPolicy'],
      ['PUT', 'policies/broken', { document: JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'ec2:RunInstances', Resource: '*' }] }) }, 'MalformedPolicy'],
      ['PUT', 'policies/broken', { text: '{}' }, 'InvalidArgument', { field: 'document' }],
      ['DELETE', 'policies/readonly', undefined, 'PolicyIsBuiltIn'],
      ['DELETE', 'policies/nothing-here', undefined, 'NoSuchPolicy'],
    ];
    for (const [method, path, body, code, details] of cases) {
      const answer = await admin.call(method, path, body === undefined ? {} : { body });
      expect(answer.body.Code, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(answer.body)}`).toBe(code);
      expect(answer.status).toBeGreaterThanOrEqual(400);
      if (details) expect(answer.body.Details).toMatchObject(details);
    }
    const validator = await admin.call('PUT', 'policies/broken', { body: { document: JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'ec2:RunInstances', Resource: '*' }] }) } });
    expect(validator.body.Message).toContain('unknown actions: ec2:RunInstances');
    expect(validator.body.Details).toMatchObject({ unknownActions: ['ec2:RunInstances'] });
    expect(await usersNow()).toEqual(before);
    expect(await createdPolicies()).toEqual([]);
  });
});

describe('a user disabled or removed', () => {
  it('loses its console session at the next request', async () => {
    const session = await signIn(running.consoleUrl, reader);
    expect((await session.call('GET', 'buckets')).status).toBe(200);
    expect((await admin.call('PUT', 'users/reader/enabled', { body: { enabled: false } })).status).toBe(200);
    const refused = await session.call('GET', 'buckets');
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ Code: 'ConsoleSignInRequired', Message: expect.stringContaining('reader was disabled, removed or given a new secret') });
    // Enabled again, the old session stays over; a new sign-in works.
    expect((await admin.call('PUT', 'users/reader/enabled', { body: { enabled: true } })).status).toBe(200);
    expect((await session.call('GET', 'buckets')).body.Code).toBe('ConsoleSignInRequired');
    const again = await signIn(running.consoleUrl, reader);
    expect((await again.call('GET', 'buckets')).status).toBe(200);
  });
});
