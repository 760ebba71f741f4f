/**
 * The audit log of a real server process (SVC_AUDIT_FILE and a webhook on a plain node:http
 * receiver), driven by the AWS SDK, signed admin calls, unsigned fetch and the console API.
 * While the webhook refuses connections: a root bucket creation, an admin user add, a user's
 * PUT, a GET refused to a user without rights, an anonymous refused GET, a refused signature
 * carrying a token and a cookie, and console calls each appear once in the file with the right
 * principal, actions, outcome, status and the answer's x-amz-request-id. The receiver then comes
 * up and gets every entry in the file's order, with no secret in either. The console's audit route
 * shows the entries to root and refuses a user without `admin:Audit`. Entries still queued when
 * the server stops are delivered after it starts again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { freePort, s3ClientFor, testCredentials } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { signIn, startConsoleServer, type ConsoleServer } from './helpers/console-client.js';
import type { AuditEntry } from '../src/ops/audit.js';
import { waitFor } from './helpers/poll.js';

const alice = { accessKeyId: 'alice', secretAccessKey: 'alice-secret-key-7' };
const bob = { accessKeyId: 'bob', secretAccessKey: 'bob-secret-key-8' };
const webhookToken = 'webhook-bearer-token-9';
const markers = { signature: 'ab12cd34ef56deadbeef', token: 'SESSION-TOKEN-MARKER', cookie: 'COOKIE-MARKER' };

let root: string;
let running: ConsoleServer;
let env: Record<string, string>;
let webhookPort: number;

interface Receiver {
  lines: string[];
  headers: IncomingHttpHeaders[];
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const receiver = { lines: [] as string[], headers: [] as IncomingHttpHeaders[] } as Receiver;
  const server: Server = createServer(async (request, response) => {
    let body = '';
    for await (const chunk of request) body += chunk;
    receiver.headers.push(request.headers);
    receiver.lines.push(...body.split('\n').filter((line) => line !== ''));
    response.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(webhookPort, '127.0.0.1', resolve));
  receiver.close = () => new Promise((resolve) => server.close(() => resolve()));
  return receiver;
}

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 45_000): Promise<void> {
  await waitFor(what, check, { timeoutMs, intervalMs: 50 });
}

const auditFile = () => join(root, 'audit.log');
async function fileEntries(): Promise<AuditEntry[]> {
  const text = await readFile(auditFile(), 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as AuditEntry);
}

/** The request id an SDK call was answered with, whether it succeeded or failed. */
async function requestIdOf(call: Promise<{ $metadata: { requestId?: string } }>): Promise<{ requestId: string; code: string }> {
  try {
    const answer = await call;
    return { requestId: answer.$metadata.requestId!, code: 'ok' };
  } catch (error) {
    const failure = error as { name: string; $metadata: { requestId?: string } };
    return { requestId: failure.$metadata.requestId!, code: failure.name };
  }
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-audit-server-'));
  webhookPort = await freePort();
  env = {
    SVC_AUDIT_FILE: auditFile(),
    SVC_AUDIT_WEBHOOK_ENDPOINT: `http://127.0.0.1:${webhookPort}/audit`,
    SVC_AUDIT_WEBHOOK_AUTH_TOKEN: webhookToken,
    SVC_AUDIT_WEBHOOK_BATCH_SIZE: '3',
  };
  running = await startConsoleServer([join(root, 'd{1...4}')], env);
}, 120_000);
afterAll(async () => {
  await running?.server.kill();
  await rm(root, { recursive: true, force: true });
});

