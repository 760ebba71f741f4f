/**
 * Turns a byte stream into erasure-coded, bitrot-framed shard streams, one per drive of a set,
 * one erasure block at a time: the whole object is never held in memory.
 */
import { createHash } from 'node:crypto';
import { SvcError } from '../errors/index.js';
import type { ErasureCodec } from '../erasure/codec.js';
import { frameChunk } from '../erasure/bitrot.js';
import { splitBlock } from '../erasure/layout.js';
import type { FileWriter } from '../drive/index.js';

/** Reads `source` into blocks of exactly `blockSizeBytes` (the last one shorter), hashing MD5 on the way. */
export class BlockReader {
  private readonly md5 = createHash('md5');
  private readonly iterator: AsyncIterator<Uint8Array>;
  private pending: Uint8Array | undefined;
  private pendingOffset = 0;
  private finished = false;
  totalBytes = 0;

  constructor(source: AsyncIterable<Uint8Array>, private readonly blockSizeBytes: number, private readonly expectedSizeBytes?: number) {
    this.iterator = source[Symbol.asyncIterator]();
  }

  /**
   * The next block, or undefined at the end of the stream. Never yields an empty block. A block
   * that lies inside one received chunk is a view of it; otherwise the bytes are gathered into a
   * buffer no larger than what is still expected.
   */
  async next(): Promise<Uint8Array | undefined> {
    const want = this.wantBytes();
    let block: Uint8Array | undefined;
    let filled = 0;
    while (filled < want) {
      if (!this.pending || this.pendingOffset >= this.pending.length) {
        if (this.finished || !(await this.receive())) break;
        continue;
      }
      const available = this.pending.length - this.pendingOffset;
      if (filled === 0 && available >= want) {
        block = this.pending.subarray(this.pendingOffset, this.pendingOffset + want);
        this.pendingOffset += want;
        filled = want;
        break;
      }
      block ??= Buffer.allocUnsafe(want);
      const take = Math.min(want - filled, available);
      block.set(this.pending.subarray(this.pendingOffset, this.pendingOffset + take), filled);
      this.pendingOffset += take;
      filled += take;
    }
    if (filled === 0 || !block) {
      this.checkSize();
      return undefined;
    }
    const result = filled === block.length ? block : block.subarray(0, filled);
    this.md5.update(result);
    this.totalBytes += filled;
    if (this.expectedSizeBytes !== undefined && this.totalBytes > this.expectedSizeBytes) {
      throw new SvcError('InvalidRequest', `the body is longer than the declared ${this.expectedSizeBytes} bytes`);
    }
    return result;
  }

  /** A whole block, or less when the declared size says fewer bytes remain (at least 1, to see any excess). */
  private wantBytes(): number {
    if (this.expectedSizeBytes === undefined) return this.blockSizeBytes;
    return Math.max(1, Math.min(this.blockSizeBytes, this.expectedSizeBytes - this.totalBytes));
  }

  private async receive(): Promise<boolean> {
    const step = await this.iterator.next();
    if (step.done) {
      this.finished = true;
      return false;
    }
    this.pending = step.value;
    this.pendingOffset = 0;
    return true;
  }

  md5Hex(): string {
    return this.md5.digest('hex');
  }

  private checkSize(): void {
    if (this.expectedSizeBytes !== undefined && this.totalBytes !== this.expectedSizeBytes) {
      throw new SvcError('IncompleteBody', `received ${this.totalBytes} of ${this.expectedSizeBytes} bytes`);
    }
  }
}

/**
 * Encodes one block into N framed shard chunks, ordered by drive slot: slot i receives the shard
 * whose 1-based index is distribution[i].
 */
export function encodeBlockForSlots(codec: ErasureCodec, block: Uint8Array, distribution: number[]): Uint8Array[] {
  const shards = splitBlock(block, codec.dataShards);
  for (let index = 0; index < codec.parityShards; index += 1) shards.push(new Uint8Array(shards[0]!.length));
  codec.encode(shards);
  return distribution.map((shardIndex) => frameChunk(shards[shardIndex - 1]!));
}

/** Per-slot shard writers with failure tracking: a slot whose write fails is dropped, not retried. */
export class SlotWriters {
  readonly failed = new Map<number, unknown>();

  constructor(private readonly writers: (FileWriter | undefined)[]) {
    writers.forEach((writer, slot) => {
      if (!writer) this.failed.set(slot, new SvcError('DriveOffline'));
    });
  }

  get aliveCount(): number {
    return this.writers.length - this.failed.size;
  }

  aliveSlots(): number[] {
    return this.writers.map((_, slot) => slot).filter((slot) => !this.failed.has(slot));
  }

  async writeAll(chunks: Uint8Array[]): Promise<void> {
    await Promise.all(this.writers.map((writer, slot) => this.guard(slot, () => writer!.write(chunks[slot]!))));
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.writers.map((writer, slot) => this.guard(slot, () => writer!.close())));
  }

  async abortAll(): Promise<void> {
    await Promise.all(this.writers.map((writer) => writer?.abort()));
  }

  private async guard(slot: number, action: () => Promise<void>): Promise<void> {
    if (this.failed.has(slot)) return;
    try {
      await action();
    } catch (error) {
      this.failed.set(slot, error);
      await this.writers[slot]?.abort();
    }
  }
}
