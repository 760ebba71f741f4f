/**
 * The cluster and its operations. `GET /overview` is the admin cluster snapshot (pools, sets,
 * drives, nodes, running operations). `/admin/<path>` runs the admin API's own route for
 * `/svc/admin/<path>` in-process, with the same query and JSON body, the same schema and the same
 * validation and errors, so the console has no second implementation of rebalance, decommission or
 * heal, and the same declared access (`RouteAccess`, checked by route-access.ts): a route's own
 * actions before anything else, then what its conditional rule asks of the call (the right to
 * read an object whose placement is shown). Users and policies have their own console routes
 * (routes-users.ts), so the admin API's are not offered here.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { adminRoutes } from '../api/admin/routes.js';
import type { AdminRequest } from '../api/admin/context.js';
import { fastifySchema, type RouteSchema } from '../api/admin/route-schema.js';
import { snapshotSchema } from '../api/admin/answer-schemas.js';
import type { ConsoleContext } from './context.js';
import { adminActions } from './access.js';
import { documentedSchema, requireRouteAccess } from '../api/admin/route-access.js';
import { requestAccess } from './request-state.js';

/**
 * Admin routes the console does not offer (fault injection is a test tool, not a console page;
 * users and policies have the console's own routes). The Groups and Service accounts pages use the
 * admin API's group, service account and policy attachment routes.
 */
const offeredIam = /^\/svc\/admin\/v4\/iam\/(groups|group\/[a-z]+|svcacct\/[a-z]+|policy\/(attach|detach))$/;
const withheld = (path: string) => path === '/svc/admin/v4/faults' || (path.startsWith('/svc/admin/v4/iam/') && !offeredIam.test(path));

const overviewSchema: RouteSchema = {
  ...adminRoutes.find((route) => route.path === '/svc/admin/v4/cluster/snapshot')!.schema,
  summary: 'The cluster overview',
  description: "The admin API's cluster snapshot: nodes, pools with sets and drives, running operations.",
  response: snapshotSchema,
};

export async function clusterRoutes(app: FastifyInstance, options: { context: ConsoleContext }): Promise<void> {
  const { context } = options;
  app.get('/overview', { schema: fastifySchema(overviewSchema, 'cluster'), config: { access: { actions: [adminActions.serverInfo], on: 'deployment' } } }, async (request) => {
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
      schema: fastifySchema(documentedSchema(route), 'admin'),
      config: { bodyErrorCode: route.schema.bodyErrorCode, access: { adminRoute: route.access } },
      // The route's own actions first: a caller without them learns nothing from the validation.
      onRequest: async (request) => requireRouteAccess({ actions: route.access.actions }, context.admin(), adminRequestOf(request), requestAccess(request).caller(), { objects: context.objects(), nowMs: context.nowMs }),
      preHandler: async (request) => requireRouteAccess(route.access, context.admin(), adminRequestOf(request), requestAccess(request).caller(), { objects: context.objects(), nowMs: context.nowMs }),
      handler: async (request) => (await route.handle(context.admin(), adminRequestOf(request), requestAccess(request).principal)) ?? {},
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
