/**
 * A peer's lock server reached over internode RPC; an unreachable peer grants nothing. The lock
 * calls this node makes to one peer in one turn of its event loop (the acquires, refreshes and
 * releases of concurrent requests) travel in one request, each answered on its own.
 */
import { request as httpRequest, Agent } from 'node:http';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { SvcError } from '../errors/index.js';
import { createRpcToken, rpcAuthScheme } from '../util/rpc-token.js';
import { TickBatches } from '../util/tick-batches.js';
import { limits } from '../util/limits.js';
import type { LockMode } from '../object/index.js';
import type { LockServer } from './distributed-locker.js';

const agent = new Agent({ keepAlive: true, maxSockets: 32 });
const timeoutMs = 5_000;

/** One lock call of a batch, as sent (POST /svc/rpc/v1/lock/batch, `{ calls: [...] }`). */
export interface LockCall {
  op: 'acquire' | 'refresh' | 'release';
  resource: string;
  uid: string;
  mode?: LockMode;
  ttlMs?: number;
}

/** Its answer: `{ granted }`, `{ refreshed }`, `{ released }`, or `{ code, message }` for a refused call. */
export type LockAnswer = Record<string, unknown>;

interface QueuedCall {
  call: LockCall;
  resolve(answer: LockAnswer): void;
  reject(error: unknown): void;
}

export function remoteLockServer(options: { host: string; port: number; rpcKey: Buffer; launchHash?: string }): LockServer {
  const peer = `${options.host}:${options.port}`;
  const exchange = async (calls: LockCall[]): Promise<LockAnswer[]> => {
    const text = JSON.stringify({ calls });
    const request = httpRequest({
      host: options.host, port: options.port, method: 'POST', path: '/svc/rpc/v1/lock/batch', agent, timeout: timeoutMs,
      headers: {
        authorization: `${rpcAuthScheme} ${createRpcToken(options.rpcKey, Date.now())}`,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
        ...(options.launchHash !== undefined ? { 'x-svc-launch-hash': options.launchHash } : {}),
      },
    });
    request.on('timeout', () => request.destroy(new Error('lock RPC timed out')));
    request.end(text);
    const [response] = (await once(request, 'response')) as [IncomingMessage];
    const chunks: Buffer[] = [];
    for await (const chunk of response) chunks.push(chunk as Buffer);
    const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { answers?: LockAnswer[]; message?: unknown };
    if ((response.statusCode ?? 500) >= 400) throw new SvcError('DriveOffline', `lock server ${peer}: ${String(parsed.message ?? response.statusCode)}`);
    if (!Array.isArray(parsed.answers) || parsed.answers.length !== calls.length) throw new SvcError('DriveOffline', `lock server ${peer}: an answer for each call was expected`);
    return parsed.answers;
  };
  const batches = new TickBatches<QueuedCall>({
    maxItems: limits.rpcBatchMaxOperations,
    send: (queued) => {
      exchange(queued.map((entry) => entry.call)).then(
        (answers) => answers.forEach((answer, index) => {
          if (typeof answer.code === 'string') queued[index]!.reject(new SvcError('DriveOffline', `lock server ${peer}: ${String(answer.message ?? answer.code)}`));
          else queued[index]!.resolve(answer);
        }),
        (error: unknown) => queued.forEach((entry) => entry.reject(error)),
      );
    },
  });
  const call = (lockCall: LockCall): Promise<LockAnswer> => new Promise((resolve, reject) => batches.push({ call: lockCall, resolve, reject }));
  return {
    acquire: async (resource: string, mode: LockMode, uid: string, ttlMs: number) => (await call({ op: 'acquire', resource, mode, uid, ttlMs })).granted === true,
    refresh: async (resource: string, uid: string, ttlMs: number) => (await call({ op: 'refresh', resource, uid, ttlMs })).refreshed === true,
    release: async (resource: string, uid: string) => void (await call({ op: 'release', resource, uid })),
  };
}
