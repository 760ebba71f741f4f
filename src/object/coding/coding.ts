/**
 * Block coding as a service: a PUT opens a session, hands it one block after another, and gets
 * back each block's framed shard chunks; at the end the session gives the body's digests. The
 * session runs either on the event loop (MainThreadCoding) or on a coding thread
 * (WorkerCoding, ./worker-coding.ts); both produce the same bytes.
 *
 * Blocks and frames live in reusable BlockBuffers: one memory region holding a block of up to
 * blockSizeBytes and N frame buffers. Shared memory when coding runs on threads, so nothing is
 * copied between threads.
 */
import { codecFor, defaultCodecId } from '../../erasure/codecs.js';
import { SvcError } from '../../errors/index.js';
import { bitrotHashBytes } from '../../erasure/bitrot.js';
import { shardSizeBytes } from '../../erasure/layout.js';
import { limits } from '../../util/limits.js';
import { codeBlockInto, frameCapacityBytes } from './block-coder.js';
import { BodyDigests, type DigestAlgorithm, type DigestValues } from './digests.js';

/**
 * The layout of a BlockBuffers region: the block first, then one frame buffer per shard. Coding
 * threads rebuild the same views over the shared memory they are sent.
 */
export function blockBufferViews(memory: ArrayBuffer | SharedArrayBuffer, blockSizeBytes: number, dataShards: number, totalShards: number): { block: Uint8Array; frames: Uint8Array[] } {
  const frameBytes = frameCapacityBytes(blockSizeBytes, dataShards);
  return {
    block: new Uint8Array(memory, 0, blockSizeBytes),
    frames: Array.from({ length: totalShards }, (_, index) => new Uint8Array(memory, blockSizeBytes + index * frameBytes, frameBytes)),
  };
}

export class BlockBuffers {
  readonly memory: ArrayBuffer | SharedArrayBuffer;
  /** Room for one block; a block of `lengthBytes` is block.subarray(0, lengthBytes). */
  readonly block: Uint8Array;
  /** One frame buffer per shard index. */
  readonly frames: Uint8Array[];

  constructor(readonly blockSizeBytes: number, readonly dataShards: number, readonly totalShards: number, shared: boolean) {
    const totalBytes = blockSizeBytes + totalShards * frameCapacityBytes(blockSizeBytes, dataShards);
    this.memory = shared ? new SharedArrayBuffer(totalBytes) : new ArrayBuffer(totalBytes);
    ({ block: this.block, frames: this.frames } = blockBufferViews(this.memory, blockSizeBytes, dataShards, totalShards));
  }

  get shape(): string {
    return `${this.blockSizeBytes}/${this.dataShards}/${this.totalShards}`;
  }

  /** The framed chunks (header + shard) of a block of `lengthBytes` coded into these buffers, in shard order. */
  framedChunks(lengthBytes: number): Uint8Array[] {
    const chunkBytes = bitrotHashBytes + shardSizeBytes(lengthBytes, this.dataShards);
    return this.frames.map((frame) => frame.subarray(0, chunkBytes));
  }
}

export interface CodingSession {
  /**
   * Codes the first `lengthBytes` of `buffers.block` into `buffers.frames` and adds them to the
   * body's digests. Blocks are taken in the order of the calls. Resolves with the framed chunks
   * in shard order.
   */
  code(buffers: BlockBuffers, lengthBytes: number): Promise<Uint8Array[]>;
  /**
   * Adds the first `lengthBytes` of `buffers.block` to the digests without coding them (bytes
   * coded elsewhere: an encrypted PUT's plaintext), in the order of the calls. A session opened
   * with no data shards only digests.
   */
  digest(buffers: BlockBuffers, lengthBytes: number): Promise<void>;
  /** The digests of every block coded; resolves after the last block. */
  finish(): Promise<DigestValues>;
  /** Abandons the session (a failed PUT). */
  discard(): void;
}

export interface BlockCoding {
  readonly name: string;
  /** `md5: false`: the session's digests leave the MD5 out (the caller gives the ETag). */
  open(dataShards: number, parityShards: number, algorithms: readonly DigestAlgorithm[], md5?: boolean): CodingSession;
  acquireBuffers(blockSizeBytes: number, dataShards: number, totalShards: number): BlockBuffers;
  /** Returns buffers for reuse; only once nothing reads or writes them any more. */
  releaseBuffers(buffers: BlockBuffers): void;
  close(): Promise<void>;
}

/** Free BlockBuffers by shape, at most limits.codingBuffersRetained kept in all. */
export class BufferPool {
  private readonly free = new Map<string, BlockBuffers[]>();
  private retained = 0;

  constructor(private readonly shared: boolean) {}

  acquire(blockSizeBytes: number, dataShards: number, totalShards: number): BlockBuffers {
    const list = this.free.get(`${blockSizeBytes}/${dataShards}/${totalShards}`);
    const reused = list?.pop();
    if (reused) {
      this.retained -= 1;
      return reused;
    }
    return new BlockBuffers(blockSizeBytes, dataShards, totalShards, this.shared);
  }

  release(buffers: BlockBuffers): void {
    if (this.retained >= limits.codingBuffersRetained) return;
    const list = this.free.get(buffers.shape) ?? [];
    list.push(buffers);
    this.free.set(buffers.shape, list);
    this.retained += 1;
  }
}

/** Coding on the event loop: no threads, the same bytes. */
export class MainThreadCoding implements BlockCoding {
  readonly name = 'event-loop';
  private readonly pool = new BufferPool(false);

  open(dataShards: number, parityShards: number, algorithms: readonly DigestAlgorithm[], md5 = true): CodingSession {
    const codec = dataShards > 0 ? codecFor(defaultCodecId, dataShards, parityShards) : undefined;
    const digests = new BodyDigests(algorithms, { md5 });
    return {
      code: async (buffers, lengthBytes) => {
        if (!codec) throw new SvcError('InternalError', 'a coding session opened without data shards only digests');
        const block = buffers.block.subarray(0, lengthBytes);
        digests.update(block);
        return codeBlockInto(codec, block, buffers.frames);
      },
      digest: async (buffers, lengthBytes) => digests.update(buffers.block.subarray(0, lengthBytes)),
      finish: async () => digests.finish(),
      discard: () => undefined,
    };
  }

  acquireBuffers(blockSizeBytes: number, dataShards: number, totalShards: number): BlockBuffers {
    return this.pool.acquire(blockSizeBytes, dataShards, totalShards);
  }

  releaseBuffers(buffers: BlockBuffers): void {
    this.pool.release(buffers);
  }

  async close(): Promise<void> {}
}

export const mainThreadCoding = new MainThreadCoding();
