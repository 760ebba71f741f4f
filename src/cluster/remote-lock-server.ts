/** A peer's lock server reached over internode RPC; an unreachable peer grants nothing. */
import { request as httpRequest, Agent } from 'node:http';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { SvcError } from '../errors/index.js';
import { createRpcToken, rpcAuthScheme } from '../util/rpc-token.js';
import type { LockMode } from '../object/index.js';
import type { LockServer } from './distributed-locker.js';

const agent = new Agent({ keepAlive: true, maxSockets: 32 });
const timeoutMs = 5_000;

export function remoteLockServer(options: { host: string; port: number; rpcKey: Buffer; launchHash?: string }): LockServer {
  const call = async (op: string, body: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const text = JSON.stringify(body);
    const request = httpRequest({
      host: options.host, port: options.port, method: 'POST', path: `/svc/rpc/v1/lock/${op}`, agent, timeout: timeoutMs,
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
    const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
    if ((response.statusCode ?? 500) >= 400) throw new SvcError('DriveOffline', `lock server ${options.host}:${options.port}: ${String(parsed.message ?? response.statusCode)}`);
    return parsed;
  };
  return {
    acquire: async (resource: string, mode: LockMode, uid: string, ttlMs: number) => (await call('acquire', { resource, mode, uid, ttlMs })).granted === true,
    refresh: async (resource: string, uid: string, ttlMs: number) => (await call('refresh', { resource, uid, ttlMs })).refreshed === true,
    release: async (resource: string, uid: string) => void (await call('release', { resource, uid })),
  };
}
