/**
 * AWS Signature Version 4 verification for S3 requests: the Authorization header and presigned
 * query parameters. Framework-free: takes the request line and headers as they came on the wire.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { SvcError } from '../../../errors/index.js';
import { limits } from '../../../util/limits.js';

export interface CredentialStore {
  /** The secret of an access key; temporary credentials also need their session token (`x-amz-security-token`). May throw ExpiredToken or InvalidToken. */
  secretFor(accessKeyId: string, sessionToken?: string): string | undefined;
}

export function staticCredentials(accessKey: string, secretKey: string): CredentialStore {
  return { secretFor: (id, token) => (id === accessKey && token === undefined ? secretKey : undefined) };
}

export interface SignedRequest {
  method: string;
  /** Path exactly as on the wire (still percent-encoded), without the query. */
  rawPath: string;
  /** Query exactly as on the wire, without '?'. */
  rawQuery: string;
  headers: Record<string, string | string[] | undefined>;
}

export type PayloadMode =
  | { kind: 'unsigned' }
  | { kind: 'sha256'; expectedHex: string }
  | { kind: 'streaming-signed' }
  | { kind: 'streaming-signed-trailer' }
  | { kind: 'streaming-unsigned-trailer' };

export interface AuthResult {
  accessKeyId: string;
  region: string;
  scope: string;
  amzDate: string;
  signingKey: Buffer;
  seedSignature: string;
  payload: PayloadMode;
  /** The session token of temporary credentials (x-amz-security-token), when the request carried one. */
  sessionToken?: string;
  /** 2 for a Signature Version 2 request (no scope, signing key or payload hash); absent for V4. */
  signatureVersion?: 2;
}

const algorithm = 'AWS4-HMAC-SHA256';

export type SignedService = 's3' | 'sts';

export interface VerifyOptions {
  /** The service the credential scope must name: `sts` for STS calls, `s3` (the default) for everything else. */
  service?: SignedService;
  /** The SHA-256 (hex) of a body already read: signed as the payload when the request has no x-amz-content-sha256 (STS clients send none). */
  bodySha256?: string;
}

export function verifyRequest(request: SignedRequest, store: CredentialStore, nowMs: number, options: VerifyOptions = {}): AuthResult {
  const query = new URLSearchParams(request.rawQuery);
  refuseTwoAuthMechanisms(request.headers, query);
  const service = options.service ?? 's3';
  if (query.has('X-Amz-Signature')) return verifyPresigned(request, query, store, nowMs, service);
  const authorization = header(request, 'authorization');
  if (query.has('AWSAccessKeyId') || authorization?.startsWith('AWS ')) {
    throw new SvcError('InvalidRequest', 'The authorization mechanism you have provided is not supported here. Please use AWS4-HMAC-SHA256 (signature version 4).');
  }
  if (!authorization) throw new SvcError('AccessDenied', 'Request is not signed (no Authorization header or presigned query).');
  return verifyHeader(request, authorization, store, nowMs, { service, ...(options.bodySha256 === undefined ? {} : { bodySha256: options.bodySha256 }) });
}

/** Query parameters that make a request presigned: SigV4's, and SigV2's (refused later, but still a mechanism). */
const presignParameters = ['X-Amz-Signature', 'X-Amz-Credential', 'X-Amz-Algorithm', 'Signature', 'AWSAccessKeyId'];

/**
 * A request carries one authentication mechanism: a signature in the query or the Authorization
 * header, never both (S3 refuses the pair rather than choosing one). Called before anything else
 * looks at the request, so a refused request has done nothing.
 */
export function refuseTwoAuthMechanisms(headers: SignedRequest['headers'], query: URLSearchParams): void {
  if (headers.authorization === undefined) return;
  const named = presignParameters.filter((name) => query.has(name));
  if (named.length === 0) return;
  throw new SvcError('InvalidArgument', `A request may be authenticated one way only: by the Authorization header or by a signature in the query string (${named.join(', ')}), not by both.`, { errorFields: { ArgumentName: 'Authorization' } });
}

