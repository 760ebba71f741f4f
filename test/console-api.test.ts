/**
 * The console's JSON API over plain HTTP against a real server: sign-in and its throttle, the
 * session cookie (HTTP-only, SameSite, Secure behind a TLS proxy), refusals without a session
 * or a CSRF token that change nothing, a cookie of another deployment, named errors for bad
 * input, and the work itself (buckets, uploads, downloads, share links, admin calls).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { CreateBucketCommand, CreateMultipartUploadCommand, GetBucketVersioningCommand, HeadObjectCommand, ListBucketsCommand, ListMultipartUploadsCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFor, testCredentials } from './helpers/server-process.js';
import { startProcessCluster } from './helpers/process-cluster.js';
import { consoleCall, signIn, startConsoleServer, type ConsoleServer, type ConsoleSession } from './helpers/console-client.js';
import { SessionSealer, sessionCookieName } from '../src/console/session.js';

let root: string;
let running: ConsoleServer;
let s3: S3Client;
let session: ConsoleSession;
let uploadId: string;
const objectBody = randomBytes(64 * 1024);
const keptPolicy = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject'], Resource: ['arn:aws:s3:::kept/*'] }] };

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-console-api-'));
  // Loopback named as a trusted proxy: the tests below that send X-Forwarded-* act as the proxy.
  running = await startConsoleServer([join(root, 'd{1...4}')], { SVC_CONSOLE_TRUSTED_PROXIES: '127.0.0.1' });
  s3 = s3ClientFor(running.server.url);
  await s3.send(new CreateBucketCommand({ Bucket: 'kept' }));
  await s3.send(new PutObjectCommand({ Bucket: 'kept', Key: 'k', Body: objectBody }));
  uploadId = (await s3.send(new CreateMultipartUploadCommand({ Bucket: 'kept', Key: 'm' }))).UploadId!;
  session = await signIn(running.consoleUrl);
  expect((await session.call('POST', 'users', { body: { accessKey: 'kept-user', secretKey: 'kept-user-secret', policies: ['readonly'] } })).status).toBe(200);
  expect((await session.call('PUT', 'policies/kept-policy', { body: { document: JSON.stringify(keptPolicy) } })).status).toBe(200);
}, 120_000);
afterAll(async () => {
  await running?.server.kill();
  await rm(root, { recursive: true, force: true });
});

/** Every console route, with a request that would change something if it were let through. */
const routes = (): { method: string; path: string; body?: unknown; raw?: Buffer }[] => [
  { method: 'GET', path: 'session' },
  { method: 'DELETE', path: 'session' },
  { method: 'GET', path: 'buckets' },
  { method: 'POST', path: 'buckets', body: { name: 'sneaky' } },
  { method: 'PUT', path: 'buckets/kept/versioning', body: { status: 'enabled' } },
  { method: 'DELETE', path: 'buckets/kept?force=true&confirm=kept' },
  { method: 'GET', path: 'buckets/kept/objects' },
  { method: 'GET', path: 'buckets/kept/object?key=k' },
  { method: 'GET', path: 'buckets/kept/download?key=k' },
  { method: 'POST', path: 'buckets/kept/delete', body: { objects: [{ key: 'k' }] } },
  { method: 'POST', path: 'buckets/kept/share', body: { key: 'k', expiresSeconds: 60 } },
  { method: 'PUT', path: 'buckets/kept/objects?key=sneaky', raw: Buffer.from('sneaky') },
  { method: 'POST', path: 'buckets/kept/uploads', body: { key: 'sneaky-multipart' } },
  { method: 'PUT', path: `buckets/kept/uploads/${uploadId}/parts/1?key=m`, raw: Buffer.alloc(1024) },
  { method: 'POST', path: `buckets/kept/uploads/${uploadId}/complete`, body: { key: 'm', parts: [{ partNumber: 1, etag: 'x' }] } },
  { method: 'DELETE', path: `buckets/kept/uploads/${uploadId}?key=m` },
  { method: 'GET', path: 'overview' },
  { method: 'GET', path: 'admin/v3/rebalance/status' },
  { method: 'POST', path: 'admin/v3/heal/kept', body: { recursive: true } },
  { method: 'POST', path: 'admin/v3/pools/decommission?pool=0&by-id=true' },
  { method: 'POST', path: 'plan', body: { patterns: ['/plan/d{1...4}'] } },
  { method: 'GET', path: 'users' },
  { method: 'POST', path: 'users', body: { accessKey: 'sneaky', secretKey: 'sneaky-secret', policies: ['consoleAdmin'] } },
  { method: 'DELETE', path: 'users/kept-user' },
  { method: 'PUT', path: 'users/kept-user/enabled', body: { enabled: false } },
  { method: 'PUT', path: 'users/kept-user/policies/consoleAdmin' },
  { method: 'DELETE', path: 'users/kept-user/policies/readonly' },
  { method: 'GET', path: 'policies' },
  { method: 'PUT', path: 'policies/sneaky', body: { document: JSON.stringify(keptPolicy) } },
  { method: 'DELETE', path: 'policies/kept-policy' },
];

