/**
 * Cuts one stream into consecutive pieces of given lengths (the parts of a multipart object read
 * back as one body), without copying: a chunk that straddles two pieces is handed out as two views.
 */
import { SvcError } from '../errors/index.js';

export class PartSplitter {
  private readonly iterator: AsyncIterator<Uint8Array>;
  private rest: Uint8Array | undefined;

  constructor(source: AsyncIterable<Uint8Array>, private readonly onChunk: (chunk: Uint8Array) => void = () => undefined) {
    this.iterator = source[Symbol.asyncIterator]();
  }

  /** The next `lengthBytes` bytes of the stream; ends early only when the stream does. */
  async *take(lengthBytes: number): AsyncGenerator<Uint8Array> {
    let left = lengthBytes;
    while (left > 0) {
      const chunk = this.rest ?? (await this.receive());
      if (chunk === undefined) return;
      const piece = chunk.length > left ? chunk.subarray(0, left) : chunk;
      this.rest = chunk.length > left ? chunk.subarray(left) : undefined;
      left -= piece.length;
      this.onChunk(piece);
      yield piece;
    }
  }

  /** Checks that nothing is left after the last piece (a longer stream is refused, not cut). */
  async end(): Promise<void> {
    const chunk = this.rest ?? (await this.receive());
    if (chunk !== undefined) {
      await this.iterator.return?.();
      throw new SvcError('InternalError', 'the stream holds more bytes than its parts add up to');
    }
  }

  private async receive(): Promise<Uint8Array | undefined> {
    for (;;) {
      const step = await this.iterator.next();
      if (step.done) return undefined;
      if (step.value.length > 0) return step.value;
    }
  }
}
