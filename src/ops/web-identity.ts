/**
 * Web identities for STS AssumeRoleWithWebIdentity: an OpenID Connect ID token from the provider
 * the console signs in with (SVC_IDENTITY_OPENID_*) is checked here, signature against the
 * provider's published keys (JWKS, found through its discovery document), issuer, audience (the
 * client id) and expiry by the identity clock, then the admission claim; the policy claim
 * (SVC_IDENTITY_OPENID_CLAIM_POLICY, `policy` when unset) names the session's policies.
 */
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import { SvcError, isSvcError } from '../errors/index.js';
import { limits } from '../util/limits.js';
import { isAdmitted, isLoopbackHost, policyNamesOf, type OpenIdSettings } from '../cluster/openid-config.js';
import type { WebIdentity } from './iam-store.js';

/** The policy claim when SVC_IDENTITY_OPENID_CLAIM_POLICY is not set (MinIO's default name). */
export const defaultPolicyClaim = 'policy';

interface Provider {
  issuer: string;
  keys: ReturnType<typeof createRemoteJWKSet>;
}

export class WebIdentityVerifier {
  private provider: Provider | undefined;
  private discovering: Promise<Provider> | undefined;

  constructor(
    private readonly settings: OpenIdSettings,
    private readonly nowMs: () => number,
  ) {}

  /** The identity a valid token names; InvalidIdentityToken, ExpiredTokenException, IDPRejectedClaim or IDPCommunicationError otherwise. */
  async verify(token: string): Promise<WebIdentity> {
    if (token.length === 0 || token.length > limits.maxWebIdentityTokenBytes) throw new SvcError('InvalidIdentityToken', `a web identity token is 1 to ${limits.maxWebIdentityTokenBytes} characters`);
    const provider = await this.discovered();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, provider.keys, { issuer: provider.issuer, audience: this.settings.clientId, currentDate: new Date(this.nowMs()), requiredClaims: ['sub', 'exp'] }));
    } catch (error) {
      throw refusal(error);
    }
    const subject = String(payload.sub);
    if (!isAdmitted(this.settings, payload)) throw new SvcError('IDPRejectedClaim', `the web identity ${subject} is not admitted: its '${this.settings.claimName}' claim holds none of ${this.settings.claimValues.join(', ')}`);
    return { subject, policies: policyNamesOf(payload[this.settings.claimPolicy ?? defaultPolicyClaim]), claims: stringClaims(payload) };
  }

  /** The provider's issuer and keys, discovered once (a failed discovery is tried again on the next call). */
  private async discovered(): Promise<Provider> {
    if (this.provider) return this.provider;
    this.discovering ??= this.discover().finally(() => (this.discovering = undefined));
    this.provider = await this.discovering;
    return this.provider;
  }

  private async discover(): Promise<Provider> {
    const url = discoveryUrl(this.settings.configUrl);
    const timeoutMs = limits.consoleOpenIdTimeoutSeconds * 1000;
    let document: { issuer?: unknown; jwks_uri?: unknown };
    try {
      const answer = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
      if (!answer.ok) throw new Error(`HTTP ${answer.status}`);
      document = (await answer.json()) as typeof document;
    } catch (error) {
      throw new SvcError('IDPCommunicationError', `the OpenID provider's discovery document at ${url.href} cannot be read (${error instanceof Error ? error.message : String(error)})`);
    }
    if (typeof document.issuer !== 'string' || typeof document.jwks_uri !== 'string') throw new SvcError('IDPCommunicationError', `the discovery document at ${url.href} names no issuer or jwks_uri`);
    const keysUrl = new URL(document.jwks_uri);
    if (keysUrl.protocol !== 'https:' && !(keysUrl.protocol === 'http:' && isLoopbackHost(keysUrl.hostname))) throw new SvcError('IDPCommunicationError', `the provider's jwks_uri ${keysUrl.href} is not https`);
    return { issuer: document.issuer, keys: createRemoteJWKSet(keysUrl, { timeoutDuration: timeoutMs }) };
  }
}

/** The discovery document's address: the configured URL, or the issuer URL with the well-known path added. */
function discoveryUrl(configUrl: URL): URL {
  if (configUrl.pathname.endsWith('/.well-known/openid-configuration')) return configUrl;
  return new URL(`${configUrl.pathname.replace(/\/$/, '')}/.well-known/openid-configuration`, configUrl);
}

/** What a token that failed verification gets: expired, the provider unreachable, or not valid. */
function refusal(error: unknown): SvcError {
  if (isSvcError(error)) return error;
  const code = (error as { code?: string }).code;
  const reason = error instanceof Error ? error.message : String(error);
  if (code === 'ERR_JWT_EXPIRED') return new SvcError('ExpiredTokenException', `the web identity token has expired (${reason})`);
  if (code === 'ERR_JWKS_TIMEOUT' || code === undefined) return new SvcError('IDPCommunicationError', `the OpenID provider's keys cannot be read (${reason})`);
  return new SvcError('InvalidIdentityToken', `the web identity token is not valid (${reason})`);
}

/** The token's string claims that `jwt:<claim>` condition keys may test (bounded: they travel in the session token). */
function stringClaims(payload: JWTPayload): Record<string, string> {
  const kept = Object.entries(payload).filter(([name, value]) => typeof value === 'string' && /^[\w.:-]{1,64}$/.test(name) && value.length <= limits.maxWebIdentityClaimChars);
  return Object.fromEntries(kept.slice(0, limits.maxWebIdentityClaims)) as Record<string, string>;
}
