/**
 * A real OpenID provider for tests (the `oidc-provider` package) on loopback: users `alice` (in the
 * `svc-admins` group) and `bob` (only in `staff`), and users with a `policy` claim: `carol`
 * (readonly), `dave` (consoleAdmin and an unknown name, one comma-separated string), `erin` (only
 * unknown names) and `frank` (consoleAdmin but outside `staff`); a sign-in form at
 * /interaction/:uid that takes a user name, and consent granted automatically. Two clients are
 * registered: the console's, and `otherClientId` (ID tokens for another audience). `idTokenFor`
 * signs a user in as an application would and returns its ID token (STS web identity tests).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import Provider from 'oidc-provider';
import { CookieJar } from './browser-jar.js';

export const idpUsers: Record<string, { groups: string[]; email: string; policy?: string | string[] }> = {
  alice: { groups: ['svc-admins', 'staff'], email: 'alice@example.test' },
  bob: { groups: ['staff'], email: 'bob@example.test' },
  carol: { groups: ['staff'], email: 'carol@example.test', policy: ['readonly'] },
  dave: { groups: ['staff'], email: 'dave@example.test', policy: 'consoleAdmin, no-such-policy' },
  erin: { groups: ['staff'], email: 'erin@example.test', policy: ['no-such-policy'] },
  frank: { groups: [], email: 'frank@example.test', policy: ['consoleAdmin'] },
};

export interface TestIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Where idTokenFor's sign-ins end (registered for both clients, never contacted). */
  appRedirectUri: string;
  close(): Promise<void>;
}

/** A second registered client: its ID tokens carry another audience. */
export const otherClientId = 'svc-other-app';

async function formBody(request: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** Starts the provider on `host` (a free port) accepting the given redirect URIs. */
export async function startTestIdp(redirectUris: string[], host = '127.0.0.1'): Promise<TestIdp> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const issuer = `http://${host}:${(server.address() as AddressInfo).port}`;
  const clientId = 'svc-console';
  const clientSecret = 'svc-console-test-secret';
  const appRedirectUri = `http://${host}:1/app-callback`;
  const provider = new Provider(issuer, {
    clients: [clientId, otherClientId].map((id) => ({ client_id: id, client_secret: clientSecret, redirect_uris: [...redirectUris, appRedirectUri], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' })),
    claims: { openid: ['sub'], profile: ['preferred_username', 'groups', 'policy'], email: ['email'] },
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => true },
    cookies: { keys: ['test-idp-cookie-key'] },
    ttl: { Interaction: 600, Grant: 3600, Session: 3600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: async (_ctx, id) => {
      const user = idpUsers[id];
      if (!user) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, preferred_username: id, email: user.email, groups: user.groups, ...(user.policy !== undefined ? { policy: user.policy } : {}) }) };
    },
    loadExistingGrant: async (ctx) => {
      const existing = ctx.oidc.session?.grantIdFor(ctx.oidc.client!.clientId);
      if (existing) return ctx.oidc.provider.Grant.find(existing);
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope('openid profile email');
      await grant.save();
      return grant;
    },
  });
  const callback = provider.callback();
  server.on('request', (request, response) => {
    const match = /^\/interaction\/([^/?]+)(\/login)?/.exec(request.url ?? '');
    if (!match) return void callback(request, response);
    void (async () => {
      try {
        const details = await provider.interactionDetails(request, response);
        if (!match[2]) {
          response.setHeader('content-type', 'text/html; charset=utf-8');
          response.end(`<!doctype html><title>Test IdP sign-in</title><form method="post" action="/interaction/${details.uid}/login"><label>User <input name="login" autofocus></label><button type="submit">Sign in at the IdP</button></form>`);
          return;
        }
        const login = (await formBody(request)).get('login') ?? '';
        if (!idpUsers[login]) {
          response.statusCode = 400;
          response.end('unknown user');
          return;
        }
        await provider.interactionFinished(request, response, { login: { accountId: login } }, { mergeWithLastSubmission: false });
      } catch (error) {
        response.statusCode = 500;
        response.end(String(error));
      }
    })();
  });
  return { issuer, clientId, clientSecret, appRedirectUri, close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) };
}

/** Signs `user` in at the provider as an application (authorization code with PKCE) and returns the ID token it is issued. */
export async function idTokenFor(idp: TestIdp, user: string, clientId = idp.clientId): Promise<string> {
  const jar = new CookieJar();
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL(`${idp.issuer}/auth`);
  const parameters = { client_id: clientId, response_type: 'code', scope: 'openid profile email', redirect_uri: idp.appRedirectUri, state: randomBytes(8).toString('hex'), nonce: randomBytes(8).toString('hex'), code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256' };
  for (const [name, value] of Object.entries(parameters)) authorize.searchParams.set(name, value);
  const atForm = await jar.follow(authorize.href);
  await atForm.response.body?.cancel();
  const back = await jar.follow(`${atForm.url}/login`, (next) => next.startsWith(idp.appRedirectUri), { method: 'POST', body: new URLSearchParams({ login: user }) });
  const code = new URL(back.url).searchParams.get('code');
  if (!code) throw new Error(`the provider did not sign ${user} in: ${back.url}`);
  const answer = await fetch(`${idp.issuer}/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${clientId}:${idp.clientSecret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: idp.appRedirectUri, code_verifier: verifier }),
  });
  const tokens = (await answer.json()) as { id_token?: string };
  if (!tokens.id_token) throw new Error(`the provider issued no ID token: ${JSON.stringify(tokens)}`);
  return tokens.id_token;
}
