/**
 * Digests of a byte stream the set does not code itself (an encrypted PUT's plaintext: the set
 * codes its sealed form), taken where the set codes its blocks (its coding threads, when it has
 * them) rather than on the event loop. The bytes are copied a block at a time into the coding's
 * pooled buffers and hashed there in order, at most two blocks in flight.
 */
import type { BlockBuffers, BlockCoding, CodingSession } from './coding.js';
import type { DigestAlgorithm, DigestValues } from './digests.js';

const blockBytes = 1024 * 1024;
const blocksInFlight = 2;

export class StreamDigests {
  private readonly session: CodingSession;
  private buffers: BlockBuffers | undefined;
  private filled = 0;
  private readonly inFlight: Promise<void>[] = [];

  constructor(private readonly coding: BlockCoding, algorithms: readonly DigestAlgorithm[]) {
    this.session = coding.open(0, 0, algorithms);
  }

  /** Takes `chunk` in (copied: the caller may reuse it once this resolves). */
  async update(chunk: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      this.buffers ??= this.coding.acquireBuffers(blockBytes, 1, 0);
      const take = Math.min(blockBytes - this.filled, chunk.length - offset);
      this.buffers.block.set(chunk.subarray(offset, offset + take), this.filled);
      this.filled += take;
      offset += take;
      if (this.filled === blockBytes) await this.send();
    }
  }

  /** The digests of everything taken in; the object is spent afterwards. */
  async finish(): Promise<DigestValues> {
    if (this.filled > 0) await this.send();
    else if (this.buffers) this.coding.releaseBuffers(this.buffers);
    this.buffers = undefined;
    await Promise.all(this.inFlight.splice(0));
    return this.session.finish();
  }

  /** Abandons the digests (a failed PUT). */
  discard(): void {
    this.session.discard();
  }

  private async send(): Promise<void> {
    const buffers = this.buffers!;
    const length = this.filled;
    this.buffers = undefined;
    this.filled = 0;
    const sent = this.session.digest(buffers, length).then(() => this.coding.releaseBuffers(buffers));
    sent.catch(() => undefined); // awaited in turn
    this.inFlight.push(sent);
    while (this.inFlight.length > blocksInFlight) await this.inFlight.shift();
  }
}
