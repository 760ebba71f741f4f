/**
 * One framed stream per peer for internode batches: an HTTP request to the peer's listener
 * (`GET /svc/rpc/v1/stream`, `Upgrade: svc-rpc`, with an SvcRpc token and the launch hash,
 * refused with 403 like any RPC request) turns its connection into a stream of frames, each a
 * batch of drive or lock calls, answered by id in any order:
 *
 *   call   := u8 service (1 drive, 2 lock), u32 id, u16 token bytes, token, u32 body bytes, body
 *   answer := u32 id, u8 status (0 done, 1 refused), u32 bytes, bytes
 *
 * Every frame carries a token (signed anew every few seconds, rpc-token.ts), checked by the peer;
 * a refused frame's bytes are `{ code, message }` as JSON. A call has its own deadline, watched by
 * one timer per connection set for the earliest, and counted from the call, so a call that waits
 * for a connection to open waits no longer; a connection that fails or closes fails every call in
 * flight on it, and the next call opens a new one.
 *
 * After a network cut TCP alone would take long to recover: a connection being opened resends its
 * SYN at doubling intervals, and an open one its unanswered bytes, so after the cut heals calls
 * could wait tens of seconds for the next resend. So an opening that has not reached the upgraded
 * stream within `connectTimeoutMs` is given up (the next call tries again, at once), and a stream
 * on which a call ran out of time while nothing at all arrived for `silenceMs` and since that call
 * was sent is closed: the peer is unreachable or wedged, and the next call opens a fresh one.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { createConnection, type NetConnectOpts, type Socket } from 'node:net';
import { rpcAuthScheme, RpcTokenSource } from './rpc-token.js';
import { systemClock, type Clock } from '../util/clock.js';
import { limits } from '../util/limits.js';

export const rpcStreamPath = '/svc/rpc/v1/stream';
export const rpcStreamProtocol = 'svc-rpc';
export const streamServices = { drive: 1, lock: 2 } as const;
export type StreamService = keyof typeof streamServices;

/**
 * Where a frame's body goes as it arrives, instead of into memory of its own (FrameReader's
 * `sinkFor`): a caller that knows where each part of an answer belongs copies it there from the
 * receive buffer, once.
 */
export interface FrameSink {
  /** The body's next bytes, in order; they are valid only during the call. */
  write(bytes: Uint8Array): void;
  /** The whole body has arrived. */
  end(): void;
}

/** Why a call got no answer: the peer is unreachable (or the stream broke, or timed out), or it refused the stream or the call. */
export class RpcStreamFailure extends Error {
  constructor(message: string, readonly kind: 'unreachable' | 'refused', readonly status = 0, readonly text = '') {
    super(message);
  }
}

const u32 = (value: number): Buffer => {
  const bytes = Buffer.allocUnsafe(4);
  bytes.writeUInt32BE(value);
  return bytes;
};

export function callFrame(service: StreamService, id: number, token: string, body: Uint8Array[]): Uint8Array[] {
  const tokenBytes = Buffer.from(token);
  const head = Buffer.allocUnsafe(7);
  head.writeUInt8(streamServices[service], 0);
  head.writeUInt32BE(id, 1);
  head.writeUInt16BE(tokenBytes.length, 5);
  return [head, tokenBytes, u32(body.reduce((sum, piece) => sum + piece.length, 0)), ...body];
}

export function answerFrame(id: number, ok: boolean, body: Uint8Array[]): Uint8Array[] {
  const head = Buffer.allocUnsafe(9);
  head.writeUInt32BE(id, 0);
  head.writeUInt8(ok ? 0 : 1, 4);
  head.writeUInt32BE(body.reduce((sum, piece) => sum + piece.length, 0), 5);
  return [head, ...body];
}

/**
 * Cuts a byte stream into frames: `headBytes(prefix)` says how long a frame's head is once
 * `prefix` (the bytes so far, at least `minHead`) is known, and where its body's length is. Each
 * frame is copied once, as it arrives, into a buffer of its own final size, so a chunk handed to
 * `push` is never kept: the caller may read the next bytes into the same memory, and a frame
 * handed out is never written again. Given `sinkFor`, a frame whose head it answers with a sink
 * is not gathered at all: its body's bytes go to the sink as they arrive.
 */
