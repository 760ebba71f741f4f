/**
 * The S3 API as a fastify plugin: authenticate, route, call one handler, serialise. Errors become
 * S3 XML bodies with AWS status codes; every response carries x-amz-request-id.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SvcError, isSvcError } from '../../errors/index.js';
import { refuseTwoAuthMechanisms, verifyRequest, type AuthResult, type CredentialStore, type SignedRequest } from './auth/sigv4.js';
import { isSignatureV2, verifyRequestV2 } from './auth/sigv2.js';
import { decodeAwsChunked } from './auth/chunked.js';
import { addressOf, routeS3Request, type S3Endpoint } from './router.js';
import { errorXml } from './xml.js';
import { RequestBody, settleUnreadBody } from './request-body.js';
import { limits } from '../../util/limits.js';
import { requestLine } from '../request-line.js';
import { clientErrorHandler, frameworkErrorOf } from '../listener-errors.js';
import { headerValue, isChunkStream, type ChunkStream, type S3Context, type S3Request, type S3Response } from './context.js';
import * as buckets from './handlers/buckets.js';
import * as objects from './handlers/objects.js';
import * as listing from './handlers/listing.js';
import { deleteObjects } from './handlers/delete-objects.js';
import * as multipart from './handlers/multipart.js';
import * as acl from './handlers/acl.js';
import * as tagging from './handlers/tagging.js';
import { restoreObject } from './handlers/restore.js';
import { getObjectAttributes } from './handlers/attributes.js';
import * as bucketCors from './handlers/bucket-cors.js';
import { isFormHeaderField, postObject } from './handlers/post-object.js';
import { actualHeaders, matchingRule } from './cors.js';
import { guardRequest } from './request-guards.js';
import { checkExpectedOwner } from './expected-owner.js';
import * as bucketPolicy from './handlers/bucket-policy.js';
import * as publicAccessBlock from './handlers/public-access-block.js';
import * as bucketNotification from './handlers/bucket-notification.js';
import * as objectLock from './handlers/object-lock.js';
import * as bucketLifecycle from './handlers/bucket-lifecycle.js';
import * as ownershipControls from './handlers/ownership-controls.js';
import * as bucketEncryption from './handlers/bucket-encryption.js';
import * as bucketLogging from './handlers/bucket-logging.js';
import * as bucketReplication from './handlers/bucket-replication.js';
import { markAclRequired } from './access-log-hook.js';
import { anonymousAuth, authorize, isUnsigned, permissionsOf, principalOf, type AccessPolicies, type Caller } from './access.js';
import { auditFactsOf, auditPrincipalOf, setAuditFacts } from '../audit-facts.js';
import { s3CallerFacts, s3EndpointFacts, s3UnroutedFacts } from './s3-audit.js';
import type { EventOrigin, ObjectEvent } from '../../ops/events/types.js';
import { changesOf } from '../../ops/replication/types.js';
import { handleSts, isStsRequest, type StsService } from '../sts/sts.js';

export interface S3PluginOptions {
  context: S3Context;
  credentials: CredentialStore;
  /** Paths (prefixes) served by other plugins on the same listener. */
  reservedPrefixes: string[];
  virtualHostSuffixes?: string[];
  logger?: { warn(fields: Record<string, unknown>, message: string): void; error(fields: Record<string, unknown>, message: string): void };
  /** A body that sends nothing for this long is answered RequestTimeout (0: no limit). */
  bodyIdleTimeoutMs?: number;
  /** Users' policies: with it every request is authorised (src/api/s3/access.ts) and unsigned ones are judged as anonymous; without it any signed request is allowed. */
  access?: AccessPolicies;
  /** STS (AssumeRole, AssumeRoleWithWebIdentity) on this listener; needs `access`. */
  sts?: StsService;
  /** Accept Signature Version 2 (header, presigned and POST form) besides V4 (SVC_API_SIGNATURE_V2). */
  signatureV2?: boolean;
}

