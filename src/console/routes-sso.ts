/**
 * Sign-in with SSO (OpenID Connect). `GET sso` tells the sign-in page whether to show the button;
 * `GET sso/start` sends the browser to the provider with a fresh login state and binds the browser
 * to it with a short-lived cookie; `GET sso/callback` completes it on the node that started it and
 * sets the same session cookie a key sign-in gets. A callback that cannot complete answers an HTML
 * page naming the cause (another node, a used or expired state, an account not admitted, a policy
 * claim naming no policy of this deployment). The session acts with the policies the claim names
 * (SVC_IDENTITY_OPENID_CLAIM_POLICY), or with consoleAdmin when no policy claim is configured.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SvcError } from '../errors/index.js';
import type { ConsoleContext } from './context.js';
import { asSvcError } from './errors.js';
import { cookieHeader, cookieValue, sessionCookie } from './session.js';
import { requestOrigin } from './request-state.js';
import type { ClientOrigin } from './client-origin.js';
import { limits } from '../util/limits.js';
import { ssoSchemas } from './api-schemas.js';

const loginCookieName = 'svc_console_login';
const loginCookiePath = '/svc/console/api/sso/';
const callbackPath = '/svc/console/api/sso/callback';

export async function ssoRoutes(app: FastifyInstance, options: { context: ConsoleContext }): Promise<void> {
  const { context } = options;
  const openId = context.openId;
  app.get('/sso', { schema: ssoSchemas.status, config: { access: { public: 'whether SSO sign-in is offered' } } }, async () => {
    if (!openId) return { configured: false, enabled: false };
    return { configured: true, ...(await openId.refresh()) };
  });
  app.get('/sso/start', { schema: ssoSchemas.start, config: { access: { public: 'starts the SSO sign-in' } } }, async (request, reply) =>
    answerPage(context, request, reply, async () => {
      if (!openId) throw new SvcError('ConsoleSsoUnavailable', 'sign-in with SSO is not configured on this deployment (SVC_IDENTITY_OPENID_CONFIG_URL)');
      const origin = requestOrigin(request);
      const { url, binding } = await openId.start(openId.settings.redirectUri?.href ?? `${origin.secure ? 'https' : 'http'}://${origin.host}${callbackPath}`);
      reply.header('set-cookie', loginCookie(binding, origin));
      return reply.redirect(url, 302);
    }),
  );
  app.get('/sso/callback', { schema: ssoSchemas.callback, config: { access: { public: 'the provider sends the browser back here' } } }, async (request, reply) =>
    answerPage(context, request, reply, async () => {
      if (!openId) throw new SvcError('ConsoleSsoUnavailable', 'sign-in with SSO is not configured on this deployment (SVC_IDENTITY_OPENID_CONFIG_URL)');
      const origin = requestOrigin(request);
      const query = new URLSearchParams(request.url.split('?')[1] ?? '');
      const { who, claimedPolicies } = await openId.finish(query, cookieValue(request.headers.cookie, loginCookieName));
      const policies = claimedPolicies === undefined ? [defaultSsoPolicy] : knownPolicies(context, who, openId.settings.claimPolicy!, claimedPolicies);
      const nowMs = context.nowMs();
      const session = context.sealer.issue(nowMs, { kind: 'sso', who, policies });
      context.logger.info({ client: origin.address, user: who, policies }, 'console sign-in with SSO');
      reply.header('set-cookie', [sessionCookie(context.sealer.seal(session), { maxAgeMs: context.sealer.remainingMs(session, nowMs), secure: origin.secure }), loginCookie(undefined, origin)]);
      return reply.redirect('/svc/console/', 302);
    }),
  );
}

/** Without a policy claim (SVC_IDENTITY_OPENID_CLAIM_POLICY unset), an admitted account administers the deployment. */
const defaultSsoPolicy = 'consoleAdmin';

/** The claimed policies this deployment has; unknown names are logged and left out; none known is refused. */
function knownPolicies(context: ConsoleContext, who: string, claim: string, claimed: string[]): string[] {
  const { unknown } = context.iam().policiesNamed(claimed);
  const known = claimed.filter((name) => !unknown.includes(name));
  if (unknown.length > 0) context.logger.warn({ user: who, claim, unknown }, 'console SSO: the policy claim names policies this deployment does not have; they are ignored');
  if (known.length > 0) return known;
  const reason = claimed.length === 0 ? `it has no '${claim}' claim naming a policy` : `its '${claim}' claim names ${claimed.map((name) => `'${name}'`).join(', ')}, none of them a policy of this deployment`;
  throw new SvcError('ConsoleSsoNoPolicy', `${who} signed in at the OpenID provider, but ${reason}, so it may do nothing here; nothing was signed in`, { claim, user: who });
}

function loginCookie(binding: string | undefined, origin: ClientOrigin): string {
  // Lax, not Strict: the callback is a top-level navigation coming back from the provider's site.
  return cookieHeader(loginCookieName, binding, { maxAgeMs: limits.consoleLoginStateTtlMs, secure: origin.secure, path: loginCookiePath, sameSite: 'Lax' });
}

/** Runs `work`; a failure becomes an HTML page naming its cause (these routes are browser navigations). */
async function answerPage(context: ConsoleContext, request: FastifyRequest, reply: FastifyReply, work: () => Promise<FastifyReply>): Promise<FastifyReply> {
  try {
    return await work();
  } catch (caught) {
    const error = asSvcError(caught);
    const level = error.code === 'InternalError' ? 'warn' : 'info';
    context.logger[level]({ client: requestOrigin(request).address, code: error.code, reason: error.message }, 'console SSO sign-in refused');
    return reply
      .code(error.httpStatus)
      .header('content-type', 'text/html; charset=utf-8')
      .header('set-cookie', loginCookie(undefined, requestOrigin(request)))
      .send(errorPage(error));
  }
}

function errorPage(error: SvcError): string {
  const text = (value: string) => value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign-in failed · svc console</title></head>
<body>
<main>
<h1>Sign-in with SSO failed</h1>
<p id="reason">${text(error.message)}</p>
<p>Error code: <code id="code">${text(error.code)}</code></p>
<p><a href="/svc/console/">Back to the sign-in page</a></p>
</main>
</body>
</html>
`;
}
