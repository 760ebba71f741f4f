/**
 * The console sessions this node has served, for the sessions page. A session is its sealed
 * cookie (session.ts) and every node accepts it, so no node holds a list of them all: each node
 * remembers, in memory, the sessions that made a request to it (when it began, when it was last
 * seen here, from which address and browser), forgets one once it would have expired, and ends
 * one by refusing its id from then on, as sign-out does (the caller announces it to the other
 * nodes, which refuse it too). A restart forgets the list.
 */
import { createHash } from 'node:crypto';
import { limits } from '../util/limits.js';
import type { Session, SessionKind, SessionSettings } from './session.js';
import type { RevokedSessions } from './request-state.js';

export interface SessionRecord {
  /** Names the session on the page and in the API; not its id (the CSRF token is bound to the id). */
  handle: string;
  id: string;
  accessKey: string;
  kind: SessionKind;
  issuedAtMs: number;
  lastSeenMs: number;
  address: string;
  agent: string;
}

export class SessionRegistry {
  /** By session id, least recently seen first. */
  private readonly records = new Map<string, SessionRecord>();

  constructor(
    /** Read when needed (the sealer's idle and absolute expiry). */
    private readonly settings: () => SessionSettings,
    private readonly revoked: RevokedSessions,
  ) {}

  /** A request of the session reached this node. */
  seen(session: Session, request: { address: string; agent: string | undefined; nowMs: number }): void {
    const known = this.records.get(session.id);
    this.records.delete(session.id);
    this.records.set(session.id, {
      handle: known?.handle ?? handleOf(session.id),
      id: session.id,
      accessKey: session.accessKey,
      kind: session.kind,
      issuedAtMs: session.issuedAtMs,
      lastSeenMs: request.nowMs,
      address: request.address,
      agent: (request.agent ?? '').slice(0, 256),
    });
    if (this.records.size > limits.consoleSessionsRememberedMax) this.records.delete(this.records.keys().next().value!);
  }

  /** The sessions alive on this node (of one principal, when named), most recently seen first. */
  list(nowMs: number, accessKey?: string): SessionRecord[] {
    const alive: SessionRecord[] = [];
    for (const record of this.records.values()) {
      if (this.ended(record, nowMs)) {
        this.records.delete(record.id);
        continue;
      }
      if (accessKey === undefined || record.accessKey === accessKey) alive.push(record);
    }
    return alive.reverse();
  }

  byHandle(handle: string, nowMs: number): SessionRecord | undefined {
    return this.list(nowMs).find((record) => record.handle === handle);
  }

  /** Ends the session on this node: its cookie is refused here from now on. Answers what to announce to the other nodes. */
  end(record: SessionRecord): { sessionId: string; untilMs: number } {
    const ended = this.revoked.revoke({ id: record.id, issuedAtMs: record.issuedAtMs }, this.settings().maxMs);
    this.records.delete(record.id);
    return ended;
  }

  /** Forgets a session signed out by its own request. */
  forget(sessionId: string): void {
    this.records.delete(sessionId);
  }

  private ended(record: SessionRecord, nowMs: number): boolean {
    const settings = this.settings();
    return nowMs - record.lastSeenMs > settings.idleMs || nowMs - record.issuedAtMs > settings.maxMs || this.revoked.hasId(record.id);
  }
}

export function handleOf(sessionId: string): string {
  return createHash('sha256').update(`svc console session handle ${sessionId}`).digest('base64url').slice(0, 22);
}
