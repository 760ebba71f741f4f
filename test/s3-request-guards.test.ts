/**
 * Protocol-level input handling against a real server, with requests as a raw socket sends them:
 * headers outside the signature are refused, oversized and hostile XML bodies get a 400 and the
 * exchange ends promptly, and a client that stalls is cut off within the configured timeouts.
 * After every refusal, what is stored reads back unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { CreateBucketCommand, CreateMultipartUploadCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Sha256 } from '@aws-crypto/sha256-js';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { socketExchange, type Exchange, type ExchangePiece } from './helpers/raw-s3.js';

const bodyIdleTimeoutMs = 1_500;
const headersTimeoutMs = 2_000;
const requestTimeoutMs = 5_000;
const MiB = 1024 * 1024;
const unsignedPayload = { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' };

let root: string;
let server: SvcProcess;
let s3: S3Client;
let url: URL;
const signer = new SignatureV4({ service: 's3', region: 'us-east-1', credentials: testCredentials, sha256: Sha256, uriEscapePath: false });

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-guards-'));
  server = await startSvc({
    args: [join(root, 'd{1...4}')],
    env: { SVC_API_BODY_IDLE_TIMEOUT: `${bodyIdleTimeoutMs}ms`, SVC_API_HEADERS_TIMEOUT: `${headersTimeoutMs}ms`, SVC_API_REQUEST_TIMEOUT: `${requestTimeoutMs}ms` },
  });
  s3 = s3ClientFor(server.url);
  url = new URL(server.url);
  await s3.send(new CreateBucketCommand({ Bucket: 'target' }));
  await s3.send(new CreateBucketCommand({ Bucket: 'secret' }));
  await s3.send(new PutObjectCommand({ Bucket: 'secret', Key: 'payroll', Body: 'confidential figures' }));
  await s3.send(new PutObjectCommand({ Bucket: 'target', Key: 'kept', Body: 'original bytes', Metadata: { owner: 'alice' }, ContentType: 'text/plain' }));
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

/** Sends a request head and body pieces on a fresh connection (helpers/raw-s3.ts). */
const exchange = (head: string, body: ExchangePiece[] = [], boundMs = 15_000): Promise<Exchange> => socketExchange(url, head, body, boundMs);

type Headers = Record<string, string>;

/** A request head signed with the Authorization header over `headers` (plus host and x-amz-date), then `unsigned` added. */
async function signedHead(method: string, path: string, query: Record<string, string>, headers: Headers, unsigned: Headers = {}): Promise<string> {
  const signed = await signer.sign({ method, protocol: 'http:', hostname: url.hostname, port: Number(url.port), path, query, headers: { host: url.host, ...headers } });
  return headText(method, path, query, { ...(signed.headers as Headers), ...unsigned });
}

function headText(method: string, path: string, query: Record<string, string>, headers: Headers): string {
  const search = new URLSearchParams(query).toString().replace(/\+/g, '%20');
  return `${method} ${path}${search ? `?${search}` : ''} HTTP/1.1\r\n${Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`;
}

async function expectStoredUnchanged(): Promise<void> {
  const kept = await s3.send(new GetObjectCommand({ Bucket: 'target', Key: 'kept' }));
  expect(await kept.Body!.transformToString()).toBe('original bytes');
  expect(kept.Metadata).toEqual({ owner: 'alice' });
  expect(kept.ContentType).toBe('text/plain');
  expect(kept.StorageClass ?? 'STANDARD').toBe('STANDARD');
  const secret = await s3.send(new GetObjectCommand({ Bucket: 'secret', Key: 'payroll' }));
  expect(await secret.Body!.transformToString()).toBe('confidential figures');
}

function expectError(result: Exchange, status: number, code: string): void {
  expect(result.status, result.text).toBe(status);
  expect(result.text).toContain(`<Code>${code}</Code>`);
}