/** A GET with the Host header of the caller's choosing (fetch will not send one). */
function getWithHost(url: string, host: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { headers: { host } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end();
  });
}

/** Nothing any refused call could have changed has changed. */
async function expectUnchanged(): Promise<void> {
  const buckets = (await s3.send(new ListBucketsCommand({}))).Buckets!.map((bucket) => bucket.Name);
  expect(buckets).toEqual(['kept']);
  expect((await s3.send(new GetBucketVersioningCommand({ Bucket: 'kept' }))).Status).toBeUndefined();
  expect((await s3.send(new HeadObjectCommand({ Bucket: 'kept', Key: 'k' }))).ContentLength).toBe(objectBody.length);
  await expect(s3.send(new HeadObjectCommand({ Bucket: 'kept', Key: 'sneaky' }))).rejects.toThrow();
  const uploads = (await s3.send(new ListMultipartUploadsCommand({ Bucket: 'kept' }))).Uploads ?? [];
  expect(uploads.map((upload) => upload.Key)).toEqual(['m']);
  const overview = await session.call('GET', 'overview');
  expect(overview.body.operations.decommission).toEqual([]);
  const users = (await session.call('GET', 'users')).body.users;
  expect(users.map((user: { accessKey: string; enabled: boolean; policies: string[] }) => [user.accessKey, user.enabled, user.policies])).toEqual([['kept-user', true, ['readonly']]]);
  const policies = (await session.call('GET', 'policies')).body.policies.filter((policy: { builtIn: boolean }) => !policy.builtIn);
  expect(policies).toEqual([{ name: 'kept-policy', builtIn: false, document: keptPolicy, users: [] }]);
}

