/**
 * Server access logging on the S3 listener: every answered S3 request on a bucket whose logging
 * is on becomes one record (src/ops/access-log/record.ts), handed to this node's delivery as the
 * response finishes. What the request was and who made it come from the facts the S3 plugin set
 * (src/api/audit-facts.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { BucketRecord } from '../../object/index.js';
import type { AccessLogRecord, LogTarget } from '../../ops/access-log/record.js';
import { auditFactsOf } from '../audit-facts.js';
import { addressOf } from './router.js';

export interface AccessLogSink {
  record(record: AccessLogRecord, target: LogTarget): void;
}

export interface AccessLogHookOptions {
  sink: AccessLogSink;
  /** The bucket's record when storage is up (undefined otherwise, or when there is no such bucket). */
  bucketRecord(bucket: string): Promise<BucketRecord | undefined>;
  ownerId: string;
  hostId: string;
  virtualHostSuffixes: string[];
}

const startedMs = new WeakMap<FastifyRequest, number>();
/** When the request's last byte was received (its body's end; absent: no body was read, its headers were the last bytes). */
const receivedMs = new WeakMap<FastifyRequest, number>();
/** When the answer's first byte went out (its headers). */
const answeredMs = new WeakMap<FastifyRequest, number>();
const aclRequired = new WeakSet<FastifyRequest>();

/** The request was allowed by an ACL grant that no policy gave (the record's `aclRequired`). */
export function markAclRequired(request: FastifyRequest): void {
  aclRequired.add(request);
}

