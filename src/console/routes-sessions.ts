/**
 * The sessions page: the signed-in principal's console sessions this node has served (when each
 * began, was last seen, from which address and browser, this one marked), ending one or all the
 * others; with admin:ListUsers every principal's, and with admin:DisableUser ending anyone's.
 * Sessions are remembered per node, in memory (session-registry.ts): the answer says so.
 */
import type { FastifyInstance } from 'fastify';
import { SvcError } from '../errors/index.js';
import type { ConsoleContext } from './context.js';
import { adminActions } from './access.js';
import { queryOf } from './input.js';
import { requestAccess } from './request-state.js';
import type { SessionRecord, SessionRegistry } from './session-registry.js';
import { sessionsSchemas } from './schemas-sessions.js';

export async function sessionsRoutes(app: FastifyInstance, options: { context: ConsoleContext; registry: SessionRegistry }): Promise<void> {
  const { context, registry } = options;
  const listAccess = { actions: [], on: 'deployment', conditional: { actions: [adminActions.listUsers], when: "all=true: every principal's sessions" } } as const;
  app.get('/sessions', { schema: sessionsSchemas.list, config: { access: listAccess } }, async (request) => {
    const query = queryOf(request);
    if (query.all !== undefined && query.all !== 'true' && query.all !== 'false') throw new SvcError('InvalidArgument', 'all must be true or false', { field: 'all' });
    const access = requestAccess(request);
    const all = query.all === 'true';
    if (all) await access.require([{ action: adminActions.listUsers }]);
    const records = registry.list(context.nowMs(), all ? undefined : access.session.accessKey);
    return { scope: 'node', sessions: records.map((record) => describe(record, access.session.id)) };
  });
  const endAccess = { actions: [], on: 'deployment', conditional: { actions: [adminActions.disableUser], when: "another principal's session" } } as const;
  app.delete('/sessions/:handle', { schema: sessionsSchemas.end, config: { access: endAccess } }, async (request) => {
    const handle = (request.params as { handle: string }).handle;
    const access = requestAccess(request);
    const record = registry.byHandle(handle, context.nowMs());
    // Another principal's session, or one this node does not know: only an administrator learns which.
    if (record?.accessKey !== access.session.accessKey) await access.require([{ action: adminActions.disableUser }]);
    if (!record) throw new SvcError('NoSuchConsoleSession', undefined, { handle });
    if (record.id === access.session.id) throw new SvcError('InvalidArgument', 'this is the session making the request: sign out instead', { field: 'handle' });
    const ended = registry.end(record);
    await context.announceSessionEnded?.(ended);
    context.logger.info({ accessKey: record.accessKey, endedBy: access.session.accessKey }, 'console session ended');
    return { ended: [handle] };
  });
  app.post('/sessions/end-others', { schema: sessionsSchemas.endOthers, config: { access: { session: "ends the session's principal's other sessions this node knows, on every node" } } }, async (request) => {
    const access = requestAccess(request);
    const others = registry.list(context.nowMs(), access.session.accessKey).filter((record) => record.id !== access.session.id);
    const ended = others.map((record) => registry.end(record));
    await Promise.all(ended.map((session) => context.announceSessionEnded?.(session)));
    return { ended: others.map((record) => record.handle) };
  });
}

function describe(record: SessionRecord, currentId: string) {
  return {
    handle: record.handle,
    accessKey: record.accessKey,
    kind: record.kind,
    createdAt: new Date(record.issuedAtMs).toISOString(),
    lastSeenAt: new Date(record.lastSeenMs).toISOString(),
    address: record.address,
    agent: record.agent,
    current: record.id === currentId,
  };
}
