/**
 * A peer's lock server reached over internode RPC; an unreachable peer grants nothing. The lock
 * calls this node makes to one peer in one turn of its event loop (the acquires and refreshes of
 * concurrent requests) travel in one frame of the peer's internode stream
 * (src/transport/), each answered on its own. While a frame of them is unanswered, new
 * acquires and refreshes wait for its answer (limits.rpcBatchMaxWaitMs at most) and go together,
 * as the drive batches do (backends/remote/peer-batcher.ts).
 *
 * Releases are fire-and-forget (a lost one lapses with the lock's expiry) but go in the next frame
 * at once, never waiting for an answer: a release held back to ride in a later frame would be
 * lost with a node that crashes right after answering, and the object would stay locked until the
 * grant expires.
 */
import { SvcError } from '../errors/index.js';
import type { Transport } from '../transport/transport.js';
import { TickBatches } from '../transport/tick-batches.js';
import { decodeLockAnswer, type LockAnswer, type LockCall } from '../transport/lock-operations.js';
import { limits } from '../util/limits.js';
import type { LockMode } from '../object/index.js';
import type { LockServer } from './distributed-locker.js';

interface QueuedCall {
  call: LockCall;
  resolve(answer: LockAnswer): void;
  reject(error: unknown): void;
}

export interface RemoteLockServerOptions {
  host: string;
  port: number;
  rpcKey: Buffer;
  launchHash?: string;
  transport: Transport;
  /** Told of every exchange with the peer (one network round trip, a batch of calls): metrics count it with the other internode calls. */
  onCall?: (peer: string, durationSeconds: number, failed: boolean) => void;
}

export function remoteLockServer(options: RemoteLockServerOptions): LockServer {
  const peer = `${options.host}:${options.port}`;
  const exchange = async (calls: LockCall[]): Promise<LockAnswer[]> => {
    let answer: Uint8Array;
    const startedAt = performance.now();
    try {
      answer = await options.transport.streamTo(options).call('lock', [Buffer.from(JSON.stringify({ calls }))], limits.lockCallTimeoutMs);
    } catch (error) {
      options.onCall?.(peer, (performance.now() - startedAt) / 1000, true);
      throw new SvcError('DriveOffline', `lock server ${peer}: ${(error as Error).message}`);
    }
    try {
      const parsed = JSON.parse(Buffer.from(answer).toString('utf8')) as { answers?: unknown };
      if (!Array.isArray(parsed.answers) || parsed.answers.length !== calls.length) throw new Error('an answer for each call was expected');
      const answers = calls.map((call, index) => decodeLockAnswer(call, (parsed.answers as unknown[])[index]));
      options.onCall?.(peer, (performance.now() - startedAt) / 1000, false);
      return answers;
    } catch (error) {
      options.onCall?.(peer, (performance.now() - startedAt) / 1000, true);
      throw new SvcError('DriveOffline', `lock server ${peer}: ${(error as Error).message}`);
    }
  };
  const batches = new TickBatches<QueuedCall>({
    maxItems: limits.rpcBatchMaxOperations,
    maxInFlight: limits.rpcBatchMaxInFlight,
    maxWaitMs: limits.rpcBatchMaxWaitMs,
    send: (queued) =>
      exchange(queued.map((entry) => entry.call)).then(
        (answers) => answers.forEach((answer, index) => {
          if ('code' in answer) queued[index]!.reject(new SvcError('DriveOffline', `lock server ${peer}: ${answer.message}`));
          else queued[index]!.resolve(answer);
        }),
        (error: unknown) => queued.forEach((entry) => entry.reject(error)),
      ),
  });
  const call = (lockCall: LockCall): Promise<LockAnswer> => new Promise((resolve, reject) => batches.push({ call: lockCall, resolve, reject }, lockCall.op === 'release'));
  return {
    acquire: async (resource: string, mode: LockMode, uid: string, ttlMs: number) => {
      const answer = await call({ op: 'acquire', resource, mode, uid, ttlMs });
      return 'granted' in answer && answer.granted;
    },
    refresh: async (resource: string, uid: string, ttlMs: number) => {
      const answer = await call({ op: 'refresh', resource, uid, ttlMs });
      return 'refreshed' in answer && answer.refreshed;
    },
    release: async (resource: string, uid: string) => void (await call({ op: 'release', resource, uid })),
    remote: true,
  };
}
