/**
 * The admin API under /svc/admin/: every request is SigV4-signed by the root credentials (else
 * AccessDenied and nothing is done); answers and errors are JSON. Errors have the shape
 * { "Code", "Message", "Resource", "RequestId" } with the catalogue's HTTP status.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SvcError, isSvcError } from '../../errors/index.js';
import { verifyRequest, type CredentialStore, type PayloadMode } from '../s3/auth/sigv4.js';
import type { AdminContext, AdminRequest } from './context.js';
import { requestLine } from '../request-line.js';
import { adminRoutes } from './routes.js';

export const adminPrefix = '/svc/admin/';

export interface AdminPluginOptions {
  context: () => AdminContext;
  credentials: CredentialStore;
  rootAccessKey: string;
  logger?: { warn(fields: Record<string, unknown>, message: string): void };
}

export async function adminPlugin(app: FastifyInstance, options: AdminPluginOptions): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
  app.route({ method: ['GET', 'POST', 'PUT', 'DELETE', 'HEAD'], url: `${adminPrefix}*`, handler: (request, reply) => handle(options, request, reply) });
}

async function handle(options: AdminPluginOptions, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { requestId, rawPath, rawQuery } = requestLine(request);
  reply.header('x-amz-request-id', requestId);
  try {
    const payload = authenticate(options, request, rawPath, rawQuery);
    const body = await readSmallBody(request);
    if (payload.kind === 'sha256' && createHash('sha256').update(body).digest('hex') !== payload.expectedHex) throw new SvcError('XAmzContentSHA256Mismatch');
    if (payload.kind.startsWith('streaming')) throw new SvcError('InvalidRequest', 'admin requests do not take streaming payloads');
    const matches = (candidate: (typeof adminRoutes)[number]) => candidate.path === rawPath || (candidate.subtree === true && rawPath.startsWith(candidate.path));
    const route = adminRoutes.find((candidate) => candidate.method === request.method && matches(candidate));
    if (!route) {
      const otherMethod = adminRoutes.some(matches);
      throw new SvcError(otherMethod ? 'MethodNotAllowed' : 'NotImplemented', otherMethod ? `${request.method} is not allowed on ${rawPath}` : `no admin API at ${rawPath}`);
    }
    const adminRequest: AdminRequest = { rawQuery, queryGiven: (request.raw.url ?? '').includes('?'), body };
    const result = await route.handle(options.context(), adminRequest, rawPath.slice(route.path.length));
    await reply.code(200).header('content-type', 'application/json').send(JSON.stringify(result ?? {}));
  } catch (error) {
    const known = isSvcError(error) ? error : new SvcError('InternalError', undefined, {}, { cause: error });
    if (!isSvcError(error)) options.logger?.warn({ requestId, error: String(error), path: rawPath }, 'admin request failed');
    await reply
      .code(known.httpStatus)
      .header('content-type', 'application/json')
      .send(JSON.stringify({ Code: known.code, Message: known.message, Resource: rawPath, RequestId: requestId, ...(Object.keys(known.details).length > 0 ? { Details: known.details } : {}) }));
  }
}

/** Root credentials only; any authentication failure is AccessDenied, with the reason. */
function authenticate(options: AdminPluginOptions, request: FastifyRequest, rawPath: string, rawQuery: string): PayloadMode {
  let accessKeyId: string;
  let payload: PayloadMode;
  try {
    ({ accessKeyId, payload } = verifyRequest({ method: request.method, rawPath, rawQuery, headers: request.headers }, options.credentials, Date.now()));
  } catch (error) {
    const reason = isSvcError(error) ? `${error.code}: ${error.message}` : String(error);
    throw new SvcError('AccessDenied', `admin requests must be signed with the root credentials (${reason})`);
  }
  if (accessKeyId !== options.rootAccessKey) throw new SvcError('AccessDenied', 'admin requests must be signed with the root credentials');
  return payload;
}

const maxAdminBodyBytes = 1024 * 1024;

async function readSmallBody(request: FastifyRequest): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of request.raw) {
    total += (chunk as Buffer).length;
    if (total > maxAdminBodyBytes) throw new SvcError('EntityTooLarge', 'admin request bodies are at most 1 MiB');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
