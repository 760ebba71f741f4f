/**
 * GET and HEAD in one erasure set: vote on metadata, then stream only the erasure blocks a range
 * touches, preferring data shards, falling back to parity and reconstruction when a shard is
 * missing or fails its bitrot check. Fewer than K good shards fails closed.
 */
import { SvcError } from '../errors/index.js';
import type { ObjectVersion } from '../format/xl-meta-types.js';
import { codecFor } from '../erasure/codecs.js';
import { blockViews, chunkOffsetInShardFile } from '../erasure/layout.js';
import { unframeChunk } from '../erasure/bitrot.js';
import { objectResource } from './locks.js';
import { readMetaAnswers } from './meta-io.js';
import { resolveVersion, type ResolvedVersion } from './quorum.js';
import { partPath } from './paths.js';
import { readBuffers } from './read-buffers.js';
import type { SetConfig } from './set-context.js';
import type { GetObjectOptions, ObjectInfo } from './types.js';
import { toObjectInfo } from './object-info.js';

export async function headObject(config: SetConfig, bucket: string, key: string, versionId?: string): Promise<ObjectInfo> {
  const resolved = await resolveForRead(config, bucket, key, versionId);
  return toObjectInfo(bucket, key, resolved.version, resolved.isLatest);
}

/** Metadata of the version to read; a delete marker reads as NoSuchKey (or MethodNotAllowed by id). */
export async function resolveForRead(config: SetConfig, bucket: string, key: string, versionId?: string): Promise<ResolvedVersion> {
  const resolved = resolveVersion(await readMetaAnswers(config, bucket, key), config.drives.length, versionId);
  if (resolved.version.deleteMarker) {
    const details = { deleteMarker: true, versionId: resolved.version.versionId, modTimeMs: resolved.version.modTimeMs };
    if (versionId === undefined) throw new SvcError('NoSuchKey', undefined, details);
    throw new SvcError('MethodNotAllowed', 'The specified method is not allowed against a delete marker.', details);
  }
  return resolved;
}

export interface ObjectReader {
  info: ObjectInfo;
  /** The bytes of the requested range, streamed block by block. The read lock is held until it ends. */
  body: AsyncIterable<Uint8Array>;
  /**
   * Optional: hands a chunk of `body` back once the consumer is done with it, so its memory
   * serves a later read. A chunk must not be touched after it is released.
   */
  release(chunk: Uint8Array): void;
}

export async function getObject(config: SetConfig, bucket: string, key: string, options: GetObjectOptions = {}): Promise<ObjectReader> {
  const release = options.lockHeld ? () => undefined : await config.locker.acquire(objectResource(bucket, key), 'read');
  try {
    const resolved = await resolveForRead(config, bucket, key, options.versionId);
    const info = toObjectInfo(bucket, key, resolved.version, resolved.isLatest);
    const range = options.prepare?.(info) ?? options.range ?? { offset: 0, length: info.sizeBytes };
    if (range.offset < 0 || range.length < 0 || range.offset + range.length > info.sizeBytes) {
      throw new SvcError('InvalidRange', undefined, { offset: range.offset, length: range.length, sizeBytes: info.sizeBytes });
    }
    return { info, body: streamRange(config, bucket, key, resolved, range, release), release: (chunk) => readBuffers.release(chunk) };
  } catch (error) {
    release();
    throw error;
  }
}

/** One part of one version being read, and the slots found bad while reading it. */
interface PartRead {
  config: SetConfig;
  bucket: string;
  key: string;
  resolved: ResolvedVersion;
  partNumber: number;
  partSizeBytes: number;
  badSlots: Set<number>;
}

async function* streamRange(
  config: SetConfig,
  bucket: string,
  key: string,
  resolved: ResolvedVersion,
  range: { offset: number; length: number },
  release: () => void,
): AsyncGenerator<Uint8Array> {
  const badSlots = new Set<number>();
  try {
    let partStart = 0;
    const end = range.offset + range.length;
    for (const part of resolved.version.parts) {
      const partEnd = partStart + part.sizeBytes;
      if (partEnd > range.offset && partStart < end) {
        const read: PartRead = { config, bucket, key, resolved, partNumber: part.number, partSizeBytes: part.sizeBytes, badSlots };
        yield* streamPart(read, Math.max(range.offset, partStart) - partStart, Math.min(end, partEnd) - partStart);
      }
      partStart = partEnd;
      if (partStart >= end) break;
    }
  } finally {
    release();
    if (badSlots.size > 0 || resolved.outdated.length > 0) {
      const reason = badSlots.size > 0 ? 'read-corrupt-shards' : 'read-missing-shards';
      config.onRepairNeeded?.({ bucket, key, versionId: resolved.version.versionId, reason, slots: [...new Set([...badSlots, ...resolved.outdated])] });
    }
  }
}

