/**
 * The web console on the console listener: `/` redirects to `/svc/console/`, which serves the
 * browser app (static assets built from src/console/ui), and `/svc/console/api/` is its JSON API.
 * The browser talks to nothing else: the server does the work in-process through the object layer
 * and the admin services. Every API route but sign-in needs the session cookie, and every call
 * that changes state also the CSRF token header (`x-csrf-token`); each route then checks the
 * session's identity against its policies (access.ts) before it reads or changes anything.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SvcError, type ErrorCode } from '../errors/index.js';
import type { ConsoleContext } from './context.js';
import { asSvcError, errorContentType, errorJson, sendError } from './errors.js';
import { clientOrigin, trustedProxyList } from './client-origin.js';
import { cookieValue, sessionCookie, sessionCookieName } from './session.js';
import { RevokedSessions, isFramable, requestBody, setRequestBody, setRequestState } from './request-state.js';
import { RequestBody, settleUnreadBody } from '../api/s3/request-body.js';
import { limits } from '../util/limits.js';
import { ConsoleAccess, sessionPrincipal } from './access.js';
import { accessOf } from './route-access.js';
import { sessionRoutes } from './routes-session.js';
import { ssoRoutes } from './routes-sso.js';
import { bucketRoutes } from './routes-buckets.js';
import { objectRoutes } from './routes-objects.js';
import { uploadRoutes } from './routes-uploads.js';
import { clusterRoutes } from './routes-cluster.js';
import { planRoutes } from './routes-plan.js';
import { userRoutes } from './routes-users.js';
import { healthRoutes } from './routes-health.js';
import { previewRoutes } from './routes-preview.js';
import { bucketSettingsRoutes } from './routes-bucket-settings.js';
import { objectActionRoutes } from './routes-object-actions.js';
import { sessionsRoutes } from './routes-sessions.js';
import { SessionRegistry } from './session-registry.js';
import type { ConsoleAssets } from './assets.js';
import swagger from '@fastify/swagger';
import { checkAnswers, wildcardAsPrefix } from '../api/admin/route-schema.js';
import { readSmallBody } from '../api/admin/admin-plugin.js';
import { consoleOpenApiSchema } from './api-schemas.js';
import { nextRequestId } from '../api/request-line.js';
import { auditRoutes, setConsoleRequestFacts, setConsoleSessionFacts } from './audit.js';

export const consolePrefix = '/svc/console/';
const apiPrefix = '/svc/console/api';

/** No inline script or style, nothing from elsewhere, no framing; frames only of the console's own PDF previews (which are sandboxed). */
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self'; font-src 'self'; connect-src 'self'; frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/**
 * Object bytes users stored, served from the console's origin (routes with `config.userContent`):
 * a sandbox (no script, an opaque origin, so an HTML object cannot act as the console) and
 * nothing loaded from anywhere.
 */
const userContentPolicy = "sandbox; default-src 'none'; frame-ancestors 'none'";

/** A PDF preview: the same sandbox, framed by the console's own page only. */
const framedContentPolicy = "sandbox; default-src 'none'; frame-ancestors 'self'";

export interface ConsolePluginOptions {
  context: ConsoleContext;
  assets: ConsoleAssets;
  trustedProxies: string[];
  /** A body that sends nothing for this long while it is read is answered RequestTimeout (0: no limit), as on the S3 listener. */
  bodyIdleTimeoutMs: number;
  /** The sessions this node refuses, shared with its peer handler that takes the other nodes' sign-outs (a list of its own when left out). */
  revoked?: RevokedSessions;
}

export async function consolePlugin(app: FastifyInstance, options: ConsolePluginOptions): Promise<void> {
  app.addHook('onRequest', async (request) => setRequestBody(request, new RequestBody(request.raw, options.bodyIdleTimeoutMs)));
  app.addHook('onSend', async (request, reply, payload) => {
    setSecurityHeaders(reply, (request.routeOptions.config as { userContent?: boolean } | undefined)?.userContent === true, isFramable(request));
    // An answer given before its body ended (a refusal, a route that reads none): the rest is
    // drained, bounded, or the connection closes, so no client holds it by trickling a body.
    if (await settleUnreadBody(requestBody(request), request.raw)) reply.header('connection', 'close');
    return payload;
  });
  app.get('/', async (_request, reply) => reply.redirect(consolePrefix, 302));
  app.get('/svc/console', async (_request, reply) => reply.redirect(consolePrefix, 302));
  app.get(consolePrefix, async (_request, reply) => options.assets.send(reply, 'index.html'));
  app.get(`${consolePrefix}assets/:name`, async (request, reply) => options.assets.send(reply, (request.params as { name: string }).name));
  await app.register(apiPlugin, { ...options, prefix: apiPrefix });
}

function setSecurityHeaders(reply: FastifyReply, userContent = false, framed = false): void {
  reply.header('content-security-policy', userContent ? (framed ? framedContentPolicy : userContentPolicy) : contentSecurityPolicy);
  reply.header('x-frame-options', userContent && framed ? 'SAMEORIGIN' : 'DENY');
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('cross-origin-opener-policy', 'same-origin');
}

/** The console listener's answer to a connection the HTTP parser gave up on, as a console error (the connection then closes). */
export function consoleClientErrorBody(error: SvcError, requestId: string): { contentType: string; body: string } {
  return { contentType: errorContentType, body: errorJson(error, '', requestId) };
}

/** A request on the console listener that fastify could not route (its path does not decode): a console error with the usual headers. */
export async function answerConsoleFrameworkError(error: SvcError, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  setSecurityHeaders(reply);
  reply.header('cache-control', 'no-store');
  await sendError(reply, error, (request.raw.url ?? '/').split('?')[0]!);
}

