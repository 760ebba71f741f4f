/**
 * The lock service of internode RPC: POST /svc/rpc/v1/lock/{acquire,refresh,release} (JSON), and
 * batches of lock calls on the internode stream (rpc-stream-plugin.ts): `{ calls: [{ op,
 * resource, mode, uid, ttlMs }...] }`, answered with `{ answers: [...] }` in order, each call's
 * own (a refused call's answer is `{ code, message }`).
 */
import type { FastifyInstance } from 'fastify';
import { isSvcError, SvcError } from '../../errors/index.js';
import { verifyRpcToken } from '../../transport/rpc-token.js';
import { limits } from '../../util/limits.js';
import type { LockTable } from '../../cluster/lock-table.js';
import { launchHashHeader } from './drive-rpc-plugin.js';

export const lockRpcPrefix = '/svc/rpc/v1/lock';

interface LockBody {
  resource?: unknown;
  mode?: unknown;
  uid?: unknown;
  ttlMs?: unknown;
}

/** One lock call on the table; throws InvalidArgument for a malformed one. */
function runLockCall(table: LockTable, op: unknown, body: LockBody): Record<string, unknown> {
  if (typeof body.resource !== 'string' || typeof body.uid !== 'string') throw new SvcError('InvalidArgument', 'resource and uid are required');
  const ttlMs = typeof body.ttlMs === 'number' && body.ttlMs > 0 && body.ttlMs <= 600_000 ? body.ttlMs : 30_000;
  switch (op) {
    case 'acquire':
      if (body.mode !== 'read' && body.mode !== 'write') throw new SvcError('InvalidArgument', 'mode must be read or write');
      return { granted: table.acquire(body.resource, body.mode, body.uid, ttlMs) };
    case 'refresh':
      return { refreshed: table.refresh(body.resource, body.uid, ttlMs) };
    case 'release':
      table.release(body.resource, body.uid);
      return { released: true };
    default:
      throw new SvcError('InvalidArgument', 'unknown lock operation');
  }
}

/**
 * A batch's calls, releases first (a release and a new grant of one resource in one frame free it
 * before it is asked for: a release never waits for an answer, grants may have waited for one),
 * the others in their order; answered in the order of the calls.
 */
export function runLockBatch(table: LockTable, body: { calls?: unknown }): { answers: Record<string, unknown>[] } {
  const calls = body.calls;
  if (!Array.isArray(calls) || calls.length > limits.rpcBatchMaxOperations) throw new SvcError('InvalidArgument', `calls must be a list of at most ${limits.rpcBatchMaxOperations} lock calls`);
  const entries = calls.map((call: unknown) => (call ?? {}) as LockBody & { op?: unknown });
  const answers: Record<string, unknown>[] = new Array(entries.length);
  const run = (index: number): void => {
    try {
      answers[index] = runLockCall(table, entries[index]!.op, entries[index]!);
    } catch (error) {
      const known = isSvcError(error) ? error : new SvcError('InternalError', String(error));
      answers[index] = { code: known.code, message: known.message };
    }
  };
  entries.forEach((entry, index) => entry.op === 'release' && run(index));
  entries.forEach((entry, index) => entry.op !== 'release' && run(index));
  return { answers };
}

export async function lockRpcPlugin(app: FastifyInstance, options: { rpcKey: Buffer; launchHash?: string; table: LockTable; nowMs(): number }): Promise<void> {
  app.post(`${lockRpcPrefix}/:op`, async (request, reply) => {
    try {
      verifyRpcToken(options.rpcKey, request.headers.authorization, options.nowMs());
      if (options.launchHash !== undefined && request.headers[launchHashHeader] !== options.launchHash) throw new SvcError('InvalidConfiguration', 'refused by a peer: launch arguments differ');
      return runLockCall(options.table, (request.params as { op: string }).op, (request.body ?? {}) as LockBody);
    } catch (error) {
      const known = isSvcError(error) ? error : new SvcError('InternalError', String(error));
      return reply.code(known.code === 'AccessDenied' ? 403 : known.httpStatus).send({ code: known.code, message: known.message });
    }
  });
}