describe('headers outside the signature', () => {
  it('a presigned PUT URL sent with an unsigned x-amz-copy-source is refused, and the target keeps its bytes', async () => {
    const presigned = await signer.presign({ method: 'PUT', protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: '/target/kept', query: {}, headers: { host: url.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } }, { expiresIn: 300 });
    const query = presigned.query as Headers;
    const body = 'replacement';
    const result = await exchange(headText('PUT', '/target/kept', query, { host: url.host, 'content-length': String(body.length), 'x-amz-copy-source': '/secret/payroll' }), [body]);
    expectError(result, 403, 'AccessDenied');
    expect(result.text).toContain('There were headers present in the request which were not signed');
    expect(result.text).toContain('<HeadersNotSigned>x-amz-copy-source</HeadersNotSigned>');
    await expectStoredUnchanged();
    // A presigned URL used as signed is honoured: the refusal was the header's.
    const fresh = await signer.presign({ method: 'PUT', protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: '/target/fresh', query: {}, headers: { host: url.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } }, { expiresIn: 300 });
    const plain = await exchange(headText('PUT', '/target/fresh', fresh.query as Headers, { host: url.host, 'content-length': String(body.length) }), [body]);
    expect(plain.status, plain.text).toBe(200);
    expect(await (await s3.send(new GetObjectCommand({ Bucket: 'target', Key: 'fresh' }))).Body!.transformToString()).toBe(body);
  });

  it('header-signed requests with x-amz-* headers left out of SignedHeaders are refused', async () => {
    const body = 'replacement';
    const base = { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', 'content-length': String(body.length) };
    for (const [name, value] of [['x-amz-copy-source', '/secret/payroll'], ['x-amz-meta-owner', 'mallory'], ['x-amz-storage-class', 'REDUCED_REDUNDANCY'], ['x-amz-tagging', 'a=b'], ['x-amz-acl', 'public-read']] as const) {
      const result = await exchange(await signedHead('PUT', '/target/kept', {}, base, { [name]: value }), [body]);
      expectError(result, 403, 'AccessDenied');
      expect(result.text).toContain(`<HeadersNotSigned>${name}</HeadersNotSigned>`);
    }
    // Signed, the same headers are accepted (the check is about coverage, not the headers).
    const accepted = await exchange(await signedHead('PUT', '/target/signed-meta', {}, { ...base, 'x-amz-meta-owner': 'bob' }), [body]);
    expect(accepted.status, accepted.text).toBe(200);
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'target', Key: 'signed-meta' }))).Metadata).toEqual({ owner: 'bob' });
    await expectStoredUnchanged();
  });

  it('signed content-md5 and content-type cannot be altered after signing', async () => {
    const body = 'replacement';
    const base = { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', 'content-length': String(body.length), 'content-type': 'text/plain', 'content-md5': createHash('md5').update(body).digest('base64') };
    for (const [name, value] of [['content-type', 'text/html'], ['content-md5', 'AAAAAAAAAAAAAAAAAAAAAA==']] as const) {
      const head = (await signedHead('PUT', '/target/kept', {}, base)).replace(new RegExp(`\\r\\n${name}: [^\\r]*`), `\r\n${name}: ${value}`);
      expectError(await exchange(head, [body]), 403, 'SignatureDoesNotMatch');
    }
    await expectStoredUnchanged();
  });

  it('aws-chunked uploads: unsigned x-amz-* headers are refused, the signed upload is stored', async () => {
    const payload = 'streamed body';
    const chunked = `${payload.length.toString(16)}\r\n${payload}\r\n0\r\n\r\n`;
    const headers = {
      'x-amz-content-sha256': 'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
      'content-encoding': 'aws-chunked',
      'x-amz-decoded-content-length': String(payload.length),
      'content-length': String(chunked.length),
    };
    for (const extra of [{ 'x-amz-meta-owner': 'mallory' }, { 'x-amz-copy-source': '/secret/payroll' }] as Headers[]) {
      expectError(await exchange(await signedHead('PUT', '/target/kept', {}, headers, extra), [chunked]), 403, 'AccessDenied');
    }
    const stored = await exchange(await signedHead('PUT', '/target/streamed', {}, headers), [chunked]);
    expect(stored.status, stored.text).toBe(200);
    expect(await (await s3.send(new GetObjectCommand({ Bucket: 'target', Key: 'streamed' }))).Body!.transformToString()).toBe(payload);
    // The AWS SDK streams a body of this kind with a checksum trailer, signing every x-amz-* header it sends.
    await s3.send(new PutObjectCommand({ Bucket: 'target', Key: 'sdk-streamed', Body: Readable.from([Buffer.from('sdk '), Buffer.from('stream')]), ContentLength: 10, Metadata: { via: 'sdk' } }));
    const sdkStreamed = await s3.send(new GetObjectCommand({ Bucket: 'target', Key: 'sdk-streamed' }));
    expect([await sdkStreamed.Body!.transformToString(), sdkStreamed.Metadata]).toEqual(['sdk stream', { via: 'sdk' }]);
    await expectStoredUnchanged();
  });
});

