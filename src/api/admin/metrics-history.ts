/**
 * The last hour of metrics kept in memory (src/api/metrics/history.ts): this node's, or the
 * cluster's (every peer's samples added interval by interval), for the console's graphs.
 */
import { adminAction as admin } from '../../iam/index.js';
import { SvcError } from '../../errors/index.js';
import type { AdminRoute } from './context.js';
import { statusQuery } from './query.js';
import * as schema from './route-schema.js';

const count = (description: string): schema.JsonSchema => schema.integer(description, { minimum: 0 });

const sampleSchema = schema.object(
  {
    atMs: count('start of the interval, milliseconds since 1970'),
    requests: count('S3 requests answered in the interval'),
    clientErrors: count('of which answered 4xx'),
    serverErrors: count('of which answered 5xx'),
    latencyCounts: schema.list(count('requests'), 'requests by duration: one count per bound of latencyBoundsSeconds, then one for longer'),
    receivedBytes: count('request body bytes received'),
    sentBytes: count('answer bytes sent'),
    driveOperations: count('drive operations of the nodes own drives'),
    driveErrors: count('of which failed'),
    healScannedObjects: count('objects heal sequences scanned'),
    healedObjects: count('objects heal sequences healed'),
    readRepairs: count('read repairs done'),
  },
  { description: 'The counts of one interval (not rates), so that samples of several nodes add up.' },
);

export const metricsHistorySchema = schema.object({
  intervalMs: count('length of each sample'),
  latencyBoundsSeconds: schema.list(schema.number('upper bound of a latency bucket, seconds'), 'the latency buckets'),
  nodes: schema.list(schema.text('host:port'), 'the nodes whose samples are added here'),
  unreachable: schema.list(schema.text('host:port'), 'peers that did not answer'),
  samples: schema.list(sampleSchema, 'oldest first, at most an hour'),
});

const bounds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const exampleSample = {
  atMs: 1_764_393_600_000, requests: 120, clientErrors: 3, serverErrors: 0, latencyCounts: [10, 30, 40, 20, 12, 5, 2, 1, 0, 0, 0, 0, 0, 0, 0],
  receivedBytes: 1_048_576, sentBytes: 4_194_304, driveOperations: 960, driveErrors: 0, healScannedObjects: 0, healedObjects: 0, readRepairs: 0,
};

export const metricsHistoryRoutes: AdminRoute[] = [
  {
    method: 'GET',
    path: '/svc/admin/v4/metrics/history',
    schema: {
      summary: 'Metrics of the last hour',
      description: "Requests, errors, latency buckets, bytes in and out, drive operations and heal activity in 10 s samples over the last hour, kept in memory by each node (no Prometheus needed). `scope=cluster` (the default) adds up every node's samples (peers that do not answer are listed in `unreachable`); `scope=node` is the answering node's alone. Other query parameters are ignored.",
      querystring: schema.statusQuery({ scope: schema.oneOfValues(['cluster', 'node'], 'the cluster (default) or this node') }),
      response: metricsHistorySchema,
      example: { query: 'scope=cluster', response: { intervalMs: 10_000, latencyBoundsSeconds: bounds, nodes: ['127.0.0.1:9000'], unreachable: [], samples: [exampleSample] } },
    },
    access: { actions: [admin.serverInfo] },
    handle: async (context, request) => {
      const scope = statusQuery(request.rawQuery).get('scope') ?? 'cluster';
      if (scope !== 'cluster' && scope !== 'node') throw new SvcError('InvalidQueryParameter', `scope is cluster or node, not '${scope}'`, { parameter: 'scope' });
      if (!context.metricsHistory) throw new SvcError('NotImplemented', 'this server keeps no metrics history');
      return context.metricsHistory(scope);
    },
  },
];
