/**
 * Sign-in, the session and sign-out. Sign-in compares with the root credentials in constant time;
 * failures are logged and throttled per client address (429 with Retry-After).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { SvcError } from '../errors/index.js';
import type { ConsoleContext } from './context.js';
import { sessionCookie, type Session } from './session.js';
import { SignInThrottle } from './sign-in-throttle.js';
import { requestOrigin, requestSession, type RevokedSessions } from './request-state.js';
import { sessionSchemas } from './api-schemas.js';

export async function sessionRoutes(app: FastifyInstance, options: { context: ConsoleContext; revoked: RevokedSessions }): Promise<void> {
  const { context } = options;
  const throttle = new SignInThrottle();
  app.post('/session', { schema: sessionSchemas.signIn, config: { public: true } }, async (request, reply) => {
    const origin = requestOrigin(request);
    const nowMs = context.nowMs();
    const waitMs = throttle.waitMs(origin.address, nowMs);
    if (waitMs > 0) {
      reply.header('retry-after', String(Math.ceil(waitMs / 1000)));
      throw new SvcError('TooManySignInAttempts', `too many failed sign-ins from this address: try again in ${Math.ceil(waitMs / 1000)} s`, { retryAfterSeconds: Math.ceil(waitMs / 1000) });
    }
    const { accessKey, secretKey } = signInBody(request.body);
    if (!context.sealer.credentialsMatch(accessKey, secretKey)) {
      const record = throttle.failed(origin.address, nowMs);
      context.logger.warn({ client: origin.address, accessKey: accessKey.slice(0, 64), failures: record.failures }, 'console sign-in failed');
      throw new SvcError('ConsoleSignInFailed');
    }
    throttle.succeeded(origin.address);
    const session = context.sealer.issue(nowMs);
    context.logger.info({ client: origin.address }, 'console sign-in');
    return sessionAnswer(context, reply, session, origin.secure, nowMs);
  });
  app.get('/session', { schema: sessionSchemas.current }, async (request, reply) => sessionAnswer(context, reply, requestSession(request), requestOrigin(request).secure, context.nowMs()));
  app.delete('/session', { schema: sessionSchemas.signOut }, async (request, reply) => {
    const session = requestSession(request);
    options.revoked.revoke(session, context.sealer.settings.maxMs);
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

function sessionAnswer(context: ConsoleContext, reply: FastifyReply, session: Session, secure: boolean, nowMs: number): Record<string, unknown> {
  const remainingMs = context.sealer.remainingMs(session, nowMs);
  reply.header('set-cookie', sessionCookie(context.sealer.seal(session), { maxAgeMs: remainingMs, secure }));
  return {
    accessKey: session.accessKey,
    csrfToken: context.sealer.csrfToken(session),
    idleExpiresAt: new Date(nowMs + context.sealer.settings.idleMs).toISOString(),
    expiresAt: new Date(session.issuedAtMs + context.sealer.settings.maxMs).toISOString(),
  };
}

