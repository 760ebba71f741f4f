/**
 * Console sign-in with OpenID Connect against a real provider (oidc-provider on loopback) and a
 * real server: the authorization-code flow with PKCE ends in the same session cookie a key
 * sign-in gets; a replayed state, a callback with another node's state, a callback from another
 * browser and an account outside the admitted group get a page naming the cause and no session;
 * the login state is bounded, single-use and expires after 10 minutes; a bad configuration stops
 * startup with a named error and an unreachable provider only disables SSO.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startSvc, type SvcProcess } from './helpers/server-process.js';
import { startTestIdp, type TestIdp } from './helpers/oidc-idp.js';
import { CookieJar } from './helpers/browser-jar.js';
import { consoleCall } from './helpers/console-client.js';
import { LoginStates } from '../src/console/login-states.js';
import { readServerConfig } from '../src/cluster/server-config.js';
import { isSvcError } from '../src/errors/index.js';
import { limits } from '../src/util/limits.js';

const callbackPath = '/svc/console/api/sso/callback';
let root: string;
let idp: TestIdp;
let server: SvcProcess;
let consoleUrl: string;

function openIdEnv(configUrl: string, clientId: string, clientSecret: string): Record<string, string> {
  return {
    SVC_IDENTITY_OPENID_CONFIG_URL: `${configUrl}/.well-known/openid-configuration`,
    SVC_IDENTITY_OPENID_CLIENT_ID: clientId,
    SVC_IDENTITY_OPENID_CLIENT_SECRET: clientSecret,
    SVC_IDENTITY_OPENID_CLAIM_NAME: 'groups',
    SVC_IDENTITY_OPENID_CLAIM_VALUES: 'svc-admins',
  };
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-console-oidc-'));
  const consolePort = await freePort();
  consoleUrl = `http://127.0.0.1:${consolePort}`;
  idp = await startTestIdp([`${consoleUrl}${callbackPath}`]);
  server = await startSvc({ args: [join(root, 'd{1...4}')], env: { SVC_CONSOLE_ADDRESS: `127.0.0.1:${consolePort}`, ...openIdEnv(idp.issuer, idp.clientId, idp.clientSecret) } });
}, 60_000);
afterAll(async () => {
  await server?.kill();
  await idp?.close();
  await rm(root, { recursive: true, force: true });
});

/** A browser signing in at the provider as `user`, up to (not including) the console's callback. */
async function untilCallback(jar: CookieJar, user: string, target = { consoleUrl, issuer: idp.issuer }): Promise<string> {
  const atIdp = await jar.follow(`${target.consoleUrl}/svc/console/api/sso/start`);
  expect(atIdp.url.startsWith(`${target.issuer}/interaction/`), await atIdp.response.clone().text()).toBe(true);
  expect(await atIdp.response.text()).toContain('Sign in at the IdP');
  const back = await jar.follow(`${atIdp.url}/login`, (next) => next.startsWith(`${target.consoleUrl}${callbackPath}`), { method: 'POST', body: new URLSearchParams({ login: user }) });
  expect(back.url.startsWith(`${target.consoleUrl}${callbackPath}?`)).toBe(true);
  return back.url;
}

function sessionCookieOf(response: Response): string | undefined {
  return response.headers.getSetCookie().find((line) => line.startsWith('svc_console_session=') && !/max-age=0/i.test(line));
}

