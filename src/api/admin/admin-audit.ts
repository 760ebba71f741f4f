/**
 * The audit facts of an admin request (src/api/audit-facts.ts): the operation (`admin:` and the
 * route's path after its version, `admin:user/add`), the key it claims (replaced by the checked
 * principal, and the actions by the route's declared ones, once the plugin knows them), and its
 * target (the user, policy, bucket or pool named in the query or body).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { claimedAccessKey, principalOfKey, setAuditFacts } from '../audit-facts.js';

/** Names in the query or the JSON body that say what an admin request acts on (never a secret). */
const targetNames = ['accessKey', 'policy', 'name', 'bucket', 'pool', 'pools'];

/** Hooks of the admin plugin: add them before its authentication, so a refused request is recorded too. */
export function installAdminAudit(app: FastifyInstance, rootAccessKey: string): void {
  app.addHook('onRequest', async (request) => {
    const rawUrl = request.raw.url ?? '/';
    const queryAt = rawUrl.indexOf('?');
    const query = new URLSearchParams(queryAt < 0 ? '' : rawUrl.slice(queryAt + 1));
    const operation = (queryAt < 0 ? rawUrl : rawUrl.slice(0, queryAt)).replace(/^\/svc\/admin\/v\d+\//, '').replace(/^iam\//, '');
    setAuditFacts(request, {
      surface: 'admin',
      api: `admin:${operation}`,
      principal: principalOfKey(claimedAccessKey(request.headers, query), rootAccessKey),
      actions: [],
      resource: targetOf((name) => query.get(name) ?? undefined) ?? operation,
    });
  });
  app.addHook('preHandler', async (request: FastifyRequest) => {
    const body = request.body;
    if (typeof body !== 'object' || body === null) return;
    const target = targetOf((name) => (typeof (body as Record<string, unknown>)[name] === 'string' ? ((body as Record<string, string>)[name]) : undefined));
    if (target !== undefined) setAuditFacts(request, { resource: target });
  });
}

function targetOf(value: (name: string) => string | undefined): string | undefined {
  const parts = targetNames.flatMap((name) => {
    const found = value(name);
    return found === undefined || found === '' ? [] : [`${name}=${found}`];
  });
  return parts.length === 0 ? undefined : parts.join(' ');
}
