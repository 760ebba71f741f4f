/**
 * One erasure block coded into its N framed shard chunks `[xxh64 of shard][shard]`, written into
 * frame buffers the caller owns, so the same buffers serve block after block. The data shards
 * are the block cut into K equal pieces (the last zero-padded), the parity shards come from the
 * codec, and every frame's header is the bitrot hash of its shard.
 */
import { assert } from '../../errors/index.js';
import type { ErasureCodec } from '../../erasure/codec.js';
import { bitrotHashBytes } from '../../erasure/bitrot.js';
import { shardSizeBytes } from '../../erasure/layout.js';
import { xxh64 } from '../../util/hashing.js';

/** Bytes one frame buffer needs for blocks of up to `blockSizeBytes`. */
export function frameCapacityBytes(blockSizeBytes: number, dataShards: number): number {
  return bitrotHashBytes + shardSizeBytes(blockSizeBytes, dataShards);
}

/**
 * Codes `block` into `frames` (N buffers of at least frameCapacityBytes, indexed by shard) and
 * returns the framed chunks, views of exactly header + shard bytes, in shard order.
 */
export function codeBlockInto(codec: ErasureCodec, block: Uint8Array, frames: Uint8Array[]): Uint8Array[] {
  const k = codec.dataShards;
  assert(frames.length === k + codec.parityShards, `expected ${k + codec.parityShards} frame buffers, got ${frames.length}`);
  const shardBytes = shardSizeBytes(block.length, k);
  const framed = frames.map((frame) => {
    assert(frame.length >= bitrotHashBytes + shardBytes, 'frame buffer too small for the block');
    return frame.subarray(0, bitrotHashBytes + shardBytes);
  });
  const shards = framed.map((frame) => frame.subarray(bitrotHashBytes));
  for (let index = 0; index < k; index += 1) {
    const start = Math.min(index * shardBytes, block.length);
    const end = Math.min(start + shardBytes, block.length);
    shards[index]!.set(block.subarray(start, end));
    shards[index]!.fill(0, end - start);
  }
  codec.encode(shards);
  framed.forEach((frame, index) => new DataView(frame.buffer, frame.byteOffset, bitrotHashBytes).setBigUint64(0, xxh64(shards[index]!)));
  return framed;
}

/** Fresh frame buffers for one block (inline objects keep theirs in xl.meta). */
export function newFrames(blockLengthBytes: number, codec: ErasureCodec): Uint8Array[] {
  const capacity = frameCapacityBytes(blockLengthBytes, codec.dataShards);
  return Array.from({ length: codec.dataShards + codec.parityShards }, () => Buffer.allocUnsafe(capacity));
}