describe('the console listener', () => {
  it('redirects / to the console and serves the app with a strict content security policy', async () => {
    const root = await fetch(`${running.consoleUrl}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/svc/console/');
    const page = await fetch(`${running.consoleUrl}/svc/console/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('assets/app.js');
    expect(html).not.toMatch(/<script>(?!<\/script>)|<script [^>]*>[^<]+<\/script>/);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    const script = await fetch(`${running.consoleUrl}/svc/console/assets/app.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toContain('javascript');
    expect(script.headers.get('content-encoding')).toBe('gzip');
    expect(await script.text()).toContain('svc');
    expect((await fetch(`${running.consoleUrl}/svc/console/assets/..%2fpackage.json`)).status).toBe(404);
    expect((await fetch(`${running.consoleUrl}/svc/console/health`)).status).toBe(200);
  });

  it('has no listener at all with SVC_CONSOLE_ENABLE=false', async () => {
    const disabled = await startConsoleServer([join(root, 'off{1...2}')], { SVC_CONSOLE_ENABLE: 'false', SVC_DRIVE_BACKEND: 'memfs' });
    try {
      await expect(fetch(`${disabled.consoleUrl}/`)).rejects.toThrow();
    } finally {
      await disabled.server.kill();
    }
  });
});

describe('sign-in', () => {
  it('sets an HTTP-only, SameSite=Strict session cookie scoped to the console, Secure only behind a TLS proxy', async () => {
    const plain = await consoleCall(running.consoleUrl, 'POST', 'session', { body: { accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey } });
    const cookie = plain.headers.getSetCookie()[0]!;
    expect(cookie).toMatch(new RegExp(`^${sessionCookieName}=`));
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    expect(cookie).toContain('Path=/svc/console/');
    expect(cookie).not.toContain('Secure');
    const proxied = await consoleCall(running.consoleUrl, 'POST', 'session', { body: { accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey }, headers: { 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.9' } });
    expect(proxied.headers.getSetCookie()[0]).toContain('Secure');
  });

  it('refuses a wrong secret with a named error, and throttles an address after repeated failures (429, Retry-After), logged', async () => {
    const attempt = () => consoleCall(running.consoleUrl, 'POST', 'session', { body: { accessKey: testCredentials.accessKeyId, secretKey: 'wrong-secret' }, headers: { 'x-forwarded-for': '198.51.100.7' } });
    const first = await attempt();
    expect(first.status).toBe(401);
    expect(first.body.Code).toBe('ConsoleSignInFailed');
    expect(first.headers.getSetCookie()).toEqual([]);
    let last = first;
    for (let index = 0; index < 6 && last.status !== 429; index += 1) last = await attempt();
    expect(last.status).toBe(429);
    expect(last.body.Code).toBe('TooManySignInAttempts');
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
    // Even the right secret waits out the lockout; another address is not affected.
    const right = await consoleCall(running.consoleUrl, 'POST', 'session', { body: { accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey }, headers: { 'x-forwarded-for': '198.51.100.7' } });
    expect(right.status).toBe(429);
    expect((await signIn(running.consoleUrl)).csrfToken).not.toBe('');
    expect(running.server.logs()).toContain('console sign-in failed');
    expect(running.server.logs()).toContain('198.51.100.7');
  });

  it('names missing fields', async () => {
    const answer = await consoleCall(running.consoleUrl, 'POST', 'session', { body: { accessKey: 'x' } });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ Code: 'InvalidArgument', Details: { field: 'secretKey' } });
    const notJson = await consoleCall(running.consoleUrl, 'POST', 'session', { body: '{"accessKey":', headers: {} });
    expect(notJson.body.Code).toBe('InvalidArgument');
  });

  it('ends with sign-out: the cookie no longer opens the API', async () => {
    const other = await signIn(running.consoleUrl);
    expect((await other.call('GET', 'buckets')).status).toBe(200);
    const out = await other.call('DELETE', 'session');
    expect(out.status).toBe(200);
    expect(out.headers.getSetCookie()[0]).toContain('Max-Age=0');
    expect((await other.call('GET', 'buckets')).body.Code).toBe('ConsoleSignInRequired');
  });
});

describe('forwarded headers with the default configuration (no trusted proxy)', () => {
  let plain: ConsoleServer;
  beforeAll(async () => {
    plain = await startConsoleServer([join(root, 'plain{1...4}')], { SVC_DRIVE_BACKEND: 'memfs' });
    await s3ClientFor(plain.server.url).send(new CreateBucketCommand({ Bucket: 'shared' }));
    await s3ClientFor(plain.server.url).send(new PutObjectCommand({ Bucket: 'shared', Key: 'page.html', Body: 'hello' }));
  }, 60_000);
  afterAll(async () => {
    await plain?.server.kill();
  });

  it('are ignored from loopback: X-Forwarded-Host does not choose a share link\'s host, X-Forwarded-Proto does not make the cookie Secure', async () => {
    const spoofed = { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.50' };
    const signedIn = await consoleCall(plain.consoleUrl, 'POST', 'session', { body: { accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey }, headers: spoofed });
    expect(signedIn.status).toBe(200);
    expect(signedIn.headers.getSetCookie()[0]).not.toContain('Secure');
    const cookie = signedIn.headers.getSetCookie()[0]!.split(';')[0]!;
    const share = await consoleCall(plain.consoleUrl, 'POST', 'buckets/shared/share', { body: { key: 'page.html', expiresSeconds: 300 }, headers: spoofed, cookie, csrfToken: String(signedIn.body.csrfToken) });
    expect(share.status, JSON.stringify(share.body)).toBe(200);
    expect(new URL(share.body.url).host).toBe(`127.0.0.1:${plain.server.port}`);
    expect((await fetch(share.body.url)).status).toBe(200);
  });

  it('cannot step around the sign-in throttle: ten failures, each with another X-Forwarded-For, lock loopback out', async () => {
    const statuses: number[] = [];
    for (let index = 0; index < 10; index += 1) {
      const attempt = await consoleCall(plain.consoleUrl, 'POST', 'session', { body: { accessKey: testCredentials.accessKeyId, secretKey: 'wrong-secret' }, headers: { 'x-forwarded-for': `198.51.100.${index + 1}` } });
      statuses.push(attempt.status);
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.at(-1)).toBe(429);
    const right = await consoleCall(plain.consoleUrl, 'POST', 'session', { body: { accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey }, headers: { 'x-forwarded-for': '192.0.2.77' } });
    expect(right.status).toBe(429);
    expect(plain.server.logs()).not.toContain('198.51.100.3');
  });
});

describe('every console route', () => {
  it('refuses a call without a session (401) and changes nothing', async () => {
    for (const route of routes()) {
      const answer = await consoleCall(running.consoleUrl, route.method, route.path, { ...(route.body !== undefined ? { body: route.body } : {}), ...(route.raw ? { raw: route.raw } : {}) });
      expect(answer.status, `${route.method} ${route.path}`).toBe(401);
      expect(answer.body.Code).toBe('ConsoleSignInRequired');
    }
    await expectUnchanged();
  });

  it('refuses a session cookie sealed by another deployment (other root credentials), a tampered one and an expired one', async () => {
    const nowMs = Date.now();
    const foreign = new SessionSealer({ accessKey: testCredentials.accessKeyId, secretKey: 'another-deployment-secret' }, { idleMs: 3_600_000, maxMs: 43_200_000 });
    const foreignSession = foreign.issue(nowMs);
    const ours = new SessionSealer({ accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey }, { idleMs: 3_600_000, maxMs: 43_200_000 });
    const stale = { ...ours.issue(nowMs - 13 * 3_600_000), lastSeenMs: nowMs - 1000 };
    const tampered = session.cookie.slice(0, -3) + (session.cookie.endsWith('AAA') ? 'BBB' : 'AAA');
    const cases = [
      { cookie: `${sessionCookieName}=${foreign.seal(foreignSession)}`, csrfToken: foreign.csrfToken(foreignSession) },
      { cookie: tampered, csrfToken: session.csrfToken },
      { cookie: `${sessionCookieName}=${ours.seal(stale)}`, csrfToken: ours.csrfToken(stale) },
    ];
    for (const credentials of cases) {
      for (const route of routes()) {
        const answer = await consoleCall(running.consoleUrl, route.method, route.path, { ...credentials, ...(route.body !== undefined ? { body: route.body } : {}), ...(route.raw ? { raw: route.raw } : {}) });
        expect(answer.status, `${route.method} ${route.path}`).toBe(401);
      }
    }
    // The same sealing with this deployment's credentials is accepted (the key is derived, not random per node).
    const fresh = ours.issue(nowMs);
    expect((await consoleCall(running.consoleUrl, 'GET', 'buckets', { cookie: `${sessionCookieName}=${ours.seal(fresh)}` })).status).toBe(200);
    await expectUnchanged();
  });

  it('refuses every state-changing call without the CSRF token (403) or with another session\'s, and changes nothing', async () => {
    const other = await signIn(running.consoleUrl);
    for (const route of routes().filter((candidate) => candidate.method !== 'GET')) {
      for (const csrfToken of [undefined, other.csrfToken]) {
        const answer = await consoleCall(running.consoleUrl, route.method, route.path, { cookie: session.cookie, ...(csrfToken ? { csrfToken } : {}), ...(route.body !== undefined ? { body: route.body } : {}), ...(route.raw ? { raw: route.raw } : {}) });
        expect(answer.status, `${route.method} ${route.path}`).toBe(403);
        expect(answer.body.Code).toBe('InvalidCsrfToken');
      }
    }
    await expectUnchanged();
    expect((await session.call('GET', 'buckets')).status).toBe(200);
  });
});

describe('bad input', () => {
  it('gets a named error naming the field, and nothing is stored', async () => {
    const cases: [string, string, unknown, string][] = [
      ['POST', 'buckets', { name: 'No_Capitals' }, 'InvalidBucketName'],
      ['POST', 'buckets', { name: 'ab' }, 'InvalidBucketName'],
      ['POST', 'buckets', { name: '192.168.1.1' }, 'InvalidBucketName'],
      ['POST', 'buckets', { name: 'kept' }, 'BucketAlreadyOwnedByYou'],
      ['POST', 'buckets', [1, 2], 'InvalidArgument'],
      ['PUT', 'buckets/kept/versioning', { status: 'on' }, 'InvalidArgument'],
      ['PUT', 'buckets/missing/versioning', { status: 'enabled' }, 'NoSuchBucket'],
      ['POST', 'buckets/kept/uploads', { key: 'x', storageClass: 'GLACIER' }, 'InvalidStorageClass'],
      ['POST', 'buckets/kept/uploads', { key: '' }, 'InvalidArgument'],
      ['POST', 'buckets/kept/uploads', { key: 'a/../b' }, 'InvalidObjectName'],
      ['POST', 'buckets/kept/share', { key: 'k', expiresSeconds: 0 }, 'InvalidArgument'],
      ['POST', 'buckets/kept/share', { key: 'k', expiresSeconds: 8 * 24 * 3600 }, 'InvalidArgument'],
      ['POST', 'buckets/kept/share', { key: 'absent', expiresSeconds: 60 }, 'NoSuchKey'],
      ['POST', 'buckets/kept/delete', { objects: [] }, 'InvalidArgument'],
      ['POST', 'buckets/kept/delete', { objects: [{ key: 'k', versionId: '../x' }] }, 'InvalidArgument'],
      ['POST', `buckets/kept/uploads/${'A'.repeat(10)}/complete`, { key: 'm', parts: [{ partNumber: 1, etag: 'x' }] }, 'NoSuchUpload'],
      ['POST', 'admin/v3/heal/', { recursive: false }, 'InvalidArgument'],
      ['POST', 'admin/v3/heal/kept', { readRepair: true }, 'InvalidArgument'],
      ['POST', 'admin/v3/rebalance/start', undefined, 'NotImplemented'],
      ['POST', 'admin/v3/pools/decommission?pool=7&by-id=true', undefined, 'NoSuchPool'],
      ['POST', 'admin/v4/faults?drive=x', {}, 'NotImplemented'],
      ['POST', 'plan', { patterns: [] }, 'InvalidArgument'],
      ['POST', 'plan', { patterns: '/d{1...4}' }, 'InvalidArgument'],
      ['POST', 'plan', { patterns: ['/d{1...4}'], driveSize: '8 parsecs' }, 'InvalidArgument'],
      ['GET', 'nothing-here', undefined, 'NotImplemented'],
    ];
    for (const [method, path, body, code] of cases) {
      const answer = await session.call(method, path, body === undefined ? {} : { body });
      expect(answer.body.Code, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(answer.body)}`).toBe(code);
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(typeof answer.body.Message).toBe('string');
    }
    const listing = await session.call('GET', 'buckets/kept/objects?limit=0');
    expect(listing.body).toMatchObject({ Code: 'InvalidArgument', Details: { field: 'limit' } });
    const missingLength = await new Promise<number>((resolve, reject) => {
      const url = new URL(`${running.consoleUrl}/svc/console/api/buckets/kept/objects?key=chunked`);
      const request = httpRequest(url, { method: 'PUT', headers: { cookie: session.cookie, 'x-csrf-token': session.csrfToken, 'transfer-encoding': 'chunked', 'content-type': 'application/octet-stream' } }, (response) => {
        response.resume();
        resolve(response.statusCode!);
      });
      request.on('error', reject);
      request.end('abc');
    });
    expect(missingLength).toBe(411);
    await expectUnchanged();
  });

  it('deletes a non-empty bucket only with its name typed again, and then its objects first', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'doomed' }));
    await s3.send(new PutObjectCommand({ Bucket: 'doomed', Key: 'a/1', Body: 'one' }));
    await session.call('PUT', 'buckets/doomed/versioning', { body: { status: 'enabled' } });
    await s3.send(new PutObjectCommand({ Bucket: 'doomed', Key: 'a/1', Body: 'two' }));
    await s3.send(new CreateMultipartUploadCommand({ Bucket: 'doomed', Key: 'big' }));
    expect((await session.call('DELETE', 'buckets/doomed')).body.Code).toBe('BucketNotEmpty');
    expect((await session.call('DELETE', 'buckets/doomed?force=true&confirm=wrong')).body.Code).toBe('ConfirmationRequired');
    expect((await session.call('DELETE', 'buckets/doomed?force=maybe')).body.Code).toBe('InvalidArgument');
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'doomed', Key: 'a/1' }))).ContentLength).toBe(3);
    const deleted = await session.call('DELETE', 'buckets/doomed?force=true&confirm=doomed');
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    const names = (await s3.send(new ListBucketsCommand({}))).Buckets!.map((bucket) => bucket.Name);
    expect(names).toEqual(['kept']);
  });
});

