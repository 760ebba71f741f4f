/**
 * Internode RPC credentials: a short-lived token derived from the root credentials. A token is
 * `<expiresAtMs>.<hex HMAC-SHA256(rpcKey, expiresAtMs)>` with rpcKey = HMAC-SHA256(secretKey,
 * "svc-internode-rpc/<accessKey>"); it is refused once expired, so a captured token cannot be
 * replayed for long. Sent as `Authorization: SvcRpc <token>`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { SvcError } from '../errors/index.js';
import { limits } from './limits.js';

export const rpcAuthScheme = 'SvcRpc';

export function rpcKeyFor(accessKey: string, secretKey: string): Buffer {
  return createHmac('sha256', secretKey).update(`svc-internode-rpc/${accessKey}`).digest();
}

export function createRpcToken(key: Buffer, nowMs: number, ttlMs: number = limits.rpcTokenTtlMs): string {
  const expiresAtMs = nowMs + ttlMs;
  return `${expiresAtMs}.${createHmac('sha256', key).update(String(expiresAtMs)).digest('hex')}`;
}

/** Throws AccessDenied for a missing, forged or expired token. */
export function verifyRpcToken(key: Buffer, authorization: string | undefined, nowMs: number): void {
  const match = authorization === undefined ? null : new RegExp(`^${rpcAuthScheme} (\\d{1,16})\\.([0-9a-f]{64})$`).exec(authorization);
  if (!match) throw new SvcError('AccessDenied', 'internode RPC needs a valid SvcRpc token');
  const expiresAtMs = Number(match[1]);
  const expected = Buffer.from(createHmac('sha256', key).update(match[1]!).digest('hex'));
  if (!timingSafeEqual(expected, Buffer.from(match[2]!))) throw new SvcError('AccessDenied', 'internode RPC token is forged');
  if (expiresAtMs < nowMs) throw new SvcError('AccessDenied', 'internode RPC token has expired');
  if (expiresAtMs > nowMs + 2 * limits.rpcTokenTtlMs) throw new SvcError('AccessDenied', 'internode RPC token expires too far in the future');
}
