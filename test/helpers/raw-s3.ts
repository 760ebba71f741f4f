/**
 * Signed S3 requests over node:http, for the cases an SDK will not send (odd headers, a missing
 * Content-Length, a Date header instead of X-Amz-Date, presigned URLs with any expiry).
 */
import { createHash, createHmac } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from '@aws-crypto/sha256-js';
import { testCredentials } from './server-process.js';

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface RawRequest {
  method: string;
  /** Path as sent on the wire (already encoded). */
  path: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Leave the body unsigned (UNSIGNED-PAYLOAD) instead of hashing it. */
  unsignedPayload?: boolean;
}

const signer = new SignatureV4({ service: 's3', region: 'us-east-1', credentials: testCredentials, sha256: Sha256, uriEscapePath: false });

export function queryString(query: Record<string, string | string[] | null | undefined>): string {
  return Object.entries(query)
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(String(value ?? ''))}`)
    .join('&');
}

/** Signs with SigV4 headers and sends; headers given are signed as given. */
export async function signedRequest(baseUrl: string, request: RawRequest): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const body = request.body ?? '';
  const hash = request.unsignedPayload ? 'UNSIGNED-PAYLOAD' : createHash('sha256').update(body).digest('hex');
  const signed = await signer.sign({
    method: request.method, protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: request.path, query: request.query ?? {},
    headers: { host: url.host, 'x-amz-content-sha256': hash, ...(request.headers ?? {}) }, body,
  });
  const query = request.query && Object.keys(request.query).length > 0 ? `?${queryString(request.query)}` : '';
  return send(baseUrl, request.method, `${request.path}${query}`, signed.headers as Record<string, string>, body);
}

/** A presigned URL for `path` valid `expiresSeconds` from now (any value, even one S3 refuses). */
export async function presignedUrl(baseUrl: string, method: string, path: string, expiresSeconds: number): Promise<string> {
  const url = new URL(baseUrl);
  const presigned = await signer.presign(
    { method, protocol: 'http:', hostname: url.hostname, port: Number(url.port), path, headers: { host: url.host }, query: {} },
    { expiresIn: 60 },
  );
  const query = { ...(presigned.query ?? {}) } as Record<string, string>;
  // Signed by hand with the requested expiry: the SDK refuses values outside S3's range.
  query['X-Amz-Expires'] = String(expiresSeconds);
  delete query['X-Amz-Signature'];
  const canonicalQuery = Object.entries(query).sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, value]) => `${encode(name)}=${encode(value)}`).join('&');
  const canonical = [method, path, canonicalQuery, `host:${url.host}\n`, 'host', 'UNSIGNED-PAYLOAD'].join('\n');
  const amzDate = query['X-Amz-Date']!;
  const signature = sign(amzDate, canonical);
  return `${baseUrl}${path}?${queryString({ ...query, 'X-Amz-Signature': signature })}`;
}

/** A header-signed request that carries its time in `Date` (RFC 7231) instead of `X-Amz-Date`. */
export async function dateSignedRequest(baseUrl: string, method: string, path: string): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const now = new Date();
  const date = now.toUTCString();
  const amzDate = now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const hash = createHash('sha256').update('').digest('hex');
  const canonical = [method, path, '', `date:${date}\nhost:${url.host}\nx-amz-content-sha256:${hash}\n`, 'date;host;x-amz-content-sha256', hash].join('\n');
  const scope = `${amzDate.slice(0, 8)}/us-east-1/s3/aws4_request`;
  const authorization = `AWS4-HMAC-SHA256 Credential=${testCredentials.accessKeyId}/${scope}, SignedHeaders=date;host;x-amz-content-sha256, Signature=${sign(amzDate, canonical)}`;
  return send(baseUrl, method, path, { host: url.host, date, 'x-amz-content-sha256': hash, authorization }, '');
}

function sign(amzDate: string, canonical: string): string {
  const day = amzDate.slice(0, 8);
  const scope = `${day}/us-east-1/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonical).digest('hex')].join('\n');
  let key: Buffer = createHmac('sha256', `AWS4${testCredentials.secretAccessKey}`).update(day).digest();
  for (const part of ['us-east-1', 's3', 'aws4_request']) key = createHmac('sha256', key).update(part).digest();
  return createHmac('sha256', key).update(toSign).digest('hex');
}

