/**
 * The console's part of the audit log (docs/audit.md): the facts of each API request (the route,
 * the path it acted on, the session's identity and the actions it asked for), and the route that
 * shows this node's recent entries on the Users page. The entries need `admin:Audit`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SvcError } from '../errors/index.js';
import { auditPrincipalOf, setAuditFacts } from '../api/audit-facts.js';
import { adminActions } from './access.js';
import { auditOutcomes, type AuditOutcome } from '../ops/audit.js';
import { limits } from '../util/limits.js';
import type { ConsoleContext } from './context.js';
import type { ConsoleAccess } from './access.js';
import type { ClientOrigin } from './client-origin.js';
import { auditSchema } from './schemas-users.js';

const apiPath = '/svc/console/api/';

/** Before the session is checked: the route and path, the client, and no principal yet (anonymous). */
export function setConsoleRequestFacts(request: FastifyRequest, origin: ClientOrigin): void {
  const path = (request.raw.url ?? '').split('?')[0]!.slice(apiPath.length);
  const route = (request.routeOptions.url ?? '').slice(apiPath.length);
  setAuditFacts(request, { surface: 'console', api: `${request.method} ${route === '' ? path : route}`, resource: path, principal: { kind: 'anonymous' }, sourceIp: origin.address });
}

/** Once the session is checked: who it is, and (filled in as the route asks) the actions it needs. */
export function setConsoleSessionFacts(request: FastifyRequest, access: ConsoleAccess): void {
  setAuditFacts(request, { principal: auditPrincipalOf(access.principal), actions: access.requiredActions });
}

/** A sign-in names the key it tries, signed in or refused. */
export function setSignInFacts(request: FastifyRequest, accessKey: string, rootAccessKey: string): void {
  setAuditFacts(request, { principal: { kind: accessKey === rootAccessKey ? 'root' : 'user', accessKey } });
}



export async function auditRoutes(app: FastifyInstance, options: { context: ConsoleContext }): Promise<void> {
  app.get('/audit', { schema: auditSchema, config: { access: { actions: [adminActions.audit], on: 'deployment' } } }, async (request) => {
    const query = request.query as { limit?: string; principal?: string; outcome?: string };
    return { stats: options.context.audit.stats(), entries: options.context.audit.recent({ limit: limitOf(query.limit), ...(query.principal ? { principal: query.principal } : {}), ...outcomeOf(query.outcome) }) };
  });
}

function limitOf(raw: string | undefined): number {
  if (raw === undefined || raw === '') return limits.auditConsoleLimitDefault;
  const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= 1 && value <= limits.auditRecentEntries)) throw new SvcError('InvalidArgument', `limit must be a whole number from 1 to ${limits.auditRecentEntries}`, { field: 'limit' });
  return value;
}

function outcomeOf(raw: string | undefined): { outcome?: AuditOutcome } {
  if (raw === undefined || raw === '') return {};
  if (!(auditOutcomes as readonly string[]).includes(raw)) throw new SvcError('InvalidArgument', `outcome must be one of ${auditOutcomes.join(', ')}`, { field: 'outcome' });
  return { outcome: raw as AuditOutcome };
}
