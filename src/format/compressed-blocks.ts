/**
 * The compressed-object block format (docs/formats.md, "Compressed data blocks").
 *
 * The client's bytes are cut into blocks of `compressionBlockPlainBytes` (1 MiB; the last block
 * is shorter). Each block is compressed on its own as one zstd frame (level 1, with the frame's
 * content checksum); a block whose frame would not be shorter than the block is stored as it is
 * (raw). The stored stream is the blocks one after another, and the `compression` record of
 * xl.meta keeps each block's stored length: a block stored at its plain length is raw, any
 * shorter one is a frame. So plaintext byte `p` lies in block `floor(p / 1 MiB)`, which starts
 * at the sum of the stored lengths before it, and a range decompresses from the block holding
 * its first byte, never from the start of the object.
 *
 * A multipart object's parts are compressed each on its own, in 1 MiB blocks of the part; the
 * record then lists the parts' plain sizes (`parts`) and all their blocks, part after part, so a
 * block never spans two parts and the parts' compressed streams follow one another.
 *
 * Pure code: bytes in, bytes out (the stream transforms take and give async iterables; zstd runs
 * on libuv's thread pool, off the event loop).
 */
import { constants, zstdCompress, zstdDecompress, type ZstdOptions } from 'node:zlib';
import { SvcError } from '../errors/index.js';
import type { CompressionInfo } from './xl-meta-types.js';

export const compressionBlockPlainBytes = 1024 * 1024;
export const compressionAlgorithm = 'zstd-1m-v1';
/** zstd's fastest regular level: text-like data at several hundred MB/s per core (docs/compression.md). */
export const zstdLevel = 1;

/** Blocks a read decompresses at once: the one being handed on and the next. */
const decompressAheadBlocks = 2;

const compressOptions: ZstdOptions = { params: { [constants.ZSTD_c_compressionLevel]: zstdLevel, [constants.ZSTD_c_checksumFlag]: 1 } };

/** Whether this Node.js has zstd in `node:zlib` (22.15 and later). */
export function zstdAvailable(): boolean {
  return typeof zstdCompress === 'function' && typeof zstdDecompress === 'function';
}

/** Blocks of an object of `plainSizeBytes` (none for an empty one). */
export function blockCountOf(plainSizeBytes: number): number {
  return Math.ceil(plainSizeBytes / compressionBlockPlainBytes);
}

/** Plain length of block `index` of an object of `plainSizeBytes`. */
export function blockPlainLength(plainSizeBytes: number, index: number): number {
  return Math.min(compressionBlockPlainBytes, plainSizeBytes - index * compressionBlockPlainBytes);
}

/**
 * Plain length of each block of a record, in order: the 1 MiB blocks of the object, or of each of
 * its parts in turn.
 */
export function blockPlainLengths(info: Pick<CompressionInfo, 'plainSizeBytes' | 'parts'>): number[] {
  const sizes = info.parts ? info.parts.map((part) => part.plainSizeBytes) : [info.plainSizeBytes];
  const lengths: number[] = [];
  for (const size of sizes) for (let block = 0; block < blockCountOf(size); block += 1) lengths.push(blockPlainLength(size, block));
  return lengths;
}

/** A multipart object's parts as they were compressed: the client's size of each and its blocks' stored lengths. */
export interface CompressedPartBlocks {
  number: number;
  plainSizeBytes: number;
  blocks: readonly number[];
}

/**
 * The record of a multipart object whose parts were compressed one by one, or undefined when no
 * block of any part shrank (its stored bytes are then the client's, and nothing records them).
 */
