/**
 * AWS Signature Version 2, as a client signs with it, for the checks and the probe of it: the
 * string to sign of AWS's "Signing and authenticating REST requests" page (the method, Content-MD5,
 * Content-Type, the Date (empty when x-amz-date is sent) or, presigned, Expires, the `x-amz-*`
 * headers lower-cased and sorted, then the resource with its subresources), signed with
 * HMAC-SHA1 and written in Base64. Only path-style requests (`/bucket/key`).
 */
import { createHmac } from 'node:crypto';
import { send, type Credentials, type RawAnswer } from './http.js';

export interface V2Request {
  method: string;
  /** Already percent-encoded path, e.g. `/bucket/key`. */
  path: string;
  /** Query parameters, sent as given (`''`: the bare name); only the subresources among them are signed. */
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: Buffer | string;
  /** Sign with this secret instead of the credentials' own (a forged signature). */
  secretKey?: string;
}

/** The query parameters AWS's page names as part of the signed resource. */
const subresources = new Set([
  'acl', 'delete', 'lifecycle', 'location', 'logging', 'notification', 'partNumber', 'policy', 'requestPayment', 'tagging',
  'torrent', 'uploadId', 'uploads', 'versionId', 'versioning', 'versions', 'website', 'response-cache-control',
  'response-content-disposition', 'response-content-encoding', 'response-content-language', 'response-content-type', 'response-expires',
]);

/** The string to sign; `dateLine` is the Date header, '' with x-amz-date, or Expires when presigned. */
export function stringToSignV2(method: string, headers: Record<string, string>, dateLine: string, resource: string): string {
  const lower = new Map(Object.entries(headers).map(([name, value]): [string, string] => [name.toLowerCase(), value]));
  const amzHeaders = [...lower.keys()].filter((name) => name.startsWith('x-amz-')).sort().map((name) => `${name}:${lower.get(name)!.trim()}\n`).join('');
  return `${method}\n${lower.get('content-md5') ?? ''}\n${lower.get('content-type') ?? ''}\n${dateLine}\n${amzHeaders}${resource}`;
}

export const signatureV2 = (secretKey: string, toSign: string) => createHmac('sha1', secretKey).update(toSign, 'utf8').digest('base64');

/** The path, then the subresources of the query in name order. */
function resourceOf(path: string, query: Record<string, string>): string {
  const signed = Object.entries(query)
    .filter(([name]) => subresources.has(name))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => (value === '' ? name : `${name}=${value}`));
  return signed.length === 0 ? path : `${path}?${signed.join('&')}`;
}

const queryText = (query: Record<string, string>) => Object.entries(query).map(([name, value]) => (value === '' ? encodeURIComponent(name) : `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)).join('&');

/** A request signed in the `Authorization: AWS <key>:<signature>` header, dated by `Date` unless it carries x-amz-date. */
export function sendSignedV2(credentials: Credentials, request: V2Request): Promise<RawAnswer> {
  const url = new URL(credentials.endpoint);
  const body = request.body === undefined ? Buffer.alloc(0) : Buffer.from(request.body);
  const headers: Record<string, string> = { host: url.host, ...request.headers };
  const amzDated = Object.keys(headers).some((name) => name.toLowerCase() === 'x-amz-date');
  if (!amzDated) headers.date = new Date().toUTCString();
  const toSign = stringToSignV2(request.method, headers, amzDated ? '' : headers.date!, resourceOf(request.path, request.query ?? {}));
  headers.authorization = `AWS ${credentials.accessKey}:${signatureV2(request.secretKey ?? credentials.secretKey, toSign)}`;
  const query = queryText(request.query ?? {});
  return send(url, request.method, `${request.path}${query ? `?${query}` : ''}`, { ...headers, 'content-length': String(body.length) }, body);
}

/** The path and query of a V2 presigned URL (`AWSAccessKeyId`, `Expires` in epoch seconds, `Signature`) for `method path`. */
export function presignedPathV2(credentials: Credentials, method: string, path: string, expiresEpochSeconds: number): string {
  const signature = signatureV2(credentials.secretKey, stringToSignV2(method, {}, String(expiresEpochSeconds), path));
  return `${path}?${queryText({ AWSAccessKeyId: credentials.accessKey, Expires: String(expiresEpochSeconds), Signature: signature })}`;
}

/** Sends a request to a presigned path (no credentials of its own). */
export function sendPresignedV2(credentials: Credentials, method: string, pathAndQuery: string, body?: string): Promise<RawAnswer> {
  const url = new URL(credentials.endpoint);
  const bytes = Buffer.from(body ?? '');
  return send(url, method, pathAndQuery, { host: url.host, ...(body === undefined ? {} : { 'content-length': String(bytes.length) }) }, bytes);
}
