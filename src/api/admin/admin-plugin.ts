/**
 * The admin API under /svc/admin/: every request is SigV4-signed, by the root credentials or by
 * an IAM user, service account or session whose policies hold the actions the route declares
 * (context.ts `RouteAccess`; else AccessDenied and nothing is done); answers and errors are JSON. Errors have the shape
 * { "Code", "Message", "Resource", "RequestId" } with the catalogue's HTTP status.
 *
 * Each route of the table (routes.ts) is its own fastify route with its declared schema: fastify
 * validates the query and the body (a refusal is InvalidQueryParameter or the route's body error,
 * never fastify's default body) and serialises the answer. @fastify/swagger turns the schemas into
 * the OpenAPI document served at GET /svc/admin/openapi.json, the one route that needs no
 * signature: it describes shapes, never this deployment, and tools fetch it without root keys.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import { SvcError, isSvcError, type ErrorCode } from '../../errors/index.js';
import { verifyRequest, type CredentialStore, type PayloadMode } from '../s3/auth/sigv4.js';
import { principalOf, type AccessContext, type AccessPolicies, type Caller } from '../s3/access.js';
import type { S3Context } from '../s3/context.js';
import type { Principal } from '../../iam/index.js';
import { documentedSchema, requireRouteAccess } from './route-access.js';
import { auditPrincipalOf, setAuditFacts } from '../audit-facts.js';
import type { AdminContext, AdminRequest, AdminRoute } from './context.js';
import { requestLine } from '../request-line.js';
import { adminRoutes } from './routes.js';
import { checkAnswers, fastifySchema, openObject, schemaRefusal, statusQuery, wildcardAsPrefix, type RouteSchema } from './route-schema.js';
import { installAdminAudit } from './admin-audit.js';
import { limits } from '../../util/limits.js';

export const adminPrefix = '/svc/admin/';
export const openApiPath = `${adminPrefix}openapi.json`;

export interface AdminPluginOptions {
  context: () => AdminContext;
  credentials: CredentialStore;
  /** Who a signed request acts for (root, or what the IAM store says). */
  access: AccessPolicies;
  /** Bucket policies, for routes that also need S3 actions (placement). */
  objects: AccessContext;
  logger?: { warn(fields: Record<string, unknown>, message: string): void };
}

/** What the hooks learn about a request before its handler runs. */
interface AdminRequestState {
  requestId: string;
  rawPath: string;
  rawQuery: string;
  payload?: PayloadMode;
  body: Buffer;
  /** Who the signed request acts for, with the facts conditions test. */
  caller?: Caller;
}

interface AdminRouteConfig {
  /** No signature needed (the OpenAPI document). */
  public?: boolean;
  bodyErrorCode?: ErrorCode;
  route?: AdminRoute;
}

const states = new WeakMap<FastifyRequest, AdminRequestState>();

