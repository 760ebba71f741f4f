/**
 * The console's bucket settings go through the S3 API's own handlers, run in-process: the same
 * parsers and validators (a policy, a lifecycle or CORS configuration is refused with the very
 * error S3 would give), the same storage. The console request becomes an S3 request whose body is
 * the document the browser sent, signed by nobody (the console checked the session already) and
 * carrying its Content-MD5, as S3 asks of some configurations.
 */
import { createHash } from 'node:crypto';
import { SvcError } from '../errors/index.js';
import { anonymousAuth } from '../api/s3/access.js';
import type { S3Context, S3Request, S3Response } from '../api/s3/context.js';
import type { ConsoleAccess } from './access.js';

export type BucketHandler = (context: S3Context, request: S3Request, bucket: string) => Promise<S3Response>;

/** Runs an S3 bucket handler for the session; its answer's body as text ('' for none). */
export async function runBucketHandler(context: S3Context, access: ConsoleAccess, handler: BucketHandler, bucket: string, options: { method: 'GET' | 'PUT' | 'DELETE'; document?: string }): Promise<{ status: number; text: string }> {
  const bytes = options.document === undefined ? undefined : Buffer.from(options.document, 'utf8');
  const headers: Record<string, string> = bytes === undefined ? {} : { 'content-md5': createHash('md5').update(bytes).digest('base64'), 'content-length': String(bytes.length) };
  const request: S3Request = {
    method: options.method,
    query: new URLSearchParams(),
    headers,
    rawHeaders: headers,
    body: (async function* () {
      if (bytes !== undefined && bytes.length > 0) yield new Uint8Array(bytes);
    })(),
    auth: { ...anonymousAuth(), accessKeyId: access.principal.accessKey },
    // A handler that needs one more permission asks the session's evaluator, as S3 asks the caller's.
    authorize: (action, target, key) => access.require([{ action, bucket: target, ...(key !== undefined ? { key } : {}) }]),
  };
  const response = await handler(context, request, bucket);
  return { status: response.status, text: bodyText(response.body) };
}

function bodyText(body: S3Response['body']): string {
  if (body === undefined) return '';
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  throw new SvcError('InternalError', 'a bucket setting answered a stream');
}