function verifyHeader(request: SignedRequest, authorization: string, store: CredentialStore, nowMs: number, options: Required<Pick<VerifyOptions, 'service'>> & VerifyOptions): AuthResult {
  const match = /^AWS4-HMAC-SHA256\s+Credential=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]{64})\s*$/.exec(authorization);
  if (!match) throw new SvcError('AccessDenied', 'The Authorization header is malformed; expected AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...');
  const [, credential, signedHeadersText, signature] = match as unknown as [string, string, string, string];
  const amzDate = requestTime(request);
  const scope = parseCredential(credential, amzDate, options.service);
  const sessionToken = header(request, 'x-amz-security-token');
  const secret = store.secretFor(scope.accessKeyId, sessionToken);
  if (secret === undefined) throw new SvcError('InvalidAccessKeyId');
  checkSkew(amzDate, nowMs);
  const signedHeaders = signedHeadersText.split(';');
  if (!signedHeaders.includes('host')) throw new SvcError('AccessDenied', 'SignedHeaders must include host.');
  refuseUnsignedHeaders(request, signedHeaders);
  const payloadHash = header(request, 'x-amz-content-sha256') ?? options.bodySha256;
  if (!payloadHash) throw new SvcError('InvalidRequest', 'Missing required header for this request: x-amz-content-sha256');
  const payload = payloadModeOf(payloadHash);
  const canonical = canonicalRequest(request, canonicalQuery(request.rawQuery, undefined), signedHeaders, payloadHash);
  const signingKey = deriveSigningKey(secret, scope.date, scope.region, scope.service);
  checkSignature(signingKey, stringToSign(amzDate, scope.text, canonical), signature);
  return { accessKeyId: scope.accessKeyId, region: scope.region, scope: scope.text, amzDate, signingKey, seedSignature: signature, payload, ...(sessionToken === undefined ? {} : { sessionToken }) };
}

function verifyPresigned(request: SignedRequest, query: URLSearchParams, store: CredentialStore, nowMs: number, service: SignedService): AuthResult {
  if (query.get('X-Amz-Algorithm') !== algorithm) throw new SvcError('AccessDenied', 'X-Amz-Algorithm must be AWS4-HMAC-SHA256.');
  const amzDate = query.get('X-Amz-Date') ?? '';
  const scope = parseCredential(query.get('X-Amz-Credential') ?? '', amzDate, service);
  const sessionToken = query.get('X-Amz-Security-Token') ?? undefined;
  const secret = store.secretFor(scope.accessKeyId, sessionToken);
  if (secret === undefined) throw new SvcError('InvalidAccessKeyId');
  const expires = Number(query.get('X-Amz-Expires'));
  if (!Number.isInteger(expires) || expires < 1 || expires > limits.maxPresignExpirySeconds) {
    throw new SvcError('AuthorizationQueryParametersError', `X-Amz-Expires must be an integer from 1 to ${limits.maxPresignExpirySeconds} seconds.`);
  }
  const signedAtMs = parseAmzDate(amzDate);
  if (signedAtMs - nowMs > limits.maxRequestSkewMs) throw new SvcError('AccessDenied', 'Request is not valid yet (X-Amz-Date is in the future).');
  if (nowMs > signedAtMs + expires * 1000) throw new SvcError('AccessDenied', 'Request has expired');
  const signedHeaders = (query.get('X-Amz-SignedHeaders') ?? '').split(';');
  if (!signedHeaders.includes('host')) throw new SvcError('AccessDenied', 'X-Amz-SignedHeaders must include host.');
  refuseUnsignedHeaders(request, signedHeaders);
  const signature = query.get('X-Amz-Signature') ?? '';
  const payloadHash = query.get('X-Amz-Content-Sha256') ?? query.get('x-amz-content-sha256') ?? header(request, 'x-amz-content-sha256') ?? 'UNSIGNED-PAYLOAD';
  const canonical = canonicalRequest(request, canonicalQuery(request.rawQuery, 'X-Amz-Signature'), signedHeaders, payloadHash);
  const signingKey = deriveSigningKey(secret, scope.date, scope.region, scope.service);
  checkSignature(signingKey, stringToSign(amzDate, scope.text, canonical), signature);
  return { accessKeyId: scope.accessKeyId, region: scope.region, scope: scope.text, amzDate, signingKey, seedSignature: signature, payload: payloadModeOf(payloadHash), ...(sessionToken === undefined ? {} : { sessionToken }) };
}

