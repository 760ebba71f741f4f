/**
 * The cluster and its operations. `GET /overview` is the admin cluster snapshot (pools, sets,
 * drives, nodes, running operations). `/admin/<path>` runs the admin API's own route for
 * `/svc/admin/<path>` in-process, with the same query and JSON body, the same schema and the same
 * validation and errors, so the console has no second implementation of rebalance, decommission or
 * heal. Reading needs `admin:ServerInfo`; starting or stopping work needs the action named for it
 * (`admin:Heal`, `admin:Rebalance`, `admin:Decommission`), checked before anything else. Users and
 * policies have their own console routes (routes-users.ts), so the admin API's are not offered here.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { adminRoutes } from '../api/admin/routes.js';
import type { AdminRequest } from '../api/admin/context.js';
import { fastifySchema, type RouteSchema } from '../api/admin/route-schema.js';
import { snapshotSchema } from '../api/admin/answer-schemas.js';
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

const overviewSchema: RouteSchema = {
  ...adminRoutes.find((route) => route.path === '/svc/admin/v4/cluster/snapshot')!.schema,
  summary: 'The cluster overview',
  description: "The admin API's cluster snapshot: nodes, pools with sets and drives, running operations.",
  response: snapshotSchema,
};

export async function clusterRoutes(app: FastifyInstance, options: { context: ConsoleContext }): Promise<void> {
  const { context } = options;
  app.get('/overview', { schema: fastifySchema(overviewSchema, 'cluster') }, async (request) => {
    await requestAccess(request).require([{ action: adminActions.serverInfo }]);
    return context.admin().snapshot();
  });
  app.addHook('preValidation', async (request) => {
    if (request.routeOptions.schema?.body && request.body === undefined) request.body = {};
  });
  for (const route of adminRoutes) {
    if (withheld(route.path)) continue;
    app.route({
      method: route.method,
      url: `/admin/${route.path.slice('/svc/admin/'.length)}`,
      schema: fastifySchema(route.schema, 'admin'),
      config: { bodyErrorCode: route.schema.bodyErrorCode },
      // The permission first: a caller without it learns nothing from the validation.
      onRequest: async (request) => requestAccess(request).require([{ action: adminActionOf(adminRequestOf(request).rawPath) }]),
      handler: async (request) => (await route.handle(context.admin(), adminRequestOf(request))) ?? {},
    });
  }
}

function adminRequestOf(request: FastifyRequest): AdminRequest {
  const url = request.url;
  const at = url.indexOf('/api/admin/');
  const query = url.indexOf('?');
  const rawPath = `/svc/admin/${url.slice(at + '/api/admin/'.length, query < 0 ? undefined : query)}`;
  const rawQuery = query < 0 ? '' : url.slice(query + 1);
  const body = request.body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(request.body));
  return { rawPath, rawQuery, queryGiven: query >= 0, body };
}
