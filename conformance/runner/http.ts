/**
 * Raw S3 requests for checks whose point is the wire: headers an SDK would not send, bodies it
 * would not build (aws-chunked with chunk and trailer signatures), answers it would hide (status,
 * headers and the XML error body as sent). Signed with SigV4 by @smithy/signature-v4.
 */
import { createHash, createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { XMLParser } from 'fast-xml-parser';

export interface Credentials {
  endpoint: string;
  accessKey: string;
  secretKey: string;
}

export interface RawRequest {
  method: string;
  /** Already percent-encoded path, e.g. `/bucket/key`. */
  path: string;
  /** Query parameters, signed; `''` values are sent as `name=`. */
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: Buffer | string;
  /** The x-amz-content-sha256 value to sign: the body's hash unless given (`UNSIGNED-PAYLOAD`, a streaming mode). */
  payloadHash?: string;
  /** Leave the request unsigned. */
  unsigned?: boolean;
  /** Sign as of this time (a skewed clock). */
  signingDate?: Date;
  /** Headers added after signing (not covered by the signature). */
  unsignedHeaders?: Record<string, string>;
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  text: string;
  /** The `<Error><Code>` of an S3 error body, or ''. */
  code: string;
  /** The parsed XML body, or {} when it is not XML. */
  xml: Record<string, any>;
}

const parser = new XMLParser({ ignoreAttributes: true, parseTagValue: false });

export function sha256Hex(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

export function signerFor(credentials: Credentials): SignatureV4 {
  return new SignatureV4({ service: 's3', region: 'us-east-1', credentials: { accessKeyId: credentials.accessKey, secretAccessKey: credentials.secretKey }, sha256: Sha256, uriEscapePath: false });
}

/** Sends one request and reads the whole answer. */
export async function rawS3(credentials: Credentials, request: RawRequest): Promise<RawAnswer> {
  const url = new URL(credentials.endpoint);
  const body = request.body === undefined ? Buffer.alloc(0) : Buffer.from(request.body);
  let headers: Record<string, string> = { host: url.host, ...request.headers };
  if (!request.unsigned) {
    headers['x-amz-content-sha256'] = request.payloadHash ?? sha256Hex(body);
    const signed = await signerFor(credentials).sign(
      { method: request.method, protocol: url.protocol, hostname: url.hostname, port: url.port ? Number(url.port) : undefined, path: request.path, query: request.query ?? {}, headers, body },
      request.signingDate ? { signingDate: request.signingDate } : {},
    );
    headers = signed.headers as Record<string, string>;
  }
  const query = new URLSearchParams(request.query ?? {}).toString().replace(/\+/g, '%20');
  return send(url, request.method, `${request.path}${query ? `?${query}` : ''}`, { ...headers, ...request.unsignedHeaders, 'content-length': String(body.length) }, body);
}

/**
 * Sends a prepared request with node:http (or node:https for an https endpoint), exactly as given.
 * With `withoutLength` the request carries neither Content-Length nor Transfer-Encoding (a client
 * that does not say its length; by HTTP/1.1 such a request has no body) and `body` is not sent.
 */
export function send(url: URL, method: string, path: string, headers: Record<string, string>, body: Buffer, options: { withoutLength?: boolean } = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const outgoing = request({ host: url.hostname, port: url.port, method, path, headers, timeout: 30_000 }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve(answerOf(response.statusCode ?? 0, response.headers as Record<string, string>, Buffer.concat(chunks))));
      response.on('error', reject);
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error(`${method} ${path} timed out`)));
    outgoing.on('error', reject);
    if (options.withoutLength) {
      outgoing.removeHeader('content-length');
      outgoing.removeHeader('transfer-encoding');
      outgoing.end();
    } else outgoing.end(body);
  });
}

function answerOf(status: number, headers: Record<string, string>, body: Buffer): RawAnswer {
  const text = body.toString('utf8');
  let xml: Record<string, any> = {};
  if (text.trimStart().startsWith('<')) {
    try {
      xml = parser.parse(text) as Record<string, any>;
    } catch {
      xml = {};
    }
  }
  return { status, headers, body, text, code: typeof xml.Error?.Code === 'string' ? xml.Error.Code : '', xml };
}

export type StreamingMode = 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD' | 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER' | 'STREAMING-UNSIGNED-PAYLOAD-TRAILER';

export interface ChunkedUpload {
  mode: StreamingMode;
  path: string;
  payload: Buffer;
  chunkBytes: number;
  /** A checksum trailer, e.g. `{ name: 'x-amz-checksum-crc32', value: '...' }`. */
  trailer?: { name: string; value: string };
  /** Spoils the signature of chunk `index` (a forged chunk). */
  forgeChunk?: number;
}

