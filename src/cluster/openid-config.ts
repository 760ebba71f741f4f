/**
 * Console sign-in with OpenID Connect (SVC_IDENTITY_OPENID_*), read and checked at startup: a
 * mistake here stops the server with InvalidConfiguration naming the variable, before anything
 * talks to the provider. Unset SVC_IDENTITY_OPENID_CONFIG_URL means no SSO (and then no other
 * SVC_IDENTITY_OPENID_ variable may be set, so a half-done configuration is not silently ignored).
 */
import { SvcError } from '../errors/index.js';
import { limits } from '../util/limits.js';

export interface OpenIdSettings {
  /** The provider's discovery document (`.../.well-known/openid-configuration`) or its issuer URL. */
  configUrl: URL;
  clientId: string;
  clientSecret?: string;
  scopes: string[];
  /** Unset: derived per request from the (forwarded) scheme and host. */
  redirectUri?: URL;
  /** Who may sign in: the ID token's claim `claimName` must hold one of `claimValues` (unset: the policy claim alone decides). */
  claimName?: string;
  claimValues: string[];
  /** The claim naming the account's policies (an array or a comma-separated string); unset: an admitted account gets consoleAdmin. */
  claimPolicy?: string;
}

const prefix = 'SVC_IDENTITY_OPENID_';
const known = ['CONFIG_URL', 'CLIENT_ID', 'CLIENT_SECRET', 'SCOPES', 'REDIRECT_URI', 'CLAIM_NAME', 'CLAIM_VALUES', 'CLAIM_POLICY'].map((name) => prefix + name);

function invalid(variable: string, message: string): SvcError {
  return new SvcError('InvalidConfiguration', `${variable}: ${message}`, { variable });
}

function urlOf(variable: string, text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid(variable, `'${text}' is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid(variable, `'${text}' is not an http(s) URL`);
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) throw invalid(variable, `'${text}' must use https (plain http is accepted only for loopback hosts)`);
  return url;
}

export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(hostname) || hostname === '[::1]';
}

function listOf(text: string, separator: RegExp): string[] {
  return text.split(separator).map((part) => part.trim()).filter((part) => part !== '');
}

export function readOpenIdSettings(values: Record<string, string | undefined>): OpenIdSettings | undefined {
  const value = (name: string) => (values[prefix + name] === '' ? undefined : values[prefix + name]);
  const configUrl = value('CONFIG_URL');
  if (configUrl === undefined) {
    const stray = known.find((name) => values[name] !== undefined && values[name] !== '');
    if (stray) throw invalid(stray, `${prefix}CONFIG_URL is not set, so ${stray} would have no effect`);
    return undefined;
  }
  const clientId = value('CLIENT_ID');
  if (clientId === undefined) throw invalid(`${prefix}CLIENT_ID`, 'is required with SVC_IDENTITY_OPENID_CONFIG_URL');
  const claimName = value('CLAIM_NAME');
  const claimValues = listOf(value('CLAIM_VALUES') ?? '', /,/);
  const claimPolicy = value('CLAIM_POLICY')?.trim();
  if (claimPolicy !== undefined && !/^[\w.:/-]{1,256}$/.test(claimPolicy)) throw invalid(`${prefix}CLAIM_POLICY`, `'${claimPolicy}' is not a claim name`);
  checkAdmission(claimName, claimValues, claimPolicy);
  const scopes = listOf(value('SCOPES') ?? 'openid profile email', /[\s,]+/);
  if (!scopes.includes('openid')) throw invalid(`${prefix}SCOPES`, "must include 'openid'");
  const secret = value('CLIENT_SECRET');
  const redirect = value('REDIRECT_URI');
  return {
    configUrl: urlOf(`${prefix}CONFIG_URL`, configUrl),
    clientId,
    ...(secret !== undefined ? { clientSecret: secret } : {}),
    scopes,
    ...(redirect !== undefined ? { redirectUri: urlOf(`${prefix}REDIRECT_URI`, redirect) } : {}),
    ...(claimName !== undefined ? { claimName } : {}),
    claimValues,
    ...(claimPolicy !== undefined ? { claimPolicy } : {}),
  };
}

/**
 * The admission claim (CLAIM_NAME with CLAIM_VALUES) is required without a policy claim, since
 * every admitted account then administers the deployment; with one it is optional, and when
 * given both must hold.
 */
function checkAdmission(claimName: string | undefined, claimValues: string[], claimPolicy: string | undefined): void {
  if (claimName === undefined && claimValues.length > 0) throw invalid(`${prefix}CLAIM_NAME`, `is required with ${prefix}CLAIM_VALUES: the claim whose values they are`);
  if (claimName === undefined && claimPolicy === undefined) throw invalid(`${prefix}CLAIM_NAME`, `is required (or ${prefix}CLAIM_POLICY): without either every account at the provider could administer this deployment`);
  if (claimName !== undefined && claimValues.length === 0) throw invalid(`${prefix}CLAIM_VALUES`, `is required: the values of the '${claimName}' claim that may sign in, comma-separated`);
}

/** Whether an ID token's claims pass the admission claim (CLAIM_NAME holding one of CLAIM_VALUES); always, without one. */
export function isAdmitted(settings: Pick<OpenIdSettings, 'claimName' | 'claimValues'>, claims: Record<string, unknown>): boolean {
  if (settings.claimName === undefined) return true;
  const held = claims[settings.claimName];
  const values = Array.isArray(held) ? held.map(String) : held === undefined || held === null ? [] : [String(held)];
  return values.some((value) => settings.claimValues.includes(value));
}

/** A policy claim's names: an array of names, or one string of comma-separated names. */
export function policyNamesOf(held: unknown): string[] {
  const items = Array.isArray(held) ? held : typeof held === 'string' ? held.split(',') : [];
  const names = items.filter((item): item is string => typeof item === 'string').map((item) => item.trim());
  return [...new Set(names.filter((name) => name !== '' && name.length <= 128))].slice(0, limits.consoleSsoPoliciesMax);
}
