/** Console sessions (sealed cookies, expiry, CSRF tokens) and who a request came from (trusted proxies). */
import { describe, expect, it } from 'vitest';
import { SessionSealer, cookieValue, sessionCookie } from '../src/console/session.js';
import { clientOrigin, throttleKey, trustedProxyList } from '../src/console/client-origin.js';
import { shareBaseUrl } from '../src/console/presign.js';
import { SignInThrottle } from '../src/console/sign-in-throttle.js';
import { limits } from '../src/util/limits.js';
import { readServerConfig } from '../src/cluster/server-config.js';

const settings = { idleMs: 60_000, maxMs: 600_000 };
const root = { accessKey: 'root', secretKey: 'root-secret' };

describe('session sealing', () => {
  it('opens what it sealed, on any node with the same root credentials, and nothing else', () => {
    const node1 = new SessionSealer(root, settings);
    const node2 = new SessionSealer(root, settings);
    const session = node1.issue(1_000);
    const sealed = node1.seal(session);
    expect(node2.open(sealed, 2_000)).toEqual(session);
    expect(new SessionSealer({ ...root, secretKey: 'other-secret' }, settings).open(sealed, 2_000)).toBeUndefined();
    expect(new SessionSealer({ ...root, accessKey: 'other' }, settings).open(sealed, 2_000)).toBeUndefined();
    const bytes = Buffer.from(sealed, 'base64url');
    for (const at of [0, 12, bytes.length - 1]) {
      const flipped = Buffer.from(bytes);
      flipped[at]! ^= 1;
      expect(node1.open(flipped.toString('base64url'), 2_000)).toBeUndefined();
    }
    expect(node1.open('', 2_000)).toBeUndefined();
    expect(node1.open('not a cookie', 2_000)).toBeUndefined();
  });

  it('keeps whom a session acts for: the root keys, a user, or an SSO account with its policies', () => {
    const sealer = new SessionSealer(root, settings);
    const user = sealer.issue(1_000, { kind: 'user', accessKey: 'alice' });
    const sso = sealer.issue(1_000, { kind: 'sso', who: 'carol', policies: ['readonly', 'team'] });
    expect(sealer.open(sealer.seal(user), 2_000)).toMatchObject({ accessKey: 'alice', kind: 'user', policies: [] });
    expect(sealer.open(sealer.seal(sso), 2_000)).toMatchObject({ accessKey: 'sso:carol', kind: 'sso', policies: ['readonly', 'team'] });
    expect(sealer.issue(1_000)).toMatchObject({ accessKey: 'root', kind: 'root', policies: [] });
  });

  it('expires when idle and at the absolute limit', () => {
    const sealer = new SessionSealer(root, settings);
    const session = sealer.issue(0);
    expect(sealer.open(sealer.seal(session), settings.idleMs)).toEqual(session);
    expect(sealer.open(sealer.seal(session), settings.idleMs + 1)).toBeUndefined();
    const kept = { ...session, lastSeenMs: settings.maxMs };
    expect(sealer.open(sealer.seal(kept), settings.maxMs)).toEqual(kept);
    expect(sealer.open(sealer.seal({ ...session, lastSeenMs: settings.maxMs + 1 }), settings.maxMs + 1)).toBeUndefined();
    expect(sealer.remainingMs(session, 10_000)).toBe(settings.idleMs - 10_000);
  });

  it('binds the CSRF token to the session and compares credentials exactly', () => {
    const sealer = new SessionSealer(root, settings);
    const one = sealer.issue(0);
    const two = sealer.issue(0);
    expect(sealer.csrfTokenMatches(one, sealer.csrfToken(one))).toBe(true);
    expect(sealer.csrfTokenMatches(one, sealer.csrfToken(two))).toBe(false);
    expect(sealer.csrfTokenMatches(one, undefined)).toBe(false);
    expect(sealer.csrfTokenMatches(one, '')).toBe(false);
    expect(sealer.credentialsMatch('root', 'root-secret')).toBe(true);
    expect(sealer.credentialsMatch('root', 'root-secret ')).toBe(false);
    expect(sealer.credentialsMatch('root2', 'root-secret')).toBe(false);
  });

  it('writes and reads the cookie', () => {
    expect(sessionCookie('abc', { maxAgeMs: 3_600_000, secure: true })).toBe('svc_console_session=abc; Path=/svc/console/; HttpOnly; SameSite=Strict; Max-Age=3600; Secure');
    expect(sessionCookie(undefined, { maxAgeMs: 0, secure: false })).toContain('Max-Age=0');
    expect(cookieValue('a=1; svc_console_session=xyz; b=2', 'svc_console_session')).toBe('xyz');
    expect(cookieValue(undefined, 'svc_console_session')).toBeUndefined();
  });
});