export async function adminPlugin(app: FastifyInstance, options: AdminPluginOptions): Promise<void> {
  installAdminAudit(app, options.access.rootAccessKey);
  app.removeAllContentTypeParsers();
  // The body is read raw (its SHA-256 is part of the signature) and parsed by the preValidation hook.
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
  await app.register(swagger, openApiOptions);
  app.setErrorHandler(async (error, request, reply) => sendError(options, request, reply, error));
  app.addHook('onRequest', async (request, reply) => {
    const { requestId, rawPath, rawQuery } = requestLine(request);
    reply.header('x-amz-request-id', requestId);
    const state: AdminRequestState = { requestId, rawPath, rawQuery, body: Buffer.alloc(0) };
    states.set(request, state);
    if (configOf(request).public === true) return;
    const { payload, principal } = authenticate(options, request, rawPath, rawQuery);
    state.payload = payload;
    state.caller = { principal, sourceIp: request.ip, query: new URLSearchParams(rawQuery) };
    const route = configOf(request).route;
    setAuditFacts(request, { principal: auditPrincipalOf(principal), actions: route ? [...route.access.actions] : [] });
    // The route's own actions before anything else: a caller without them learns nothing, not even from validation.
    if (route) await requireRouteAccess({ actions: route.access.actions }, options.context(), adminRequestOf(request), state.caller, options.objects);
  });
  app.addHook('preValidation', async (request) => {
    const state = stateOf(request);
    await readBody(request, state);
    const route = configOf(request).route;
    if (route?.access.conditional && state.caller) {
      const needed = await requireRouteAccess(route.access, options.context(), adminRequestOf(request), state.caller, options.objects);
      setAuditFacts(request, { actions: [...new Set(needed.map((permission) => permission.action))] });
    }
  });
  checkAnswers(app);
  for (const route of adminRoutes) {
    app.route({
      method: route.method,
      url: route.path,
      schema: fastifySchema(documentedSchema(route), tagOf(route.path)),
      config: { bodyErrorCode: route.schema.bodyErrorCode, route } satisfies AdminRouteConfig,
      handler: async (request, reply) => {
        const answer = await route.handle(options.context(), adminRequestOf(request), stateOf(request).caller!.principal!);
        if (answer instanceof Readable) return sendStream(reply, answer);
        return reply.code(200).send(answer ?? {});
      },
    });
  }
  app.get(openApiPath, { schema: { ...fastifySchema(openApiSchema, 'document'), security: [] }, config: { public: true } satisfies AdminRouteConfig }, async () => app.swagger());
  // Anything else under the prefix: signed like the rest, then NotImplemented or MethodNotAllowed.
  app.route({ method: ['GET', 'POST', 'PUT', 'DELETE', 'HEAD'], url: `${adminPrefix}*`, schema: { hide: true }, handler: async (request) => refuseUnknown(request) });
}

const openApiOptions = {
  openapi: {
    openapi: '3.1.0',
    info: {
      title: 'svc admin API',
      version: 'v3, v4',
      description:
        "The admin API of svc. Every route but this document is signed with AWS Signature Version 4 (service `s3`, the deployment region) by the root credentials or by a user, service account or session whose policies hold the admin actions the route needs (docs/users-and-policies.md lists them); anything else is 403 AccessDenied and does nothing. Errors are `{Code, Message, Resource, RequestId, Details?}` with the status of docs/errors.md.",
    },
    components: { securitySchemes: { sigV4: { type: 'apiKey' as const, in: 'header', name: 'Authorization', description: 'AWS Signature Version 4 with the root access key (SVC_ACCESS_KEY / SVC_SECRET_KEY) or an IAM credential (with x-amz-security-token for temporary ones); x-amz-date and x-amz-content-sha256 are signed too.' } } },
    security: [{ sigV4: [] }],
  },
  transform: wildcardAsPrefix,
};

const openApiSchema: RouteSchema = {
  summary: 'This OpenAPI document',
  description: 'The OpenAPI 3.1 document of every admin route, generated from the route schemas. It describes the API, not this deployment (no hosts, pools or keys), so tools fetch it without root credentials.',
  querystring: statusQuery({}),
  response: openObject('an OpenAPI 3.1 document'),
  example: { response: { openapi: '3.1.0', info: { title: 'svc admin API', version: 'v3, v4' }, paths: { '/svc/admin/v3/pools/list': { get: { summary: 'Every pool' } } } } },
};

/** The reference groups routes by what they act on: `v3/pools/list` is in `pools`. */
function tagOf(path: string): string {
  const segments = path.slice(adminPrefix.length).split('/');
  return segments[1] === 'iam' ? 'iam' : segments[1] === 'background-heal' ? 'heal' : (segments[1] ?? 'admin');
}

function configOf(request: FastifyRequest): AdminRouteConfig {
  return (request.routeOptions.config ?? {}) as AdminRouteConfig;
}

function stateOf(request: FastifyRequest): AdminRequestState {
  const state = states.get(request);
  if (!state) throw new SvcError('InternalError', 'admin request state missing');
  return state;
}

function adminRequestOf(request: FastifyRequest): AdminRequest {
  const state = stateOf(request);
  return { rawPath: state.rawPath, rawQuery: state.rawQuery, queryGiven: (request.raw.url ?? '').includes('?'), body: state.body };
}

