/**
 * The metrics endpoints on the S3 listener: GET /svc/metrics/node (this node) and
 * GET /svc/metrics/cluster (every node's view, merged). Access (both routes): a bearer token
 * (`rc admin prometheus generate`) signed with the metrics key of root or of a user whose
 * policies hold `admin:Prometheus`, or anyone with SVC_PROMETHEUS_AUTH_TYPE=public. A refusal is
 * 403 with the admin API's JSON error shape.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SvcError, isSvcError } from '../../errors/index.js';
import { verifyMetricsToken } from '../../util/metrics-token.js';
import { requestLine } from '../request-line.js';
import { mergeExpositions, type NodeExposition } from './cluster-view.js';
import type { NodeMetrics } from './node-metrics.js';

export const metricsPrefixPath = '/svc/metrics';

/** The action both metrics routes declare. */
export const metricsAction = 'admin:Prometheus';

export type MetricsAuth =
  | { type: 'public' }
  | {
      type: 'jwt';
      /** The metrics key of an access key (root's, or a user's); undefined when it has none. */
      keyFor(accessKey: string): Buffer | undefined;
      /** Throws AccessDenied unless the token's access key holds the action (root always does). */
      requireAction(accessKey: string, action: string): void;
    };

export interface MetricsPluginOptions {
  metrics: NodeMetrics;
  auth: MetricsAuth;
  /** This node's name in the cluster view (host:port). */
  server: string;
  /** The other nodes' own expositions (undefined text for a node that did not answer). */
  peerExpositions(): Promise<NodeExposition[]>;
  nowMs(): number;
}

export async function metricsPlugin(app: FastifyInstance, options: MetricsPluginOptions): Promise<void> {
  app.get(`${metricsPrefixPath}/node`, (request, reply) => answer(options, request, reply, async () => options.metrics.render()));
  app.get(`${metricsPrefixPath}/cluster`, (request, reply) =>
    answer(options, request, reply, async () => {
      const [own, peers] = await Promise.all([options.metrics.render(), options.peerExpositions()]);
      return mergeExpositions([{ server: options.server, text: own }, ...peers]);
    }),
  );
}

async function answer(options: MetricsPluginOptions, request: FastifyRequest, reply: FastifyReply, render: () => Promise<string>): Promise<void> {
  const { requestId, rawPath } = requestLine(request);
  reply.header('x-amz-request-id', requestId);
  try {
    if (options.auth.type === 'jwt') options.auth.requireAction(verifyMetricsToken(options.auth.keyFor, request.headers.authorization, options.nowMs()), metricsAction);
    await reply.code(200).header('content-type', options.metrics.contentType).send(await render());
  } catch (error) {
    const known = isSvcError(error) ? error : new SvcError('InternalError', undefined, {}, { cause: error });
    await reply.code(known.httpStatus).header('content-type', 'application/json').send(JSON.stringify({ Code: known.code, Message: known.message, Resource: rawPath, RequestId: requestId }));
  }
}