/**
 * A PUT with an `aws-chunked` body, built as a signing client builds it: the seed signature from
 * the headers, then one signature per chunk chained from it, then the trailer and its signature.
 */
export async function chunkedPut(credentials: Credentials, upload: ChunkedUpload): Promise<RawAnswer> {
  const url = new URL(credentials.endpoint);
  const signing = upload.mode !== 'STREAMING-UNSIGNED-PAYLOAD-TRAILER';
  const headers: Record<string, string> = {
    host: url.host,
    'x-amz-content-sha256': upload.mode,
    'content-encoding': 'aws-chunked',
    'x-amz-decoded-content-length': String(upload.payload.length),
    ...(upload.trailer ? { 'x-amz-trailer': upload.trailer.name } : {}),
  };
  const now = new Date();
  const signed = await signerFor(credentials).sign({ method: 'PUT', protocol: url.protocol, hostname: url.hostname, port: url.port ? Number(url.port) : undefined, path: upload.path, query: {}, headers }, { signingDate: now });
  const signedHeaders = signed.headers as Record<string, string>;
  const authorization = signedHeaders.authorization ?? signedHeaders.Authorization ?? '';
  let previous = /Signature=([0-9a-f]{64})/.exec(authorization)?.[1] ?? '';
  const amzDate = signedHeaders['x-amz-date']!;
  const scope = `${amzDate.slice(0, 8)}/us-east-1/s3/aws4_request`;
  const key = signingKey(credentials.secretKey, amzDate.slice(0, 8));
  const hmac = (text: string) => createHmac('sha256', key).update(text).digest('hex');
  let index = 0;
  const chunkSignature = (data: Buffer) => {
    previous = hmac(['AWS4-HMAC-SHA256-PAYLOAD', amzDate, scope, previous, sha256Hex(''), sha256Hex(data)].join('\n'));
    const forged = index === upload.forgeChunk;
    index += 1;
    return forged ? previous.replace(/^./, (c) => (c === '0' ? '1' : '0')) : previous;
  };
  const parts: Buffer[] = [];
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < upload.payload.length; offset += upload.chunkBytes) chunks.push(upload.payload.subarray(offset, offset + upload.chunkBytes));
  for (const data of [...chunks, Buffer.alloc(0)]) {
    parts.push(Buffer.from(`${data.length.toString(16)}${signing ? `;chunk-signature=${chunkSignature(data)}` : ''}\r\n`), data);
    if (data.length > 0) parts.push(Buffer.from('\r\n'));
  }
  if (upload.trailer) {
    parts.push(Buffer.from(`${upload.trailer.name}:${upload.trailer.value}\r\n`));
    if (signing) {
      const text = `${upload.trailer.name}:${upload.trailer.value}\n`;
      parts.push(Buffer.from(`x-amz-trailer-signature:${hmac(['AWS4-HMAC-SHA256-TRAILER', amzDate, scope, previous, sha256Hex(text)].join('\n'))}\r\n`));
    }
  }
  parts.push(Buffer.from('\r\n'));
  const body = Buffer.concat(parts);
  const { host: _host, ...rest } = signedHeaders;
  return send(url, 'PUT', upload.path, { ...rest, 'content-length': String(body.length) }, body);
}

/** The SigV4 signing key of a day (`yyyymmdd`) in us-east-1 for s3. */
export function signingKey(secretKey: string, day: string): Buffer {
  let key = createHmac('sha256', `AWS4${secretKey}`).update(day).digest();
  for (const part of ['us-east-1', 's3', 'aws4_request']) key = createHmac('sha256', key).update(part).digest();
  return key;
}

/** A presigned URL for `method path`, signed as of `signingDate` and valid `expiresSeconds`. */
export async function presignedUrl(credentials: Credentials, method: string, path: string, options: { expiresSeconds?: number; signingDate?: Date; headers?: Record<string, string> } = {}): Promise<string> {
  const url = new URL(credentials.endpoint);
  const signed = await signerFor(credentials).presign(
    { method, protocol: url.protocol, hostname: url.hostname, port: url.port ? Number(url.port) : undefined, path, headers: { host: url.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', ...options.headers }, query: {} },
    { expiresIn: options.expiresSeconds ?? 300, signingDate: options.signingDate ?? new Date() },
  );
  const query = new URLSearchParams(Object.entries(signed.query ?? {}).map(([name, value]): [string, string] => [name, String(value)])).toString();
  return `${url.origin}${signed.path}?${query}`;
}