async function apiPlugin(app: FastifyInstance, options: ConsolePluginOptions): Promise<void> {
  const { context } = options;
  const trusted = trustedProxyList(options.trustedProxies);
  const revoked = options.revoked ?? new RevokedSessions(context.nowMs);
  const registry = new SessionRegistry(() => context.sealer.settings, revoked);
  await app.register(swagger, consoleOpenApiOptions);
  // Uploads stream their body into the object layer: only JSON is parsed here, read with the idle timeout.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', async (request: FastifyRequest) => {
    const text = (await readSmallBody(requestBody(request), limits.consoleJsonBodyMaxBytes, 'console request bodies other than uploads')).toString('utf8');
    return new Promise((resolve, reject) => parseJson(request, text, (error, value) => (error ? reject(error) : resolve(value))));
  });
  app.setErrorHandler(async (error, request, reply) => {
    const known = asSvcError(error, (request.routeOptions.config as { bodyErrorCode?: ErrorCode } | undefined)?.bodyErrorCode);
    if (known.code === 'InternalError') context.logger.warn({ error: String(error), path: request.url }, 'console request failed');
    await sendError(reply, known, request.url.split('?')[0]!);
  });
  checkAnswers(app);
  // A route without a declared access is a bug: the console does not start.
  app.addHook('onRoute', (route) => {
    if (!accessOf(route.config)) throw new Error(`console route ${String(route.method)} ${route.url} declares no access (config.access, route-access.ts)`);
  });
  app.setNotFoundHandler(async (request, reply) => sendError(reply, new SvcError('NotImplemented', `no console API at ${request.url.split('?')[0]}`), request.url.split('?')[0]!));
  app.addHook('onRequest', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    reply.header('x-amz-request-id', nextRequestId());
    const origin = clientOrigin({ remoteAddress: request.raw.socket.remoteAddress, encrypted: 'encrypted' in request.raw.socket, headers: request.headers }, trusted);
    setConsoleRequestFacts(request, origin);
    const access = accessOf(request.routeOptions.config);
    if (access !== undefined && 'public' in access) {
      setRequestState(request, origin);
      return;
    }
    const nowMs = context.nowMs();
    const cookie = cookieValue(request.headers.cookie, sessionCookieName);
    const session = cookie === undefined ? undefined : context.sealer.open(cookie, nowMs);
    if (!session || revoked.has(session)) throw new SvcError('ConsoleSignInRequired');
    if (!isSafe(request) && !context.sealer.csrfTokenMatches(session, headerText(request, 'x-csrf-token'))) throw new SvcError('InvalidCsrfToken');
    const principal = sessionPrincipal(context, session);
    if (nowMs - session.lastSeenMs > limits.consoleSessionRefreshAfterMs) refresh(context, reply, { ...session, lastSeenMs: nowMs }, origin.secure, nowMs);
    const consoleAccess = new ConsoleAccess(context, session, principal, origin);
    registry.seen(session, { address: origin.address, agent: headerText(request, 'user-agent'), nowMs });
    setConsoleSessionFacts(request, consoleAccess);
    setRequestState(request, origin, consoleAccess);
    // Admin actions on the deployment before anything else: a caller without them learns nothing, not even from validation.
    if (access !== undefined && 'on' in access && access.on === 'deployment') await consoleAccess.require(access.actions.map((action) => ({ action })));
  });
  app.get('/openapi.json', { schema: { ...consoleOpenApiSchema, security: [] }, config: { access: { public: 'describes the API, not this deployment' } } }, async () => app.swagger());
  await app.register(sessionRoutes, { context, revoked });
  await app.register(ssoRoutes, { context });
  await app.register(bucketRoutes, { context });
  await app.register(objectRoutes, { context });
  await app.register(uploadRoutes, { context });
  await app.register(clusterRoutes, { context });
  await app.register(planRoutes, { context });
  await app.register(userRoutes, { context });
  await app.register(auditRoutes, { context });
  await app.register(healthRoutes, { context });
  await app.register(previewRoutes, { context });
  await app.register(bucketSettingsRoutes, { context });
  await app.register(objectActionRoutes, { context });
  await app.register(sessionsRoutes, { context, registry });
}

/** The console API's own OpenAPI document (GET /svc/console/api/openapi.json), from its route schemas. */
const consoleOpenApiOptions = {
  openapi: {
    openapi: '3.1.0',
    info: {
      title: 'svc console API',
      version: 'v1',
      description:
        "The console's JSON API, for the console's own browser code. Every route but sign-in, the SSO routes and this document needs the session cookie `svc_console_session` (set by sign-in), and every call that changes state also the session's CSRF token in `x-csrf-token`. Errors are the admin API's `{Code, Message, Resource, RequestId, Details?}`.",
    },
    components: { securitySchemes: { session: { type: 'apiKey' as const, in: 'cookie', name: sessionCookieName, description: 'the console session (HTTP-only, SameSite)' } } },
    security: [{ session: [] }],
  },
  transform: wildcardAsPrefix,
};

function refresh(context: ConsoleContext, reply: FastifyReply, session: Parameters<ConsoleContext['sealer']['seal']>[0], secure: boolean, nowMs: number): void {
  reply.header('set-cookie', sessionCookie(context.sealer.seal(session), { maxAgeMs: context.sealer.remainingMs(session, nowMs), secure }));
}

function isSafe(request: FastifyRequest): boolean {
  return request.method === 'GET' || request.method === 'HEAD';
}

function headerText(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