export function installAccessLog(app: FastifyInstance, options: AccessLogHookOptions): void {
  app.addHook('onRequest', async (request, reply) => {
    startedMs.set(request, Date.now());
    request.raw.once('end', () => receivedMs.set(request, Date.now()));
    // The answer's headers are its first bytes, whether fastify sends them or a streamed body writes them itself.
    const raw = reply.raw;
    const writeHead = raw.writeHead;
    raw.writeHead = function (this: typeof raw, ...args: Parameters<typeof raw.writeHead>) {
      if (!answeredMs.has(request)) answeredMs.set(request, Date.now());
      return writeHead.apply(this, args);
    } as typeof raw.writeHead;
  });
  app.addHook('onResponse', async (request, reply) => {
    const facts = auditFactsOf(request);
    if (facts?.surface !== 's3') return;
    const rawUrl = request.raw.url ?? '/';
    const queryAt = rawUrl.indexOf('?');
    const rawPath = queryAt < 0 ? rawUrl : rawUrl.slice(0, queryAt);
    let address: { bucket?: string; key?: string };
    try {
      address = addressOf({ rawPath, host: request.headers.host }, options.virtualHostSuffixes);
    } catch {
      return;
    }
    if (address.bucket === undefined) return;
    const record = await options.bucketRecord(address.bucket).catch(() => undefined);
    const logging = record?.logging;
    if (!logging) return;
    const query = new URLSearchParams(queryAt < 0 ? '' : rawUrl.slice(queryAt + 1));
    const header = (name: string): string | undefined => {
      const value = request.headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const numberHeader = (value: unknown): number | undefined => (value === undefined || Number.isNaN(Number(value)) ? undefined : Number(value));
    const principal = facts.principal;
    const requester = principal === undefined || principal.kind === 'anonymous' ? undefined : principal.parentUser ?? principal.accessKey;
    const signed = signatureOf(header('authorization'), query);
    const nowMs = Date.now();
    const sent = numberHeader(reply.getHeader('content-length'));
    const requestId = reply.getHeader('x-amz-request-id');
    options.sink.record({
      bucketOwner: options.ownerId,
      bucket: address.bucket,
      timeMs: startedMs.get(request) ?? nowMs,
      remoteIp: facts.sourceIp ?? request.ip,
      ...(requester === undefined ? {} : { requester }),
      requestId: typeof requestId === 'string' ? requestId : '',
      operation: operationOf(request.method, address.key !== undefined, query),
      ...(address.key === undefined ? {} : { key: address.key }),
      requestUri: `${request.method} ${rawUrl} HTTP/${request.raw.httpVersion}`,
      httpStatus: reply.statusCode,
      ...(facts.errorCode === undefined ? {} : { errorCode: facts.errorCode }),
      ...(request.method === 'HEAD' || sent === undefined ? {} : { bytesSent: sent }),
      ...(reply.statusCode < 300 ? objectSizeOf(request.method, address.key !== undefined, header('content-length'), sent) : {}),
      totalTimeMs: Math.max(0, Math.round(reply.elapsedTime)),
      ...turnAroundOf(request, nowMs),
      ...(aclRequired.has(request) ? { aclRequired: true } : {}),
      ...(header('referer') === undefined ? {} : { referer: header('referer') }),
      ...(header('user-agent') === undefined ? {} : { userAgent: header('user-agent') }),
      ...versionOf(reply.getHeader('x-amz-version-id'), query),
      hostId: options.hostId,
      ...signed,
      ...(header('host') === undefined ? {} : { hostHeader: header('host') }),
    }, logging);
  });
}

/**
 * Turn-around time as AWS defines it: from the request's last byte received to the answer's
 * first byte sent (for a request without a body, its headers are its last bytes).
 */
function turnAroundOf(request: FastifyRequest, nowMs: number): Pick<AccessLogRecord, 'turnAroundTimeMs'> {
  const received = receivedMs.get(request) ?? startedMs.get(request);
  const answered = answeredMs.get(request) ?? nowMs;
  return received === undefined ? {} : { turnAroundTimeMs: Math.max(0, answered - received) };
}

function signatureOf(authorization: string | undefined, query: URLSearchParams): Pick<AccessLogRecord, 'signatureVersion' | 'authType'> {
  if (authorization !== undefined) return { signatureVersion: authorization.startsWith('AWS4-') ? 'SigV4' : 'SigV2', authType: 'AuthHeader' };
  if (query.has('X-Amz-Signature')) return { signatureVersion: 'SigV4', authType: 'QueryString' };
  if (query.has('Signature')) return { signatureVersion: 'SigV2', authType: 'QueryString' };
  return {};
}

function versionOf(answered: unknown, query: URLSearchParams): Pick<AccessLogRecord, 'versionId'> {
  const versionId = typeof answered === 'string' ? answered : query.get('versionId') ?? undefined;
  return versionId === undefined || versionId === 'null' ? {} : { versionId };
}

function objectSizeOf(method: string, onObject: boolean, received: string | undefined, sent: number | undefined): Pick<AccessLogRecord, 'objectSize'> {
  if (!onObject) return {};
  const size = method === 'PUT' ? Number(received) : method === 'GET' ? sent : undefined;
  return size === undefined || Number.isNaN(size) ? {} : { objectSize: size };
}

/** Subresources as the operation names them (`REST.GET.ACL`, `REST.PUT.LOGGING_STATUS`, ...). */
const subresources: [string, string][] = [
  ['acl', 'ACL'], ['tagging', 'TAGGING'], ['versioning', 'VERSIONING'], ['policy', 'BUCKETPOLICY'], ['policyStatus', 'BUCKETPOLICYSTATUS'], ['logging', 'LOGGING_STATUS'],
  ['lifecycle', 'LIFECYCLE'], ['cors', 'CORS'], ['location', 'LOCATION'], ['versions', 'BUCKETVERSIONS'], ['uploads', 'UPLOADS'], ['uploadId', 'UPLOAD'], ['delete', 'MULTI_OBJECT_DELETE'],
  ['object-lock', 'OBJECT_LOCK_CONFIGURATION'], ['retention', 'OBJECT_LOCK_RETENTION'], ['legal-hold', 'OBJECT_LOCK_LEGALHOLD'], ['attributes', 'OBJECT_ATTRIBUTES'],
  ['publicAccessBlock', 'PUBLIC_ACCESS_BLOCK'], ['ownershipControls', 'OWNERSHIP_CONTROLS'],
];

/** `REST.<METHOD>.<RESOURCE>`: the subresource asked for, else OBJECT or BUCKET. */
export function operationOf(method: string, onObject: boolean, query: URLSearchParams): string {
  const named = subresources.find(([name]) => query.has(name))?.[1];
  const resource = named === 'UPLOAD' && query.has('partNumber') ? 'PART' : named ?? (onObject ? 'OBJECT' : 'BUCKET');
  return `REST.${method.toUpperCase()}.${resource}`;
}