describe('sign-in with SSO', () => {
  it('offers SSO on the sign-in page and signs an admitted user in with the usual session cookie', async () => {
    expect((await consoleCall(consoleUrl, 'GET', 'sso')).body).toEqual({ configured: true, enabled: true });
    const jar = new CookieJar();
    const callback = await untilCallback(jar, 'alice');
    const loginCookie = jar.get(consoleUrl, 'svc_console_login');
    expect(loginCookie?.length, 'the login-state cookie').toBeGreaterThan(0);
    const done = await jar.fetch(callback);
    expect(done.status).toBe(302);
    expect(done.headers.get('location')).toBe('/svc/console/');
    const cookie = sessionCookieOf(done);
    expect(cookie).toMatch(/; Path=\/svc\/console\/; HttpOnly; SameSite=Strict; Max-Age=\d+/);
    expect(jar.get(consoleUrl, 'svc_console_login')).toBeUndefined();
    const session = await consoleCall(consoleUrl, 'GET', 'session', { cookie: `svc_console_session=${jar.get(consoleUrl, 'svc_console_session')}` });
    expect(session.status).toBe(200);
    expect(session.body.accessKey).toBe('sso:alice');
    // Without a policy claim configured, an admitted account administers the deployment.
    expect(session.body).toMatchObject({ kind: 'sso', policies: ['consoleAdmin'], pages: ['overview', 'buckets', 'cluster', 'operations', 'explorer', 'users', 'groups', 'service-accounts'] });
    const buckets = await consoleCall(consoleUrl, 'GET', 'buckets', { cookie: `svc_console_session=${jar.get(consoleUrl, 'svc_console_session')}` });
    expect(buckets.status).toBe(200);

    // The same callback again (a replayed state): refused, named, nothing signed in.
    const again = await fetch(callback, { headers: { cookie: `svc_console_login=${loginCookie}` }, redirect: 'manual' });
    expect(again.status).toBe(400);
    expect(sessionCookieOf(again)).toBeUndefined();
    const page = await again.text();
    expect(again.headers.get('content-type')).toContain('text/html');
    expect(page).toContain('ConsoleSsoStateUsed');
    expect(page).toContain('already completed');
  });

  it('refuses an account without the admitted group, saying so', async () => {
    const jar = new CookieJar();
    const refused = await jar.fetch(await untilCallback(jar, 'bob'));
    expect(refused.status).toBe(403);
    expect(sessionCookieOf(refused)).toBeUndefined();
    const page = await refused.text();
    expect(page).toContain('ConsoleSsoNotAdmitted');
    expect(page).toContain('bob signed in at the OpenID provider, but the &#39;groups&#39; claim does not contain &#39;svc-admins&#39;');
    await expect.poll(() => server.logs(), { timeout: 5_000 }).toContain('ConsoleSsoNotAdmitted');
  });

  it('names a callback carrying another node\'s state (no sticky session) and one from another browser', async () => {
    const jar = new CookieJar();
    const callback = new URL(await untilCallback(jar, 'alice'));
    const state = callback.searchParams.get('state')!;
    const foreign = new URL(callback);
    foreign.searchParams.set('state', `othernode.${state.split('.')[1]}`);
    const wrongNode = await jar.fetch(foreign.href);
    expect(wrongNode.status).toBe(409);
    const page = await wrongNode.text();
    expect(page).toContain('ConsoleSsoWrongNode');
    expect(page).toContain('sticky sessions');
    expect(sessionCookieOf(wrongNode)).toBeUndefined();

    const otherBrowser = await fetch(callback.href, { redirect: 'manual' });
    expect(otherBrowser.status).toBe(400);
    expect(await otherBrowser.text()).toContain('ConsoleSsoBrowserMismatch');
    expect(sessionCookieOf(otherBrowser)).toBeUndefined();
  });

  it('refuses a callback with a tampered code or no state, and a provider\'s refusal', async () => {
    const jar = new CookieJar();
    const callback = new URL(await untilCallback(jar, 'alice'));
    callback.searchParams.set('code', 'forged-code');
    const forged = await jar.fetch(callback.href);
    expect(forged.status).toBe(502);
    expect(await forged.text()).toContain('ConsoleSsoProviderError');
    const noState = await fetch(`${consoleUrl}${callbackPath}?code=x`, { redirect: 'manual' });
    expect(noState.status).toBe(400);
    expect(await noState.text()).toContain('ConsoleSsoStateUnknown');
  });
});

