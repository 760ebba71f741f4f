/**
 * One internode request to a peer's drive service: its credentials (a fresh SvcRpc token, the
 * launch hash), its timeout, and how a failed exchange becomes a drive error. Shared by the
 * remote drive's single calls and the per-peer batches.
 */
import { request as httpRequest, type Agent, type ClientRequest, type IncomingMessage } from 'node:http';
import { once } from 'node:events';
import { SvcError, isErrorCode, withoutStack } from '../../src/errors/index.js';
import { rpcAuthScheme } from '../../src/transport/rpc-token.js';
import type { Transport } from '../../src/transport/transport.js';
import { limits } from '../../src/util/limits.js';
import { streamTimeoutMessage } from '../../src/transport/rpc-stream.js';

export const drivePrefix = '/svc/rpc/v1/drive';

/** Where and how a peer is called. */
export interface PeerTarget {
  host: string;
  port: number;
  rpcKey: Buffer;
  /** Sent with every call; a peer launched differently refuses it (InvalidConfiguration). */
  launchHash?: string;
  /** The node's transport: its streams, tokens, keep-alive connections and per-peer batchers. */
  transport: Transport;
  timeoutMs?: number;
  /** Connections of this target's plain requests (the transport's keep-alive ones when unset). */
  agent?: Agent;
}

export const timeoutMessage = streamTimeoutMessage;

/** Opens a request to `<drive prefix>/<op>?<query>` with credentials; the caller writes and ends it. */
export function openRpcRequest(target: PeerTarget, method: string, pathAndQuery: string): ClientRequest {
  const token = target.transport.tokenFor(target.rpcKey);
  const request = httpRequest({
    host: target.host,
    port: target.port,
    method,
    path: `${drivePrefix}/${pathAndQuery}`,
    headers: {
      authorization: `${rpcAuthScheme} ${token}`,
      'content-type': 'application/octet-stream',
      ...(target.launchHash !== undefined ? { 'x-svc-launch-hash': target.launchHash } : {}),
    },
    agent: target.agent ?? target.transport.agent,
    timeout: target.timeoutMs ?? limits.rpcTimeoutMs,
  });
  request.on('timeout', () => request.destroy(new Error(timeoutMessage)));
  return request;
}

/** Why an exchange failed before a usable answer: no answer at all, or an answer with an error status. */
export type ExchangeFailure = { kind: 'unreachable'; cause: Error } | { kind: 'refused'; status: number; text: string };

/** The response of a sent request, or the failure it met. */
export async function responseOf(request: ClientRequest): Promise<IncomingMessage> {
  let response: IncomingMessage;
  try {
    [response] = (await once(request, 'response')) as [IncomingMessage];
  } catch (error) {
    throw { kind: 'unreachable', cause: error as Error } satisfies ExchangeFailure;
  }
  if ((response.statusCode ?? 500) >= 400) {
    const text = Buffer.from(await readBody(response)).toString('utf8');
    throw { kind: 'refused', status: response.statusCode ?? 500, text } satisfies ExchangeFailure;
  }
  return response;
}

export function isExchangeFailure(value: unknown): value is ExchangeFailure {
  return typeof value === 'object' && value !== null && 'kind' in value && ((value as ExchangeFailure).kind === 'unreachable' || (value as ExchangeFailure).kind === 'refused');
}

/** The connection failed before the peer answered, for a reason other than the RPC timeout. */
export function isConnectionFailure(failure: unknown): boolean {
  return isExchangeFailure(failure) && failure.kind === 'unreachable' && failure.cause.message !== timeoutMessage;
}

/** The drive error a failed exchange is for the drive at `endpoint`. */
export function driveErrorOf(failure: unknown, endpoint: string): SvcError {
  if (failure instanceof SvcError) return failure;
  if (!isExchangeFailure(failure)) return new SvcError('DriveOffline', `drive ${endpoint}: ${String(failure)}`, { endpoint }, { cause: failure });
  if (failure.kind === 'unreachable') return new SvcError('DriveOffline', `drive ${endpoint} is unreachable: ${failure.cause.message}`, { endpoint }, { cause: failure.cause });
  try {
    const body = JSON.parse(failure.text) as { code?: string; message?: string };
    if (body.code) return remoteError(body.code, body.message, endpoint);
  } catch {
    // not a JSON error body
  }
  return new SvcError('DriveFaulty', `drive ${endpoint}: HTTP ${failure.status}: ${failure.text.slice(0, 200)}`, { endpoint });
}

/** An error the peer named for one operation on the drive at `endpoint`. */
export function remoteError(code: string, message: string | undefined, endpoint: string): SvcError {
  if (isErrorCode(code)) return withoutStack(() => new SvcError(code, message, { endpoint, remote: true }));
  return new SvcError('DriveFaulty', `drive ${endpoint}: ${code}: ${message ?? ''}`.slice(0, 300), { endpoint });
}

export async function readBody(response: IncomingMessage, endpoint?: string): Promise<Uint8Array> {
  const parts: Buffer[] = [];
  try {
    for await (const chunk of response) parts.push(chunk as Buffer);
  } catch (error) {
    throw new SvcError('DriveOffline', `drive ${endpoint ?? 'on a peer'}: response interrupted`, {}, { cause: error });
  }
  return new Uint8Array(Buffer.concat(parts));
}