export class FrameReader {
  /** The head so far, gathered here until its length and its body's length are known. */
  private headScratch = Buffer.allocUnsafe(64);
  private headFill = 0;
  /** The frame being filled once its head is known (head and body), and how far. */
  private frame: Buffer | undefined;
  private frameHeadBytes = 0;
  private frameFill = 0;
  /** The sink the body being received goes to, and how many of its bytes are still to come. */
  private sink: FrameSink | undefined;
  private sinkLeft = 0;

  constructor(
    private readonly layout: { minHead: number; headBytes(prefix: Buffer): number; bodyLengthAt(head: Buffer): number },
    private readonly onFrame: (head: Buffer, body: Buffer) => void,
    private readonly maxBodyBytes: number,
    private readonly sinkFor?: (head: Buffer) => FrameSink | undefined,
  ) {}

  push(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.length) at = this.sink ? this.fillSink(chunk, at) : this.frame ? this.fillFrame(chunk, at) : this.fillHead(chunk, at);
  }

  /** Copies head bytes from `chunk` at `at`; once the head is whole, starts its frame. */
  private fillHead(chunk: Uint8Array, at: number): number {
    const { minHead } = this.layout;
    const wanted = this.headFill < minHead ? minHead : this.layout.headBytes(this.headScratch.subarray(0, this.headFill));
    if (wanted > this.headScratch.length) this.headScratch = Buffer.concat([this.headScratch.subarray(0, this.headFill)], wanted);
    const copied = Math.min(wanted - this.headFill, chunk.length - at);
    this.headScratch.set(chunk.subarray(at, at + copied), this.headFill);
    this.headFill += copied;
    if (this.headFill >= minHead && this.headFill === this.layout.headBytes(this.headScratch.subarray(0, this.headFill))) this.start(this.headFill);
    return at + copied;
  }

  private start(headBytes: number): void {
    const head = this.headScratch.subarray(0, headBytes);
    const bodyBytes = this.layout.bodyLengthAt(head);
    if (bodyBytes > this.maxBodyBytes) throw new RpcStreamFailure(`an internode frame of ${bodyBytes} bytes is larger than ${this.maxBodyBytes}`, 'refused', 400);
    this.headFill = 0;
    const sink = this.sinkFor?.(head);
    if (sink) {
      if (bodyBytes === 0) sink.end();
      else [this.sink, this.sinkLeft] = [sink, bodyBytes];
      return;
    }
    this.frame = Buffer.allocUnsafe(headBytes + bodyBytes);
    head.copy(this.frame);
    this.frameHeadBytes = headBytes;
    this.frameFill = headBytes;
    if (bodyBytes === 0) this.finish();
  }

  private fillSink(chunk: Uint8Array, at: number): number {
    const sink = this.sink!;
    const passed = Math.min(this.sinkLeft, chunk.length - at);
    this.sinkLeft -= passed;
    if (this.sinkLeft === 0) this.sink = undefined;
    sink.write(chunk.subarray(at, at + passed));
    if (this.sinkLeft === 0) sink.end();
    return at + passed;
  }

  private fillFrame(chunk: Uint8Array, at: number): number {
    const frame = this.frame!;
    const copied = Math.min(frame.length - this.frameFill, chunk.length - at);
    frame.set(chunk.subarray(at, at + copied), this.frameFill);
    this.frameFill += copied;
    if (this.frameFill === frame.length) this.finish();
    return at + copied;
  }

  private finish(): void {
    const frame = this.frame!;
    this.frame = undefined;
    this.onFrame(frame.subarray(0, this.frameHeadBytes), frame.subarray(this.frameHeadBytes));
  }
}

/** Layout of a call frame (the server reads these). */
export const callLayout = {
  minHead: 7,
  headBytes: (prefix: Buffer) => 7 + prefix.readUInt16BE(5) + 4,
  bodyLengthAt: (head: Buffer) => head.readUInt32BE(head.length - 4),
};

/** Layout of an answer frame (the client reads these). */
export const answerLayout = { minHead: 9, headBytes: () => 9, bodyLengthAt: (head: Buffer) => head.readUInt32BE(5) };

export interface StreamTarget {
  host: string;
  port: number;
  rpcKey: Buffer;
  launchHash?: string;
}

