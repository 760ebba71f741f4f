/**
 * Buffers reused instead of allocated per use: every fresh buffer of a megabyte or so counts as
 * external memory, and the runtime answers a fast stream of it with full collections that mark
 * the whole heap.
 *
 * One buffer may be lent on in several views, so a buffer counts its claims: the caller holds one
 * from `acquire` until it is done with the buffer, and each view it hands on carries one more
 * (`lend`). A holder gives a view back with `release` once the bytes are gone; the buffer returns
 * to the pool when its last claim is released. A holder that never releases leaves the buffer to
 * the garbage collector, which is always safe: claims are kept in a weak map.
 */
const capacityStepBytes = 64 * 1024;

export class BufferPool {
  private readonly free = new Map<number, Uint8Array[]>();
  /** Claims on buffers handed out and not yet back, by their memory. */
  private readonly claims = new WeakMap<ArrayBufferLike, number>();
  private retainedBytes = 0;
  /** Buffers handed out whose last claim has not come back (a diagnostic: buffers never released stay counted). */
  outstanding = 0;
  /** Buffers allocated because none of the size was idle (a diagnostic). */
  allocated = 0;

  /** `maxRetainedBytes`: idle buffers kept for reuse at most; beyond, a returned buffer is left to the collector. */
  constructor(private readonly maxRetainedBytes: number) {}

  /** A buffer of at least `lengthBytes` (its capacity rounded up to 64 KiB), with one claim: the caller's. */
  acquire(lengthBytes: number): Uint8Array {
    const capacity = Math.max(capacityStepBytes, Math.ceil(lengthBytes / capacityStepBytes) * capacityStepBytes);
    const reused = this.free.get(capacity)?.pop();
    if (reused) this.retainedBytes -= capacity;
    else this.allocated += 1;
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

  /**
   * Gives up the caller's claim on a buffer without returning it to the pool: for memory a call
   * that failed may still write into (a drive call past its deadline goes on), which must never
   * serve another read. It is left to the garbage collector.
   */
  forget(buffer: Uint8Array): void {
    if (!this.claims.delete(buffer.buffer)) return;
    this.outstanding -= 1;
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
    if (this.retainedBytes + capacity > this.maxRetainedBytes) return;
    const list = this.free.get(capacity) ?? [];
    list.push(new Uint8Array(memory));
    this.free.set(capacity, list);
    this.retainedBytes += capacity;
  }
}
