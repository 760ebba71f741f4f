/**
 * One byte stream read as consecutive slices of given lengths: each slice yields exactly its
 * length, taken from where the previous one ended (a chunk that spans two slices is split). A
 * slice is taken only after the previous one was read to its end. A stream that ends before a
 * slice is complete fails that slice with InternalError naming how many bytes were missing.
 */
import { SvcError } from '../errors/index.js';

export class ByteSlices {
  private readonly iterator: AsyncIterator<Uint8Array>;
  private leftover: Uint8Array | undefined;
  private reading = false;

  constructor(source: AsyncIterable<Uint8Array>) {
    this.iterator = source[Symbol.asyncIterator]();
  }

  /** The next `lengthBytes` bytes of the stream. */
  async *next(lengthBytes: number): AsyncGenerator<Uint8Array> {
    if (this.reading) throw new SvcError('InternalError', 'a slice was taken before the previous one was read to its end');
    this.reading = true;
    let remaining = lengthBytes;
    while (remaining > 0) {
      let chunk = this.leftover;
      this.leftover = undefined;
      if (!chunk) {
        const read = await this.iterator.next();
        if (read.done === true) throw new SvcError('InternalError', `the stream ended ${remaining} bytes before the end of a ${lengthBytes}-byte slice`);
        chunk = read.value;
      }
      if (chunk.length > remaining) {
        this.leftover = chunk.subarray(remaining);
        chunk = chunk.subarray(0, remaining);
      }
      remaining -= chunk.length;
      if (chunk.length > 0) yield chunk;
    }
    this.reading = false;
  }

  /** Lets the source go (its reader is closed) when not every byte was taken. */
  async close(): Promise<void> {
    await this.iterator.return?.();
  }
}