describe('one authentication mechanism per request', () => {
  it('a presigned PUT or GET sent with an Authorization header as well is refused InvalidArgument, and stores nothing', async () => {
    const putUrl = await getSignedUrl(s3, new PutObjectCommand({ Bucket: 'target', Key: 'both-ways' }), { expiresIn: 300 });
    const getUrl = await getSignedUrl(s3, new GetObjectCommand({ Bucket: 'target', Key: 'kept' }), { expiresIn: 300 });
    // A header signature that would pass on its own, and one that is plainly not a signature.
    const headerSigned = await signer.sign({ method: 'PUT', protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: '/target/both-ways', query: {}, headers: { host: url.host, ...unsignedPayload } });
    for (const authorization of [String((headerSigned.headers as Headers).authorization), 'Bearer token']) {
      const put = await fetch(putUrl, { method: 'PUT', body: 'sneaked in', headers: { authorization } });
      const putText = await put.text();
      expect(put.status, putText).toBe(400);
      expect(putText).toContain('<Code>InvalidArgument</Code>');
      expect(put.headers.get('x-amz-request-id')).toMatch(/^[0-9A-F]+$/);
      await expect(s3.send(new HeadObjectCommand({ Bucket: 'target', Key: 'both-ways' }))).rejects.toMatchObject({ name: 'NotFound' });
      const get = await fetch(getUrl, { headers: { authorization } });
      const getText = await get.text();
      expect(get.status, getText).toBe(400);
      expect(getText).toContain('<Code>InvalidArgument</Code>');
      expect(getText).not.toContain('original bytes');
    }
    await expectStoredUnchanged();
    // Each URL alone is honoured: the refusal was the pair's.
    expect((await fetch(getUrl)).status).toBe(200);
  });
});

describe('XML bodies', () => {
  async function uploadId(): Promise<string> {
    return (await s3.send(new CreateMultipartUploadCommand({ Bucket: 'target', Key: 'kept' }))).UploadId!;
  }

  it('bodies over the limit are answered MaxMessageLengthExceeded at once, for DeleteObjects, CompleteMultipartUpload and PutBucketVersioning', async () => {
    const requests: Array<[string, string, Record<string, string>, string, number]> = [
      ['POST', '/target', { delete: '' }, '<Delete>', 3 * MiB],
      ['POST', '/target/kept', { uploadId: await uploadId() }, '<CompleteMultipartUpload>', 3 * MiB],
      ['PUT', '/target', { versioning: '' }, '<VersioningConfiguration>', 128 * 1024],
    ];
    for (const [method, path, query, opening, sizeBytes] of requests) {
      const body = Buffer.alloc(sizeBytes, ' ');
      body.write(opening);
      const result = await exchange(await signedHead(method, path, query, { ...unsignedPayload, 'content-length': String(sizeBytes) }), [body], 5_000);
      expectError(result, 400, 'MaxMessageLengthExceeded');
      expect(result.elapsedMs).toBeLessThan(4_000);
    }
    await expectStoredUnchanged();
  });

  it('a body far over the limit gets its answer and the connection closes, without reading it all or resetting it under the answer', async () => {
    const declaredBytes = 512 * MiB;
    const piece = Buffer.alloc(MiB, ' ');
    const pieces = [Buffer.from('<Delete>'), ...Array.from({ length: 64 }, () => piece)];
    const result = await exchange(await signedHead('POST', '/target', { delete: '' }, { ...unsignedPayload, 'content-length': String(declaredBytes) }), pieces, 10_000);
    expectError(result, 400, 'MaxMessageLengthExceeded');
    expect(result.closed).toBe(true);
    // The client went on writing after the answer: the server half-closed and dropped those bytes
    // instead of closing under them (a reset, which can take the answer with it).
    expect(result.reset).toBe(false);
    expect(result.elapsedMs).toBeLessThan(8_000);
    await expectStoredUnchanged();
  });

  it('XML nested 50,000 deep, or not well-formed, is MalformedXML', async () => {
    const deep = `<Delete>${'<Object>'.repeat(50_000)}${'</Object>'.repeat(50_000)}</Delete>`;
    const completion = `<CompleteMultipartUpload>${'<Part>'.repeat(50_000)}${'</Part>'.repeat(50_000)}</CompleteMultipartUpload>`;
    const unclosed = `<Delete>${'<Object><Key>'.repeat(1000)}`;
    const requests: Array<[string, Record<string, string>, string]> = [
      ['/target', { delete: '' }, deep],
      ['/target/kept', { uploadId: await uploadId() }, completion],
      ['/target', { delete: '' }, unclosed],
      ['/target', { delete: '' }, '<Delete><Object><Key>a</Key></Objec></Delete>'],
    ];
    for (const [path, query, body] of requests) {
      const result = await exchange(await signedHead('POST', path, query, { ...unsignedPayload, 'content-length': String(Buffer.byteLength(body)) }), [body]);
      expectError(result, 400, 'MalformedXML');
    }
    await expectStoredUnchanged();
  });
});

