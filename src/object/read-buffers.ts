/**
 * Buffers for the shard chunks a GET reads, reused instead of allocated per block: allocating a
 * fresh buffer for every megabyte sent keeps the garbage collector marking the whole heap. A
 * reader hands out views of pooled buffers; the consumer gives a view back with `release` once
 * the bytes are gone (the HTTP layer: when the socket has taken them). A consumer that never
 * releases leaves the buffer to the garbage collector, which is always safe.
 */
import { limits } from '../util/limits.js';

const capacityStepBytes = 64 * 1024;

class ReadBufferPool {
  private readonly free = new Map<number, Uint8Array[]>();
  /** Buffers handed out and not yet back; weak, so an unreleased buffer can still be collected. */
  private readonly lent = new WeakSet<ArrayBufferLike>();
  private retainedBytes = 0;

  /** A buffer of at least `lengthBytes` (its capacity rounded up to 64 KiB). */
  acquire(lengthBytes: number): Uint8Array {
    const capacity = Math.max(capacityStepBytes, Math.ceil(lengthBytes / capacityStepBytes) * capacityStepBytes);
    const reused = this.free.get(capacity)?.pop();
    if (reused) this.retainedBytes -= capacity;
    const buffer = reused ?? Buffer.allocUnsafeSlow(capacity);
    this.lent.add(buffer.buffer);
    return buffer;
  }

  /** Takes back the buffer under `view` (any view of it); views of other memory are ignored. */
  release(view: Uint8Array): void {
    const memory = view.buffer;
    if (!this.lent.delete(memory)) return;
    const capacity = memory.byteLength;
    if (this.retainedBytes + capacity > limits.readBuffersRetainedBytes) return;
    const list = this.free.get(capacity) ?? [];
    list.push(new Uint8Array(memory));
    this.free.set(capacity, list);
    this.retainedBytes += capacity;
  }
}

export const readBuffers = new ReadBufferPool();
