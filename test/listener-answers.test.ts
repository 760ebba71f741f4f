/**
 * What each listener answers before a route sees the request, in its own API's error shape:
 * a path whose percent-escapes are not UTF-8 (InvalidURI: S3 XML, admin JSON, console JSON, never
 * fastify's default), and on the console listener the same header, whole-request and body idle
 * timeouts as on the S3 listener, with raw sockets. Nothing a refused request sent is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, HeadObjectCommand, ListObjectsV2Command, ListPartsCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFor } from './helpers/server-process.js';
import { signIn, startConsoleServer, type ConsoleServer, type ConsoleSession } from './helpers/console-client.js';
import { socketExchange, type Exchange, type ExchangePiece } from './helpers/raw-s3.js';
import { limits } from '../src/util/limits.js';

const bodyIdleTimeoutMs = 1_500;
const headersTimeoutMs = 2_000;
const MiB = 1024 * 1024;

let root: string;
let running: ConsoleServer;
let s3: S3Client;
let session: ConsoleSession;
let s3Url: URL;
let consoleUrl: URL;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-listener-answers-'));
  running = await startConsoleServer([join(root, 'd{1...4}')], { SVC_API_BODY_IDLE_TIMEOUT: `${bodyIdleTimeoutMs}ms`, SVC_API_HEADERS_TIMEOUT: `${headersTimeoutMs}ms`, SVC_API_REQUEST_TIMEOUT: '60s' });
  s3 = s3ClientFor(running.server.url);
  s3Url = new URL(running.server.url);
  consoleUrl = new URL(running.consoleUrl);
  await s3.send(new CreateBucketCommand({ Bucket: 'work' }));
  session = await signIn(running.consoleUrl);
}, 60_000);
afterAll(async () => {
  await running?.server.stop();
  await rm(root, { recursive: true, force: true });
});

function head(method: string, path: string, host: URL, headers: Record<string, string> = {}): string {
  return `${method} ${path} HTTP/1.1\r\nhost: ${host.host}\r\n${Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`;
}

/** The answer's JSON body (console and admin errors). */
function jsonOf(result: Exchange): Record<string, string> {
  return JSON.parse(result.text.slice(result.text.indexOf('\r\n\r\n') + 4)) as Record<string, string>;
}

function headerOf(result: Exchange, name: string): string | undefined {
  return new RegExp(`\\r\\n${name}: ([^\\r]*)\\r\\n`, 'i').exec(result.text)?.[1];
}

async function expectNothingStoredIn(bucket: string): Promise<void> {
  expect((await s3.send(new ListObjectsV2Command({ Bucket: bucket }))).KeyCount).toBe(0);
}

describe('a path whose percent-escapes are not UTF-8', () => {
  it('is InvalidURI in S3 XML with x-amz-request-id on the S3 API, and a PUT so addressed stores nothing', async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const body = method === 'PUT' ? 'sneaked in' : '';
      const result = await socketExchange(s3Url, head(method, '/work/%FF%FE', s3Url, { 'content-length': String(body.length) }), [body]);
      expect(result.status, result.text).toBe(400);
      expect(result.text).toContain('<Code>InvalidURI</Code>');
      expect(result.text).toContain('<Resource>/work/%FF%FE</Resource>');
      expect(headerOf(result, 'content-type')).toBe('application/xml');
      expect(headerOf(result, 'x-amz-request-id')).toMatch(/^[0-9A-F]{16}$/);
      expect(result.text).not.toContain('FST_ERR');
    }
    await expectNothingStoredIn('work');
  });

  it('is InvalidURI in the admin JSON shape under the admin prefix', async () => {
    const result = await socketExchange(s3Url, head('GET', '/svc/admin/v3/%C0%AF', s3Url));
    expect(result.status, result.text).toBe(400);
    expect(jsonOf(result)).toMatchObject({ Code: 'InvalidURI', Resource: '/svc/admin/v3/%C0%AF', RequestId: headerOf(result, 'x-amz-request-id') });
  });

  it('is InvalidURI in the console JSON shape on the console listener, with its usual headers', async () => {
    for (const path of ['/svc/console/api/buckets/%FF/objects', '/%FE']) {
      const result = await socketExchange(consoleUrl, head('GET', path, consoleUrl, { cookie: session.cookie }));
      expect(result.status, result.text).toBe(400);
      expect(jsonOf(result)).toMatchObject({ Code: 'InvalidURI', Resource: path, RequestId: expect.stringMatching(/^[0-9A-F]+$/) });
      expect(headerOf(result, 'x-content-type-options')).toBe('nosniff');
      expect(headerOf(result, 'content-security-policy')).toContain("default-src 'none'");
    }
  });
});