describe('timeouts', () => {
  it('a body that stalls half way is answered RequestTimeout and closed within the idle timeout; nothing is stored', async () => {
    const head = await signedHead('PUT', '/target/stalled', {}, { ...unsignedPayload, 'content-length': String(MiB) });
    const result = await exchange(head, [Buffer.alloc(MiB / 2, 7), { pauseMs: 60_000 }], 10_000);
    expectError(result, 400, 'RequestTimeout');
    expect(result.closed).toBe(true);
    expect(result.elapsedMs).toBeGreaterThanOrEqual(bodyIdleTimeoutMs - 100);
    expect(result.elapsedMs).toBeLessThan(bodyIdleTimeoutMs + 2_000);
    await expect(s3.send(new HeadObjectCommand({ Bucket: 'target', Key: 'stalled' }))).rejects.toMatchObject({ name: 'NotFound' });
    // The same stall over a signed overwrite leaves the old object as it was.
    const overwrite = await signedHead('PUT', '/target/kept', {}, { ...unsignedPayload, 'content-length': String(MiB) });
    expectError(await exchange(overwrite, [Buffer.alloc(1000, 1), { pauseMs: 60_000 }], 10_000), 400, 'RequestTimeout');
    await expectStoredUnchanged();
  });

  it('headers that never end are cut off within the header timeout', async () => {
    const result = await exchange(`PUT /target/slow HTTP/1.1\r\nhost: ${url.host}\r\n`, [{ pauseMs: 60_000 }], 10_000);
    expectError(result, 400, 'RequestTimeout');
    expect(result.closed, result.text).toBe(true);
    expect(result.elapsedMs).toBeLessThan(headersTimeoutMs * 1.25 + 1_000);
  });

  it('a body that trickles in under the idle timeout is cut off by the whole-request timeout', async () => {
    const head = await signedHead('PUT', '/target/trickle', {}, { ...unsignedPayload, 'content-length': '100' });
    const drips = Array.from({ length: 40 }, () => [Buffer.from('x'), { pauseMs: bodyIdleTimeoutMs / 3 }]).flat();
    const result = await exchange(head, drips, 12_000);
    expectError(result, 400, 'RequestTimeout');
    expect(result.closed, result.text).toBe(true);
    expect(result.elapsedMs).toBeLessThan(requestTimeoutMs * 1.25 + 1_000);
    await expect(s3.send(new HeadObjectCommand({ Bucket: 'target', Key: 'trickle' }))).rejects.toMatchObject({ name: 'NotFound' });
  });
});
