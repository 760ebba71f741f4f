/**
 * The cluster and its operations. `GET /overview` is the admin cluster snapshot (pools, sets,
 * drives, nodes, running operations). `/admin/<path>` runs the admin API's own route for
 * `/svc/admin/<path>` in-process, with the same query and JSON body and the same validation and
 * errors, so the console has no second implementation of rebalance, decommission or heal. Reading
 * needs `admin:ServerInfo`; starting or stopping work needs the action named for it
 * (`admin:Heal`, `admin:Rebalance`, `admin:Decommission`). Users and policies have their own
 * console routes (routes-users.ts), so the admin API's are not offered here.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SvcError } from '../errors/index.js';
import { adminRoutes, type AdminRoute } from '../api/admin/routes.js';
import type { ConsoleContext } from './context.js';
import { adminActions } from './access.js';
import { requestAccess } from './request-state.js';

/** Admin routes the console does not offer (fault injection is a test tool, not a console page). */
const withheld = (path: string) => path === '/svc/admin/v4/faults' || path.startsWith('/svc/admin/v4/iam/');

/** The action an admin call needs, by its path: the first pattern that matches. */
const adminCallActions: [pattern: RegExp, action: string][] = [
  [/\/(background-)?heal(\/|$)/, adminActions.heal],
  [/\/rebalance\/(start|stop)$/, adminActions.rebalance],
  [/\/pools\/(decommission|cancel|clear)$/, adminActions.decommission],
];

function adminActionOf(path: string): string {
  return adminCallActions.find(([pattern]) => pattern.test(path))?.[1] ?? adminActions.serverInfo;
}

export async function clusterRoutes(app: FastifyInstance, options: { context: ConsoleContext }): Promise<void> {
  const { context } = options;
  app.get('/overview', async (request) => {
    await requestAccess(request).require([{ action: adminActions.serverInfo }]);
    return context.admin().snapshot();
  });
  app.route({ method: ['GET', 'POST'], url: '/admin/*', handler: async (request) => runAdminRoute(context, request) });
}

async function runAdminRoute(context: ConsoleContext, request: FastifyRequest): Promise<unknown> {
  const url = request.url;
  const at = url.indexOf('/api/admin/');
  const query = url.indexOf('?');
  const path = `/svc/admin/${url.slice(at + '/api/admin/'.length, query < 0 ? undefined : query)}`;
  const rawQuery = query < 0 ? '' : url.slice(query + 1);
  const matches = (route: AdminRoute) => route.path === path || (route.subtree === true && path.startsWith(route.path));
  const route = adminRoutes.find((candidate) => candidate.method === request.method && matches(candidate) && !withheld(candidate.path));
  if (!route) throw new SvcError('NotImplemented', `the console offers no admin call ${request.method} ${path}`);
  await requestAccess(request).require([{ action: adminActionOf(path) }]);
  const body = request.body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(request.body));
  return (await route.handle(context.admin(), { rawQuery, queryGiven: query >= 0, body }, path.slice(route.path.length))) ?? {};
}
