/**
 * A real OpenID provider for tests (the `oidc-provider` package) on loopback: users `alice` (in the
 * `svc-admins` group) and `bob` (only in `staff`), and users with a `policy` claim: `carol`
 * (readonly), `dave` (consoleAdmin and an unknown name, one comma-separated string), `erin` (only
 * unknown names) and `frank` (consoleAdmin but outside `staff`); a sign-in form at
 * /interaction/:uid that takes a user name, and consent granted automatically for the one
 * registered client.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

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
  close(): Promise<void>;
}

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
  const provider = new Provider(issuer, {
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: redirectUris, grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' }],
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
  return { issuer, clientId, clientSecret, close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) };
}