/** What a client stream is given besides its target: where its tokens and time come from. */
export interface StreamClientOptions {
  /** Tokens shared with the other senders using the same key (a source of its own when unset). */
  tokens?: RpcTokenSource;
  /** The clock tokens are signed against (the system clock when unset). */
  clock?: Clock;
  /** An answer larger than this fails the stream. */
  maxAnswerBytes?: number;
  /** An opening not upgraded in this long is given up (limits.internodeConnectTimeoutMs when unset). */
  connectTimeoutMs?: number;
  /** A call that runs out of time on a stream silent this long, since before it was sent, closes the stream (limits.internodeStreamSilenceMs when unset). */
  silenceMs?: number;
}


/** Takes a call's answer as its bytes arrive (RpcStreamClient.callInto). */
export interface AnswerSink<T> {
  /** The answer's next bytes, in order; they are valid only during the call, so what is kept is copied. */
  write(bytes: Uint8Array): void;
  /** The whole answer has arrived; what this returns (or throws) is the call's result. */
  end(): T;
}

/** Where the body of an answer nobody waits for any more goes. */
const discard: FrameSink = { write: () => undefined, end: () => undefined };

interface InFlight {
  resolve(answer: unknown): void;
  reject(error: unknown): void;
  /** Takes the answer as it arrives, when the caller knows where its bytes belong. */
  sink?: AnswerSink<unknown>;
  /** On the monotonic clock (performance.now()). */
  deadlineMs: number;
  sentMs: number;
  /** The connection it was sent on: only that connection's failure fails it. */
  socket: Socket;
}

export const streamTimeoutMessage = 'internode RPC timed out';


/**
 * Receives a client connection's bytes into one reused buffer (`net.Socket`'s `onread`) instead
 * of fresh memory per read: the HTTP response that upgrades the connection is handed on to the
 * socket as copies, and once upgraded every read goes straight to the frame reader, which copies
 * what it keeps before the next read.
 */
class Receiver {
  socket: Socket | undefined;
  frames: ((bytes: Uint8Array) => void) | undefined;
  readonly onread = {
    buffer: Buffer.allocUnsafe(limits.internodeReceiveBufferBytes),
    callback: (bytes: number, buffer: Uint8Array): boolean => {
      const received = buffer.subarray(0, bytes);
      if (this.frames) this.frames(received);
      else this.socket?.push(Buffer.from(received));
      return true;
    },
  };
}

/** The client end of one peer's stream. */
export class RpcStreamClient {
  private socket: Promise<Socket> | undefined;
  private nextId = 1;
  private readonly inFlight = new Map<number, InFlight>();
  private deadlineTimer: NodeJS.Timeout | undefined;
  private timerAtMs = 0;
  private opened = false;
  /** When the open connection last received anything (performance.now()). */
  private lastReceivedMs = 0;
  /** The open connection, once upgraded. */
  private current: Socket | undefined;

  private readonly tokens: RpcTokenSource;
  private readonly clock: Clock;
  private readonly maxAnswerBytes: number;
  private readonly connectTimeoutMs: number;
  private readonly silenceMs: number;

  constructor(private readonly target: StreamTarget, options: StreamClientOptions = {}) {
    this.tokens = options.tokens ?? new RpcTokenSource(target.rpcKey);
    this.clock = options.clock ?? systemClock;
    this.maxAnswerBytes = options.maxAnswerBytes ?? limits.internodeMaxAnswerBytes;
    this.connectTimeoutMs = options.connectTimeoutMs ?? limits.internodeConnectTimeoutMs;
    this.silenceMs = options.silenceMs ?? limits.internodeStreamSilenceMs;
  }

  /** Calls waiting for their answer. */
  get pending(): number {
    return this.inFlight.size;
  }

  /** A connection is open or opening. */
  get connected(): boolean {
    return this.socket !== undefined;
  }

  /** The stream had a connection, and it has closed (the next call opens another). */
  get closed(): boolean {
    return this.opened && this.socket === undefined;
  }

  /** Sends one call; resolves with the answer's bytes, rejects with an RpcStreamFailure. */
  call(service: StreamService, body: Uint8Array[], timeoutMs: number): Promise<Uint8Array> {
    return this.send(service, body, timeoutMs) as Promise<Uint8Array>;
  }

