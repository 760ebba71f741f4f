/**
 * Console sessions without server-side state, so every node of a cluster accepts a session any
 * node issued: the cookie is the session, sealed with AES-256-GCM under a key derived (HKDF) from
 * the root credentials. A deployment with other root credentials derives another key and cannot
 * open it. A session ends at its idle expiry (refreshed as it is used) or at its absolute expiry.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

export interface SessionSettings {
  idleMs: number;
  maxMs: number;
}

/** Who a session acts for: the root credentials, a user of the IAM store, or an account signed in with SSO. */
export type SessionKind = 'root' | 'user' | 'sso';

export interface Session {
  /** Random id: the CSRF token is bound to it. */
  id: string;
  /** The root or user access key; `sso:<user>` for SSO. */
  accessKey: string;
  kind: SessionKind;
  /** SSO only: the policies its claim named (a user's policies are read from the IAM store on every request). */
  policies: string[];
  issuedAtMs: number;
  lastSeenMs: number;
}

/** Whom `issue` signs in (the root credentials when left out). */
export type SessionIdentity = { kind: 'user'; accessKey: string } | { kind: 'sso'; who: string; policies: string[] };

export const sessionCookieName = 'svc_console_session';
const ivBytes = 12;
const tagBytes = 16;

export class SessionSealer {
  private readonly sealKey: Buffer;
  private readonly csrfKey: Buffer;

  constructor(
    private readonly credentials: { accessKey: string; secretKey: string },
    readonly settings: SessionSettings,
  ) {
    const derive = (purpose: string) => Buffer.from(hkdfSync('sha256', credentials.secretKey, credentials.accessKey, `svc console ${purpose} v1`, 32));
    this.sealKey = derive('session');
    this.csrfKey = derive('csrf');
  }

  /** Constant-time comparison of a sign-in against the root credentials. */
  credentialsMatch(accessKey: string, secretKey: string): boolean {
    const keyOk = this.sameText(accessKey, this.credentials.accessKey);
    const secretOk = this.sameText(secretKey, this.credentials.secretKey);
    return keyOk && secretOk;
  }

  /** Constant-time comparison of two texts (a user's secret at sign-in). */
  sameText(given: string, expected: string): boolean {
    const digest = (text: string) => createHmac('sha256', this.csrfKey).update(text).digest();
    return timingSafeEqual(digest(given), digest(expected));
  }

  /** A new session for the root credentials, a user, or an account signed in with SSO (shown as `sso:<who>`). */
  issue(nowMs: number, identity?: SessionIdentity): Session {
    const id = randomBytes(16).toString('base64url');
    const times = { issuedAtMs: nowMs, lastSeenMs: nowMs };
    if (identity?.kind === 'user') return { id, accessKey: identity.accessKey, kind: 'user', policies: [], ...times };
    if (identity?.kind === 'sso') return { id, accessKey: `sso:${identity.who}`, kind: 'sso', policies: [...identity.policies], ...times };
    return { id, accessKey: this.credentials.accessKey, kind: 'root', policies: [], ...times };
  }

  seal(session: Session): string {
    const iv = randomBytes(ivBytes);
    const cipher = createCipheriv('aes-256-gcm', this.sealKey, iv);
    const body = Buffer.concat([cipher.update(JSON.stringify([session.id, session.accessKey, session.issuedAtMs, session.lastSeenMs, session.kind, session.policies]), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** The session in a cookie value, or undefined when it is forged, foreign, malformed or expired. */
  open(value: string, nowMs: number): Session | undefined {
    const sealed = Buffer.from(value, 'base64url');
    if (sealed.length < ivBytes + tagBytes + 2) return undefined;
    let fields: unknown;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.sealKey, sealed.subarray(0, ivBytes));
      decipher.setAuthTag(sealed.subarray(sealed.length - tagBytes));
      const plain = Buffer.concat([decipher.update(sealed.subarray(ivBytes, sealed.length - tagBytes)), decipher.final()]);
      fields = JSON.parse(plain.toString('utf8'));
    } catch {
      return undefined;
    }
    if (!Array.isArray(fields) || fields.length !== 6) return undefined;
    const [id, accessKey, issuedAtMs, lastSeenMs, kind, policies] = fields as unknown[];
    if (typeof id !== 'string' || typeof accessKey !== 'string' || typeof issuedAtMs !== 'number' || typeof lastSeenMs !== 'number') return undefined;
    if ((kind !== 'root' && kind !== 'user' && kind !== 'sso') || !Array.isArray(policies) || !policies.every((name) => typeof name === 'string')) return undefined;
    const session: Session = { id, accessKey, kind, policies: policies as string[], issuedAtMs, lastSeenMs };
    return this.expired(session, nowMs) ? undefined : session;
  }

  expired(session: Session, nowMs: number): boolean {
    return nowMs - session.lastSeenMs > this.settings.idleMs || nowMs - session.issuedAtMs > this.settings.maxMs || session.lastSeenMs > nowMs + 60_000;
  }

  /** When the session ends if it stays idle from now (what the cookie's Max-Age says). */
  remainingMs(session: Session, nowMs: number): number {
    return Math.max(0, Math.min(session.lastSeenMs + this.settings.idleMs, session.issuedAtMs + this.settings.maxMs) - nowMs);
  }

  csrfToken(session: Session): string {
    return createHmac('sha256', this.csrfKey).update(session.id).digest('base64url');
  }

  csrfTokenMatches(session: Session, token: string | undefined): boolean {
    if (token === undefined) return false;
    const expected = Buffer.from(this.csrfToken(session));
    const given = Buffer.from(token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}

/** Set-Cookie for a session (or, with `undefined`, one that removes it). */
export function sessionCookie(value: string | undefined, options: { maxAgeMs: number; secure: boolean }): string {
  return cookieHeader(sessionCookieName, value, { ...options, path: '/svc/console/', sameSite: 'Strict' });
}

/** A Set-Cookie header value: HTTP-only always; `undefined` removes the cookie. */
export function cookieHeader(name: string, value: string | undefined, options: { maxAgeMs: number; secure: boolean; path: string; sameSite: 'Strict' | 'Lax' }): string {
  const parts = [`${name}=${value ?? ''}`, `Path=${options.path}`, 'HttpOnly', `SameSite=${options.sameSite}`, `Max-Age=${value === undefined ? 0 : Math.floor(options.maxAgeMs / 1000)}`];
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}

export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}