export async function s3Plugin(app: FastifyInstance, options: S3PluginOptions): Promise<void> {
  // Bodies are streamed to the handlers untouched, whatever their content type.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
  // S3 stores any Content-Type as sent, even empty or not a media type, which fastify would
  // answer 415: the header is set aside before fastify looks and put back for the handler.
  app.addHook('onRequest', async (request) => {
    const contentType = request.headers['content-type'];
    if (contentType === undefined) return;
    sentContentTypes.set(request.raw, contentType);
    request.headers['content-type'] = 'application/octet-stream';
  });
  app.route({
    method: ['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'OPTIONS'],
    url: '/*',
    handler: (request, reply) => handle(options, request, reply),
  });
}

/**
 * The listener's answer to a connection the HTTP parser gave up on: past the header or
 * whole-request timeout (400 RequestTimeout, as S3 answers a stalled client), headers too large
 * or not HTTP at all (400 InvalidRequest). In S3's XML, then the connection closes.
 */
export const s3ClientErrorHandler = clientErrorHandler((error, requestId) => ({ contentType: 'application/xml', body: errorXml(error.code, error.message, '', requestId) }));

/**
 * A request fastify could not route (its path does not decode): 400 InvalidURI in S3's XML with
 * the usual x-amz-request-id; a body it came with is drained (bounded) or the connection closes.
 */
export async function answerS3FrameworkError(error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply, bodyIdleTimeoutMs: number): Promise<void> {
  const { requestId, rawPath } = requestLine(request);
  reply.header('x-amz-request-id', requestId);
  reply.header('server', 'svc');
  await sendError({}, reply, frameworkErrorOf(error), { resource: rawPath, requestId, head: request.method === 'HEAD', body: new RequestBody(request.raw, bodyIdleTimeoutMs) });
}

const sentContentTypes = new WeakMap<object, string>();

async function handle(options: S3PluginOptions, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const sentContentType = sentContentTypes.get(request.raw);
  if (sentContentType !== undefined) request.headers['content-type'] = sentContentType;
  const { requestId, rawPath, rawQuery } = requestLine(request);
  reply.header('x-amz-request-id', requestId);
  reply.header('server', 'svc');
  setAuditFacts(request, s3CallerFacts(request.headers, rawQuery, options.access?.rootAccessKey));
  const requestBody = new RequestBody(request.raw, options.bodyIdleTimeoutMs ?? limits.requestBodyIdleTimeoutMsDefault);
  try {
    const query = new URLSearchParams(rawQuery);
    refuseTwoAuthMechanisms(request.headers, query);
    const { bucket, key } = addressOf({ rawPath, host: request.headers.host }, options.virtualHostSuffixes ?? []);
    if (request.method === 'OPTIONS') {
      await send(reply, await bucketCors.preflight(options.context, request.headers, bucket), false);
      return;
    }
    reply.headers(await corsAnswerHeaders(options.context, request, bucket));
    if (options.sts && options.access && isStsRequest(request.method, bucket, query, headerValue(request.headers, 'content-type'))) {
      await serveSts(options, { sts: options.sts, access: options.access }, request, reply, { rawPath, rawQuery, requestId, body: requestBody });
      return;
    }
    if (bucket !== undefined && key === undefined && isFormUpload(request.method, query, request.headers)) {
      // Signed by its POST policy, not by an Authorization header.
      setAuditFacts(request, { api: 'PostObject', actions: ['s3:PutObject'], resource: bucket });
      // The form's encryption fields and tags stand for a PUT's headers in the policy conditions.
      const mayPut = async (accessKeyId: string, sessionToken: string | undefined, key: string, formHeaders: Record<string, string>): Promise<void> => {
        if (!options.access) return;
        const principal = principalOf(options.access, accessKeyId, sessionToken);
        setAuditFacts(request, { principal: auditPrincipalOf(principal), resource: `${bucket}/${key}` });
        const headers = { ...Object.fromEntries(Object.entries(request.headers).filter(([name]) => !isFormHeaderField(name))), ...formHeaders };
        await authorize(options.context, { principal, sourceIp: request.ip, query, headers, secureTransport: request.protocol === 'https', formUpload: true }, [{ action: 's3:PutObject', bucket, key }]);
      };
      let poster = 'anonymous';
      const mayPutAs = async (accessKeyId: string, sessionToken: string | undefined, key: string, formHeaders: Record<string, string>): Promise<void> => {
        poster = accessKeyId;
        await mayPut(accessKeyId, sessionToken, key, formHeaders);
      };
      const posted = await postObject(options.context, options.credentials, request.headers, requestBody, bucket, mayPutAs, { signatureV2: options.signatureV2 === true, secureTransport: request.protocol === 'https' });
      await queueEvents(options.context, posted, { principalId: poster, sourceIp: request.ip, requestId });
      await send(reply, posted, false);
      return;
    }
    const anonymous = options.access !== undefined && isUnsigned(request.headers, query);
    const auth = anonymous ? anonymousAuth() : verifySignature(options, { method: request.method, rawPath, rawQuery, headers: request.headers }, query);
    const endpoint = routeS3Request({ method: request.method, rawPath, query, host: request.headers.host, headers: request.headers }, options);
    guardRequest(endpoint, request.headers, auth.accessKeyId);
    const access = options.access;
    const principal = anonymous || !access ? undefined : principalOf(access, auth.accessKeyId, auth.sessionToken);
    const caller: Caller = { principal, sourceIp: request.ip, query, headers: request.headers, secureTransport: request.protocol === 'https' };
    const needed = permissionsOf(endpoint, query);
    setAuditFacts(request, { ...s3EndpointFacts(endpoint, needed), ...(caller.principal ? { principal: auditPrincipalOf(caller.principal) } : {}) });
    if (access && needed !== 'per-key' && (await authorize(options.context, caller, needed)).aclRequired) markAclRequired(request);
    checkExpectedOwner(endpoint, request.headers);
    let body: AsyncIterable<Uint8Array> = requestBody;
    let trailers: Map<string, string> | undefined;
    if (auth.payload.kind.startsWith('streaming')) {
      const decodedLength = headerValue(request.headers, 'x-amz-decoded-content-length');
      const chunked = decodeAwsChunked(requestBody, auth, decodedLength === undefined ? undefined : Number(decodedLength));
      body = chunked.body;
      trailers = chunked.trailers;
    }
    const s3Request: S3Request = { method: request.method, query, headers: request.headers, rawHeaders: request.headers, body, auth, secureTransport: caller.secureTransport === true, ...(trailers ? { trailers } : {}) };
    if (access) s3Request.authorize = async (action, bucket, key) => void (await authorize(options.context, caller, [{ action, bucket, ...(key === undefined ? {} : { key }) }]));
    const response = await dispatch(options.context, s3Request, endpoint);
    await queueEvents(options.context, response, { principalId: anonymous ? 'anonymous' : auth.accessKeyId, sourceIp: request.ip, requestId });
    await send(reply, response, request.method === 'HEAD');
  } catch (error) {
    if (auditFactsOf(request)?.api === undefined) setAuditFacts(request, s3UnroutedFacts({ method: request.method, rawPath, query: new URLSearchParams(rawQuery), host: request.headers.host, headers: request.headers }, options.virtualHostSuffixes ?? []));
    await sendError(options, reply, error, { resource: rawPath, requestId, head: request.method === 'HEAD', body: requestBody });
  }
}

/**
 * The changes a successful answer reports are queued for bucket notifications before it is sent
 * (a refused or failed request has no answer, so it raises nothing).
 */
async function queueEvents(context: S3Context, response: S3Response, origin: EventOrigin): Promise<void> {
  const events = response.events;
  delete response.events;
  await queueReplication(context, response, events ?? []);
  if (events === undefined || events.length === 0 || context.events === undefined) return;
  await context.events.publish(events, origin);
}

/** The changes a successful answer reports are queued for bucket replication too, unless the request wrote a replica. */
async function queueReplication(context: S3Context, response: S3Response, events: ObjectEvent[]): Promise<void> {
  const { replicate, replica } = response;
  delete response.replicate;
  delete response.replica;
  if (context.replication === undefined || replica === true) return;
  const changes = [...changesOf(events), ...(replicate ?? [])];
  if (changes.length > 0) await context.replication.queue(changes);
}

/** Signature Version 4, or Version 2 where the deployment accepts it (otherwise V2 is refused by name). */
function verifySignature(options: S3PluginOptions, signed: SignedRequest, query: URLSearchParams): AuthResult {
  const nowMs = options.context.nowMs();
  if (options.signatureV2 !== true || !isSignatureV2(signed, query)) return verifyRequest(signed, options.credentials, nowMs);
  const hostBucket = addressOf({ rawPath: '/', host: headerValue(signed.headers, 'host') }, options.virtualHostSuffixes ?? []).bucket;
  return verifyRequestV2(signed, query, options.credentials, nowMs, hostBucket === undefined ? {} : { virtualHostBucket: hostBucket });
}

/** An STS call, answered in STS's XML; a body left unread (too large) closes the connection. */
async function serveSts(options: S3PluginOptions, sts: { sts: StsService; access: AccessPolicies }, request: FastifyRequest, reply: FastifyReply, call: { rawPath: string; rawQuery: string; requestId: string; body: RequestBody }): Promise<void> {
  const answer = await handleSts(
    { service: sts.sts, access: sts.access, credentials: options.credentials, nowMs: () => options.context.nowMs(), ...(options.logger ? { logger: options.logger } : {}) },
    { method: request.method, rawPath: call.rawPath, rawQuery: call.rawQuery, headers: request.headers, body: call.body },
    call.requestId,
  );
  setAuditFacts(request, { surface: 'sts', api: answer.action ?? 'STS', actions: answer.action === undefined ? [] : [`sts:${answer.action}`], resource: '' });
  if (!call.body.complete) reply.header('connection', 'close');
  await reply.code(answer.status).header('content-type', 'text/xml').send(answer.body);
}

function isFormUpload(method: string, query: URLSearchParams, headers: FastifyRequest['headers']): boolean {
  return method === 'POST' && query.size === 0 && /^multipart\/form-data/i.test(headerValue(headers, 'content-type') ?? '');
}

/** An actual cross-origin request (with Origin) allowed by a CORS rule of its bucket: the headers its answer carries. */
async function corsAnswerHeaders(context: S3Context, request: FastifyRequest, bucket: string | undefined): Promise<Record<string, string>> {
  const origin = headerValue(request.headers, 'origin');
  if (origin === undefined || bucket === undefined) return {};
  const record = await context.objects.bucketRecord(bucket).catch(() => undefined);
  const rule = matchingRule(record?.cors, { origin, method: request.method, headers: [] });
  return rule ? actualHeaders(rule, origin) : {};
}

function dispatch(context: S3Context, request: S3Request, endpoint: S3Endpoint): Promise<S3Response> {
  switch (endpoint.kind) {
    case 'ListBuckets': return buckets.listBuckets(context, request);
    case 'CreateBucket': return buckets.createBucket(context, request, endpoint.bucket);
    case 'DeleteBucket': return buckets.deleteBucket(context, request, endpoint.bucket);
    case 'HeadBucket': return buckets.headBucket(context, request, endpoint.bucket);
    case 'GetBucketLocation': return buckets.getBucketLocation(context, request, endpoint.bucket);
    case 'GetBucketVersioning': return buckets.getBucketVersioning(context, request, endpoint.bucket);
    case 'PutBucketVersioning': return buckets.putBucketVersioning(context, request, endpoint.bucket);
    case 'ListObjectsV1': return listing.listObjectsV1(context, request, endpoint.bucket);
    case 'ListObjectsV2': return listing.listObjectsV2(context, request, endpoint.bucket);
    case 'ListObjectVersions': return listing.listObjectVersions(context, request, endpoint.bucket);
    case 'DeleteObjects': return deleteObjects(context, request, endpoint.bucket);
    case 'PutObject': return objects.putObject(context, request, endpoint.bucket, endpoint.key);
    case 'CopyObject': return objects.copyObject(context, request, endpoint.bucket, endpoint.key, endpoint.source);
    case 'GetObject': return objects.getObject(context, request, endpoint.bucket, endpoint.key);
    case 'HeadObject': return objects.headObject(context, request, endpoint.bucket, endpoint.key);
    case 'DeleteObject': return objects.deleteObject(context, request, endpoint.bucket, endpoint.key);
    case 'CreateMultipartUpload': return multipart.createMultipartUpload(context, request, endpoint.bucket, endpoint.key);
    case 'UploadPart': return multipart.uploadPart(context, request, endpoint.bucket, endpoint.key, endpoint.uploadId, endpoint.partNumber);
    case 'UploadPartCopy': return multipart.uploadPartCopy(context, request, endpoint.bucket, endpoint.key, endpoint.uploadId, endpoint.partNumber, endpoint.source);
    case 'CompleteMultipartUpload': return multipart.completeMultipartUpload(context, request, endpoint.bucket, endpoint.key, endpoint.uploadId);
    case 'AbortMultipartUpload': return multipart.abortMultipartUpload(context, request, endpoint.bucket, endpoint.key, endpoint.uploadId);
    case 'ListParts': return multipart.listParts(context, request, endpoint.bucket, endpoint.key, endpoint.uploadId);
    case 'ListMultipartUploads': return multipart.listMultipartUploads(context, request, endpoint.bucket);
    case 'GetBucketAcl': return acl.getBucketAcl(context, request, endpoint.bucket);
    case 'PutBucketAcl': return acl.putBucketAcl(context, request, endpoint.bucket);
    case 'GetObjectAcl': return acl.getObjectAcl(context, request, endpoint.bucket, endpoint.key);
    case 'PutObjectAcl': return acl.putObjectAcl(context, request, endpoint.bucket, endpoint.key);
    case 'GetObjectTagging': return tagging.getObjectTagging(context, request, endpoint.bucket, endpoint.key);
    case 'PutObjectTagging': return tagging.putObjectTagging(context, request, endpoint.bucket, endpoint.key);
    case 'DeleteObjectTagging': return tagging.deleteObjectTagging(context, request, endpoint.bucket, endpoint.key);
    case 'GetObjectAttributes': return getObjectAttributes(context, request, endpoint.bucket, endpoint.key);
    case 'RestoreObject': return restoreObject(context, request, endpoint.bucket, endpoint.key);
    case 'GetBucketCors': return bucketCors.getBucketCors(context, request, endpoint.bucket);
    case 'GetPublicAccessBlock': return publicAccessBlock.getPublicAccessBlock(context, request, endpoint.bucket);
    case 'PutPublicAccessBlock': return publicAccessBlock.putPublicAccessBlock(context, request, endpoint.bucket);
    case 'DeletePublicAccessBlock': return publicAccessBlock.deletePublicAccessBlock(context, request, endpoint.bucket);
    case 'GetBucketNotificationConfiguration': return bucketNotification.getBucketNotification(context, request, endpoint.bucket);
    case 'PutBucketNotificationConfiguration': return bucketNotification.putBucketNotification(context, request, endpoint.bucket);
    case 'GetBucketEncryption': return bucketEncryption.getBucketEncryption(context, request, endpoint.bucket);
    case 'PutBucketEncryption': return bucketEncryption.putBucketEncryption(context, request, endpoint.bucket);
    case 'DeleteBucketEncryption': return bucketEncryption.deleteBucketEncryption(context, request, endpoint.bucket);
    case 'GetBucketTagging': return tagging.getBucketTagging(context, request, endpoint.bucket);
    case 'PutBucketTagging': return tagging.putBucketTagging(context, request, endpoint.bucket);
    case 'DeleteBucketTagging': return tagging.deleteBucketTagging(context, request, endpoint.bucket);
    case 'PutBucketCors': return bucketCors.putBucketCors(context, request, endpoint.bucket);
    case 'DeleteBucketCors': return bucketCors.deleteBucketCors(context, request, endpoint.bucket);
    case 'GetBucketPolicy': return bucketPolicy.getBucketPolicy(context, request, endpoint.bucket);
    case 'PutBucketPolicy': return bucketPolicy.putBucketPolicy(context, request, endpoint.bucket);
    case 'DeleteBucketPolicy': return bucketPolicy.deleteBucketPolicy(context, request, endpoint.bucket);
    case 'GetBucketPolicyStatus': return bucketPolicy.getBucketPolicyStatus(context, request, endpoint.bucket);
    case 'GetObjectLockConfiguration': return objectLock.getObjectLockConfiguration(context, request, endpoint.bucket);
    case 'PutObjectLockConfiguration': return objectLock.putObjectLockConfiguration(context, request, endpoint.bucket);
    case 'GetObjectRetention': return objectLock.getObjectRetention(context, request, endpoint.bucket, endpoint.key);
    case 'PutObjectRetention': return objectLock.putObjectRetention(context, request, endpoint.bucket, endpoint.key);
    case 'GetObjectLegalHold': return objectLock.getObjectLegalHold(context, request, endpoint.bucket, endpoint.key);
    case 'PutObjectLegalHold': return objectLock.putObjectLegalHold(context, request, endpoint.bucket, endpoint.key);
    case 'GetBucketLifecycleConfiguration': return bucketLifecycle.getBucketLifecycle(context, request, endpoint.bucket);
    case 'PutBucketLifecycleConfiguration': return bucketLifecycle.putBucketLifecycle(context, request, endpoint.bucket);
    case 'DeleteBucketLifecycle': return bucketLifecycle.deleteBucketLifecycle(context, request, endpoint.bucket);
    case 'GetBucketOwnershipControls': return ownershipControls.getBucketOwnershipControls(context, request, endpoint.bucket);
    case 'PutBucketOwnershipControls': return ownershipControls.putBucketOwnershipControls(context, request, endpoint.bucket);
    case 'DeleteBucketOwnershipControls': return ownershipControls.deleteBucketOwnershipControls(context, request, endpoint.bucket);
    case 'GetBucketLogging': return bucketLogging.getBucketLogging(context, request, endpoint.bucket);
    case 'PutBucketLogging': return bucketLogging.putBucketLogging(context, request, endpoint.bucket);
    case 'GetBucketReplication': return bucketReplication.getBucketReplication(context, request, endpoint.bucket);
    case 'PutBucketReplication': return bucketReplication.putBucketReplication(context, request, endpoint.bucket);
    case 'DeleteBucketReplication': return bucketReplication.deleteBucketReplication(context, request, endpoint.bucket);
    case 'NotImplemented': throw new SvcError('NotImplemented', `${endpoint.what} is not implemented`);
  }
}

async function send(reply: FastifyReply, response: S3Response, head: boolean): Promise<void> {
  reply.code(response.status);
  for (const [name, value] of Object.entries(response.headers)) reply.header(name, value);
  const body = response.body;
  if (head || body === undefined) {
    if (isChunkStream(body)) await body.chunks[Symbol.asyncIterator]().return?.();
    else if (body && typeof body === 'object' && 'destroy' in body) body.destroy();
    await reply.send();
    return;
  }
  if (isChunkStream(body)) await sendChunks(reply, response.status, body);
  else await reply.send(body);
}

/**
 * Writes an object body straight to the socket, handing each chunk back once the socket has
 * taken it. The first chunk is read before anything is sent, so a body that cannot be read at all
 * still gets a proper error response. A client that goes away stops the read (and its lock).
 */
async function sendChunks(reply: FastifyReply, status: number, body: ChunkStream): Promise<void> {
  const iterator = body.chunks[Symbol.asyncIterator]();
  let step = await iterator.next();
  reply.hijack();
  const raw = reply.raw;
  let gone = false;
  raw.once('close', () => (gone = true));
  try {
    raw.writeHead(status, reply.getHeaders() as OutgoingHttpHeaders);
    while (!step.done && !gone) {
      const chunk = step.value;
      if (!raw.write(chunk, () => body.release(chunk))) await drained(raw);
      step = await iterator.next();
    }
    if (!gone) raw.end();
  } catch (error) {
    raw.destroy(error instanceof Error ? error : new Error(String(error)));
  } finally {
    if (!step.done) await iterator.return?.();
  }
}

function drained(raw: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      raw.off('drain', done);
      raw.off('close', done);
      resolve();
    };
    raw.on('drain', done);
    raw.on('close', done);
  });
}

interface FailedRequest {
  resource: string;
  requestId: string;
  head: boolean;
  body: RequestBody;
}

async function sendError(options: Pick<S3PluginOptions, 'logger'>, reply: FastifyReply, error: unknown, { resource, requestId, head, body }: FailedRequest): Promise<void> {
  if (await settleUnreadBody(body, reply.request.raw)) reply.header('connection', 'close');
  const known = isSvcError(error) ? error : undefined;
  if (!known) options.logger?.error({ requestId, error: String(error), stack: (error as Error)?.stack }, 'unexpected error in an S3 request');
  const code = known?.code ?? 'InternalError';
  const status = known?.httpStatus ?? 500;
  setAuditFacts(reply.request, { errorCode: code });
  const extraHeaders = (known?.details.responseHeaders ?? {}) as Record<string, string>;
  for (const [name, value] of Object.entries(extraHeaders)) reply.header(name, value);
  reply.code(status);
  if (head || status === 304) {
    await reply.send();
    return;
  }
  reply.header('content-type', 'application/xml');
  const fields = (known?.details.errorFields ?? {}) as Record<string, string>;
  await reply.send(errorXml(code, known?.message ?? 'We encountered an internal error, please try again.', resource, requestId, fields));
}