describe('the audit log of a server', () => {
  /** Request ids by what was done, to find each entry by. */
  const done = new Map<string, string>();
  let receiver: Receiver;

  it('records each state change and refusal once, with who, what, outcome and request id, while the webhook is down', async () => {
    const url = running.server.url;
    const rootS3 = s3ClientFor(url);
    done.set('create', (await requestIdOf(rootS3.send(new CreateBucketCommand({ Bucket: 'audited' })))).requestId);
    for (const [user, policies] of [[alice, ['readwrite']], [bob, []]] as const) {
      const added = await admin(url, 'POST', '/svc/admin/v4/iam/user/add', '', { body: JSON.stringify({ accessKey: user.accessKeyId, secretKey: user.secretAccessKey, policies }) });
      expect(added.status, JSON.stringify(added.body)).toBe(200);
      done.set(`add-${user.accessKeyId}`, added.requestId!);
    }
    const put = await requestIdOf(s3ClientFor(url, { credentials: alice }).send(new PutObjectCommand({ Bucket: 'audited', Key: 'a.txt', Body: 'hello' })));
    expect(put.code).toBe('ok');
    done.set('put', put.requestId);
    const refused = await requestIdOf(s3ClientFor(url, { credentials: bob }).send(new GetObjectCommand({ Bucket: 'audited', Key: 'a.txt' })));
    expect(refused.code).toBe('AccessDenied');
    done.set('refused', refused.requestId);
    const anonymous = await fetch(`${url}/audited/a.txt`);
    expect(anonymous.status).toBe(403);
    done.set('anonymous', anonymous.headers.get('x-amz-request-id')!);
    // A forged signature, with a session token and a cookie: refused, recorded, and none of them written.
    const forged = await fetch(`${url}/audited/forged.txt`, {
      method: 'PUT',
      body: 'x',
      headers: {
        authorization: `AWS4-HMAC-SHA256 Credential=alice/20260101/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=${markers.signature}`,
        'x-amz-date': '20260101T000000Z',
        'x-amz-content-sha256': 'UNSIGNED-PAYLOAD',
        'x-amz-security-token': markers.token,
        cookie: `svc_console_session=${markers.cookie}`,
      },
    });
    expect(forged.status).toBe(403);
    done.set('forged', forged.headers.get('x-amz-request-id')!);
    // Reads that succeed are not audited.
    await rootS3.send(new GetObjectCommand({ Bucket: 'audited', Key: 'a.txt' }));

    await until(async () => (await fileEntries()).length >= 7, 'seven entries in the file');
    const entries = await fileEntries();
    expect(entries.map((entry) => entry.requestId)).toEqual(['create', 'add-alice', 'add-bob', 'put', 'refused', 'anonymous', 'forged'].map((name) => done.get(name)));
    const byId = (name: string) => {
      const found = entries.filter((entry) => entry.requestId === done.get(name));
      expect(found, name).toHaveLength(1);
      return found[0]!;
    };
    const rootKey = testCredentials.accessKeyId;
    expect(byId('create')).toMatchObject({ version: '1', surface: 's3', api: 'CreateBucket', principal: { kind: 'root', accessKey: rootKey }, actions: ['s3:CreateBucket'], resource: 'audited', outcome: 'allowed', httpStatus: 200 });
    expect(byId('add-alice')).toMatchObject({ surface: 'admin', api: 'admin:user/add', principal: { kind: 'root', accessKey: rootKey }, actions: ['admin:CreateUser'], resource: 'accessKey=alice', outcome: 'allowed', httpStatus: 200 });
    expect(byId('put')).toMatchObject({ surface: 's3', api: 'PutObject', principal: { kind: 'user', accessKey: 'alice' }, actions: ['s3:PutObject'], resource: 'audited/a.txt', outcome: 'allowed', httpStatus: 200 });
    expect(byId('refused')).toMatchObject({ api: 'GetObject', principal: { kind: 'user', accessKey: 'bob' }, actions: ['s3:GetObject'], resource: 'audited/a.txt', outcome: 'denied', httpStatus: 403, errorCode: 'AccessDenied' });
    expect(byId('anonymous')).toMatchObject({ api: 'GetObject', principal: { kind: 'anonymous' }, actions: ['s3:GetObject'], outcome: 'denied', httpStatus: 403, errorCode: 'AccessDenied' });
    expect(byId('forged')).toMatchObject({ api: 'PutObject', principal: { kind: 'user', accessKey: 'alice' }, resource: 'audited/forged.txt', outcome: 'denied', httpStatus: 403 });
    for (const entry of entries) {
      expect(entry.node).toBe(`127.0.0.1:${running.server.port}`);
      expect(entry.sourceIp).toBe('127.0.0.1');
      expect(entry.durationMs).toBeGreaterThanOrEqual(0);
      expect(Date.parse(entry.time)).toBeGreaterThan(Date.now() - 120_000);
    }
  }, 60_000);

  it('shows the entries on the console to root, refuses them to a user without admin:Audit, and audits console calls', async () => {
    const rootSession = await signIn(running.consoleUrl);
    const added = await rootSession.call('POST', 'users', { body: { accessKey: 'carol', secretKey: 'carol-secret-key', policies: ['readonly'] } });
    expect(added.status).toBe(200);
    done.set('console-add', added.headers.get('x-amz-request-id')!);
    const denied = await rootSession.call('GET', 'audit?outcome=denied&limit=10');
    expect(denied.status, JSON.stringify(denied.body)).toBe(200);
    expect(denied.body.entries.map((entry: AuditEntry) => entry.requestId)).toEqual([done.get('forged'), done.get('anonymous'), done.get('refused')]);
    const aliceOnly = await rootSession.call('GET', 'audit?principal=alice');
    expect(aliceOnly.body.entries.map((entry: AuditEntry) => entry.requestId)).toEqual([done.get('forged'), done.get('put')]);

    const bobSession = await signIn(running.consoleUrl, { accessKey: bob.accessKeyId, secretKey: bob.secretAccessKey });
    const refused = await bobSession.call('GET', 'audit');
    expect(refused.status).toBe(403);
    expect(refused.body.Code).toBe('AccessDenied');
    expect(refused.body.entries).toBeUndefined();
    done.set('console-refused', refused.headers.get('x-amz-request-id')!);

    await until(async () => (await fileEntries()).some((entry) => entry.requestId === done.get('console-refused')), 'the console refusal in the file');
    const entries = await fileEntries();
    expect(entries.find((entry) => entry.requestId === done.get('console-add'))).toMatchObject({ surface: 'console', api: 'POST users', principal: { kind: 'root' }, actions: ['admin:CreateUser', 'admin:AttachUserOrGroupPolicy'], resource: 'users', outcome: 'allowed', httpStatus: 200 });
    expect(entries.find((entry) => entry.requestId === done.get('console-refused'))).toMatchObject({ surface: 'console', api: 'GET audit', principal: { kind: 'user', accessKey: 'bob' }, actions: ['admin:Audit'], outcome: 'denied', httpStatus: 403, errorCode: 'AccessDenied' });
  }, 60_000);

  it('delivers every entry to the webhook once it is up, in the order of the file, with no secret anywhere', async () => {
    receiver = await startReceiver();
    const expected = (await fileEntries()).map((entry) => entry.requestId);
    await until(() => receiver.lines.length >= expected.length, `${expected.length} entries at the webhook`).catch((error) => {
      throw new Error(`${String(error)}; received ${receiver.lines.length} in ${receiver.headers.length} POSTs; server log:\n${running.server.logs().slice(-3000)}`);
    });
    expect(receiver.lines.map((line) => (JSON.parse(line) as AuditEntry).requestId)).toEqual(expected);
    expect(receiver.headers.every((headers) => headers.authorization === `Bearer ${webhookToken}`)).toBe(true);
    const written = [await readFile(auditFile(), 'utf8'), receiver.lines.join('\n')];
    for (const text of written) {
      for (const secret of [alice.secretAccessKey, bob.secretAccessKey, 'carol-secret-key', testCredentials.secretAccessKey, webhookToken, ...Object.values(markers)]) expect(text).not.toContain(secret);
    }
    expect(running.server.logs()).not.toContain(webhookToken);
  }, 60_000);

  it('delivers entries still queued when the server stopped after it starts again', async () => {
    await receiver.close();
    const aliceS3 = s3ClientFor(running.server.url, { credentials: alice });
    const queuedIds = [
      (await requestIdOf(aliceS3.send(new PutObjectCommand({ Bucket: 'audited', Key: 'b.txt', Body: 'b' })))).requestId,
      (await requestIdOf(aliceS3.send(new DeleteObjectCommand({ Bucket: 'audited', Key: 'b.txt' })))).requestId,
    ];
    await until(async () => (await fileEntries()).filter((entry) => queuedIds.includes(entry.requestId)).length === 2, 'the two entries in the file');
    const queueDirectory = join(root, 'd1', '.svc.sys', 'audit-queue');
    await until(async () => (await readdir(queueDirectory)).length > 0, 'a segment in the queue directory');
    expect(await running.server.stop()).toBe(0);

    const delivered = receiver.lines.length;
    receiver = await startReceiver();
    running = await startConsoleServer([join(root, 'd{1...4}')], env);
    await until(() => receiver.lines.length >= 2, 'the queued entries after the restart');
    expect(receiver.lines.map((line) => (JSON.parse(line) as AuditEntry).requestId)).toEqual(queuedIds);
    expect(delivered).toBeGreaterThan(0);
    await receiver.close();
  }, 120_000);
});
