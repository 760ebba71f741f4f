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
import { decodeLockCall, type LockAnswer, type LockAnswers, type LockCall } from '../../transport/lock-operations.js';
import type { LockTable } from '../../cluster/lock-table.js';
import { launchHashHeader } from './drive-rpc-plugin.js';

export const lockRpcPrefix = '/svc/rpc/v1/lock';

/** One decoded lock call on the table: every kind handled (the compiler checks the switch is whole). */
function runLockCall(table: LockTable, call: LockCall): LockAnswers[LockCall['op']] {
  switch (call.op) {
    case 'acquire':
      return { granted: table.acquire(call.resource, call.mode, call.uid, call.ttlMs) };
    case 'refresh':
      return { refreshed: table.refresh(call.resource, call.uid, call.ttlMs) };
    case 'release':
      table.release(call.resource, call.uid);
      return { released: true };
    default: {
      const unhandled: never = call;
      throw new SvcError('InternalError', `unhandled lock call ${JSON.stringify(unhandled)}`);
    }
  }
}

/**
 * A batch's calls, releases first (a release and a new grant of one resource in one frame free it
 * before it is asked for: a release never waits for an answer, grants may have waited for one),
 * the others in their order; answered in the order of the calls.
 */
export function runLockBatch(table: LockTable, body: { calls?: unknown }): { answers: LockAnswer[] } {
  const calls = body.calls;
  if (!Array.isArray(calls) || calls.length > limits.rpcBatchMaxOperations) throw new SvcError('InvalidArgument', `calls must be a list of at most ${limits.rpcBatchMaxOperations} lock calls`);
  const entries = calls as unknown[];
  const answers: LockAnswer[] = new Array(entries.length);
  const isRelease = (entry: unknown): boolean => typeof entry === 'object' && entry !== null && (entry as { op?: unknown }).op === 'release';
  const run = (index: number): void => {
    try {
      answers[index] = runLockCall(table, decodeLockCall(entries[index]));
    } catch (error) {
      const known = isSvcError(error) ? error : new SvcError('InternalError', String(error));
      answers[index] = { code: known.code, message: known.message };
    }
  };
  entries.forEach((entry, index) => isRelease(entry) && run(index));
  entries.forEach((entry, index) => !isRelease(entry) && run(index));
  return { answers };
}

export async function lockRpcPlugin(app: FastifyInstance, options: { rpcKey: Buffer; launchHash?: string; table: LockTable; nowMs(): number }): Promise<void> {
  app.post(`${lockRpcPrefix}/:op`, async (request, reply) => {
    try {
      verifyRpcToken(options.rpcKey, request.headers.authorization, options.nowMs());
      if (options.launchHash !== undefined && request.headers[launchHashHeader] !== options.launchHash) throw new SvcError('InvalidConfiguration', 'refused by a peer: launch arguments differ');
      return runLockCall(options.table, decodeLockCall(request.body, (request.params as { op: string }).op));
    } catch (error) {
      const known = isSvcError(error) ? error : new SvcError('InternalError', String(error));
      return reply.code(known.code === 'AccessDenied' ? 403 : known.httpStatus).send({ code: known.code, message: known.message });
    }
  });
}
