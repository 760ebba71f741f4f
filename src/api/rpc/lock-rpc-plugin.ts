/** The lock service of internode RPC: POST /svc/rpc/v1/lock/{acquire,refresh,release} (JSON). */
import type { FastifyInstance } from 'fastify';
import { isSvcError, SvcError } from '../../errors/index.js';
import { verifyRpcToken } from '../../util/rpc-token.js';
import type { LockTable } from '../../cluster/lock-table.js';
import { launchHashHeader } from './drive-rpc-plugin.js';

export const lockRpcPrefix = '/svc/rpc/v1/lock';

interface LockBody {
  resource?: unknown;
  mode?: unknown;
  uid?: unknown;
  ttlMs?: unknown;
}

export async function lockRpcPlugin(app: FastifyInstance, options: { rpcKey: Buffer; launchHash?: string; table: LockTable; nowMs(): number }): Promise<void> {
  app.post(`${lockRpcPrefix}/:op`, async (request, reply) => {
    try {
      verifyRpcToken(options.rpcKey, request.headers.authorization, options.nowMs());
      if (options.launchHash !== undefined && request.headers[launchHashHeader] !== options.launchHash) throw new SvcError('InvalidConfiguration', 'refused by a peer: launch arguments differ');
      const body = (request.body ?? {}) as LockBody;
      if (typeof body.resource !== 'string' || typeof body.uid !== 'string') throw new SvcError('InvalidArgument', 'resource and uid are required');
      const ttlMs = typeof body.ttlMs === 'number' && body.ttlMs > 0 && body.ttlMs <= 600_000 ? body.ttlMs : 30_000;
      switch ((request.params as { op: string }).op) {
        case 'acquire':
          if (body.mode !== 'read' && body.mode !== 'write') throw new SvcError('InvalidArgument', 'mode must be read or write');
          return { granted: options.table.acquire(body.resource, body.mode, body.uid, ttlMs) };
        case 'refresh':
          return { refreshed: options.table.refresh(body.resource, body.uid, ttlMs) };
        case 'release':
          options.table.release(body.resource, body.uid);
          return { released: true };
        default:
          throw new SvcError('InvalidArgument', 'unknown lock operation');
      }
    } catch (error) {
      const known = isSvcError(error) ? error : new SvcError('InternalError', String(error));
      return reply.code(known.code === 'AccessDenied' ? 403 : known.httpStatus).send({ code: known.code, message: known.message });
    }
  });
}
