/**
 * Bearer tokens for the metrics endpoints: a JWT (HS256) whose key is derived from the root
 * credentials, so every node of the deployment accepts a token any of them (or `rc`, which knows
 * the credentials) signed. Claims: `iss` "svc-metrics", `sub` the access key that signed it (root,
 * or a user whose policies hold `admin:Prometheus`), `exp` in seconds.
 * Key = HMAC-SHA256(secretKey, "svc-metrics/<accessKey>"): the internode RPC key is a different
 * derivation, so a metrics token opens nothing else.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { SvcError } from '../errors/index.js';

export const metricsTokenIssuer = 'svc-metrics';

export function metricsKeyFor(accessKey: string, secretKey: string): Buffer {
  return createHmac('sha256', secretKey).update(`svc-metrics/${accessKey}`).digest();
}

const encode = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');

function signature(key: Buffer, signingInput: string): Buffer {
  return createHmac('sha256', key).update(signingInput).digest();
}

export function createMetricsToken(key: Buffer, accessKey: string, nowMs: number, ttlMs: number): string {
  const signingInput = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode({ iss: metricsTokenIssuer, sub: accessKey, exp: Math.floor((nowMs + ttlMs) / 1000) })}`;
  return `${signingInput}.${signature(key, signingInput).toString('base64url')}`;
}

/**
 * The access key a token was issued for, once its signature (by that key's metrics key, from
 * `keyFor`) and expiry check out; AccessDenied for a missing, malformed, forged or expired token,
 * or one for a key `keyFor` does not know, saying which.
 */
export function verifyMetricsToken(keyFor: (accessKey: string) => Buffer | undefined, authorization: string | undefined, nowMs: number): string {
  const match = authorization === undefined ? null : /^Bearer ([A-Za-z0-9_-]{1,512})\.([A-Za-z0-9_-]{1,512})\.([A-Za-z0-9_-]{43})$/.exec(authorization);
  if (!match) throw new SvcError('AccessDenied', 'metrics need "Authorization: Bearer <token>" (rc admin prometheus generate <alias> prints one)');
  let claims: { iss?: unknown; sub?: unknown; exp?: unknown };
  try {
    claims = JSON.parse(Buffer.from(match[2]!, 'base64url').toString('utf8')) as typeof claims;
  } catch {
    throw new SvcError('AccessDenied', 'the metrics token claims are not JSON');
  }
  const key = claims.iss === metricsTokenIssuer && typeof claims.sub === 'string' ? keyFor(claims.sub) : undefined;
  if (key === undefined) throw new SvcError('AccessDenied', 'the metrics token was issued for something else');
  const given = Buffer.from(match[3]!, 'base64url');
  const expected = signature(key, `${match[1]}.${match[2]}`);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new SvcError('AccessDenied', 'the metrics token is not signed by this deployment\'s credentials');
  if (typeof claims.exp !== 'number' || claims.exp * 1000 < nowMs) throw new SvcError('AccessDenied', 'the metrics token has expired');
  return claims.sub as string;
}