describe('client origin', () => {
  const trusted = trustedProxyList(['127.0.0.0/8', '::1', '10.0.0.5']);
  const facts = (remoteAddress: string, headers: Record<string, string>) => ({ remoteAddress, encrypted: false, headers: { host: 'console.local:9001', ...headers } });

  it('believes forwarded headers from a trusted proxy only', () => {
    const forwarded = { 'x-forwarded-for': '203.0.113.1, 10.0.0.5', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'console.example.com' };
    expect(clientOrigin(facts('127.0.0.1', forwarded), trusted)).toEqual({ address: '203.0.113.1', peer: '127.0.0.1', secure: true, host: 'console.example.com', viaProxy: true });
    expect(clientOrigin(facts('::ffff:127.0.0.1', forwarded), trusted).address).toBe('203.0.113.1');
    expect(clientOrigin(facts('198.51.100.2', forwarded), trusted)).toEqual({ address: '198.51.100.2', peer: '198.51.100.2', secure: false, host: 'console.local:9001', viaProxy: false });
  });

  it('takes the nearest untrusted hop, so a client cannot pick its own address', () => {
    const spoofed = { 'x-forwarded-for': '1.2.3.4, 203.0.113.9' };
    expect(clientOrigin(facts('127.0.0.1', spoofed), trusted).address).toBe('203.0.113.9');
  });

  it('trusts nobody by default, loopback included', () => {
    const nobody = trustedProxyList(readServerConfig(['/tmp/none{1...4}'], {}).consoleTrustedProxies);
    const forwarded = { 'x-forwarded-for': '203.0.113.1', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' };
    for (const peer of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '10.0.0.5']) {
      expect(clientOrigin(facts(peer, forwarded), nobody)).toEqual({ address: peer, peer, secure: false, host: 'console.local:9001', viaProxy: false });
    }
  });

  it('counts sign-in failures per peer, and through a trusted proxy per forwarded client under it', () => {
    const keyOf = (peer: string, headers: Record<string, string>) => throttleKey(clientOrigin(facts(peer, headers), trusted));
    expect(keyOf('198.51.100.2', { 'x-forwarded-for': '1.1.1.1' })).toBe(keyOf('198.51.100.2', { 'x-forwarded-for': '2.2.2.2' }));
    expect(keyOf('198.51.100.2', {})).toBe('198.51.100.2');
    expect(keyOf('127.0.0.1', { 'x-forwarded-for': '203.0.113.1' })).toBe('127.0.0.1 for 203.0.113.1');
    expect(keyOf('127.0.0.1', { 'x-forwarded-for': '203.0.113.2' })).not.toBe(keyOf('127.0.0.1', { 'x-forwarded-for': '203.0.113.1' }));
    expect(keyOf('127.0.0.1', {})).toBe('127.0.0.1');
  });

  it('points share links at SVC_SERVER_URL whatever host a trusted proxy forwards; without it, at the forwarded host', () => {
    const origin = clientOrigin(facts('127.0.0.1', { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' }), trusted);
    expect(shareBaseUrl('https://s3.example.com', origin, 9000)).toBe('https://s3.example.com');
    expect(shareBaseUrl(undefined, origin, 9000)).toBe('https://evil.example:9000');
  });

  it('refuses a malformed trusted-proxy entry', () => {
    expect(() => trustedProxyList(['not-an-address'])).toThrow(/not an IP address/);
  });
});

describe('sign-in throttle', () => {
  it('lets a few failures pass, then locks the address out for longer each time; success clears it', () => {
    const throttle = new SignInThrottle();
    for (let index = 0; index < limits.consoleFreeSignInFailures - 1; index += 1) throttle.failed('a', 0);
    expect(throttle.waitMs('a', 0)).toBe(0);
    throttle.failed('a', 0);
    const first = throttle.waitMs('a', 0);
    expect(first).toBe(limits.consoleSignInLockoutBaseMs);
    throttle.failed('a', first);
    expect(throttle.waitMs('a', first)).toBe(2 * limits.consoleSignInLockoutBaseMs);
    expect(throttle.waitMs('b', 0)).toBe(0);
    throttle.succeeded('a');
    expect(throttle.waitMs('a', first)).toBe(0);
  });
});

describe('console settings', () => {
  const config = (env: Record<string, string>) => readServerConfig(['/tmp/none{1...4}'], env);

  it('reads session expiry, trusted proxies and the S3 URL for share links', () => {
    const defaults = config({});
    expect(defaults).toMatchObject({ consoleSessionIdleMs: 3_600_000, consoleSessionMaxMs: 43_200_000, consoleTrustedProxies: [] });
    expect(defaults.serverUrl).toBeUndefined();
    const set = config({ SVC_CONSOLE_SESSION_IDLE: '30m', SVC_CONSOLE_SESSION_MAX: '1d', SVC_CONSOLE_TRUSTED_PROXIES: '10.0.0.0/8, 192.0.2.1', SVC_SERVER_URL: 'https://s3.example.com/' });
    expect(set).toMatchObject({ consoleSessionIdleMs: 1_800_000, consoleSessionMaxMs: 86_400_000, consoleTrustedProxies: ['10.0.0.0/8', '192.0.2.1'], serverUrl: 'https://s3.example.com' });
    expect(config({ SVC_CONSOLE_SESSION_IDLE: '90s' }).consoleSessionIdleMs).toBe(90_000);
  });

  it('refuses what it cannot use, naming the variable', () => {
    for (const [name, value] of [
      ['SVC_CONSOLE_SESSION_IDLE', 'soon'],
      ['SVC_CONSOLE_SESSION_IDLE', '0s'],
      ['SVC_CONSOLE_SESSION_IDLE', '2d'],
      ['SVC_SERVER_URL', 'not a url'],
      ['SVC_SERVER_URL', 'https://s3.example.com/path'],
      ['SVC_SERVER_URL', 'ftp://s3.example.com'],
      ['SVC_CONSOLE_TRUSTED_PROXIES', '127.0.0.1,proxy.local'],
      ['SVC_CONSOLE_TRUSTED_PROXIES', '10.0.0.0/33'],
    ] as const) {
      expect(() => config({ [name]: value }), `${name}=${value}`).toThrow(expect.objectContaining({ code: 'InvalidConfiguration', details: { variable: name } }));
    }
  });
});
