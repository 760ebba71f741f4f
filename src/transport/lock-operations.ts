/**
 * The lock calls a node makes to a peer's lock server, as one discriminated union with the answer
 * of each: the caller (cluster/remote-lock-server.ts) can send no other call, and the server
 * (api/rpc/lock-rpc-plugin.ts) decodes every received call here and handles each kind in an
 * exhaustive switch. They travel as JSON, in batches on the internode stream
 * (`{ calls: [...] }` answered by `{ answers: [...] }` in order) or one per HTTP request.
 *
 * A received call is decoded strictly: an unknown `op` is InvalidArgument "unknown lock
 * operation", a missing resource or uid, or an acquire without a read or write mode, is
 * InvalidArgument too; a missing or out-of-range `ttlMs` means the default lock expiry.
 */
import { SvcError } from '../errors/index.js';
import { limits } from '../util/limits.js';

export type LockCallMode = 'read' | 'write';

export type LockCall =
  | { op: 'acquire'; resource: string; mode: LockCallMode; uid: string; ttlMs: number }
  | { op: 'refresh'; resource: string; uid: string; ttlMs: number }
  | { op: 'release'; resource: string; uid: string };

export type LockOperation = LockCall['op'];

/** What each call answers when it is not refused. */
export interface LockAnswers {
  acquire: { granted: boolean };
  refresh: { refreshed: boolean };
  release: { released: true };
}

/** A refused call's answer. */
export interface LockRefusal {
  code: string;
  message: string;
}

export type LockAnswer = LockAnswers[LockOperation] | LockRefusal;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function ttlOf(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= limits.maxLockTtlMs ? value : limits.lockExpiryMs;
}

/** A received call (`op` from the body, or from the path of an HTTP lock request). */
export function decodeLockCall(value: unknown, op: unknown = isRecord(value) ? value.op : undefined): LockCall {
  const body = isRecord(value) ? value : {};
  if (op !== 'acquire' && op !== 'refresh' && op !== 'release') throw new SvcError('InvalidArgument', 'unknown lock operation');
  const { resource, uid } = body;
  if (typeof resource !== 'string' || typeof uid !== 'string') throw new SvcError('InvalidArgument', 'resource and uid are required');
  switch (op) {
    case 'acquire':
      if (body.mode !== 'read' && body.mode !== 'write') throw new SvcError('InvalidArgument', 'mode must be read or write');
      return { op, resource, mode: body.mode, uid, ttlMs: ttlOf(body.ttlMs) };
    case 'refresh':
      return { op, resource, uid, ttlMs: ttlOf(body.ttlMs) };
    case 'release':
      return { op, resource, uid };
  }
}

/** A received answer to `call`: the call's own answer, or a refusal; anything else is an Error naming the call. */
export function decodeLockAnswer(call: LockCall, value: unknown): LockAnswer {
  if (!isRecord(value)) throw new Error(`the answer to a lock ${call.op} is not an object`);
  if (typeof value.code === 'string') return { code: value.code, message: typeof value.message === 'string' ? value.message : value.code };
  switch (call.op) {
    case 'acquire':
      if (typeof value.granted === 'boolean') return { granted: value.granted };
      break;
    case 'refresh':
      if (typeof value.refreshed === 'boolean') return { refreshed: value.refreshed };
      break;
    case 'release':
      if (value.released === true) return { released: true };
      break;
  }
  throw new Error(`the answer to a lock ${call.op} is not its answer`);
}