function encode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * Signs a request and writes it on a bare socket exactly as given: no Content-Length or
 * Transfer-Encoding is added. Resolves with what the server wrote before it closed.
 */
export async function signedOnSocket(baseUrl: string, method: string, path: string, extraHeaders: Record<string, string>, body: Buffer, options: { headersOnly?: boolean } = {}): Promise<string> {
  const url = new URL(baseUrl);
  const signed = await signer.sign({ method, protocol: 'http:', hostname: url.hostname, port: Number(url.port), path, query: {}, headers: { host: url.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } });
  return onSocket(baseUrl, `${method} ${path}`, { ...(signed.headers as Record<string, string>), ...extraHeaders }, body, options);
}

/**
 * Writes a request line, headers (plus `connection: close`) and body; resolves with the whole
 * answer, or with `headersOnly` as soon as the answer's headers arrived (the body may be unsent).
 */
export function onSocket(baseUrl: string, requestLine: string, headers: Record<string, string>, body: Buffer, options: { headersOnly?: boolean } = {}): Promise<string> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString();
      if (options.headersOnly && text.includes('\r\n\r\n')) {
        socket.destroy();
        resolve(text);
      }
    });
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
    const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.write(`${requestLine} HTTP/1.1\r\n${head}connection: close\r\n\r\n`);
    if (body.length > 0) socket.write(body);
  });
}

/** Sends exactly these headers (no Content-Length added unless given, when `body` is empty). */
export function send(baseUrl: string, method: string, pathAndQuery: string, headers: Record<string, string>, body: string | Buffer): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: url.hostname, port: Number(url.port), method, path: pathAndQuery, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString() }));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body.length > 0 ? body : undefined);
  });
}

export interface Exchange {
  status: number;
  text: string;
  /** The server closed the connection. */
  closed: boolean;
  /** The connection was reset (what the client wrote was refused): an answer may be lost to it. */
  reset: boolean;
  elapsedMs: number;
}

/** A piece of a request body as sent: bytes, or a pause. */
export type ExchangePiece = Buffer | string | { pauseMs: number };

/**
 * Sends a request head and body pieces on a fresh connection, as written; resolves once the
 * response is complete and (if the server closes) the socket has closed, or at `boundMs`.
 */
export function socketExchange(url: URL, head: string, body: ExchangePiece[] = [], boundMs = 15_000): Promise<Exchange> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    let received = Buffer.alloc(0);
    let finished = false;
    let reset = false;
    const finish = (closed: boolean): void => {
      if (finished) return;
      finished = true;
      clearTimeout(bound);
      socket.destroy();
      const text = received.toString('latin1');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text, closed, reset, elapsedMs: Date.now() - started });
    };
    const bound = setTimeout(() => finish(false), boundMs);
    socket.on('data', (data: Buffer) => {
      received = Buffer.concat([received, data]);
      if (responseComplete(received) && !/\r\nconnection: close\r\n/i.test(received.toString('latin1'))) finish(false);
    });
    socket.on('close', () => finish(true));
    socket.on('error', (error: NodeJS.ErrnoException) => (reset ||= error.code === 'ECONNRESET' || error.code === 'EPIPE'));
    void (async () => {
      socket.write(head);
      for (const piece of body) {
        if (finished || socket.destroyed) return;
        if (typeof piece === 'object' && 'pauseMs' in piece) await new Promise((wake) => setTimeout(wake, piece.pauseMs));
        else if (!socket.write(piece)) await new Promise((wake) => { socket.once('drain', wake); socket.once('close', wake); });
      }
    })();
  });
}

function responseComplete(bytes: Buffer): boolean {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) return false;
  const length = /\r\ncontent-length: (\d+)/i.exec(bytes.subarray(0, end).toString('latin1'));
  return bytes.length >= end + 4 + Number(length?.[1] ?? 0);
}