/** Bytes [from, to) of one part; the next block is read from the drives while the current one is sent. */
async function* streamPart(part: PartRead, from: number, to: number): AsyncGenerator<Uint8Array> {
  const blockSize = part.resolved.version.erasure!.blockSizeBytes;
  const firstBlock = Math.floor(from / blockSize);
  const lastBlock = Math.floor((to - 1) / blockSize);
  let next: Promise<ReadBlock> | undefined = readBlock(part, firstBlock);
  for (let blockIndex = firstBlock; blockIndex <= lastBlock; blockIndex += 1) {
    const block = await next!;
    next = blockIndex < lastBlock ? readBlock(part, blockIndex + 1) : undefined;
    next?.catch(() => undefined); // observed when awaited on the next turn
    const blockStart = blockIndex * blockSize;
    const views = blockViews(block.dataShards, block.lengthBytes, Math.max(from - blockStart, 0), Math.min(to - blockStart, block.lengthBytes));
    // Buffers that hold none of the bytes sent (parity, shards outside the range) go back now;
    // the consumer releases the others.
    const sent = new Set(views.map((view) => view.buffer));
    for (const buffer of block.buffers) if (!sent.has(buffer.buffer)) readBuffers.release(buffer);
    yield* views;
  }
}

/** One block's data shards, and every pooled buffer read for it. */
interface ReadBlock {
  dataShards: Uint8Array[];
  lengthBytes: number;
  buffers: Uint8Array[];
}

/** Reads one erasure block: K good shard chunks, data shards first, parity as needed. */
async function readBlock(part: PartRead, blockIndex: number): Promise<ReadBlock> {
  const erasure = part.resolved.version.erasure!;
  const k = erasure.dataShards;
  const blockLengthBytes = Math.min(erasure.blockSizeBytes, part.partSizeBytes - blockIndex * erasure.blockSizeBytes);
  const chunk = chunkOffsetInShardFile(blockIndex, part.partSizeBytes, k, erasure.blockSizeBytes);
  const slotOfShard = new Map<number, number>();
  for (const [slot, version] of part.resolved.holders) if (!part.badSlots.has(slot)) slotOfShard.set(version.erasure!.index, slot);
  const shards: (Uint8Array | null)[] = new Array(k + erasure.parityShards).fill(null);
  const buffers: Uint8Array[] = [];
  const order = [...slotOfShard.keys()].sort((a, b) => a - b);
  let good = 0;
  let next = 0;
  while (good < k && next < order.length) {
    const batch = order.slice(next, next + (k - good));
    next += batch.length;
    const chunks = await Promise.all(batch.map((shardIndex) => readChunk(part, slotOfShard.get(shardIndex)!, chunk.offset, chunk.lengthBytes, buffers)));
    batch.forEach((shardIndex, position) => {
      const data = chunks[position];
      if (data) {
        shards[shardIndex - 1] = data;
        good += 1;
      } else {
        part.badSlots.add(slotOfShard.get(shardIndex)!);
      }
    });
  }
  if (good < k) {
    for (const buffer of buffers) readBuffers.release(buffer);
    throw new SvcError('ErasureReadQuorum', undefined, { bucket: part.bucket, key: part.key, partNumber: part.partNumber, blockIndex, goodShards: good, needed: k });
  }
  const dataComplete = shards.slice(0, k).every((shard) => shard !== null);
  const data = dataComplete ? (shards.slice(0, k) as Uint8Array[]) : codecFor(erasure.codec, k, erasure.parityShards).reconstruct(shards, { dataOnly: true }).slice(0, k);
  return { dataShards: data, lengthBytes: blockLengthBytes, buffers };
}

/**
 * One verified shard chunk from one drive (or its inline copy), read into a pooled buffer that is
 * added to `buffers`; undefined when missing or corrupt.
 */
async function readChunk(part: PartRead, slot: number, offset: number, lengthBytes: number, buffers: Uint8Array[]): Promise<Uint8Array | undefined> {
  const version: ObjectVersion = part.resolved.holders.get(slot)!;
  try {
    let framed: Uint8Array;
    if (version.inlineData) {
      framed = version.inlineData.subarray(offset, offset + lengthBytes);
    } else {
      const into = readBuffers.acquire(lengthBytes);
      buffers.push(into);
      framed = await part.config.drives[slot]!.readRange(partPath(part.bucket, part.key, version.dataDir!, part.partNumber), offset, lengthBytes, into);
    }
    if (framed.length !== lengthBytes) return undefined;
    return unframeChunk(framed);
  } catch {
    return undefined;
  }
}