  /**
   * Sends one call whose answer goes to `sink` as it arrives, straight from the receive buffer (a
   * GET's shard ranges land in the buffers they are decoded from, with no frame of their own in
   * between). Bytes stop going to the sink once the call has failed or timed out. Resolves with
   * what `sink.end()` returns; rejects with an RpcStreamFailure (a refusal's bytes never reach the
   * sink), or with what the sink threw.
   */
  callInto<T>(service: StreamService, body: Uint8Array[], timeoutMs: number, sink: AnswerSink<T>): Promise<T> {
    return this.send(service, body, timeoutMs, sink) as Promise<T>;
  }

  private async send(service: StreamService, body: Uint8Array[], timeoutMs: number, sink?: AnswerSink<unknown>): Promise<unknown> {
    const deadlineMs = performance.now() + timeoutMs;
    const socket = await this.connectionBy(deadlineMs);
    const id = this.nextId;
    this.nextId = this.nextId >= 0xffffffff ? 1 : this.nextId + 1;
    const token = this.tokens.tokenAt(this.clock.nowMs());
    return new Promise<unknown>((resolve, reject) => {
      this.inFlight.set(id, { resolve, reject, deadlineMs, sentMs: performance.now(), socket, ...(sink ? { sink } : {}) });
      this.watch(deadlineMs);
      socket.cork();
      for (const piece of callFrame(service, id, token, body)) socket.write(piece);
      socket.uncork();
    });
  }

  /** Makes sure the deadline timer fires by `deadlineMs`. */
  private watch(deadlineMs: number): void {
    if (this.deadlineTimer && this.timerAtMs <= deadlineMs) return;
    clearTimeout(this.deadlineTimer);
    this.timerAtMs = deadlineMs;
    this.deadlineTimer = setTimeout(() => this.expire(), Math.max(0, deadlineMs - performance.now()));
    this.deadlineTimer.unref();
  }

  /** Fails the calls past their deadline, closes a stream that has gone silent, and sets the timer for the next deadline. */
  private expire(): void {
    this.deadlineTimer = undefined;
    const nowMs = performance.now();
    let nextMs = Number.POSITIVE_INFINITY;
    let silent = false;
    for (const [id, call] of this.inFlight) {
      if (call.deadlineMs <= nowMs) {
        this.inFlight.delete(id);
        call.reject(new RpcStreamFailure(streamTimeoutMessage, 'unreachable'));
        if (this.lastReceivedMs <= call.sentMs && nowMs - this.lastReceivedMs >= this.silenceMs) silent ||= this.isCurrent(call.socket);
      } else nextMs = Math.min(nextMs, call.deadlineMs);
    }
    if (silent) this.close();
    if (nextMs !== Number.POSITIVE_INFINITY) this.watch(nextMs);
  }

  /** `socket` is the open connection (not one closed since). */
  private isCurrent(socket: Socket): boolean {
    return this.current === socket;
  }

  /** Closes the stream; calls in flight fail as unreachable, and the next call opens a new one. */
  close(): void {
    const socket = this.socket;
    this.socket = undefined;
    this.current = undefined;
    // an opening that failed has failed its calls already (open's own catch)
    void socket?.then((open) => open.destroy(), () => undefined);
  }

  private connection(): Promise<Socket> {
    this.socket ??= this.open();
    return this.socket;
  }