describe('policies from the policy claim (SVC_IDENTITY_OPENID_CLAIM_POLICY) with the admission claim', () => {
  let policyIdp: TestIdp;
  let policyServer: SvcProcess;
  let target: { consoleUrl: string; issuer: string };
  beforeAll(async () => {
    const consolePort = await freePort();
    const url = `http://127.0.0.1:${consolePort}`;
    policyIdp = await startTestIdp([`${url}${callbackPath}`]);
    const env = { ...openIdEnv(policyIdp.issuer, policyIdp.clientId, policyIdp.clientSecret), SVC_IDENTITY_OPENID_CLAIM_VALUES: 'staff', SVC_IDENTITY_OPENID_CLAIM_POLICY: 'policy' };
    policyServer = await startSvc({ args: [join(root, 'p{1...4}')], env: { SVC_CONSOLE_ADDRESS: `127.0.0.1:${consolePort}`, ...env } });
    target = { consoleUrl: url, issuer: policyIdp.issuer };
  }, 60_000);
  afterAll(async () => {
    await policyServer?.kill();
    await policyIdp?.close();
  });

  /** Signs `user` in; answers the session cookie, or the refusal page. */
  async function signInAs(user: string): Promise<{ status: number; cookie?: string; page: string }> {
    const jar = new CookieJar();
    const done = await jar.fetch(await untilCallback(jar, user, target));
    const value = jar.get(target.consoleUrl, 'svc_console_session');
    return { status: done.status, ...(sessionCookieOf(done) && value ? { cookie: `svc_console_session=${value}` } : {}), page: await done.text() };
  }

  it('gives a readonly account exactly readonly: it lists buckets, cannot write and is offered no admin page', async () => {
    const signed = await signInAs('carol');
    expect(signed.status).toBe(302);
    const me = await consoleCall(target.consoleUrl, 'GET', 'session', { cookie: signed.cookie! });
    expect(me.body).toMatchObject({ accessKey: 'sso:carol', kind: 'sso', policies: ['readonly'], pages: ['buckets'] });
    const csrfToken = String(me.body.csrfToken);
    expect((await consoleCall(target.consoleUrl, 'GET', 'buckets', { cookie: signed.cookie! })).status).toBe(200);
    const create = await consoleCall(target.consoleUrl, 'POST', 'buckets', { cookie: signed.cookie!, csrfToken, body: { name: 'carols-bucket' } });
    expect(create.status).toBe(403);
    expect(create.body.Message).toContain('No policy allows user sso:carol s3:CreateBucket');
    expect((await consoleCall(target.consoleUrl, 'GET', 'users', { cookie: signed.cookie! })).status).toBe(403);
    expect((await consoleCall(target.consoleUrl, 'GET', 'overview', { cookie: signed.cookie! })).status).toBe(403);
  });

  it('gives a consoleAdmin account every page; an unknown name beside it is ignored and logged', async () => {
    const signed = await signInAs('dave');
    expect(signed.status).toBe(302);
    const me = await consoleCall(target.consoleUrl, 'GET', 'session', { cookie: signed.cookie! });
    expect(me.body).toMatchObject({ policies: ['consoleAdmin'], pages: ['overview', 'buckets', 'cluster', 'operations', 'explorer', 'users', 'groups', 'service-accounts'] });
    const created = await consoleCall(target.consoleUrl, 'POST', 'buckets', { cookie: signed.cookie!, csrfToken: String(me.body.csrfToken), body: { name: 'daves-bucket' } });
    expect(created.status).toBe(200);
    expect((await consoleCall(target.consoleUrl, 'GET', 'users', { cookie: signed.cookie! })).status).toBe(200);
    await expect.poll(() => policyServer.logs(), { timeout: 5_000 }).toMatch(/the policy claim names policies this deployment does not have[^\n]*no-such-policy|no-such-policy[^\n]*the policy claim names policies this deployment does not have/);
  });

  it('refuses an account whose claim names no known policy, or none at all, with a page that says so', async () => {
    const unknown = await signInAs('erin');
    expect(unknown.status).toBe(403);
    expect(unknown.cookie).toBeUndefined();
    expect(unknown.page).toContain('ConsoleSsoNoPolicy');
    expect(unknown.page).toContain('erin signed in at the OpenID provider, but its &#39;policy&#39; claim names &#39;no-such-policy&#39;, none of them a policy of this deployment');
    const none = await signInAs('bob');
    expect(none.status).toBe(403);
    expect(none.page).toContain('bob signed in at the OpenID provider, but it has no &#39;policy&#39; claim naming a policy');
  });

  it('still applies the admission claim: an account outside it is refused whatever its policies', async () => {
    const outside = await signInAs('frank');
    expect(outside.status).toBe(403);
    expect(outside.cookie).toBeUndefined();
    expect(outside.page).toContain('ConsoleSsoNotAdmitted');
  });
});

