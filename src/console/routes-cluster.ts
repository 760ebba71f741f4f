/**
 * The cluster and its operations. `GET /overview` is the admin cluster snapshot (pools, sets,
 * drives, nodes, running operations). `/admin/<path>` runs the admin API's own route for
 * `/svc/admin/<path>` in-process, with the same query and JSON body, the same schema and the same
 * validation and errors, so the console has no second implementation of rebalance, decommission or heal.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { adminRoutes } from '../api/admin/routes.js';
import type { AdminRequest } from '../api/admin/context.js';
import { fastifySchema, type RouteSchema } from '../api/admin/route-schema.js';
import { snapshotSchema } from '../api/admin/answer-schemas.js';
import type { ConsoleContext } from './context.js';

/** Admin routes the console does not offer (fault injection is a test tool, not a console page). */
const withheld = new Set(['/svc/admin/v4/faults']);

const overviewSchema: RouteSchema = {
  ...adminRoutes.find((route) => route.path === '/svc/admin/v4/cluster/snapshot')!.schema,
  summary: 'The cluster overview',
  description: "The admin API's cluster snapshot: nodes, pools with sets and drives, running operations.",
  response: snapshotSchema,
};

export async function clusterRoutes(app: FastifyInstance, options: { context: ConsoleContext }): Promise<void> {
  const { context } = options;
  app.get('/overview', { schema: fastifySchema(overviewSchema, 'cluster') }, async () => context.admin().snapshot());
  app.addHook('preValidation', async (request) => {
    if (request.routeOptions.schema?.body && request.body === undefined) request.body = {};
  });
  for (const route of adminRoutes) {
    if (withheld.has(route.path)) continue;
    app.route({
      method: route.method,
      url: `/admin/${route.path.slice('/svc/admin/'.length)}`,
      schema: fastifySchema(route.schema, 'admin'),
      config: { bodyErrorCode: route.schema.bodyErrorCode },
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
