/**
 * A request body as the S3 handlers and the console's read it: the socket's bytes with an idle
 * timeout (a client that stops sending mid-body is answered RequestTimeout instead of holding the
 * connection), and a bounded drain for answers given before the body was read to its end.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { SvcError } from '../../errors/index.js';
import { limits } from '../../util/limits.js';

export interface DrainBounds {
  maxBytes: number;
  maxMs: number;
  /** The client sent nothing for this long: it has stopped (or waits for the answer). */
  idleMs: number;
}

export class RequestBody implements AsyncIterable<Uint8Array> {
  private iterator: AsyncIterator<Uint8Array> | undefined;
  /** Set once the client let the idle timeout pass: the body will not come. */
  private stalled = false;

  constructor(
    private readonly raw: IncomingMessage,
    private readonly idleTimeoutMs: number,
  ) {}

  /** The whole body has arrived (read or not). */
  get complete(): boolean {
    return this.raw.complete;
  }

  get timedOut(): boolean {
    return this.stalled;
  }

  /**
   * Iterating does not hand the socket's stream to the consumer: a consumer that stops early
   * (an error, a limit) leaves the rest of the body here for `drain`, instead of destroying the
   * connection before the answer is written.
   */
  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return {
      next: () => this.next(),
      return: async () => ({ done: true, value: undefined }),
    };
  }

  /** The next piece of the body; waiting longer than `waitMs` for it gives the body up as stalled. */
  private async next(waitMs = this.idleTimeoutMs): Promise<IteratorResult<Uint8Array>> {
    this.iterator ??= this.raw[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
    if (this.stalled) throw timeoutError();
    const step = this.iterator.next();
    if (waitMs <= 0) return step;
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.stalled = true;
        reject(timeoutError());
      }, waitMs);
    });
    try {
      return await Promise.race([step, idle]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Reads and drops what is left of the body, up to the bounds; true if it reached its end (the
   * connection may then close without the client losing the answer to a reset).
   */
  async drain(bounds: DrainBounds): Promise<boolean> {
    if (this.complete) return true;
    const deadline = Date.now() + bounds.maxMs;
    let dropped = 0;
    try {
      while (!this.stalled && dropped <= bounds.maxBytes && Date.now() < deadline) {
        // A client that stops sending mid-body (it waits for the answer) ends the drain after the
        // drain's own idle time, not the request's much longer idle timeout.
        const step = await this.next(Math.max(1, Math.min(bounds.idleMs, deadline - Date.now())));
        if (step.done) return true;
        dropped += step.value.length;
      }
    } catch {
      // A stalled or broken body: nothing more to drain.
    }
    return false;
  }
}

/**
 * Closes the connection of an answer given before its body ended without resetting it under the
 * answer. Closing a socket whose incoming bytes are unread makes the kernel send a reset, and a
 * client still writing its body can then lose the answer already on its way. So the answer is
 * followed by a half-close, and what the client goes on sending is read and dropped until it ends
 * its side, falls idle, or passes the bounds; only then is the socket closed.
 */
export function lingerOnClose(raw: IncomingMessage, bounds: DrainBounds): void {
  const socket = raw.socket as Socket & { destroySoon?: () => void };
  let dropped = 0;
  const drop = (): void => {
    for (let chunk = raw.read() as Buffer | null; chunk !== null; chunk = raw.read() as Buffer | null) dropped += chunk.length;
    if (dropped > bounds.maxBytes) socket.destroy();
  };
  // Node's HTTP server closes a connection answered with `connection: close` through destroySoon
  // (end, then destroy at once); this keeps the end and puts the destroy off.
  socket.destroySoon = () => {
    socket.end();
    const close = (): void => void socket.destroy();
    const total = setTimeout(close, bounds.maxMs);
    socket.setTimeout(bounds.idleMs, close);
    socket.once('end', close);
    socket.once('close', () => clearTimeout(total));
  };
  raw.on('readable', drop);
  drop();
}

/**
 * Before an answer given while its request's body is still coming: what is left of the body is
 * read and dropped (a bounded amount, so a client that sends its whole body before reading still
 * gets the answer). Past the bounds the connection must close: true, and the close lingers
 * (lingerOnClose) so the client is not reset under the answer.
 */
export async function settleUnreadBody(body: RequestBody, raw: IncomingMessage): Promise<boolean> {
  if (body.complete || (await body.drain({ maxBytes: limits.errorBodyDrainBytes, maxMs: limits.errorBodyDrainMs, idleMs: limits.errorBodyDrainIdleMs }))) return false;
  lingerOnClose(raw, { maxBytes: limits.closeLingerBytes, maxMs: limits.closeLingerMs, idleMs: limits.closeLingerIdleMs });
  return true;
}

function timeoutError(): SvcError {
  return new SvcError('RequestTimeout');
}
