/**
 * Internode RPC credentials: a short-lived token derived from the root credentials. A token is
 * `<expiresAtMs>.<hex HMAC-SHA256(rpcKey, expiresAtMs)>` with rpcKey = HMAC-SHA256(secretKey,
 * "svc-internode-rpc/<accessKey>"); it is refused once expired, so a captured token cannot be
 * replayed for long. Sent as `Authorization: SvcRpc <token>`, or in each frame of an internode
 * stream.
 *
 * A sender uses one token for a few seconds (RpcTokenSource) rather than signing every call, and
 * a node's stream listener remembers the tokens whose signature it has checked (RpcTokenVerifier):
 * every frame's token is still checked, its expiry against the clock, its signature by a lookup.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { SvcError } from '../errors/index.js';
import { limits } from '../util/limits.js';

export const rpcAuthScheme = 'SvcRpc';

const tokenPattern = /^(\d{1,16})\.([0-9a-f]{64})$/;
const headerPrefix = `${rpcAuthScheme} `;

export function rpcKeyFor(accessKey: string, secretKey: string): Buffer {
  return createHmac('sha256', secretKey).update(`svc-internode-rpc/${accessKey}`).digest();
}

export function createRpcToken(key: Buffer, nowMs: number, ttlMs: number = limits.rpcTokenTtlMs): string {
  const expiresAtMs = nowMs + ttlMs;
  return `${expiresAtMs}.${createHmac('sha256', key).update(String(expiresAtMs)).digest('hex')}`;
}

/** The expiry of a token whose signature is right; throws AccessDenied for a malformed or forged one. */
function signedExpiryOf(key: Buffer, token: string | undefined): number {
  const match = token === undefined ? null : tokenPattern.exec(token);
  if (!match) throw new SvcError('AccessDenied', 'internode RPC needs a valid SvcRpc token');
  const expected = Buffer.from(createHmac('sha256', key).update(match[1]!).digest('hex'));
  if (!timingSafeEqual(expected, Buffer.from(match[2]!))) throw new SvcError('AccessDenied', 'internode RPC token is forged');
  return Number(match[1]);
}

function checkExpiry(expiresAtMs: number, nowMs: number): void {
  if (expiresAtMs < nowMs) throw new SvcError('AccessDenied', 'internode RPC token has expired');
  if (expiresAtMs > nowMs + 2 * limits.rpcTokenTtlMs) throw new SvcError('AccessDenied', 'internode RPC token expires too far in the future');
}

/** Throws AccessDenied for a missing, forged or expired token. */
export function verifyRpcToken(key: Buffer, authorization: string | undefined, nowMs: number): void {
  const token = authorization?.startsWith(headerPrefix) ? authorization.slice(headerPrefix.length) : undefined;
  checkExpiry(signedExpiryOf(key, token), nowMs);
}

/** Checks bare tokens (an internode stream's frames), remembering the ones whose signature was right. */
export class RpcTokenVerifier {
  private readonly signed = new Map<string, number>();

  constructor(private readonly key: Buffer) {}

  /** Throws AccessDenied for a forged or expired token. */
  verify(token: string, nowMs: number): void {
    let expiresAtMs = this.signed.get(token);
    if (expiresAtMs === undefined) {
      expiresAtMs = signedExpiryOf(this.key, token);
      if (this.signed.size >= limits.rpcTokensRemembered) this.signed.delete(this.signed.keys().next().value!);
      this.signed.set(token, expiresAtMs);
    }
    checkExpiry(expiresAtMs, nowMs);
  }
}

/** Tokens to send: one is signed, then used for limits.rpcTokenReuseMs (a fraction of its lifetime). */
export class RpcTokenSource {
  private token = '';
  private issuedAtMs = Number.NEGATIVE_INFINITY;

  constructor(private readonly key: Buffer) {}

  tokenAt(nowMs: number): string {
    if (nowMs < this.issuedAtMs || nowMs - this.issuedAtMs >= limits.rpcTokenReuseMs) {
      this.token = createRpcToken(this.key, nowMs);
      this.issuedAtMs = nowMs;
    }
    return this.token;
  }
}
