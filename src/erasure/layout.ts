/**
 * Striping math shared by writers and readers: how blocks split into shards, where each block's
 * framed chunk sits in a shard file, and how shards rotate over the drives of a set.
 */
import { assert } from '../errors/index.js';
import { xxh64 } from '../util/hashing.js';
import { bitrotHashBytes, unframeChunk } from './bitrot.js';

export function shardSizeBytes(blockLengthBytes: number, dataShards: number): number {
  return Math.ceil(blockLengthBytes / dataShards);
}

/** Splits a block into K equal shards (views where possible, a zero-padded copy for the tail). */
export function splitBlock(block: Uint8Array, dataShards: number): Uint8Array[] {
  const size = shardSizeBytes(block.length, dataShards);
  const shards: Uint8Array[] = [];
  for (let index = 0; index < dataShards; index += 1) {
    const start = index * size;
    if (start + size <= block.length) {
      shards.push(block.subarray(start, start + size));
    } else {
      const padded = new Uint8Array(size);
      if (start < block.length) padded.set(block.subarray(start));
      shards.push(padded);
    }
  }
  return shards;
}

/** Concatenates data shards and trims the padding back to the block length. */
export function joinShards(dataShards: Uint8Array[], blockLengthBytes: number): Uint8Array {
  return Buffer.concat(blockViews(dataShards, blockLengthBytes, 0, blockLengthBytes), blockLengthBytes);
}

/**
 * Bytes [from, to) of the block made of `dataShards` (padding excluded), as views into the
 * shards: what a reader sends without joining the shards into a new buffer.
 */
export function blockViews(dataShards: Uint8Array[], blockLengthBytes: number, from: number, to: number): Uint8Array[] {
  assert(from >= 0 && from <= to && to <= blockLengthBytes, `range [${from}, ${to}) is outside a block of ${blockLengthBytes} bytes`);
  const views: Uint8Array[] = [];
  let shardStart = 0;
  for (const shard of dataShards) {
    const start = Math.max(from, shardStart);
    const end = Math.min(to, shardStart + shard.length, blockLengthBytes);
    if (start < end) views.push(shard.subarray(start - shardStart, end - shardStart));
    shardStart += shard.length;
  }
  assert(views.reduce((sum, view) => sum + view.length, 0) === to - from, 'data shards shorter than the block');
  return views;
}

/** Size of one drive's shard file for a part of `partSizeBytes` (bitrot hashes included). */
export function shardFileSizeBytes(partSizeBytes: number, dataShards: number, blockSizeBytes: number): number {
  const fullBlocks = Math.floor(partSizeBytes / blockSizeBytes);
  const tail = partSizeBytes % blockSizeBytes;
  const full = fullBlocks * (bitrotHashBytes + shardSizeBytes(blockSizeBytes, dataShards));
  return full + (tail > 0 ? bitrotHashBytes + shardSizeBytes(tail, dataShards) : 0);
}

/** Byte offset and framed length of block `blockIndex`'s chunk inside a shard file. */
export function chunkOffsetInShardFile(
  blockIndex: number,
  partSizeBytes: number,
  dataShards: number,
  blockSizeBytes: number,
): { offset: number; lengthBytes: number } {
  const blockStart = blockIndex * blockSizeBytes;
  assert(blockIndex >= 0 && blockStart < Math.max(partSizeBytes, 1), `block ${blockIndex} is outside a part of ${partSizeBytes} bytes`);
  const blockLength = Math.min(blockSizeBytes, partSizeBytes - blockStart);
  return {
    offset: blockIndex * (bitrotHashBytes + shardSizeBytes(blockSizeBytes, dataShards)),
    lengthBytes: bitrotHashBytes + shardSizeBytes(blockLength, dataShards),
  };
}

/** First and last block indexes touched by a byte range (length > 0). */
export function blockRangeFor(offset: number, length: number, blockSizeBytes: number): { first: number; last: number } {
  return { first: Math.floor(offset / blockSizeBytes), last: Math.floor((offset + length - 1) / blockSizeBytes) };
}

/**
 * Which shard each drive of a set holds: a rotation of 1..N starting at a hash of the key.
 * distribution[i] is the 1-based shard index stored on the set's drive i.
 */
export function distributionFor(key: string, setDriveCount: number): number[] {
  const start = Number(xxh64(key) % BigInt(setDriveCount));
  return Array.from({ length: setDriveCount }, (_, drive) => ((drive + setDriveCount - start) % setDriveCount) + 1);
}

/** Does every block's chunk of a shard file of a part of `partSizeBytes` pass its bitrot hash? */
export function framesSound(bytes: Uint8Array, partSizeBytes: number, dataShards: number, blockSizeBytes: number): boolean {
  const blocks = Math.ceil(partSizeBytes / blockSizeBytes);
  for (let block = 0; block < blocks; block += 1) {
    const chunk = chunkOffsetInShardFile(block, partSizeBytes, dataShards, blockSizeBytes);
    if (!unframeChunk(bytes.subarray(chunk.offset, chunk.offset + chunk.lengthBytes))) return false;
  }
  return true;
}
