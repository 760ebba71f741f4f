/**
 * The console's bucket settings and object changes go through the S3 API's own handlers, run
 * in-process: the same parsers and validators (a policy, a lifecycle or CORS configuration, a tag
 * set is refused with the very error S3 would give), the same storage. The console request
 * becomes an S3 request whose body is the document the browser sent, signed by nobody (the
 * console checked the session already) and carrying its Content-MD5, as S3 asks of some
 * configurations.
 */
import { createHash } from 'node:crypto';
import { SvcError } from '../errors/index.js';
import { anonymousAuth } from '../api/s3/access.js';
import type { S3Context, S3Request, S3Response } from '../api/s3/context.js';
import type { ConsoleAccess } from './access.js';
import { nextRequestId } from '../api/request-line.js';
import { changesOf } from '../ops/replication/types.js';

export type BucketHandler = (context: S3Context, request: S3Request, bucket: string) => Promise<S3Response>;
export type ObjectHandler = (context: S3Context, request: S3Request, bucket: string, key: string) => Promise<S3Response>;

interface BridgeCall {
  method: 'GET' | 'PUT' | 'DELETE';
  document?: string;
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

/** The S3 request a console call stands for, judged by the session's evaluator when a handler asks for one more permission. */
function s3RequestOf(access: ConsoleAccess, call: BridgeCall): S3Request {
  const bytes = call.document === undefined ? undefined : Buffer.from(call.document, 'utf8');
  const headers: Record<string, string> = { ...(call.headers ?? {}), ...(bytes === undefined ? {} : { 'content-md5': createHash('md5').update(bytes).digest('base64'), 'content-length': String(bytes.length) }) };
  return {
    method: call.method,
    query: new URLSearchParams(call.query ?? {}),
    headers,
    rawHeaders: headers,
    body: (async function* () {
      if (bytes !== undefined && bytes.length > 0) yield new Uint8Array(bytes);
    })(),
    auth: { ...anonymousAuth(), accessKeyId: access.principal.accessKey },
    // A handler that needs one more permission asks the session's evaluator, as S3 asks the caller's.
    authorize: (action, target, key) => access.require([{ action, bucket: target, ...(key !== undefined ? { key } : {}) }]),
  };
}

/** Runs an S3 bucket handler for the session; its answer's body as text ('' for none). */
export async function runBucketHandler(context: S3Context, access: ConsoleAccess, handler: BucketHandler, bucket: string, options: { method: 'GET' | 'PUT' | 'DELETE'; document?: string }): Promise<{ status: number; text: string }> {
  const response = await handler(context, s3RequestOf(access, options), bucket);
  return { status: response.status, text: bodyText(response.body) };
}

/**
 * Runs an S3 object handler (copy, tagging, put, delete) for the session, with the headers and
 * query the same S3 request would carry; the changes it reports are queued for notifications and
 * replication as the S3 listener queues them.
 */
export async function runObjectHandler(context: S3Context, access: ConsoleAccess, handler: ObjectHandler, target: { bucket: string; key: string }, call: BridgeCall): Promise<{ status: number; headers: Record<string, string | number>; text: string }> {
  const response = await handler(context, s3RequestOf(access, { ...call, headers: { 'content-length': '0', ...(call.headers ?? {}) } }), target.bucket, target.key);
  // What the S3 listener does with a successful answer's changes: replicated (unless a replica was written), then notified.
  const events = response.events ?? [];
  const changes = response.replica === true ? [] : [...changesOf(events), ...(response.replicate ?? [])];
  if (context.replication !== undefined && changes.length > 0) await context.replication.queue(changes);
  if (context.events !== undefined && events.length > 0) await context.events.publish(events, { principalId: access.principal.accessKey, sourceIp: access.origin.address, requestId: nextRequestId() });
  return { status: response.status, headers: response.headers, text: bodyText(response.body) };
}

function bodyText(body: S3Response['body']): string {
  if (body === undefined) return '';
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  throw new SvcError('InternalError', 'a console call answered a stream');
}
