/**
 * One SigV4-signed (or, on request, unsigned) HTTP request to an svc endpoint with a small body:
 * what `rc`'s admin commands, the conformance suites and the tests all send. The query is taken
 * exactly as given (repeated parameters included) and the body's SHA-256 is signed.
 */
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';

export interface SignedRequest {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  /** Temporary credentials' session token (sent as x-amz-security-token). */
  sessionToken?: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  rawQuery?: string;
  body?: string;
  unsigned?: boolean;
  timeoutMs?: number;
  /** Sends a bare `?` when rawQuery is empty (a malformed-request test: servers must refuse it where no query is allowed). */
  bareQuestionMark?: boolean;
}

export async function sendSigned(request: SignedRequest): Promise<{ status: number; text: string; requestId?: string }> {
  const url = new URL(request.endpoint);
  const rawQuery = request.rawQuery ?? '';
  const body = request.body ?? '';
  const sendHeaders = await signedHeaders(request, url, rawQuery, body);
  if (request.bareQuestionMark && !rawQuery) return sendBareQuestionMark(url, request.method, `${request.path}?`, sendHeaders, body);
  const response = await fetch(`${url.origin}${request.path}${rawQuery ? `?${rawQuery}` : ''}`, {
    method: request.method,
    headers: sendHeaders,
    ...(body ? { body } : {}),
    signal: AbortSignal.timeout(request.timeoutMs ?? 60_000),
  });
  const requestId = response.headers.get('x-amz-request-id');
  return { status: response.status, text: await response.text(), ...(requestId === null ? {} : { requestId }) };
}

/** A signed GET whose answer is read as it comes (a live listener's events): the response, its body unread; `signal` ends it. */
export async function openSigned(request: Omit<SignedRequest, 'method' | 'body' | 'timeoutMs' | 'bareQuestionMark'>, signal?: AbortSignal): Promise<Response> {
  const url = new URL(request.endpoint);
  const rawQuery = request.rawQuery ?? '';
  const headers = await signedHeaders({ ...request, method: 'GET' }, url, rawQuery, '');
  return fetch(`${url.origin}${request.path}${rawQuery ? `?${rawQuery}` : ''}`, { method: 'GET', headers, ...(signal ? { signal } : {}) });
}

/** The request's headers, signed (SigV4, service s3) unless it asks not to be; without `host`, which fetch sets. */
async function signedHeaders(request: SignedRequest, url: URL, rawQuery: string, body: string): Promise<Record<string, string>> {
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    const existing = query[name];
    query[name] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
  }
  let headers: Record<string, string> = { host: url.host, 'x-amz-content-sha256': createHash('sha256').update(body).digest('hex') };
  if (!request.unsigned) {
    const signer = new SignatureV4({ service: 's3', region: 'us-east-1', credentials: { accessKeyId: request.accessKey, secretAccessKey: request.secretKey, ...(request.sessionToken === undefined ? {} : { sessionToken: request.sessionToken }) }, sha256: Sha256, uriEscapePath: false });
    const signed = await signer.sign({ method: request.method, protocol: url.protocol, hostname: url.hostname, port: url.port ? Number(url.port) : undefined, path: request.path, query, headers, body });
    headers = signed.headers as Record<string, string>;
  }
  const { host: _host, ...sendHeaders } = headers;
  return sendHeaders;
}

/** fetch drops an empty query's `?`; node:http sends the path as given. */
function sendBareQuestionMark(url: URL, method: string, path: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: url.hostname, port: url.port, method, path, headers }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** The JSON of an answer, or `{ raw }` when it is not JSON (an S3 XML answer). */
export function jsonOrRaw(text: string): Record<string, any> {
  try {
    return text ? (JSON.parse(text) as Record<string, any>) : {};
  } catch {
    return { raw: text };
  }
}