/** The signed fields of a browser form upload (POST Object with a SigV4 POST policy). */
export interface PostPolicyFields {
  policy: string;
  algorithm: string | undefined;
  credential: string | undefined;
  date: string | undefined;
  signature: string | undefined;
  /** x-amz-security-token, for temporary credentials. */
  securityToken?: string | undefined;
}

/**
 * A POST policy is signed by its base64 text with the day's signing key; the policy itself then
 * says what the form may hold. Returns the access key that signed it.
 */
export function verifyPostPolicy(fields: PostPolicyFields, store: CredentialStore): { accessKeyId: string; sessionToken?: string } {
  if (fields.algorithm !== algorithm) throw new SvcError('InvalidArgument', 'The form must hold x-amz-algorithm AWS4-HMAC-SHA256 (only SigV4 POST policies are accepted).');
  const amzDate = fields.date ?? '';
  const scope = parseCredential(fields.credential ?? '', amzDate, 's3');
  const secret = store.secretFor(scope.accessKeyId, fields.securityToken);
  if (secret === undefined) throw new SvcError('InvalidAccessKeyId');
  checkSignature(deriveSigningKey(secret, scope.date, scope.region, scope.service), fields.policy, fields.signature ?? '');
  return { accessKeyId: scope.accessKeyId, ...(fields.securityToken === undefined ? {} : { sessionToken: fields.securityToken }) };
}

/**
 * Headers the signature does not cover are not acted on: a request carrying an `x-amz-*` header
 * outside the signed list is refused, as AWS refuses it (whoever holds a presigned PUT URL must
 * not be able to add `x-amz-copy-source`, metadata, tagging or a storage class). The one
 * exception is `x-amz-content-sha256`: with header signing its value is part of the canonical
 * request anyway, and on a presigned request it can only ask for the body to be checked.
 * Parameters of a presigned URL's query are covered by its signature (the whole query is signed).
 */
function refuseUnsignedHeaders(request: SignedRequest, signedHeaders: string[]): void {
  const unsigned = Object.keys(request.headers).filter((name) => name.startsWith('x-amz-') && name !== 'x-amz-content-sha256' && !signedHeaders.includes(name));
  if (unsigned.length === 0) return;
  throw new SvcError('AccessDenied', 'There were headers present in the request which were not signed', { errorFields: { HeadersNotSigned: unsigned.sort().join(', ') } });
}

/**
 * The signing time: `X-Amz-Date`, or else the `Date` header (RFC 9110 form, which SigV4 allows
 * when it is signed) in the basic ISO 8601 form the string to sign uses.
 */
function requestTime(request: SignedRequest): string {
  const amzDate = header(request, 'x-amz-date');
  if (amzDate !== undefined) return amzDate;
  const date = header(request, 'date');
  const parsedMs = date === undefined ? NaN : Date.parse(date);
  if (Number.isNaN(parsedMs)) return '';
  return new Date(parsedMs).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

interface Scope {
  accessKeyId: string;
  date: string;
  region: string;
  service: string;
  text: string;
}

function parseCredential(credential: string, amzDate: string, expected: SignedService): Scope {
  const parts = credential.split('/');
  if (parts.length !== 5 || parts[4] !== 'aws4_request' || !/^\d{8}$/.test(parts[1]!)) {
    throw new SvcError('AccessDenied', `The credential is malformed; expected <key>/<yyyymmdd>/<region>/${expected}/aws4_request.`);
  }
  const [accessKeyId, date, region, service] = parts as [string, string, string, string];
  if (service !== expected) throw new SvcError('AccessDenied', `The credential is scoped to the service '${service}'; this request needs '${expected}'.`);
  if (!/^\d{8}T\d{6}Z$/.test(amzDate)) throw new SvcError('AccessDenied', 'X-Amz-Date is missing or not of the form yyyymmddThhmmssZ.');
  if (!amzDate.startsWith(date)) throw new SvcError('SignatureDoesNotMatch', 'The credential date does not match X-Amz-Date.');
  return { accessKeyId, date, region, service, text: `${date}/${region}/${service}/aws4_request` };
}

function parseAmzDate(amzDate: string): number {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!match) throw new SvcError('AccessDenied', 'X-Amz-Date is not of the form yyyymmddThhmmssZ.');
  const [, y, mo, d, h, mi, s] = match.map(Number) as number[];
  return Date.UTC(y!, mo! - 1, d!, h!, mi!, s!);
}

