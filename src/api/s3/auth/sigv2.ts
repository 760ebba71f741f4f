/**
 * AWS Signature Version 2 for S3 requests: the `Authorization: AWS <key>:<signature>` header,
 * presigned URLs (`AWSAccessKeyId`, `Expires`, `Signature`) and POST form policies
 * (`AWSAccessKeyId`, `policy`, `signature`). The signature is Base64(HMAC-SHA1(secret, string to
 * sign)), where the string to sign is the method, Content-MD5, Content-Type, the Date (or, when
 * presigned, Expires), the canonical `x-amz-*` headers and the canonical resource.
 *
 * Accepted only where the deployment allows it (`SVC_API_SIGNATURE_V2`); Signature Version 4
 * stays the form every svc client uses. V2 signs no body hash: the payload is taken as sent
 * (Content-MD5 and `x-amz-checksum-*` still check it when given).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { SvcError } from '../../../errors/index.js';
import { limits } from '../../../util/limits.js';
import { header, type AuthResult, type CredentialStore, type SignedRequest } from './sigv4.js';

/**
 * Query parameters that are part of the resource a V2 signature covers (subresources and
 * response overrides); every other query parameter is left out of it.
 */
const signedSubresources = new Set([
  'acl', 'attributes', 'cors', 'delete', 'encryption', 'legal-hold', 'lifecycle', 'location', 'logging', 'notification',
  'object-lock', 'ownershipControls', 'partNumber', 'policy', 'policyStatus', 'publicAccessBlock', 'replication',
  'requestPayment', 'response-cache-control', 'response-content-disposition', 'response-content-encoding',
  'response-content-language', 'response-content-type', 'response-expires', 'restore', 'retention', 'select',
  'select-type', 'tagging', 'torrent', 'uploadId', 'uploads', 'versionId', 'versioning', 'versions', 'website',
]);

/** A request authenticated with Signature Version 2 (header or query). */
export function isSignatureV2(request: SignedRequest, query: URLSearchParams): boolean {
  return header(request, 'authorization')?.startsWith('AWS ') === true || (query.has('AWSAccessKeyId') && !query.has('X-Amz-Signature'));
}

export interface V2Options {
  /** The bucket named by the Host header (virtual-host-style request): part of the signed resource. */
  virtualHostBucket?: string;
}

export function verifyRequestV2(request: SignedRequest, query: URLSearchParams, store: CredentialStore, nowMs: number, options: V2Options = {}): AuthResult {
  const authorization = header(request, 'authorization');
  if (authorization !== undefined) return verifyHeaderV2(request, authorization, store, nowMs, options);
  return verifyPresignedV2(request, query, store, nowMs, options);
}

function verifyHeaderV2(request: SignedRequest, authorization: string, store: CredentialStore, nowMs: number, options: V2Options): AuthResult {
  const match = /^AWS ([^:\s]+):(\S+)$/.exec(authorization);
  if (!match) throw new SvcError('InvalidArgument', 'The Authorization header is malformed; expected AWS <access key>:<signature>.', { errorFields: { ArgumentName: 'Authorization', ArgumentValue: authorization.slice(0, 64) } });
  const [, accessKeyId, signature] = match as unknown as [string, string, string];
  const sessionToken = header(request, 'x-amz-security-token');
  const secret = store.secretFor(accessKeyId, sessionToken);
  if (secret === undefined) throw new SvcError('InvalidAccessKeyId');
  const amzDate = header(request, 'x-amz-date');
  const date = amzDate ?? header(request, 'date');
  if (date === undefined || date.trim() === '') throw new SvcError('AccessDenied', 'AWS authentication requires a valid Date or x-amz-date header.');
  const signedAtMs = Date.parse(date);
  if (Number.isNaN(signedAtMs) || signedAtMs < 0) throw new SvcError('AccessDenied', 'AWS authentication requires a valid Date or x-amz-date header.');
  if (Math.abs(signedAtMs - nowMs) > limits.maxRequestSkewMs) throw new SvcError('RequestTimeTooSkewed');
  // With x-amz-date present, the Date line of the string to sign is empty (x-amz-date is among the signed amz headers).
  const toSign = stringToSign(request, amzDate === undefined ? date : '', options);
  checkSignatureV2(secret, toSign, signature);
  return v2Result(accessKeyId, sessionToken);
}

