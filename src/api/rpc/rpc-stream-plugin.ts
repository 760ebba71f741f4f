/**
 * The server end of the internode streams (src/transport/rpc-stream.ts): a request for
 * /svc/rpc/v1/stream with `Upgrade: svc-rpc`, a valid SvcRpc token and this node's launch hash
 * becomes a stream of frames, each a batch of drive calls (drive-rpc-plugin.ts) or lock calls
 * (lock-rpc-plugin.ts) answered by id. Each frame's own token is checked before it is run;
 * frames run at once, as concurrent requests would.
 */
import type { FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { isSvcError, SvcError } from '../../errors/index.js';
import type { Drive } from '../../drive/index.js';
import type { LockTable } from '../../cluster/lock-table.js';
import type { BufferPool } from '../../util/buffer-pool.js';
import { RpcTokenVerifier, verifyRpcToken } from '../../transport/rpc-token.js';
import { answerFrame, callLayout, FrameReader, rpcStreamPath, rpcStreamProtocol, streamServices, type StreamService } from '../../transport/rpc-stream.js';
import { launchHashHeader, maxBatchBodyBytes, runDriveBatch } from './drive-rpc-plugin.js';
import { runLockBatch } from './lock-rpc-plugin.js';

export interface RpcStreamOptions {
  rpcKey: Buffer;
  launchHash?: string;
  nowMs(): number;
  driveFor(path: string): Drive | undefined;
  table: LockTable;
  /** Where ranges read for answers are pooled and given back once sent (the node transport's buffers). */
  buffers: BufferPool;
  /** Told of every frame: one internode round trip of `service`. */
  observe?(service: StreamService): void;
}

const serviceOf = new Map<number, StreamService>(Object.entries(streamServices).map(([name, code]) => [code, name as StreamService]));

function refuse(socket: Socket, error: SvcError): void {
  const body = JSON.stringify({ code: error.code, message: error.message });
  const status = error.code === 'AccessDenied' ? 403 : error.httpStatus;
  socket.end(`HTTP/1.1 ${status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

/**
 * What one frame asks: its batch run, answered as bytes; a refusal answered as `{ code, message }`.
 * `held`: pooled buffers the answer is sent from, given back once the socket has taken it.
 */
async function runFrame(options: RpcStreamOptions, tokens: RpcTokenVerifier, head: Buffer, body: Buffer): Promise<{ ok: boolean; bytes: Uint8Array[]; held?: Uint8Array[] }> {
  try {
    const service = serviceOf.get(head.readUInt8(0));
    if (!service) throw new SvcError('InvalidArgument', 'unknown internode service');
    options.observe?.(service);
    tokens.verify(head.toString('latin1', 7, head.length - 4), options.nowMs());
    if (service === 'drive') {
      const { answer, held } = await runDriveBatch(options.driveFor, body, options.buffers);
      return { ok: true, bytes: answer, held };
    }
    const parsed = JSON.parse(body.toString('utf8') || '{}') as { calls?: unknown };
    return { ok: true, bytes: [Buffer.from(JSON.stringify(runLockBatch(options.table, parsed)))] };
  } catch (error) {
    const known = isSvcError(error) ? error : new SvcError('InvalidArgument', String(error));
    return { ok: false, bytes: [Buffer.from(JSON.stringify({ code: known.code, message: known.message }))] };
  }
}

function serve(options: RpcStreamOptions, tokens: RpcTokenVerifier, socket: Socket, head: Buffer): void {
  socket.setNoDelay(true);
  const reader = new FrameReader(callLayout, (frameHead, body) => {
    const id = frameHead.readUInt32BE(1);
    void runFrame(options, tokens, frameHead, body).then(({ ok, bytes, held = [] }) => {
      const giveBack = (): void => held.forEach((buffer) => options.buffers.release(buffer));
      if (socket.destroyed) return giveBack();
      socket.cork();
      const pieces = answerFrame(id, ok, bytes);
      // The last write's callback comes once the socket has taken every piece (or failed).
      pieces.forEach((piece, index) => socket.write(piece, index === pieces.length - 1 ? giveBack : undefined));
      socket.uncork();
    });
  }, maxBatchBodyBytes + 64 * 1024);
  socket.on('data', (chunk: Buffer) => {
    try {
      reader.push(chunk);
    } catch {
      socket.destroy(); // a frame past the limits: the stream is not trusted further
    }
  });
  socket.on('error', () => socket.destroy());
  if (head.length > 0) socket.emit('data', head);
}

export async function rpcStreamPlugin(app: FastifyInstance, options: RpcStreamOptions): Promise<void> {
  const sockets = new Set<Socket>();
  const tokens = new RpcTokenVerifier(options.rpcKey);
  app.server.on('upgrade', (request: IncomingMessage, socket: Socket, head: Buffer) => {
    if (socket.destroyed) return;
    if ((request.url ?? '').split('?')[0] !== rpcStreamPath || String(request.headers.upgrade).toLowerCase() !== rpcStreamProtocol) {
      socket.destroy();
      return;
    }
    try {
      verifyRpcToken(options.rpcKey, request.headers.authorization, options.nowMs());
      if (options.launchHash !== undefined && request.headers[launchHashHeader] !== options.launchHash) {
        throw new SvcError('InvalidConfiguration', 'refused by a peer: the launch arguments (endpoints, pool order, set width or storage-class variables) differ from this node\'s; every node must run the identical command');
      }
    } catch (error) {
      refuse(socket, isSvcError(error) ? error : new SvcError('InternalError', String(error)));
      return;
    }
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: ${rpcStreamProtocol}\r\n\r\n`);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    serve(options, tokens, socket, head);
  });
  app.addHook('preClose', async () => {
    for (const socket of sockets) socket.destroy();
  });
}