function checkSkew(amzDate: string, nowMs: number): void {
  if (Math.abs(parseAmzDate(amzDate) - nowMs) > limits.maxRequestSkewMs) throw new SvcError('RequestTimeTooSkewed');
}

function payloadModeOf(value: string): PayloadMode {
  switch (value) {
    case 'UNSIGNED-PAYLOAD':
      return { kind: 'unsigned' };
    case 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD':
      return { kind: 'streaming-signed' };
    case 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER':
      return { kind: 'streaming-signed-trailer' };
    case 'STREAMING-UNSIGNED-PAYLOAD-TRAILER':
      return { kind: 'streaming-unsigned-trailer' };
    default:
      if (!/^[0-9a-f]{64}$/.test(value)) throw new SvcError('InvalidArgument', `x-amz-content-sha256 '${value}' is neither a SHA-256 hex digest nor a known payload mode.`);
      return { kind: 'sha256', expectedHex: value };
  }
}

export function header(request: SignedRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/** S3 URI encoding (RFC 3986 unreserved characters kept; '/' kept in paths). */
export function uriEncode(text: string, keepSlash: boolean): string {
  return encodeURIComponent(text)
    .replace(/[!'()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%2F/g, keepSlash ? '/' : '%2F');
}

function canonicalPath(rawPath: string): string {
  // S3 signs the path as sent, normalised to one encoding of each character.
  return rawPath.split('/').map((segment) => uriEncode(safeDecode(segment), false)).join('/') || '/';
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function canonicalQuery(rawQuery: string, without: string | undefined): string {
  if (rawQuery === '') return '';
  const pairs = rawQuery
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const index = pair.indexOf('=');
      const name = safeDecode((index < 0 ? pair : pair.slice(0, index)).replace(/\+/g, '%20'));
      const value = index < 0 ? '' : safeDecode(pair.slice(index + 1).replace(/\+/g, '%20'));
      return [uriEncode(name, false), uriEncode(value, false)] as const;
    })
    .filter(([name]) => name !== without);
  pairs.sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  return pairs.map(([name, value]) => `${name}=${value}`).join('&');
}

function canonicalRequest(request: SignedRequest, query: string, signedHeaders: string[], payloadHash: string): string {
  const headerLines = signedHeaders.map((name) => {
    const value = header(request, name);
    if (value === undefined) throw new SvcError('AccessDenied', `Signed header '${name}' is missing from the request.`);
    return `${name}:${value.trim().replace(/\s+/g, ' ')}\n`;
  });
  return [request.method, canonicalPath(request.rawPath), query, headerLines.join(''), signedHeaders.join(';'), payloadHash].join('\n');
}

function stringToSign(amzDate: string, scope: string, canonical: string): string {
  return [algorithm, amzDate, scope, createHash('sha256').update(canonical).digest('hex')].join('\n');
}

/** Signing keys change once a day per credential: derived once, not on every request. */
const signingKeys = new Map<string, Buffer>();

export function deriveSigningKey(secret: string, date: string, region: string, service: string): Buffer {
  const cacheKey = `${secret}\n${date}\n${region}\n${service}`;
  const cached = signingKeys.get(cacheKey);
  if (cached) return cached;
  const key = computeSigningKey(secret, date, region, service);
  if (signingKeys.size >= limits.signingKeyCacheEntries) signingKeys.delete(signingKeys.keys().next().value!);
  signingKeys.set(cacheKey, key);
  return key;
}

function computeSigningKey(secret: string, date: string, region: string, service: string): Buffer {
  const dateKey = createHmac('sha256', `AWS4${secret}`).update(date).digest();
  const regionKey = createHmac('sha256', dateKey).update(region).digest();
  const serviceKey = createHmac('sha256', regionKey).update(service).digest();
  return createHmac('sha256', serviceKey).update('aws4_request').digest();
}

export function hmacHex(key: Buffer, text: string): string {
  return createHmac('sha256', key).update(text).digest('hex');
}

function checkSignature(signingKey: Buffer, toSign: string, provided: string): void {
  const expected = Buffer.from(hmacHex(signingKey, toSign));
  const given = Buffer.from(provided);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw new SvcError('SignatureDoesNotMatch');
}
