/**
 * Sign-in, the session and sign-out. Sign-in takes the root credentials or an enabled user's
 * (compared in constant time); failures are logged and throttled per client address (429 with
 * Retry-After): the socket's peer, or the client a trusted proxy forwards for. The session's
 * answer names the pages its policies open.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { SvcError } from '../errors/index.js';
import type { ConsoleContext } from './context.js';
import { sessionCookie, type SessionIdentity } from './session.js';
import { SignInThrottle } from './sign-in-throttle.js';
import { throttleKey } from './client-origin.js';
import { limits } from '../util/limits.js';
import { requestAccess, requestOrigin, requestSession, type RevokedSessions } from './request-state.js';
import { ConsoleAccess, sessionPrincipal } from './access.js';
import { sessionSchemas } from './api-schemas.js';
import { setSignInFacts } from './audit.js';

export async function sessionRoutes(app: FastifyInstance, options: { context: ConsoleContext; revoked: RevokedSessions }): Promise<void> {
  const { context } = options;
  const throttle = new SignInThrottle();
  app.post('/session', { schema: sessionSchemas.signIn, config: { access: { public: 'sign-in: the credentials are the request' } } }, async (request, reply) => {
    const origin = requestOrigin(request);
    const nowMs = context.nowMs();
    const waitMs = throttle.waitMs(throttleKey(origin), nowMs);
    if (waitMs > 0) {
      reply.header('retry-after', String(Math.ceil(waitMs / 1000)));
      throw new SvcError('TooManySignInAttempts', `too many failed sign-ins from this address: try again in ${Math.ceil(waitMs / 1000)} s`, { retryAfterSeconds: Math.ceil(waitMs / 1000) });
    }
    const { accessKey, secretKey } = signInBody(request.body);
    setSignInFacts(request, accessKey, context.credentials.accessKey);
    const identity = signInIdentity(context, accessKey, secretKey);
    if (!identity) {
      const record = throttle.failed(throttleKey(origin), nowMs);
      context.logger.warn({ client: origin.address, peer: origin.peer, accessKey: accessKey.slice(0, 64), failures: record.failures }, 'console sign-in failed');
      throw new SvcError('ConsoleSignInFailed');
    }
    throttle.succeeded(throttleKey(origin));
    const session = context.sealer.issue(issueAtMs(context, identity, nowMs), identity === 'root' ? undefined : identity);
    context.logger.info({ client: origin.address, accessKey: session.accessKey, kind: session.kind }, 'console sign-in');
    return sessionAnswer(context, reply, new ConsoleAccess(context, session, sessionPrincipal(context, session), origin), nowMs);
  });
  app.get('/session', { schema: sessionSchemas.current, config: { access: { session: 'the session itself: who, its policies, the pages it may open' } } }, async (request, reply) => sessionAnswer(context, reply, requestAccess(request), context.nowMs()));
  app.delete('/session', { schema: sessionSchemas.signOut, config: { access: { session: 'signs the session out' } } }, async (request, reply) => {
    const session = requestSession(request);
    const ended = options.revoked.revoke(session, context.sealer.settings.maxMs);
    await context.announceSessionEnded?.(ended);
    reply.header('set-cookie', sessionCookie(undefined, { maxAgeMs: 0, secure: requestOrigin(request).secure }));
    return { signedOut: true };
  });
}

function signInBody(body: unknown): { accessKey: string; secretKey: string } {
  const record = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (typeof record.accessKey !== 'string' || record.accessKey === '') throw new SvcError('InvalidArgument', 'accessKey is required', { field: 'accessKey' });
  if (typeof record.secretKey !== 'string' || record.secretKey === '') throw new SvcError('InvalidArgument', 'secretKey is required', { field: 'secretKey' });
  if (record.accessKey.length > 1024 || record.secretKey.length > 1024) throw new SvcError('InvalidArgument', 'the credentials are too long');
  return { accessKey: record.accessKey, secretKey: record.secretKey };
}

/** The root credentials, an enabled user whose secret matches, or undefined. */
function signInIdentity(context: ConsoleContext, accessKey: string, secretKey: string): 'root' | SessionIdentity | undefined {
  if (context.sealer.credentialsMatch(accessKey, secretKey)) return 'root';
  // Users only: service accounts and temporary credentials are for programs, not console sign-in.
  const secret = context.iam().userInfo(accessKey) ? context.iam().secretFor(accessKey) : undefined;
  if (secret === undefined || !context.sealer.sameText(secretKey, secret)) return undefined;
  return { kind: 'user', accessKey };
}

/**
 * A user's session begins no earlier than the user's `sessionsFromMs`, which another node's clock
 * may have set a little ahead of this one's (at most 30 s is bridged; the sealer refuses sessions
 * seen more than a minute in the future).
 */
function issueAtMs(context: ConsoleContext, identity: 'root' | SessionIdentity, nowMs: number): number {
  if (identity === 'root' || identity.kind !== 'user') return nowMs;
  const fromMs = context.iam().sessionsFromMs(identity.accessKey) ?? nowMs;
  return Math.max(nowMs, Math.min(fromMs, nowMs + limits.consoleClockSkewBridgedMs));
}

async function sessionAnswer(context: ConsoleContext, reply: FastifyReply, access: ConsoleAccess, nowMs: number): Promise<Record<string, unknown>> {
  const session = access.session;
  const remainingMs = context.sealer.remainingMs(session, nowMs);
  reply.header('set-cookie', sessionCookie(context.sealer.seal(session), { maxAgeMs: remainingMs, secure: access.origin.secure }));
  return {
    accessKey: session.accessKey,
    kind: session.kind,
    policies: session.kind === 'user' ? context.iam().effectivePolicyNames(session.accessKey) : session.policies,
    pages: await access.pages(),
    csrfToken: context.sealer.csrfToken(session),
    idleExpiresAt: new Date(nowMs + context.sealer.settings.idleMs).toISOString(),
    expiresAt: new Date(session.issuedAtMs + context.sealer.settings.maxMs).toISOString(),
  };
}