function verifyPresignedV2(request: SignedRequest, query: URLSearchParams, store: CredentialStore, nowMs: number, options: V2Options): AuthResult {
  const accessKeyId = query.get('AWSAccessKeyId') ?? '';
  const signature = query.get('Signature');
  const expiresText = query.get('Expires');
  if (signature === null || expiresText === null) throw new SvcError('AccessDenied', 'Query-string authentication requires the Signature, Expires and AWSAccessKeyId parameters.');
  if (!/^\d{1,12}$/.test(expiresText)) throw new SvcError('AccessDenied', 'Expires must be a number of seconds since the epoch.');
  const sessionToken = query.get('x-amz-security-token') ?? header(request, 'x-amz-security-token');
  const secret = store.secretFor(accessKeyId, sessionToken ?? undefined);
  if (secret === undefined) throw new SvcError('InvalidAccessKeyId');
  const expiresMs = Number(expiresText) * 1000;
  if (nowMs > expiresMs) throw new SvcError('AccessDenied', 'Request has expired');
  if (expiresMs - nowMs > limits.maxPresignExpirySeconds * 1000) {
    throw new SvcError('AuthorizationQueryParametersError', `Expires may lie at most ${limits.maxPresignExpirySeconds} seconds in the future.`);
  }
  checkSignatureV2(secret, stringToSign(request, expiresText, options), signature);
  return v2Result(accessKeyId, sessionToken ?? undefined);
}

/**
 * A POST form signed with V2: `signature` is Base64(HMAC-SHA1(secret, policy)), where `policy`
 * is the Base64 text exactly as sent.
 */
export function verifyPostPolicyV2(fields: { policy: string; accessKeyId: string; signature: string | undefined; securityToken?: string | undefined }, store: CredentialStore): { accessKeyId: string; sessionToken?: string } {
  const secret = store.secretFor(fields.accessKeyId, fields.securityToken);
  if (secret === undefined) throw new SvcError('InvalidAccessKeyId');
  checkSignatureV2(secret, fields.policy, fields.signature ?? '');
  return { accessKeyId: fields.accessKeyId, ...(fields.securityToken === undefined ? {} : { sessionToken: fields.securityToken }) };
}

function v2Result(accessKeyId: string, sessionToken: string | undefined): AuthResult {
  return { accessKeyId, region: '', scope: '', amzDate: '', signingKey: Buffer.alloc(0), seedSignature: '', payload: { kind: 'unsigned' }, signatureVersion: 2, ...(sessionToken === undefined ? {} : { sessionToken }) };
}

/** The V2 string to sign; `dateLine` is the Date header, empty with x-amz-date, or Expires when presigned. */
export function stringToSign(request: SignedRequest, dateLine: string, options: V2Options): string {
  return [request.method, header(request, 'content-md5') ?? '', header(request, 'content-type') ?? '', dateLine].join('\n') + '\n' + canonicalAmzHeaders(request) + canonicalResource(request, options);
}

/** `x-amz-*` headers, lower-cased and sorted, one `name:value` line each (repeated values joined by commas). */
function canonicalAmzHeaders(request: SignedRequest): string {
  return Object.keys(request.headers)
    .map((name) => name.toLowerCase())
    .filter((name) => name.startsWith('x-amz-'))
    .sort()
    .map((name) => `${name}:${(header(request, name) ?? '').trim().replace(/\s+/g, ' ')}\n`)
    .join('');
}

/** `/bucket/key` as sent (percent-encoding kept; `/bucket/` for the bucket), then the signed subresources in name order. */
function canonicalResource(request: SignedRequest, options: V2Options): string {
  const addressed = options.virtualHostBucket === undefined ? request.rawPath : `/${options.virtualHostBucket}${request.rawPath}`;
  // A request to a bucket itself signs the bucket with a trailing slash (`/bucket/`), however it was sent.
  const path = /^\/[^/]+$/.test(addressed) ? `${addressed}/` : addressed;
  const subresources = request.rawQuery
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = decodeComponent(equals < 0 ? pair : pair.slice(0, equals));
      return { name, value: equals < 0 ? undefined : decodeComponent(pair.slice(equals + 1)) };
    })
    .filter(({ name }) => signedSubresources.has(name))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map(({ name, value }) => (value === undefined || value === '' ? name : `${name}=${value}`));
  return subresources.length === 0 ? path : `${path}?${subresources.join('&')}`;
}

function decodeComponent(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw new SvcError('InvalidArgument', 'the query string is not valid percent-encoding');
  }
}

export function signV2(secret: string, toSign: string): string {
  return createHmac('sha1', secret).update(toSign, 'utf8').digest('base64');
}

function checkSignatureV2(secret: string, toSign: string, provided: string): void {
  const expected = Buffer.from(signV2(secret, toSign));
  const given = Buffer.from(provided);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw new SvcError('SignatureDoesNotMatch', undefined, { errorFields: { StringToSign: toSign } });
}