describe('the work', () => {
  it('uploads in parts streamed into the object layer, downloads the same bytes, shares a presigned link', async () => {
    const body = randomBytes(6 * 1024 * 1024 + 12_345);
    const created = await session.call('POST', 'buckets', { body: { name: 'work' } });
    expect(created.status).toBe(200);
    const start = await session.call('POST', 'buckets/work/uploads', { body: { key: 'dir/big.bin', storageClass: 'REDUCED_REDUNDANCY', contentType: 'application/x-test' } });
    const id = start.body.uploadId as string;
    const split = 5 * 1024 * 1024;
    const parts = [];
    for (const [index, chunk] of [body.subarray(0, split), body.subarray(split)].entries()) {
      const answer = await session.call('PUT', `buckets/work/uploads/${id}/parts/${index + 1}?key=dir%2Fbig.bin`, { raw: chunk });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      parts.push({ partNumber: index + 1, etag: answer.body.etag });
    }
    const done = await session.call('POST', `buckets/work/uploads/${id}/complete`, { body: { key: 'dir/big.bin', parts } });
    expect(done.body.sizeBytes).toBe(body.length);
    const download = await fetch(`${running.consoleUrl}/svc/console/api/buckets/work/download?key=dir%2Fbig.bin`, { headers: { cookie: session.cookie } });
    expect(download.headers.get('content-disposition')).toContain("filename*=UTF-8''big.bin");
    expect(Buffer.from(await download.arrayBuffer()).equals(body)).toBe(true);
    const details = await session.call('GET', 'buckets/work/object?key=dir%2Fbig.bin');
    expect(details.body.versions[0]).toMatchObject({ storageClass: 'REDUCED_REDUNDANCY', contentType: 'application/x-test', sizeBytes: body.length });
    // Through a trusted proxy (loopback, named so): the link goes to the host name the browser used, at the S3 port.
    const share = await session.call('POST', 'buckets/work/share', { body: { key: 'dir/big.bin', expiresSeconds: 300 }, headers: { 'x-forwarded-host': 'console.example.test', 'x-forwarded-proto': 'http' } });
    expect(share.body.url).toMatch(new RegExp(`^http://console\\.example\\.test:${running.server.port}/work/dir/big\\.bin\\?`));
    const shared = await getWithHost(share.body.url.replace('console.example.test', '127.0.0.1'), `console.example.test:${running.server.port}`);
    expect(shared.status).toBe(200);
    expect(shared.body.equals(body)).toBe(true);
    const tampered = await getWithHost(share.body.url.replace('console.example.test', '127.0.0.1').replace('big.bin', 'other.bin'), `console.example.test:${running.server.port}`);
    expect(tampered.status).toBe(403);
    const listed = await session.call('GET', 'buckets/work/objects?prefix=dir%2F');
    expect(listed.body.objects.map((object: { key: string }) => object.key)).toEqual(['dir/big.bin']);
  });

  it('serves stored bytes sandboxed, never sniffed and as an attachment: an HTML object\'s script cannot act as the console', async () => {
    const html = '<!doctype html><script>fetch("/svc/console/api/users", { method: "POST" })</script><p>hi</p>';
    const put = await session.call('PUT', 'buckets/kept/objects?key=page.html&contentType=text%2Fhtml', { raw: html, headers: { 'content-type': 'application/octet-stream' } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const versionId = String(put.body.versionId);
    try {
      for (const query of ['key=page.html', `key=page.html&versionId=${encodeURIComponent(versionId)}`]) {
        const download = await fetch(`${running.consoleUrl}/svc/console/api/buckets/kept/download?${query}`, { headers: { cookie: session.cookie } });
        expect(download.status).toBe(200);
        expect(await download.text()).toBe(html);
        const policy = (download.headers.get('content-security-policy') ?? '').split(';').map((directive) => directive.trim());
        expect(policy).toContain('sandbox');
        expect(policy).toContain("default-src 'none'");
        expect(policy.some((directive) => directive.startsWith('script-src'))).toBe(false);
        expect(download.headers.get('x-content-type-options')).toBe('nosniff');
        expect(download.headers.get('content-disposition')).toMatch(/^attachment; filename="page\.html"/);
      }
    } finally {
      expect((await session.call('POST', 'buckets/kept/delete', { body: { objects: [{ key: 'page.html', versionId }] } })).status).toBe(200);
    }
    // The console's own pages keep their policy (scripts from the console itself, no sandbox).
    const page = await fetch(`${running.consoleUrl}/svc/console/`);
    expect(page.headers.get('content-security-policy')).not.toContain('sandbox');
  });

  it('pages through keys and folders, and shows delete markers only when asked', async () => {
    await session.call('POST', 'buckets', { body: { name: 'many' } });
    for (let index = 0; index < 25; index += 1) await s3.send(new PutObjectCommand({ Bucket: 'many', Key: `k${String(index).padStart(2, '0')}`, Body: 'x' }));
    await s3.send(new PutObjectCommand({ Bucket: 'many', Key: 'sub/inner', Body: 'x' }));
    const seen: string[] = [];
    let after: string | undefined;
    for (let page = 0; page < 10; page += 1) {
      const answer = await session.call('GET', `buckets/many/objects?limit=10${after ? `&after=${encodeURIComponent(after)}` : ''}`);
      seen.push(...answer.body.objects.map((object: { key: string }) => object.key), ...answer.body.folders);
      after = answer.body.next;
      if (!after) break;
    }
    expect(seen).toHaveLength(26);
    expect(seen).toContain('sub/');
    await session.call('PUT', 'buckets/many/versioning', { body: { status: 'enabled' } });
    const removed = await session.call('POST', 'buckets/many/delete', { body: { objects: [{ key: 'k00' }] } });
    expect(removed.body.results[0].deleteMarker).toBe(true);
    const hidden = await session.call('GET', 'buckets/many/objects?limit=1');
    expect(hidden.body.objects[0].key).toBe('k01');
    const shown = await session.call('GET', 'buckets/many/objects?limit=1&deleted=true');
    expect(shown.body.objects[0]).toMatchObject({ key: 'k00', deleteMarker: true });
    await s3.send(new PutObjectCommand({ Bucket: 'many', Key: 'zz/gone', Body: 'x' }));
    await session.call('POST', 'buckets/many/delete', { body: { objects: [{ key: 'zz/gone' }] } });
    expect((await session.call('GET', 'buckets/many/objects')).body.folders).toEqual(['sub/']);
    expect((await session.call('GET', 'buckets/many/objects?deleted=true')).body.folders).toEqual(['sub/', 'zz/']);
    const versions = await session.call('GET', 'buckets/many/object?key=k00');
    expect(versions.body.versions.map((version: { deleteMarker: boolean }) => version.deleteMarker)).toEqual([true, false]);
  });

  it('streams a large part into the object layer without holding it in memory', async () => {
    const partBytes = 512 * 1024 * 1024;
    await session.call('POST', 'buckets', { body: { name: 'large' } });
    const start = await session.call('POST', 'buckets/large/uploads', { body: { key: 'large.bin' } });
    const id = start.body.uploadId as string;
    const residentBytes = async () => Number(/VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${running.server.child.pid}/status`, 'utf8'))![1]) * 1024;
    const before = await residentBytes();
    let peak = before;
    const sampler = setInterval(() => void residentBytes().then((bytes) => (peak = Math.max(peak, bytes)), () => undefined), 50);
    const chunk = randomBytes(1024 * 1024);
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const url = new URL(`${running.consoleUrl}/svc/console/api/buckets/large/uploads/${id}/parts/1?key=large.bin`);
      const request = httpRequest(url, { method: 'PUT', headers: { cookie: session.cookie, 'x-csrf-token': session.csrfToken, 'content-type': 'application/octet-stream', 'content-length': String(partBytes) } }, (response) => {
        let text = '';
        response.on('data', (data: Buffer) => (text += data.toString()));
        response.on('end', () => resolve({ status: response.statusCode!, text }));
      });
      request.on('error', reject);
      let sent = 0;
      const pump = () => {
        while (sent < partBytes) {
          sent += chunk.length;
          if (!request.write(chunk)) return void request.once('drain', pump);
        }
        request.end();
      };
      pump();
    });
    clearInterval(sampler);
    expect(answer.status, answer.text).toBe(200);
    expect(peak - before, `resident memory grew by ${Math.round((peak - before) / 1024 / 1024)} MiB during a 512 MiB part`).toBeLessThan(partBytes / 2);
    await session.call('DELETE', `buckets/large/uploads/${id}?key=large.bin`);
    await session.call('DELETE', 'buckets/large');
  }, 120_000);

  it('cancels a multipart upload: the upload and its parts are gone', async () => {
    const start = await session.call('POST', 'buckets/work/uploads', { body: { key: 'canceled.bin' } });
    const id = start.body.uploadId as string;
    expect((await session.call('PUT', `buckets/work/uploads/${id}/parts/1?key=canceled.bin`, { raw: randomBytes(1024) })).status).toBe(200);
    expect((await session.call('DELETE', `buckets/work/uploads/${id}?key=canceled.bin`)).status).toBe(200);
    expect((await s3.send(new ListMultipartUploadsCommand({ Bucket: 'work' }))).Uploads ?? []).toEqual([]);
    expect((await session.call('POST', `buckets/work/uploads/${id}/complete`, { body: { key: 'canceled.bin', parts: [{ partNumber: 1, etag: 'x' }] } })).body.Code).toBe('NoSuchUpload');
  });

  it('runs admin calls through the admin routes: a heal starts and reports by its client token', async () => {
    const started = await session.call('POST', 'admin/v3/heal/work', { body: { recursive: true, scanMode: 'deep' } });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const token = started.body.clientToken as string;
    let status = started.body;
    for (let attempt = 0; attempt < 100 && status.status === 'running'; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await session.call('POST', `admin/v3/heal/?clientToken=${token}`)).body;
    }
    expect(status.status).toBe('finished');
    expect(status.counts.objectsScanned).toBeGreaterThan(0);
    const overview = await session.call('GET', 'overview');
    expect(overview.body.pools[0].sets[0].drives).toHaveLength(4);
    expect(typeof overview.body.deploymentId).toBe('string');
  });

  it('shows an object\'s placement, a failure what-if, and the layout planner\'s answer or rejection with its rule', async () => {
    const placement = await session.call('GET', 'admin/v4/object/placement?bucket=kept&key=k');
    expect(placement.status, JSON.stringify(placement.body)).toBe(200);
    expect(placement.body.geometry).toMatchObject({ setDriveCount: 4, dataShards: 2, parityShards: 2 });
    const drives = (placement.body.shards as { drive: { endpoint: string } }[]).map((shard) => shard.drive.endpoint);
    const twoFailed = await session.call('POST', 'admin/v4/simulate/failure', { body: { drives: drives.slice(0, 2) } });
    // STANDARD (EC 2+2) still reads with two of four drives failed; REDUCED_REDUNDANCY (EC 3+1) does not.
    const classes = twoFailed.body.sets[0].classes as { storageClass: string; readable: boolean; writable: boolean; deletable: boolean }[];
    expect(classes.map((entry) => [entry.storageClass, entry.readable, entry.writable, entry.deletable])).toEqual([
      ['STANDARD', true, false, false],
      ['REDUCED_REDUNDANCY', false, false, false],
    ]);
    const accepted = await session.call('POST', 'plan', { body: { patterns: ['http://h{1...2}:9000/d{1...4}'], driveSize: '1TiB' } });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    expect(accepted.body).toMatchObject({ accepted: true, pools: [{ drives: 8, hosts: 2, setCount: 1, setDriveCount: 8 }], rawBytes: 8 * 2 ** 40 });
    const rejected = await session.call('POST', 'plan', { body: { patterns: ['/d{1...17}'] } });
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ accepted: false, rejection: { code: 'InvalidLayout', rule: 'no-valid-set-width' } });
  });
});

describe('operations on a deployment of two pools', () => {
  it('starts a decommission and a rebalance through the admin routes, and refuses what conflicts with the admin error', async () => {
    const pools = await startConsoleServer([join(root, 'p0-{1...2}'), join(root, 'p1-{1...2}')], { SVC_DRIVE_BACKEND: 'memfs' });
    try {
      const poolsSession = await signIn(pools.consoleUrl);
      const rebalance = await poolsSession.call('POST', 'admin/v3/rebalance/start');
      expect(rebalance.status, JSON.stringify(rebalance.body)).toBe(200);
      expect(rebalance.body.id).toMatch(/^[0-9a-f-]{36}$/);
      const blocked = await poolsSession.call('POST', 'admin/v3/pools/decommission?pool=1&by-id=true');
      if (blocked.status !== 200) expect(blocked.body.Code).toBe('RebalanceInProgress');
      let status = (await poolsSession.call('GET', 'admin/v3/rebalance/status')).body;
      for (let attempt = 0; attempt < 100 && status.pools.some((pool: { status: string }) => pool.status === 'active'); attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        status = (await poolsSession.call('GET', 'admin/v3/rebalance/status')).body;
      }
      const started = blocked.status === 200 ? blocked : await poolsSession.call('POST', 'admin/v3/pools/decommission?pool=1&by-id=true');
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      expect(started.body.entries[0]).toMatchObject({ pool: 1 });
      const again = await poolsSession.call('POST', 'admin/v3/pools/decommission?pool=1&by-id=true');
      expect(['DecommissionInProgress', 'DecommissionAlreadyCompleted']).toContain(again.body.Code);
      const overview = await poolsSession.call('GET', 'overview');
      expect(overview.body.operations.decommission.map((entry: { pool: number }) => entry.pool)).toEqual([1]);
      expect(overview.body.pools).toHaveLength(2);
    } finally {
      await pools.server.kill();
    }
  });
});

describe('a cluster of two nodes', () => {
  it('accepts a session signed in on one node on the other, both see the same deployment, and a disabled user is refused on both', async () => {
    const cluster = await startProcessCluster({ nodes: 2, drivesPerNode: 2, env: { SVC_CONSOLE_ENABLE: 'true', SVC_DRIVE_BACKEND: 'memfs' } });
    try {
      const consoles = await Promise.all(cluster.nodes.map((node) => consoleUrlOf(node!.logs)));
      const first = await signIn(consoles[0]!);
      const onSecond = (method: string, path: string, body?: unknown) => consoleCall(consoles[1]!, method, path, { cookie: first.cookie, csrfToken: first.csrfToken, ...(body !== undefined ? { body } : {}) });
      expect((await onSecond('POST', 'buckets', { name: 'shared' })).status).toBe(200);
      expect((await first.call('GET', 'buckets')).body.buckets.map((bucket: { name: string }) => bucket.name)).toEqual(['shared']);
      const overview = await onSecond('GET', 'overview');
      expect(overview.body.nodes.map((node: { state: string }) => node.state)).toEqual(['online', 'online']);
      expect(overview.body.deploymentId).toBe((await first.call('GET', 'overview')).body.deploymentId);
      // A user added and disabled through the first node's console loses its session on the second at once.
      expect((await first.call('POST', 'users', { body: { accessKey: 'roamer', secretKey: 'roamer-secret', policies: ['readonly'] } })).status).toBe(200);
      const roamer = await signIn(consoles[1]!, { accessKey: 'roamer', secretKey: 'roamer-secret' });
      expect((await consoleCall(consoles[0]!, 'GET', 'buckets', { cookie: roamer.cookie })).status).toBe(200);
      expect((await first.call('PUT', 'users/roamer/enabled', { body: { enabled: false } })).status).toBe(200);
      for (const url of consoles) expect((await consoleCall(url, 'GET', 'buckets', { cookie: roamer.cookie })).body.Code).toBe('ConsoleSignInRequired');
    } finally {
      await cluster.destroy();
    }
  });
});

/** The console address a node logs once it listens (just after it turns ready). */
async function consoleUrlOf(logs: () => string): Promise<string> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const line = logs().split('\n').find((candidate) => candidate.includes('"listening"'));
    if (line) {
      const address = (JSON.parse(line) as { console: { host: string; port: number } }).console;
      return `http://${address.host}:${address.port}`;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the node did not log its console address:\n${logs()}`);
}
