/**
 * Peer calls of internode RPC: POST /svc/rpc/v1/peer/<op> with a JSON body, answered with JSON.
 * The composition root supplies the handlers (decommission forwarded to the leader, pool
 * metadata change notices); errors come back as { code, message, details }.
 */
import type { FastifyInstance } from 'fastify';
import { isSvcError, SvcError } from '../../errors/index.js';
import { verifyRpcToken } from '../../transport/rpc-token.js';
import { launchHashHeader } from './drive-rpc-plugin.js';

export const peerRpcPrefix = '/svc/rpc/v1/peer';

export type PeerHandlers = Record<string, (body: Record<string, unknown>) => Promise<unknown>>;

export async function peerRpcPlugin(app: FastifyInstance, options: { rpcKey: Buffer; launchHash?: string; nowMs(): number; handlers: () => PeerHandlers }): Promise<void> {
  app.post(`${peerRpcPrefix}/:op`, async (request, reply) => {
    try {
      verifyRpcToken(options.rpcKey, request.headers.authorization, options.nowMs());
      if (options.launchHash !== undefined && request.headers[launchHashHeader] !== options.launchHash) throw new SvcError('InvalidConfiguration', 'refused by a peer: launch arguments differ');
      const handler = options.handlers()[(request.params as { op: string }).op];
      if (!handler) throw new SvcError('InvalidArgument', 'unknown peer operation');
      return (await handler((request.body ?? {}) as Record<string, unknown>)) ?? {};
    } catch (error) {
      const known = isSvcError(error) ? error : new SvcError('InternalError', String(error));
      return reply.code(known.code === 'AccessDenied' ? 403 : known.httpStatus).send({ code: known.code, message: known.message, details: known.details });
    }
  });
}
