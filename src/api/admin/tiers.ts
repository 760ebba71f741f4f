/**
 * Remote tiers for lifecycle transitions (docs/lifecycle.md, "Tiers"): add one (checked before it
 * is kept), list them, one tier's details, remove one. The admin actions are MinIO's:
 * `admin:SetTier` changes tiers, `admin:ListTier` reads them. A tier's secret key is never
 * returned.
 */
import { adminAction as admin } from '../../iam/index.js';
import { SvcError } from '../../errors/index.js';
import type { AdminContext, AdminRoute } from './context.js';
import { jsonBody, mutationQuery, statusQuery } from './query.js';
import * as schema from './route-schema.js';

const tierPath = '/svc/admin/v4/tier';

export const tierSchema = schema.object(
  {
    name: schema.text('the tier name (upper case): the StorageClass lifecycle transitions name'),
    endpoint: schema.text('the S3 endpoint of the tier'),
    bucket: schema.text("the tier's bucket"),
    prefix: schema.text('prepended to every object key the tier is given (may be empty)'),
    region: schema.text("the tier's region"),
    accessKey: schema.text('the access key used with the tier'),
    createdAt: schema.text('when the tier was added', { format: 'date-time' }),
  },
  { description: 'One remote tier (its secret key is never shown).' },
);

const deletionFigures = {
  pending: schema.integer('tier objects waiting to be deleted, in the queue', { minimum: 0 }),
  deleted: schema.integer('tier objects the tier deleted since the node started', { minimum: 0 }),
  failed: schema.integer('attempts that failed (each is retried) since the node started', { minimum: 0 }),
  dropped: schema.integer('deletions dropped because the queue was full, since the node started', { minimum: 0 }),
  oldestQueuedAt: schema.text('when the oldest waiting deletion was queued', { format: 'date-time' }),
  lastError: schema.text('why the last attempt failed (cleared by a success)'),
};

const deletionsSchema = schema.object(
  {
    tier: schema.text('the tier name'),
    ...deletionFigures,
    nodesAnswered: schema.integer('nodes whose queue is counted here', { minimum: 0 }),
    nodesUnreachable: schema.integer('nodes that did not answer (their queues are not counted)', { minimum: 0 }),
  },
  { optional: ['oldestQueuedAt', 'lastError'], description: "The tier's deletion queues summed over the nodes that answered: counts added, the oldest entry of any node, the first node's last error." },
);

const nodeDeletionsSchema = schema.object(
  {
    node: schema.text('the node (host:port, in launch order; `this node` on a deployment of local paths)'),
    state: schema.oneOfValues(['answered', 'unreachable'], 'answered, or unreachable (the node did not answer in time: its queue is unknown)'),
    ...deletionFigures,
    error: schema.text('why the node is unreachable'),
  },
  { optional: ['pending', 'deleted', 'failed', 'dropped', 'oldestQueuedAt', 'lastError', 'error'], description: "One node's deletion queue of the tier (the figures when it answered, the error when not)." },
);

const exampleTier = { name: 'WARM', endpoint: 'http://127.0.0.1:9100', bucket: 'warm', prefix: 'svc/', region: 'us-east-1', accessKey: 'tier-user', createdAt: '2026-11-29T07:00:00.000Z' };

function tiersOf(context: AdminContext): NonNullable<AdminContext['tiers']> {
  if (!context.tiers) throw new SvcError('NotImplemented', 'this server has no remote tiers');
  return context.tiers;
}

const tierQuery = schema.statusQuery({ tier: schema.text('the tier name (any case)') }, ['tier']);

function tierParameter(rawQuery: string, mutation: boolean): string {
  const query = mutation ? mutationQuery(rawQuery, ['tier']) : statusQuery(rawQuery);
  const name = query.get('tier');
  if (!name) throw new SvcError('InvalidArgument', 'the query needs tier=<name>');
  return name;
}

/** The add body, each field checked as text (the registry checks the values). */
function tierBody(body: unknown): { name: string; endpoint: string; bucket: string; prefix?: string; region?: string; accessKey: string; secretKey: string } {
  const fields = body as Record<string, unknown>;
  const usage = 'the body must be {"name", "endpoint", "bucket", "accessKey", "secretKey", "prefix"?, "region"?} (all text)';
  for (const name of ['name', 'endpoint', 'bucket', 'accessKey', 'secretKey']) if (typeof fields[name] !== 'string') throw new SvcError('InvalidArgument', `${usage}: ${name} is missing`);
  for (const name of ['prefix', 'region']) if (fields[name] !== undefined && typeof fields[name] !== 'string') throw new SvcError('InvalidArgument', `${usage}: ${name} is not text`);
  return fields as ReturnType<typeof tierBody>;
}