/** Reads the (small) body, checks its signed hash, and parses it as JSON for a route that takes one. */
async function readBody(request: FastifyRequest, state: AdminRequestState): Promise<void> {
  state.body = await readSmallBody(request.raw, limits.maxAdminBodyBytes, 'admin request bodies');
  const payload = state.payload;
  if (payload?.kind === 'sha256' && createHash('sha256').update(state.body).digest('hex') !== payload.expectedHex) throw new SvcError('XAmzContentSHA256Mismatch');
  if (payload?.kind.startsWith('streaming')) throw new SvcError('InvalidRequest', 'admin requests do not take streaming payloads');
  if (!request.routeOptions.schema?.body) return;
  if (state.body.length === 0) {
    request.body = {};
    return;
  }
  try {
    request.body = JSON.parse(state.body.toString('utf8'));
  } catch {
    throw new SvcError(configOf(request).bodyErrorCode ?? 'InvalidArgument', 'the body is not valid JSON', { field: 'body' });
  }
}

/**
 * A long-lived answer (a live listener's events): newline-delimited JSON, chunked, never buffered
 * by a proxy; the stream is destroyed when the client goes away, which ends what feeds it.
 */
function sendStream(reply: FastifyReply, stream: Readable): FastifyReply {
  reply.raw.on('close', () => stream.destroy());
  return reply.code(200).header('content-type', 'application/x-ndjson').header('cache-control', 'no-store').header('x-accel-buffering', 'no').send(stream);
}

function refuseUnknown(request: FastifyRequest): never {
  const { rawPath } = stateOf(request);
  const otherMethod = adminRoutes.some((route) => pathMatches(route, rawPath));
  throw new SvcError(otherMethod ? 'MethodNotAllowed' : 'NotImplemented', otherMethod ? `${request.method} is not allowed on ${rawPath}` : `no admin API at ${rawPath}`);
}

/** Whether a route's fastify path (`:name` one segment, `*` the rest) matches a request path. */
export function pathMatches(route: Pick<AdminRoute, 'path'>, rawPath: string): boolean {
  const pattern = route.path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+').replace(/\*$/, '.*');
  return new RegExp(`^${pattern}$`).test(rawPath);
}

/** A request under the admin prefix that fastify could not route (its path does not decode): the admin JSON error, with its request id. */
export async function answerAdminFrameworkError(error: SvcError, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const state = { ...requestLine(request), body: Buffer.alloc(0) };
  states.set(request, state);
  reply.header('x-amz-request-id', state.requestId);
  await sendError({}, request, reply, error);
}

async function sendError(options: Pick<AdminPluginOptions, 'logger'>, request: FastifyRequest, reply: FastifyReply, error: unknown): Promise<void> {
  const state = states.get(request) ?? { ...requestLine(request), body: Buffer.alloc(0) };
  const known = isSvcError(error) ? error : (schemaRefusal(error, configOf(request).bodyErrorCode) ?? new SvcError('InternalError', undefined, {}, { cause: error }));
  if (known.code === 'InternalError') options.logger?.warn({ requestId: state.requestId, error: String(error), message: known.message, path: state.rawPath }, 'admin request failed');
  await reply
    .code(known.httpStatus)
    .header('content-type', 'application/json')
    .send(JSON.stringify({ Code: known.code, Message: known.message, Resource: state.rawPath, RequestId: state.requestId, ...(Object.keys(known.details).length > 0 ? { Details: known.details } : {}) }));
}

/** A valid signature by root or an IAM credential; any authentication failure is AccessDenied, with the reason. */
function authenticate(options: AdminPluginOptions, request: FastifyRequest, rawPath: string, rawQuery: string): { payload: PayloadMode; principal: Principal } {
  try {
    const auth = verifyRequest({ method: request.method, rawPath, rawQuery, headers: request.headers }, options.credentials, Date.now());
    return { payload: auth.payload, principal: principalOf(options.access, auth.accessKeyId, auth.sessionToken) };
  } catch (error) {
    const reason = isSvcError(error) ? `${error.code}: ${error.message}` : String(error);
    throw new SvcError('AccessDenied', `admin requests must be signed by the root credentials or a user's (${reason})`);
  }
}


/** A small body read whole; past `maxBytes`, EntityTooLarge naming `what` (the console reads its JSON bodies with it too). */
export async function readSmallBody(body: AsyncIterable<Uint8Array>, maxBytes: number, what: string): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.length;
    if (total > maxBytes) throw new SvcError('EntityTooLarge', `${what} are at most ${maxBytes / 1024 / 1024} MiB`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
