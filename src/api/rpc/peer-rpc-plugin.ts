/**
 * Peer calls of internode RPC: POST /svc/rpc/v1/peer/<op> with a JSON body, answered with JSON.
 * The operations and their shapes are the peer protocol's (src/ops/peer-protocol.ts): a request is
 * decoded strictly before its handler runs. The composition root supplies the handler table, one
 * handler per operation; errors come back as { code, message, details }.
 */
import type { FastifyInstance } from 'fastify';
import { isSvcError, SvcError } from '../../errors/index.js';
import { verifyRpcToken } from '../../transport/rpc-token.js';
import { launchHashHeader } from './drive-rpc-plugin.js';
import { servePeerCall, type PeerHandlerTable } from '../../ops/peer-protocol.js';

export const peerRpcPrefix = '/svc/rpc/v1/peer';

export async function peerRpcPlugin(app: FastifyInstance, options: { rpcKey: Buffer; launchHash?: string; nowMs(): number; handlers: () => PeerHandlerTable }): Promise<void> {
  app.post(`${peerRpcPrefix}/:op`, async (request, reply) => {
    try {
      verifyRpcToken(options.rpcKey, request.headers.authorization, options.nowMs());
      if (options.launchHash !== undefined && request.headers[launchHashHeader] !== options.launchHash) throw new SvcError('InvalidConfiguration', 'refused by a peer: launch arguments differ');
      return await servePeerCall(options.handlers(), (request.params as { op: string }).op, request.body ?? {});
    } catch (error) {
      const known = isSvcError(error) ? error : new SvcError('InternalError', String(error));
      return reply.code(known.code === 'AccessDenied' ? 403 : known.httpStatus).send({ code: known.code, message: known.message, details: known.details });
    }
  });
}
