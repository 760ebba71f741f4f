/**
 * Buffers for the shard chunks a GET reads, reused instead of allocated per read: allocating a
 * fresh buffer for every megabyte sent keeps the garbage collector marking the whole heap.
 *
 * One buffer may hold several chunks, sent at different times, so a buffer counts its claims:
 * the reader holds one from `acquire` until it is done with the buffer, and each view it hands
 * to a consumer carries one more (`lend`). The consumer gives a view back with `release` once the
 * bytes are gone (the HTTP layer: when the socket has taken them); the buffer returns to the pool
 * when its last claim is released. A consumer that never releases leaves the buffer to the
 * garbage collector, which is always safe: claims are kept in a weak map.
 */
import { limits } from '../util/limits.js';

const capacityStepBytes = 64 * 1024;

class ReadBufferPool {
  private readonly free = new Map<number, Uint8Array[]>();
  /** Claims on buffers handed out and not yet back, by their memory. */
  private readonly claims = new WeakMap<ArrayBufferLike, number>();
  private retainedBytes = 0;
  /** Buffers handed out whose last claim has not come back (a diagnostic: buffers never released stay counted). */
  outstanding = 0;

  /** A buffer of at least `lengthBytes` (its capacity rounded up to 64 KiB), with one claim: the caller's. */
  acquire(lengthBytes: number): Uint8Array {
    const capacity = Math.max(capacityStepBytes, Math.ceil(lengthBytes / capacityStepBytes) * capacityStepBytes);
    const reused = this.free.get(capacity)?.pop();
    if (reused) this.retainedBytes -= capacity;
    const buffer = reused ?? Buffer.allocUnsafeSlow(capacity);
    this.claims.set(buffer.buffer, 1);
    this.outstanding += 1;
    return buffer;
  }

  /** Adds a claim for `view` (a view of a buffer from `acquire`, handed on); other views pass unchanged. */
  lend<T extends Uint8Array>(view: T): T {
    const claims = this.claims.get(view.buffer);
    if (claims !== undefined) this.claims.set(view.buffer, claims + 1);
    return view;
  }

  /** Drops a claim on the buffer under `view`; the last one returns the buffer. Views of other memory are ignored. */
  release(view: Uint8Array): void {
    const memory = view.buffer;
    const claims = this.claims.get(memory);
    if (claims === undefined) return;
    if (claims > 1) {
      this.claims.set(memory, claims - 1);
      return;
    }
    this.claims.delete(memory);
    this.outstanding -= 1;
    const capacity = memory.byteLength;
    if (this.retainedBytes + capacity > limits.readBuffersRetainedBytes) return;
    const list = this.free.get(capacity) ?? [];
    list.push(new Uint8Array(memory));
    this.free.set(capacity, list);
    this.retainedBytes += capacity;
  }
}

export const readBuffers = new ReadBufferPool();