export function multipartCompression(parts: readonly CompressedPartBlocks[]): CompressionInfo | undefined {
  const blocks = parts.flatMap((part) => [...part.blocks]);
  const plainSizeBytes = parts.reduce((sum, part) => sum + part.plainSizeBytes, 0);
  const info: CompressionInfo = {
    algorithm: compressionAlgorithm, plainSizeBytes, storedSizeBytes: blocks.reduce((sum, length) => sum + length, 0), blocks,
    parts: parts.map((part) => ({ number: part.number, plainSizeBytes: part.plainSizeBytes })),
  };
  const lengths = blockPlainLengths(info);
  if (lengths.length !== blocks.length) throw new SvcError('InternalError', 'the parts\' compressed blocks do not match their sizes');
  return blocks.some((length, index) => length < lengths[index]!) ? info : undefined;
}

function compressBlock(plain: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    zstdCompress(plain, compressOptions, (error, packed) => (error ? reject(error) : resolve(packed.length < plain.length ? packed : plain)));
  });
}

function decompressBlock(stored: Buffer, plainLength: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // One byte more than the block may hold, so an over-long frame is seen as such.
    zstdDecompress(stored, { maxOutputLength: plainLength + 1 }, (error, plain) => (error ? reject(error) : resolve(plain)));
  });
}

/** What a compressing PUT learns as its blocks go by; `record()` once the stream has ended. */
export class CompressionIndex {
  plainSizeBytes = 0;
  storedSizeBytes = 0;
  readonly blocks: number[] = [];
  private framed = 0;

  add(plainLength: number, storedLength: number): void {
    this.plainSizeBytes += plainLength;
    this.storedSizeBytes += storedLength;
    this.blocks.push(storedLength);
    if (storedLength < plainLength) this.framed += 1;
  }

  /** The xl.meta record, or undefined when no block shrank (the stored bytes are then the plain bytes, and nothing records them). */
  record(): CompressionInfo | undefined {
    if (this.framed === 0) return undefined;
    return { algorithm: compressionAlgorithm, plainSizeBytes: this.plainSizeBytes, storedSizeBytes: this.storedSizeBytes, blocks: [...this.blocks] };
  }
}

/**
 * Compresses a stream of plain bytes block by block, `blocksInFlight` blocks at once on the
 * thread pool, and yields the stored blocks in order while `index` records them.
 */
export async function* compressStream(source: AsyncIterable<Uint8Array>, index: CompressionIndex, blocksInFlight: number): AsyncGenerator<Uint8Array> {
  const working: { plainLength: number; packing: Promise<Buffer> }[] = [];
  const start = (plain: Buffer): void => {
    const packing = compressBlock(plain);
    packing.catch(() => undefined); // observed when awaited
    working.push({ plainLength: plain.length, packing });
  };
  const finishOne = async (): Promise<Buffer> => {
    const done = working.shift()!;
    const stored = await done.packing;
    index.add(done.plainLength, stored.length);
    return stored;
  };
  let held = Buffer.allocUnsafe(compressionBlockPlainBytes);
  let filled = 0;
  for await (const chunk of source) {
    let offset = 0;
    while (offset < chunk.length) {
      const take = Math.min(compressionBlockPlainBytes - filled, chunk.length - offset);
      held.set(chunk.subarray(offset, offset + take), filled);
      filled += take;
      offset += take;
      if (filled === compressionBlockPlainBytes) {
        start(held);
        held = Buffer.allocUnsafe(compressionBlockPlainBytes);
        filled = 0;
        while (working.length >= blocksInFlight) yield await finishOne();
      }
    }
  }
  if (filled > 0) start(held.subarray(0, filled));
  while (working.length > 0) yield await finishOne();
}

/** What to read from the stored stream for a plaintext range, and how to decompress it. */
export interface CompressedRead {
  /** Stored byte range holding every block the plaintext range touches. */
  storedOffset: number;
  storedLength: number;
  firstBlock: number;
  blockCount: number;
  /** Plain bytes to drop from the first block, then bytes to hand on. */
  skipBytes: number;
  lengthBytes: number;
}