export const tierRoutes: AdminRoute[] = [
  {
    method: 'POST',
    path: `${tierPath}/add`,
    schema: {
      summary: 'Add a remote tier',
      description:
        "Adds an S3 endpoint (another svc, or any S3) as a tier lifecycle transitions can move data to. Before it is kept, the tier's bucket must exist and take, read back and delete a probe object with the credentials given. Refusals: `InvalidArgument` (a field out of its rules, named), `TierAlreadyExists`, `TierUnreachable`, `TierInvalidCredentials`, `TierBucketNotFound`.",
      querystring: schema.noQuery(),
      body: schema.object(
        {
          name: schema.text('1 to 64 letters, digits, _ and -; kept in upper case'),
          endpoint: schema.text('http(s)://host:port'),
          bucket: schema.text("the tier's bucket (it must exist)"),
          prefix: schema.text("prepended to every object key (empty, or ending in '/')"),
          region: schema.text('default us-east-1'),
          accessKey: schema.text('access key on the tier'),
          secretKey: schema.text('secret key on the tier (stored sealed, never returned)'),
        },
        { optional: ['prefix', 'region'] },
      ),
      response: schema.object({ tier: tierSchema }),
      example: { body: { name: 'warm', endpoint: 'http://127.0.0.1:9100', bucket: 'warm', prefix: 'svc/', accessKey: 'tier-user', secretKey: 'tier-user-secret' }, response: { tier: exampleTier } },
    },
    access: { actions: [admin.setTier] },
    handle: async (context, request) => {
      mutationQuery(request.rawQuery, []);
      return { tier: await tiersOf(context).add(tierBody(jsonBody(request, 'the tier'))) };
    },
  },
  {
    method: 'GET',
    path: `${tierPath}/list`,
    schema: {
      summary: 'List remote tiers',
      description: 'Every tier of the deployment, by name. Unknown query parameters are ignored.',
      querystring: schema.statusQuery({}),
      response: schema.object({ tiers: schema.list(tierSchema, 'the tiers') }),
      example: { response: { tiers: [exampleTier] } },
    },
    access: { actions: [admin.listTier] },
    handle: async (context) => ({ tiers: await tiersOf(context).list() }),
  },
  {
    method: 'GET',
    path: `${tierPath}/info`,
    schema: {
      summary: 'One remote tier',
      description:
        "The tier of this name (`TierNotFound` when none), and every node's queue of tier objects waiting to be deleted there (their versions were deleted, overwritten or expired on that node; retried with backoff until the tier takes them). The answering node asks every other node; one that does not answer in time is listed as `unreachable` with the error, never left out, and `deletions` sums the nodes that answered.",
      querystring: tierQuery,
      response: schema.object({ tier: tierSchema, deletions: deletionsSchema, nodes: schema.list(nodeDeletionsSchema, 'one row per node, in launch order') }),
      example: {
        query: 'tier=WARM',
        response: {
          tier: exampleTier,
          deletions: { tier: 'WARM', pending: 2, deleted: 14, failed: 3, dropped: 0, oldestQueuedAt: '2026-11-29T07:10:00.000Z', lastError: 'tier WARM (http://127.0.0.1:9100) cannot be reached: connect ECONNREFUSED', nodesAnswered: 2, nodesUnreachable: 1 },
          nodes: [
            { node: '10.0.0.1:9000', state: 'answered', pending: 2, deleted: 9, failed: 3, dropped: 0, oldestQueuedAt: '2026-11-29T07:10:00.000Z', lastError: 'tier WARM (http://127.0.0.1:9100) cannot be reached: connect ECONNREFUSED' },
            { node: '10.0.0.2:9000', state: 'answered', pending: 0, deleted: 5, failed: 0, dropped: 0 },
            { node: '10.0.0.3:9000', state: 'unreachable', error: 'peer 10.0.0.3:9000 did not answer: connect ECONNREFUSED' },
          ],
        },
      },
    },
    access: { actions: [admin.listTier] },
    handle: async (context, request) => {
      const tiers = tiersOf(context);
      const tier = await tiers.info(tierParameter(request.rawQuery, false));
      return { tier, ...(await tiers.deletions(tier.name)) };
    },
  },
  {
    method: 'POST',
    path: `${tierPath}/remove`,
    schema: {
      summary: 'Remove a remote tier',
      description: 'Removes the tier. Refused with `TierInUse` while a lifecycle rule or a transitioned object version names it (every bucket is looked through); `TierNotFound` when there is none.',
      querystring: schema.mutationQuery({ tier: schema.text('the tier name (any case)') }, ['tier']),
      response: schema.object({ removed: schema.text('the name of the tier removed') }),
      example: { query: 'tier=WARM', response: { removed: 'WARM' } },
    },
    access: { actions: [admin.setTier] },
    handle: async (context, request) => {
      const name = tierParameter(request.rawQuery, true).toUpperCase();
      await tiersOf(context).remove(name);
      return { removed: name };
    },
  },
];
