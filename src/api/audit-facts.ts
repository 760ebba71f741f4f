/**
 * What the audit log learns about a request (docs/audit.md): the plugin that serves it sets the
 * facts it knows (who, which API, which actions, on what) as it goes, and the listener's
 * onResponse hook turns them, with the status and timing, into one entry when the request
 * changed state or was refused for authorization. A request no plugin set facts for (health,
 * metrics, internode RPC, the console's static files) is not audited.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { auditEntryVersion, type AuditEntry, type AuditOutcome, type AuditPrincipal, type AuditSurface } from '../ops/audit.js';
import type { Clock } from '../util/clock.js';
import type { Principal } from '../iam/index.js';

export interface AuditFacts {
  surface: AuditSurface;
  api: string;
  principal: AuditPrincipal;
  actions: string[];
  resource: string;
  /** The error code the client was answered (set by a plugin, else read from a JSON or XML error body). */
  errorCode: string;
  /** The client's address when the plugin knows better than the socket (a trusted proxy's X-Forwarded-For). */
  sourceIp: string;
}

/** What installAudit needs of the audit log. */
export interface AuditRecorder {
  readonly node: string;
  readonly clock: Clock;
  record(entry: AuditEntry): void;
}

const factsOf = new WeakMap<FastifyRequest, Partial<AuditFacts>>();
const startedMs = new WeakMap<FastifyRequest, number>();

/** Adds to (or replaces) what is known about the request. */
export function setAuditFacts(request: FastifyRequest, facts: Partial<AuditFacts>): void {
  factsOf.set(request, { ...factsOf.get(request), ...facts });
}

export function auditFactsOf(request: FastifyRequest): Partial<AuditFacts> | undefined {
  return factsOf.get(request);
}

/** Who a request acted for, as the audit log names it (anonymous when nobody signed). */
export function auditPrincipalOf(principal: Principal | undefined): AuditPrincipal {
  if (principal === undefined) return { kind: 'anonymous' };
  return { kind: principal.kind, accessKey: principal.accessKey, ...(principal.parentUser === undefined ? {} : { parentUser: principal.parentUser }) };
}

/** An access key as a principal before its signature is checked: root when it is the root key, else a user (the checked principal replaces it). */
export function principalOfKey(accessKey: string | undefined, rootAccessKey: string): AuditPrincipal {
  if (accessKey === undefined || accessKey === '') return { kind: 'anonymous' };
  return { kind: accessKey === rootAccessKey ? 'root' : 'user', accessKey };
}

/**
 * The access key a request claims (SigV4 header or query, SigV2 header or query), before its
 * signature is checked: a refused signature is still recorded against the key it named.
 */
export function claimedAccessKey(headers: FastifyRequest['headers'], query: URLSearchParams): string | undefined {
  const authorization = typeof headers.authorization === 'string' ? headers.authorization : undefined;
  const fromHeader = authorization === undefined ? undefined : (/Credential=([^/,\s]+)\//.exec(authorization)?.[1] ?? /^AWS ([^:\s]+):/.exec(authorization)?.[1]);
  return fromHeader ?? query.get('X-Amz-Credential')?.split('/')[0] ?? query.get('AWSAccessKeyId') ?? undefined;
}

/** Whether a request is audited and how it ended: any state-changing method, and any 401/403 refusal (a CORS preflight is neither). */
export function auditOutcomeOf(method: string, httpStatus: number): AuditOutcome | undefined {
  if (method === 'OPTIONS') return undefined;
  if (httpStatus === 401 || httpStatus === 403) return 'denied';
  if (!stateChanging.has(method)) return undefined;
  return httpStatus < 400 ? 'allowed' : 'error';
}

const stateChanging = new Set(['PUT', 'POST', 'DELETE', 'PATCH']);

/** Records an entry per audited request of the listener; `surface` is the default for facts that name none. */
export function installAudit(app: FastifyInstance, audit: AuditRecorder, surface: AuditSurface): void {
  app.addHook('onRequest', async (request) => {
    startedMs.set(request, audit.clock.nowMs());
  });
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode >= 400 && typeof payload === 'string' && factsOf.get(request)?.errorCode === undefined) {
      const code = errorCodeIn(payload);
      if (code !== undefined) setAuditFacts(request, { errorCode: code });
    }
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    const facts = factsOf.get(request);
    const outcome = auditOutcomeOf(request.method, reply.statusCode);
    if (facts === undefined || outcome === undefined) return;
    audit.record(entryOf(audit, request, reply, { ...facts, surface: facts.surface ?? surface }, outcome));
  });
}

function entryOf(audit: AuditRecorder, request: FastifyRequest, reply: FastifyReply, facts: Partial<AuditFacts> & { surface: AuditSurface }, outcome: AuditOutcome): AuditEntry {
  const userAgent = request.headers['user-agent'];
  const requestId = reply.getHeader('x-amz-request-id');
  return {
    version: auditEntryVersion,
    time: new Date(startedMs.get(request) ?? audit.clock.nowMs()).toISOString(),
    node: audit.node,
    requestId: typeof requestId === 'string' ? requestId : '',
    surface: facts.surface,
    api: facts.api ?? `${request.method} ${request.routeOptions.url ?? ''}`,
    principal: facts.principal ?? { kind: 'anonymous' },
    actions: [...new Set(facts.actions ?? [])],
    resource: facts.resource ?? '',
    outcome,
    httpStatus: reply.statusCode,
    ...(facts.errorCode === undefined ? {} : { errorCode: facts.errorCode }),
    sourceIp: facts.sourceIp ?? request.ip,
    userAgent: typeof userAgent === 'string' ? userAgent : '',
    durationMs: Math.round(reply.elapsedTime * 1000) / 1000,
  };
}

/** The `Code` of an error body: `{"Code":"..."}` (admin, console) or `<Code>...</Code>` (S3). */
function errorCodeIn(payload: string): string | undefined {
  const head = payload.slice(0, 512);
  return /"Code":"([A-Za-z0-9.]+)"/.exec(head)?.[1] ?? /<Code>([A-Za-z0-9.]+)<\/Code>/.exec(head)?.[1];
}
