/**
 * OpenID Connect sign-ins in progress on this node: state, nonce and PKCE verifier, kept in
 * memory only (SPEC "Authentication" 3), at most `consoleLoginStatesMax` at once, each for
 * `consoleLoginStateTtlMs` and used once. A state names the node that issued it, so a callback
 * that reaches another node is told so instead of "unknown".
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { SvcError } from '../errors/index.js';
import { limits } from '../util/limits.js';

export interface LoginState {
  nonce: string;
  codeVerifier: string;
  redirectUri: string;
  /** Random value also held in the browser's login cookie: the callback must come from that browser. */
  binding: string;
  startedAtMs: number;
}

export class LoginStates {
  /** This process's tag, the first part of every state it issues. */
  readonly nodeTag = randomBytes(6).toString('base64url');
  private readonly pending = new Map<string, LoginState>();
  /** States already used (or expired), remembered as long as they could be replayed. */
  private readonly finished = new Map<string, { untilMs: number; expired: boolean }>();

  constructor(private readonly nowMs: () => number) {}

  /** A new state for `login`; throws ConsoleSsoBusy when too many are in progress. */
  add(login: Omit<LoginState, 'binding' | 'startedAtMs'>): { state: string; binding: string } {
    const nowMs = this.nowMs();
    this.prune(nowMs);
    if (this.pending.size >= limits.consoleLoginStatesMax) throw new SvcError('ConsoleSsoBusy');
    const state = `${this.nodeTag}.${randomBytes(24).toString('base64url')}`;
    const binding = randomBytes(24).toString('base64url');
    this.pending.set(state, { ...login, binding, startedAtMs: nowMs });
    return { state, binding };
  }

  /** The login for `state`, removed so it cannot be used again; throws a named error otherwise. */
  take(state: string, binding: string | undefined): LoginState {
    const nowMs = this.nowMs();
    this.prune(nowMs);
    const login = this.pending.get(state);
    if (!login) throw this.whyUnknown(state);
    if (binding === undefined || !sameText(binding, login.binding)) throw new SvcError('ConsoleSsoBrowserMismatch');
    this.pending.delete(state);
    this.remember(state, nowMs, false);
    return login;
  }

  get size(): number {
    return this.pending.size;
  }

  private whyUnknown(state: string): SvcError {
    const tag = state.split('.')[0];
    if (tag !== this.nodeTag) return new SvcError('ConsoleSsoWrongNode', undefined, { startedOn: tag ?? '', callbackOn: this.nodeTag });
    const done = this.finished.get(state);
    if (done?.expired) return new SvcError('ConsoleSsoStateExpired');
    if (done) return new SvcError('ConsoleSsoStateUsed');
    return new SvcError('ConsoleSsoStateUnknown');
  }

  private prune(nowMs: number): void {
    for (const [state, login] of this.pending) {
      if (nowMs - login.startedAtMs <= limits.consoleLoginStateTtlMs) break;
      this.pending.delete(state);
      this.remember(state, nowMs, true);
    }
    for (const [state, done] of this.finished) {
      if (done.untilMs >= nowMs && this.finished.size <= limits.consoleLoginStatesMax) break;
      this.finished.delete(state);
    }
  }

  private remember(state: string, nowMs: number, expired: boolean): void {
    this.finished.set(state, { untilMs: nowMs + limits.consoleLoginStateTtlMs, expired });
  }
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