describe('login state', () => {
  it('is used once, bound to the browser, expires after 10 minutes and is bounded', () => {
    let nowMs = 0;
    const states = new LoginStates(() => nowMs);
    const login = { nonce: 'n', codeVerifier: 'v', redirectUri: 'http://x/cb' };
    const first = states.add(login);
    expect(() => states.take(first.state, 'wrong')).toThrow(expect.objectContaining({ code: 'ConsoleSsoBrowserMismatch' }));
    expect(states.take(first.state, first.binding)).toMatchObject(login);
    expect(() => states.take(first.state, first.binding)).toThrow(expect.objectContaining({ code: 'ConsoleSsoStateUsed' }));
    const late = states.add(login);
    nowMs = limits.consoleLoginStateTtlMs + 1;
    expect(() => states.take(late.state, late.binding)).toThrow(expect.objectContaining({ code: 'ConsoleSsoStateExpired' }));
    expect(() => states.take(`${states.nodeTag}.never-issued`, 'b')).toThrow(expect.objectContaining({ code: 'ConsoleSsoStateUnknown' }));
    expect(() => states.take(`elsewhere.${first.state.split('.')[1]}`, first.binding)).toThrow(expect.objectContaining({ code: 'ConsoleSsoWrongNode' }));
    for (let index = 0; index < limits.consoleLoginStatesMax; index += 1) states.add(login);
    expect(() => states.add(login)).toThrow(expect.objectContaining({ code: 'ConsoleSsoBusy' }));
    nowMs += limits.consoleLoginStateTtlMs + 1;
    expect(() => states.add(login)).not.toThrow();
    expect(states.size).toBe(1);
  });
});

