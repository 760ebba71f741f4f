/**
 * Bitrot framing: a shard file is a sequence of `[8-byte xxh64 of chunk][chunk]`, one chunk per
 * erasure block. A chunk whose hash does not match counts as missing.
 */
import { xxh64 } from '../util/hashing.js';

export const bitrotHashBytes = 8;
export const bitrotAlgorithm = 'xxh64';

export function frameChunk(chunk: Uint8Array): Uint8Array {
  const framed = Buffer.allocUnsafe(bitrotHashBytes + chunk.length);
  framed.writeBigUInt64BE(xxh64(chunk), 0);
  framed.set(chunk, bitrotHashBytes);
  return framed;
}

/** The chunk inside a framed buffer when its hash matches; undefined when it does not. */
export function unframeChunk(framed: Uint8Array): Uint8Array | undefined {
  if (framed.length < bitrotHashBytes) return undefined;
  const chunk = framed.subarray(bitrotHashBytes);
  const stored = new DataView(framed.buffer, framed.byteOffset, bitrotHashBytes).getBigUint64(0);
  return stored === xxh64(chunk) ? chunk : undefined;
}