describe('the console listener\'s timeouts', () => {
  const upload = (path: string, sizeBytes: number, signedIn = true): string =>
    head('PUT', `/svc/console/api/${path}`, consoleUrl, { ...(signedIn ? { cookie: session.cookie, 'x-csrf-token': session.csrfToken } : {}), 'content-type': 'application/octet-stream', 'content-length': String(sizeBytes) });
  const expectConsoleError = (result: Exchange, status: number, code: string): void => {
    expect(result.status, result.text).toBe(status);
    expect(jsonOf(result).Code).toBe(code);
    expect(result.closed, result.text).toBe(true);
  };

  it('headers that trickle in are cut off within the header timeout, answered as a console error', async () => {
    const drips: ExchangePiece[] = Array.from({ length: 20 }, (_, index) => [`x-drip-${index}: 1\r\n`, { pauseMs: 400 }]).flat();
    const result = await socketExchange(consoleUrl, `GET /svc/console/api/session HTTP/1.1\r\nhost: ${consoleUrl.host}\r\n`, drips, 10_000);
    expectConsoleError(result, 400, 'RequestTimeout');
    expect(result.elapsedMs).toBeLessThan(headersTimeoutMs * 1.25 + 1_000);
  });

  it('an upload whose body stalls is answered RequestTimeout and closed within the body idle timeout; nothing is stored', async () => {
    const result = await socketExchange(consoleUrl, upload('buckets/work/objects?key=stalled', MiB), [Buffer.alloc(MiB / 2, 7), { pauseMs: 60_000 }], 10_000);
    expectConsoleError(result, 400, 'RequestTimeout');
    expect(result.elapsedMs).toBeGreaterThanOrEqual(bodyIdleTimeoutMs - 100);
    expect(result.elapsedMs).toBeLessThan(bodyIdleTimeoutMs + 2_000);
    await expect(s3.send(new HeadObjectCommand({ Bucket: 'work', Key: 'stalled' }))).rejects.toMatchObject({ name: 'NotFound' });
    await expectNothingStoredIn('work');
  });

  it('a part whose body stalls is cut off the same way, and the upload holds no part', async () => {
    const { uploadId } = (await session.call('POST', 'buckets/work/uploads', { body: { key: 'parted' } })).body as { uploadId: string };
    const result = await socketExchange(consoleUrl, upload(`buckets/work/uploads/${uploadId}/parts/1?key=parted`, MiB), [Buffer.alloc(1000, 1), { pauseMs: 60_000 }], 10_000);
    expectConsoleError(result, 400, 'RequestTimeout');
    expect(result.elapsedMs).toBeLessThan(bodyIdleTimeoutMs + 2_000);
    expect((await s3.send(new ListPartsCommand({ Bucket: 'work', Key: 'parted', UploadId: uploadId }))).Parts ?? []).toEqual([]);
    expect((await session.call('DELETE', `buckets/work/uploads/${uploadId}?key=parted`)).status).toBe(200);
  });

  it('a JSON body that stalls is answered RequestTimeout within the body idle timeout', async () => {
    const result = await socketExchange(consoleUrl, head('POST', '/svc/console/api/session', consoleUrl, { 'content-type': 'application/json', 'content-length': '100' }), ['{"accessKey":', { pauseMs: 60_000 }], 10_000);
    expectConsoleError(result, 400, 'RequestTimeout');
    expect(result.elapsedMs).toBeLessThan(bodyIdleTimeoutMs + 2_000);
  });

  it('a refused upload whose body trickles in under the idle timeout is answered and closed once the bounded drain ends', async () => {
    const drips: ExchangePiece[] = Array.from({ length: 60 }, () => ['x', { pauseMs: bodyIdleTimeoutMs / 3 }]).flat();
    const result = await socketExchange(consoleUrl, upload('buckets/work/objects?key=sneaky', 1_000, false), drips, 25_000);
    expectConsoleError(result, 401, 'ConsoleSignInRequired');
    expect(result.elapsedMs).toBeLessThan(limits.errorBodyDrainMs + limits.closeLingerMs + 3_000);
    await expectNothingStoredIn('work');
  });
});