describe('configuration', () => {
  const base = { SVC_VOLUMES: '/tmp/x{1...4}' };
  const configError = (env: Record<string, string>) => {
    try {
      readServerConfig([], { ...base, ...env });
    } catch (error) {
      if (isSvcError(error)) return `${error.code}: ${error.message}`;
      throw error;
    }
    return 'accepted';
  };

  it('stops startup on an invalid SSO configuration, naming the variable', async () => {
    const good = openIdEnv('https://idp.example.test', 'svc', 's');
    expect(configError(good)).toBe('accepted');
    expect(readServerConfig([], { ...base, ...good }).openId?.scopes).toEqual(['openid', 'profile', 'email']);
    expect(configError({ ...good, SVC_IDENTITY_OPENID_CONFIG_URL: 'not a url' })).toMatch(/^InvalidConfiguration: SVC_IDENTITY_OPENID_CONFIG_URL: 'not a url' is not a URL/);
    expect(configError({ ...good, SVC_IDENTITY_OPENID_CONFIG_URL: 'http://idp.example.test' })).toMatch(/SVC_IDENTITY_OPENID_CONFIG_URL: .*must use https/);
    expect(configError({ ...good, SVC_IDENTITY_OPENID_CLIENT_ID: '' })).toMatch(/SVC_IDENTITY_OPENID_CLIENT_ID: is required/);
    expect(configError({ ...good, SVC_IDENTITY_OPENID_CLAIM_NAME: '' })).toMatch(/SVC_IDENTITY_OPENID_CLAIM_NAME: is required/);
    expect(configError({ ...good, SVC_IDENTITY_OPENID_CLAIM_VALUES: ' , ' })).toMatch(/SVC_IDENTITY_OPENID_CLAIM_VALUES: is required/);
    expect(configError({ ...good, SVC_IDENTITY_OPENID_SCOPES: 'profile email' })).toMatch(/SVC_IDENTITY_OPENID_SCOPES: must include 'openid'/);
    expect(configError({ ...good, SVC_IDENTITY_OPENID_REDIRECT_URI: 'ftp://x/cb' })).toMatch(/SVC_IDENTITY_OPENID_REDIRECT_URI: .*not an http\(s\) URL/);
    expect(configError({ SVC_IDENTITY_OPENID_CLIENT_ID: 'svc' })).toMatch(/SVC_IDENTITY_OPENID_CLIENT_ID: SVC_IDENTITY_OPENID_CONFIG_URL is not set/);
    // A policy claim alone is enough; without it the admission claim is required; values need their claim.
    const { SVC_IDENTITY_OPENID_CLAIM_NAME: _name, SVC_IDENTITY_OPENID_CLAIM_VALUES: _values, ...bare } = good;
    expect(configError({ ...bare, SVC_IDENTITY_OPENID_CLAIM_POLICY: 'policy' })).toBe('accepted');
    expect(readServerConfig([], { ...base, ...bare, SVC_IDENTITY_OPENID_CLAIM_POLICY: 'policy' }).openId).toMatchObject({ claimPolicy: 'policy', claimValues: [] });
    expect(configError(bare)).toMatch(/SVC_IDENTITY_OPENID_CLAIM_NAME: is required \(or SVC_IDENTITY_OPENID_CLAIM_POLICY\)/);
    expect(configError({ ...bare, SVC_IDENTITY_OPENID_CLAIM_VALUES: 'staff', SVC_IDENTITY_OPENID_CLAIM_POLICY: 'policy' })).toMatch(/SVC_IDENTITY_OPENID_CLAIM_NAME: is required with SVC_IDENTITY_OPENID_CLAIM_VALUES/);
    expect(configError({ ...good, SVC_IDENTITY_OPENID_CLAIM_POLICY: 'two words' })).toMatch(/SVC_IDENTITY_OPENID_CLAIM_POLICY: 'two words' is not a claim name/);
    expect(configError({ SVC_IDENTITY_OPENID_CLAIM_POLICY: 'policy' })).toMatch(/SVC_IDENTITY_OPENID_CLAIM_POLICY: SVC_IDENTITY_OPENID_CONFIG_URL is not set/);

    // And the server itself: it exits with the named error before it listens.
    const bad = await startSvc({ args: [join(root, 'bad{1...4}')], env: { ...good, SVC_IDENTITY_OPENID_CLAIM_NAME: '' }, waitReady: false });
    expect(await bad.exited).not.toBe(0);
    expect(bad.logs()).toContain('SVC_IDENTITY_OPENID_CLAIM_NAME');
    expect(bad.logs()).toContain('InvalidConfiguration');
  });

  it('starts with an unreachable provider and disables SSO, saying why', async () => {
    const closedPort = await freePort();
    const consolePort = await freePort();
    const lonely = await startSvc({ args: [join(root, 'u{1...4}')], env: { SVC_CONSOLE_ADDRESS: `127.0.0.1:${consolePort}`, ...openIdEnv(`http://127.0.0.1:${closedPort}`, 'svc', 's') } });
    try {
      const url = `http://127.0.0.1:${consolePort}`;
      const status = await consoleCall(url, 'GET', 'sso');
      expect(status.body.configured).toBe(true);
      expect(status.body.enabled).toBe(false);
      expect(status.body.reason).toContain('cannot be reached');
      const start = await fetch(`${url}/svc/console/api/sso/start`, { redirect: 'manual' });
      expect(start.status).toBe(503);
      expect(await start.text()).toContain('ConsoleSsoUnavailable');
      await expect.poll(() => lonely.logs(), { timeout: 5_000 }).toContain('console SSO unavailable');
    } finally {
      await lonely.kill();
    }
  });
});
