/**
 * Console sign-in with OpenID Connect: the authorization-code flow with PKCE through
 * `openid-client`, which also verifies the ID token (issuer, audience, signature, expiry, nonce).
 * The provider is discovered in the background at startup; while it cannot be reached, SSO is
 * unavailable (the sign-in page disables its button and the log says why) and discovery is tried
 * again at most every `consoleOpenIdRetryMs`.
 */
import type * as Oidc from 'openid-client';
import { SvcError, isSvcError } from '../errors/index.js';
import { limits } from '../util/limits.js';
import { isAdmitted, isLoopbackHost, policyNamesOf, type OpenIdSettings } from '../cluster/openid-config.js';
import { LoginStates } from './login-states.js';

/** The OpenID client library, loaded when SSO is configured (a console without it never loads it). */
function openidClient(): Promise<typeof Oidc> {
  return import('openid-client');
}

export interface OpenIdStatus {
  enabled: boolean;
  /** Why SSO is configured but not available. */
  reason?: string;
}

type Logger = { info(fields: Record<string, unknown>, message: string): void; warn(fields: Record<string, unknown>, message: string): void };

export class OpenIdSignIn {
  readonly states: LoginStates;
  private provider: Oidc.Configuration | undefined;
  private discovering: Promise<void> | undefined;
  private failure: string | undefined = 'the OpenID provider has not been reached yet';
  private failedAtMs = Number.NEGATIVE_INFINITY;

  constructor(
    readonly settings: OpenIdSettings,
    private readonly logger: Logger,
    private readonly nowMs: () => number,
  ) {
    this.states = new LoginStates(nowMs);
  }

  /** Discovers the provider unless it is known or was tried too recently; never throws. */
  async refresh(): Promise<OpenIdStatus> {
    if (!this.provider && !this.discovering && this.nowMs() - this.failedAtMs >= limits.consoleOpenIdRetryMs) {
      this.discovering = this.discover().finally(() => (this.discovering = undefined));
    }
    await this.discovering;
    return this.status();
  }

  status(): OpenIdStatus {
    return this.provider ? { enabled: true } : { enabled: false, reason: this.failure ?? 'unavailable' };
  }

  /** Where to send the browser to sign in, and the binding for its login cookie. */
  async start(redirectUri: string): Promise<{ url: string; binding: string }> {
    const provider = await this.ready();
    const oidc = await openidClient();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const { state, binding } = this.states.add({ nonce, codeVerifier, redirectUri });
    const url = oidc.buildAuthorizationUrl(provider, {
      redirect_uri: redirectUri,
      scope: this.settings.scopes.join(' '),
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url: url.href, binding };
  }

  /**
   * Completes the sign-in the callback's query answers: the login state (once, from the browser
   * that started it), the code exchanged and the ID token verified, then the admission claim.
   * Answers the user's display name and the policy names its policy claim holds (undefined
   * without SVC_IDENTITY_OPENID_CLAIM_POLICY).
   */
  async finish(query: URLSearchParams, binding: string | undefined): Promise<{ who: string; claimedPolicies?: string[] }> {
    const state = query.get('state');
    if (!state) throw new SvcError('ConsoleSsoStateUnknown', 'the callback has no state parameter; nothing was signed in');
    const login = this.states.take(state, binding);
    if (query.has('error')) {
      throw new SvcError('ConsoleSsoProviderError', `the OpenID provider answered ${query.get('error')}${query.get('error_description') ? `: ${query.get('error_description')}` : ''}; nothing was signed in`);
    }
    const provider = await this.ready();
    const currentUrl = new URL(login.redirectUri);
    currentUrl.search = query.toString();
    let claims: Record<string, unknown> | undefined;
    const oidc = await openidClient();
    try {
      const tokens = await oidc.authorizationCodeGrant(provider, currentUrl, { pkceCodeVerifier: login.codeVerifier, expectedNonce: login.nonce, expectedState: state, idTokenExpected: true }, { redirect_uri: login.redirectUri });
      claims = tokens.claims() as Record<string, unknown> | undefined;
    } catch (error) {
      throw new SvcError('ConsoleSsoProviderError', `the OpenID provider's answer was not accepted (${describe(error)}); nothing was signed in`);
    }
    if (!claims) throw new SvcError('ConsoleSsoProviderError', 'the OpenID provider returned no ID token; nothing was signed in');
    const who = String(claims.preferred_username ?? claims.email ?? claims.sub);
    this.admit(claims, who);
    const { claimPolicy } = this.settings;
    return claimPolicy === undefined ? { who } : { who, claimedPolicies: policyNamesOf(claims[claimPolicy]) };
  }

  private admit(claims: Record<string, unknown>, who: string): void {
    const { claimName, claimValues } = this.settings;
    if (claimName === undefined || isAdmitted(this.settings, claims)) return;
    throw new SvcError('ConsoleSsoNotAdmitted', `${who} signed in at the OpenID provider, but the '${claimName}' claim does not contain ${claimValues.map((value) => `'${value}'`).join(' or ')}, so this console does not admit the account; nothing was signed in`, { claim: claimName, user: who });
  }

  private async ready(): Promise<Oidc.Configuration> {
    await this.refresh();
    if (!this.provider) throw new SvcError('ConsoleSsoUnavailable', `sign-in with SSO is not available: ${this.failure ?? 'the provider is unreachable'}`);
    return this.provider;
  }

  private async discover(): Promise<void> {
    const { configUrl, clientId, clientSecret } = this.settings;
    const insecure = configUrl.protocol === 'http:' && isLoopbackHost(configUrl.hostname);
    const oidc = await openidClient();
    try {
      this.provider = await oidc.discovery(configUrl, clientId, clientSecret, clientSecret === undefined ? oidc.None() : oidc.ClientSecretBasic(clientSecret), {
        timeout: limits.consoleOpenIdTimeoutSeconds,
        ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
      });
      this.failure = undefined;
      this.logger.info({ issuer: this.provider.serverMetadata().issuer }, 'console SSO: OpenID provider discovered');
    } catch (error) {
      this.failedAtMs = this.nowMs();
      this.failure = `the OpenID provider at ${configUrl.href} cannot be reached or its discovery document is invalid (${describe(error)})`;
      this.logger.warn({ configUrl: configUrl.href, error: describe(error) }, 'console SSO unavailable: the sign-in page shows the SSO button disabled');
    }
  }
}

function describe(error: unknown): string {
  if (isSvcError(error)) return error.message;
  const cause = (error as { cause?: unknown }).cause;
  const text = error instanceof Error ? error.message : String(error);
  return cause instanceof Error && !text.includes(cause.message) ? `${text}: ${cause.message}` : text;
}
