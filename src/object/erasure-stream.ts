/**
 * Turns a byte stream into erasure-coded, bitrot-framed shard files, one per drive of a set, one
 * erasure block at a time: the whole object is never held in memory. Blocks move through a short
 * pipeline: while one block is received, the one before is coded (on a coding thread when the set
 * has them) and the one before that is written to the drives.
 */
import { SvcError } from '../errors/index.js';
import type { FileWriter } from '../drive/index.js';
import { limits } from '../util/limits.js';
import type { BlockBuffers, BlockCoding, CodingSession } from './coding/coding.js';
import type { DigestAlgorithm, DigestValues } from './coding/digests.js';
import { requireQuorum } from './set-context.js';

/** Reads `source` into blocks of exactly `blockSizeBytes` (the last one shorter). */
export class BlockReader {
  private readonly iterator: AsyncIterator<Uint8Array>;
  private pending: Uint8Array | undefined;
  private pendingOffset = 0;
  private finished = false;
  totalBytes = 0;

  constructor(source: AsyncIterable<Uint8Array>, private readonly blockSizeBytes: number, private readonly expectedSizeBytes?: number) {
    this.iterator = source[Symbol.asyncIterator]();
  }

  /**
   * The next block, or undefined at the end of the stream. Never yields an empty block. Given
   * `into` (room for a whole block), the block is copied there; otherwise a block that lies inside
   * one received chunk is a view of it, and any other is gathered into a buffer no larger than
   * what is still expected.
   */
  async next(into?: Uint8Array): Promise<Uint8Array | undefined> {
    const want = this.wantBytes();
    let block = into;
    let filled = 0;
    while (filled < want) {
      if (!this.pending || this.pendingOffset >= this.pending.length) {
        if (this.finished || !(await this.receive())) break;
        continue;
      }
      const available = this.pending.length - this.pendingOffset;
      if (!block && filled === 0 && available >= want) {
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
    this.totalBytes += filled;
    if (this.expectedSizeBytes !== undefined && this.totalBytes > this.expectedSizeBytes) {
      throw new SvcError('InvalidRequest', `the body is longer than the declared ${this.expectedSizeBytes} bytes`);
    }
    return block.subarray(0, filled);
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

  private checkSize(): void {
    if (this.expectedSizeBytes !== undefined && this.totalBytes !== this.expectedSizeBytes) {
      throw new SvcError('IncompleteBody', `received ${this.totalBytes} of ${this.expectedSizeBytes} bytes`);
    }
  }
}

/** A block already read into pooled buffers, waiting to be coded. */
export interface ReadBlock {
  buffers: BlockBuffers;
  lengthBytes: number;
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

export interface ShardStreamPlan {
  coding: BlockCoding;
  dataShards: number;
  parityShards: number;
  blockSizeBytes: number;
  /** distribution[slot] = 1-based shard index that slot stores. */
  distribution: number[];
  algorithms: readonly DigestAlgorithm[];
  /** false: the body's MD5 is not taken (its digests' `md5` is ''), the caller giving the ETag; taken when unset. */
  md5?: boolean;
  quorum: number;
}

/**
 * Codes the blocks of `reader` (after `pending`, already read) and writes each slot's frames to
 * its writer, keeping at most limits.codingBlocksInFlight blocks in flight. Fails with
 * ErasureWriteQuorum as soon as fewer than `quorum` writers remain; the caller aborts the writers.
 * Resolves with the body's digests once every frame is written (not yet closed).
 */
export async function pipeBlocks(plan: ShardStreamPlan, reader: BlockReader, pending: ReadBlock[], writers: SlotWriters): Promise<DigestValues> {
  const session = plan.coding.open(plan.dataShards, plan.parityShards, plan.algorithms, plan.md5 ?? true);
  const inFlight: Promise<void>[] = [];
  const held = new Set<BlockBuffers>(pending.map((block) => block.buffers));
  let writes: Promise<void> = Promise.resolve();
  const submit = ({ buffers, lengthBytes }: ReadBlock): void => {
    const coded = session.code(buffers, lengthBytes);
    coded.catch(() => undefined); // awaited below, in order
    const previous = writes;
    writes = (async () => {
      const frames = await coded;
      await previous;
      requireQuorum(writers.aliveCount, plan.quorum, 'write', { phase: 'data' });
      await writers.writeAll(plan.distribution.map((shardIndex) => frames[shardIndex - 1]!));
      held.delete(buffers);
      plan.coding.releaseBuffers(buffers);
    })();
    writes.catch(() => undefined); // awaited through inFlight
    inFlight.push(writes);
  };
  try {
    for (const block of pending) submit(block);
    for (;;) {
      while (inFlight.length >= limits.codingBlocksInFlight) await inFlight.shift();
      const buffers = plan.coding.acquireBuffers(plan.blockSizeBytes, plan.dataShards, plan.dataShards + plan.parityShards);
      held.add(buffers);
      const block = await reader.next(buffers.block);
      if (!block) break;
      submit({ buffers, lengthBytes: block.length });
    }
    await Promise.all(inFlight);
    requireQuorum(writers.aliveCount, plan.quorum, 'write', { phase: 'data' });
    return await session.finish();
  } catch (error) {
    session.discard();
    // Buffers go back to the pool only once nothing codes into them or writes from them.
    await Promise.allSettled(inFlight);
    throw error;
  } finally {
    for (const buffers of held) plan.coding.releaseBuffers(buffers);
  }
}