  /** The connection, or a timeout once `deadlineMs` passes while it is still opening. */
  private connectionBy(deadlineMs: number): Promise<Socket> {
    const opening = this.connection();
    if (this.current !== undefined) return opening;
    return new Promise<Socket>((resolve, reject) => {
      const timer = setTimeout(() => reject(new RpcStreamFailure(streamTimeoutMessage, 'unreachable')), Math.max(0, deadlineMs - performance.now()));
      opening.then(
        (socket) => {
          clearTimeout(timer);
          resolve(socket);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }

  private open(): Promise<Socket> {
    this.opened = true;
    const receiver = new Receiver();
    const opening = new Promise<Socket>((resolve, reject) => {
      const request = httpRequest({
        host: this.target.host,
        port: this.target.port,
        path: rpcStreamPath,
        // no agent: a connection of its own, opened here so that it reads with `onread`
        createConnection: (options) => (receiver.socket = createConnection({ ...options, onread: receiver.onread } as NetConnectOpts)),
        headers: {
          connection: 'Upgrade',
          upgrade: rpcStreamProtocol,
          authorization: `${rpcAuthScheme} ${this.tokens.tokenAt(this.clock.nowMs())}`,
          ...(this.target.launchHash !== undefined ? { 'x-svc-launch-hash': this.target.launchHash } : {}),
        },
      });
      // Given up when not upgraded in time: a SYN or a request lost to a cut is not waited for.
      const giveUp = setTimeout(() => request.destroy(new Error(`no internode stream within ${this.connectTimeoutMs} ms`)), this.connectTimeoutMs);
      giveUp.unref();
      request.on('close', () => clearTimeout(giveUp));
      request.on('upgrade', (_response: IncomingMessage, socket: Socket, head: Buffer) => {
        clearTimeout(giveUp);
        resolve(this.attach(socket, head, receiver));
      });
      request.on('response', (response: IncomingMessage) => {
        const parts: Buffer[] = [];
        response.on('data', (chunk: Buffer) => parts.push(chunk));
        response.on('end', () => reject(new RpcStreamFailure(`peer refused the internode stream: HTTP ${response.statusCode}`, 'refused', response.statusCode ?? 500, Buffer.concat(parts).toString('utf8'))));
        response.on('error', (error) => reject(new RpcStreamFailure(error.message, 'unreachable')));
      });
      request.on('error', (error) => reject(new RpcStreamFailure(error.message, 'unreachable')));
      request.end();
    });
    opening.catch(() => {
      if (this.socket === opening) this.socket = undefined; // the next call tries again
    });
    return opening;
  }

  private attach(socket: Socket, head: Buffer, receiver: Receiver): Socket {
    socket.setNoDelay(true);
    const reader = new FrameReader(answerLayout, (frameHead, body) => this.answer(frameHead.readUInt32BE(0), frameHead.readUInt8(4) === 0, body), this.maxAnswerBytes, (frameHead) => this.sinkFor(frameHead.readUInt32BE(0), frameHead.readUInt8(4) === 0));
    const opening = this.socket;
    this.current = socket;
    this.lastReceivedMs = performance.now();
    const fail = (message: string): void => {
      if (this.socket === opening) this.socket = undefined;
      if (this.current === socket) this.current = undefined;
      for (const [id, call] of this.inFlight) {
        if (call.socket !== socket) continue;
        call.reject(new RpcStreamFailure(message, 'unreachable'));
        this.inFlight.delete(id);
      }
    };
    receiver.frames = (bytes) => {
      this.lastReceivedMs = performance.now();
      try {
        reader.push(bytes);
      } catch (error) {
        socket.destroy(error as Error);
      }
    };
    socket.on('error', (error) => fail(error.message));
    socket.on('close', () => fail('the internode stream closed'));
    socket.resume(); // nothing is pushed any more, but the end of the stream must still be seen
    if (head.length > 0) receiver.frames(head);
    return socket;
  }

  private answer(id: number, ok: boolean, body: Buffer): void {
    const call = this.inFlight.get(id);
    this.inFlight.delete(id);
    if (!call) return; // timed out already
    if (!ok) call.reject(refusal(body));
    else call.resolve(new Uint8Array(body.buffer, body.byteOffset, body.length)); // the caller keeps the memory
  }

  /**
   * Where an answer's body goes when it need not be gathered first: nowhere, for a call that timed
   * out already; the call's own sink, for a call made with one and answered (not refused). Bytes
   * reach the call's sink only while the call is still waiting for them: its caller may reuse the
   * sink's memory once it has failed.
   */
  private sinkFor(id: number, ok: boolean): FrameSink | undefined {
    const call = this.inFlight.get(id);
    if (!call) return discard;
    const sink = call.sink;
    if (!sink || !ok) return undefined;
    let failure: { error: unknown } | undefined;
    const waiting = (): boolean => this.inFlight.get(id) === call;
    return {
      write: (bytes) => {
        if (failure || !waiting()) return;
        try {
          sink.write(bytes);
        } catch (error) {
          failure = { error };
        }
      },
      end: () => {
        if (!waiting()) return;
        this.inFlight.delete(id);
        if (failure) return call.reject(failure.error);
        try {
          call.resolve(sink.end());
        } catch (error) {
          call.reject(error);
        }
      },
    };
  }
}

function refusal(body: Buffer): RpcStreamFailure {
  const text = body.toString('utf8');
  return new RpcStreamFailure(`peer refused the call: ${text.slice(0, 200)}`, 'refused', 400, text);
}
