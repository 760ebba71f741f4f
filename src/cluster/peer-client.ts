/** Calls a peer's RPC service (src/api/rpc/peer-rpc-plugin.ts); the peer's errors are rethrown as SvcErrors. */
import { SvcError, isErrorCode } from '../errors/index.js';
import { createRpcToken, rpcAuthScheme } from '../transport/rpc-token.js';
import { limits } from '../util/limits.js';

export interface Peer {
  host: string;
  port: number;
}

/** Told of every call once it ends (metrics): the peer as host:port, how long, whether it failed. */
export type PeerCallObserver = (peer: string, durationSeconds: number, failed: boolean) => void;

/** How a peer is called: the internode key, the launch hash, a timeout (limits.rpcTimeoutMs when unset), who is told of the call. */
export interface PeerCallOptions {
  rpcKey: Buffer;
  launchHash?: string;
  timeoutMs?: number;
  onCall?: PeerCallObserver;
}


export async function callPeer(peer: Peer, op: string, body: object, options: PeerCallOptions): Promise<Record<string, unknown>> {
  if (!options.onCall) return callPeerOnce(peer, op, body, options);
  const startedAt = performance.now();
  let failed = true;
  try {
    const answer = await callPeerOnce(peer, op, body, options);
    failed = false;
    return answer;
  } finally {
    options.onCall(`${peer.host}:${peer.port}`, (performance.now() - startedAt) / 1000, failed);
  }
}

async function callPeerOnce(peer: Peer, op: string, body: object, options: PeerCallOptions): Promise<Record<string, unknown>> {
  let response: Response;
  try {
    response = await fetch(`http://${peer.host.includes(':') ? `[${peer.host}]` : peer.host}:${peer.port}/svc/rpc/v1/peer/${op}`, {
      method: 'POST',
      headers: {
        authorization: `${rpcAuthScheme} ${createRpcToken(options.rpcKey, Date.now())}`,
        'content-type': 'application/json',
        ...(options.launchHash !== undefined ? { 'x-svc-launch-hash': options.launchHash } : {}),
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(options.timeoutMs ?? limits.rpcTimeoutMs),
    });
  } catch (error) {
    throw new SvcError('DriveOffline', `peer ${peer.host}:${peer.port} is unreachable: ${(error as Error).message}`, { peer: `${peer.host}:${peer.port}` });
  }
  const parsed = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (response.ok) return parsed;
  const code = typeof parsed.code === 'string' && isErrorCode(parsed.code) ? parsed.code : 'InternalError';
  throw new SvcError(code, typeof parsed.message === 'string' ? parsed.message : `peer answered ${response.status}`, (parsed.details as Record<string, unknown>) ?? {});
}