/** The stored bytes and blocks holding plaintext bytes [offset, offset + length); a zero-length range reads nothing. */
export function compressedRangeOf(info: CompressionInfo, range: { offset: number; length: number }): CompressedRead {
  if (range.offset < 0 || range.length < 0 || range.offset + range.length > info.plainSizeBytes) {
    throw new SvcError('InvalidRange', undefined, { sizeBytes: info.plainSizeBytes });
  }
  if (range.length === 0) return { storedOffset: 0, storedLength: 0, firstBlock: 0, blockCount: 0, skipBytes: 0, lengthBytes: 0 };
  const lengths = blockPlainLengths(info);
  let block = 0;
  let plainStart = 0;
  let storedOffset = 0;
  while (plainStart + lengths[block]! <= range.offset) {
    plainStart += lengths[block]!;
    storedOffset += info.blocks[block]!;
    block += 1;
  }
  const firstBlock = block;
  const end = range.offset + range.length;
  let storedLength = 0;
  for (let plainAt = plainStart; plainAt < end; block += 1) {
    plainAt += lengths[block]!;
    storedLength += info.blocks[block]!;
  }
  return { storedOffset, storedLength, firstBlock, blockCount: block - firstBlock, skipBytes: range.offset - plainStart, lengthBytes: range.length };
}

function corruptBlock(index: number, reason: string): never {
  throw new SvcError('FileCorrupt', `compressed block ${index} ${reason}`, { blockIndex: index });
}

/**
 * Decompresses the stored bytes of `read` (exactly its stored range, in order) and yields the
 * plaintext range. A block that does not decompress to its recorded length, or stored bytes that
 * end early, end the stream with FileCorrupt before any byte of that block is handed on. Each
 * source chunk is handed to `done` once its bytes are copied out.
 */
export async function* decompressStream(source: AsyncIterable<Uint8Array>, info: CompressionInfo, read: CompressedRead, done: (chunk: Uint8Array) => void = () => undefined): AsyncGenerator<Uint8Array> {
  const iterator = source[Symbol.asyncIterator]();
  let pending: Uint8Array | undefined;
  let pendingOffset = 0;
  const take = async (length: number, block: number): Promise<Buffer> => {
    const out = Buffer.allocUnsafe(length);
    let have = 0;
    while (have < length) {
      if (!pending) {
        const step = await iterator.next();
        if (step.done) corruptBlock(block, 'ends early');
        pending = step.value;
        pendingOffset = 0;
        continue;
      }
      const count = Math.min(length - have, pending.length - pendingOffset);
      out.set(pending.subarray(pendingOffset, pendingOffset + count), have);
      have += count;
      pendingOffset += count;
      if (pendingOffset === pending.length) {
        done(pending);
        pending = undefined;
      }
    }
    return out;
  };
  const plainLengths = blockPlainLengths(info);
  let skip = read.skipBytes;
  let left = read.lengthBytes;
  // The next block is read and decompressing (on the thread pool) while this one is handed on.
  const working: Promise<Buffer>[] = [];
  let nextBlock = read.firstBlock;
  const endBlock = read.firstBlock + read.blockCount;
  const startNext = async (): Promise<void> => {
    const block = nextBlock++;
    const plainLength = plainLengths[block]!;
    const stored = await take(info.blocks[block]!, block);
    const plain = stored.length === plainLength ? Promise.resolve(stored) : decompressBlock(stored, plainLength).then(
      (out) => (out.length === plainLength ? out : corruptBlock(block, `decompresses to ${out.length} bytes, not ${plainLength}`)),
      () => corruptBlock(block, 'does not decompress'),
    );
    plain.catch(() => undefined); // observed when awaited
    working.push(plain);
  };
  try {
    while ((working.length > 0 || nextBlock < endBlock) && left > 0) {
      while (working.length < decompressAheadBlocks && nextBlock < endBlock) await startNext();
      const plain = await working.shift()!;
      const piece = plain.subarray(skip, Math.min(plain.length, skip + left));
      skip = 0;
      left -= piece.length;
      if (piece.length > 0) yield piece;
    }
    if (left > 0) corruptBlock(endBlock, 'is missing');
  } finally {
    if (pending) done(pending);
    pending = undefined;
    await iterator.return?.();
  }
}
