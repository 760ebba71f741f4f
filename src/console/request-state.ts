/**
 * Per-request console state set by the plugin's hooks: the body reader, the client origin and, on
 * routes that need it, the checked session with what it may do. Signed-out sessions are remembered here until they would expire.
 */
import type { FastifyRequest } from 'fastify';
import type { ClientOrigin } from './client-origin.js';
import type { Session } from './session.js';
import type { ConsoleAccess } from './access.js';
import { limits } from '../util/limits.js';
import type { RequestBody } from '../api/s3/request-body.js';

const origins = new WeakMap<FastifyRequest, ClientOrigin>();
const accesses = new WeakMap<FastifyRequest, ConsoleAccess>();
const bodies = new WeakMap<FastifyRequest, RequestBody>();
const framable = new WeakSet<FastifyRequest>();

/** Stored bytes the console's own page may show in a frame (a PDF preview): still sandboxed, framed only by the console's origin. */
export function markFramable(request: FastifyRequest): void {
  framable.add(request);
}

export function isFramable(request: FastifyRequest): boolean {
  return framable.has(request);
}

/** The request's body as routes read it: with the listener's idle timeout (set by the plugin's first hook). */
export function requestBody(request: FastifyRequest): RequestBody {
  const body = bodies.get(request);
  if (!body) throw new Error('console request without a body reader: the plugin hook did not run');
  return body;
}

export function setRequestBody(request: FastifyRequest, body: RequestBody): void {
  bodies.set(request, body);
}

export function setRequestState(request: FastifyRequest, origin: ClientOrigin, access?: ConsoleAccess): void {
  origins.set(request, origin);
  if (access) accesses.set(request, access);
}

export function requestOrigin(request: FastifyRequest): ClientOrigin {
  const origin = origins.get(request);
  if (!origin) throw new Error('console request without an origin: the plugin hook did not run');
  return origin;
}

export function requestSession(request: FastifyRequest): Session {
  return requestAccess(request).session;
}

/** The checked session's identity and what it may do. */
export function requestAccess(request: FastifyRequest): ConsoleAccess {
  const access = accesses.get(request);
  if (!access) throw new Error('console request without a session: the route must not be public');
  return access;
}

/**
 * Session ids signed out or ended, on this node or announced by another, kept until their absolute
 * expiry. Each node holds its own list: a sign-out is announced to every peer, which refuses the
 * session from then on too.
 */
export class RevokedSessions {
  private readonly untilMs = new Map<string, number>();

  constructor(private readonly nowMs: () => number) {}

  /** Refuses the session here; answers the id and until when, for the announcement to the peers. */
  revoke(session: Pick<Session, 'id' | 'issuedAtMs'>, maxMs: number): { sessionId: string; untilMs: number } {
    const untilMs = session.issuedAtMs + maxMs;
    this.revokeId(session.id, untilMs);
    return { sessionId: session.id, untilMs };
  }

  /** Refuses a session by id until `untilMs` (a peer's announcement). */
  revokeId(sessionId: string, untilMs: number): void {
    this.untilMs.delete(sessionId);
    this.untilMs.set(sessionId, untilMs);
    if (this.untilMs.size > limits.consoleRevokedSessionsMax) this.untilMs.delete(this.untilMs.keys().next().value!);
  }

  has(session: Session): boolean {
    return this.hasId(session.id);
  }

  hasId(sessionId: string): boolean {
    const until = this.untilMs.get(sessionId);
    if (until === undefined) return false;
    if (until < this.nowMs()) this.untilMs.delete(sessionId);
    return true;
  }
}
