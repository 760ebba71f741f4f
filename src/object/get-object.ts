/**
 * GET and HEAD in one erasure set: vote on metadata, then stream only the erasure blocks a range
 * touches, preferring data shards, falling back to parity and reconstruction when a shard is
 * missing, fails its bitrot check, or is late (hedged reads, shard-hedge.ts). Fewer than K good
 * shards fails closed.
 */
import { SvcError } from '../errors/index.js';
import type { ObjectVersion } from '../format/xl-meta-types.js';
import { codecFor } from '../erasure/codecs.js';
import { blockViews, chunkOffsetInShardFile } from '../erasure/layout.js';
import { unframeChunk } from '../erasure/bitrot.js';
import { compressedRangeOf, decompressStream } from '../format/compressed-blocks.js';
import { objectResource } from './locks.js';
import { readObjectMeta } from './meta-io.js';
import { latestVoteSettled, resolveVersion, type DriveMetaAnswer, type ResolvedVersion } from './quorum.js';
import { partPathIn } from './paths.js';
import { readBuffers } from './read-buffers.js';
import { gatherFirst, shardReadStatsOf } from './shard-hedge.js';
import type { SetConfig } from './set-context.js';
import type { Drive, FileReader } from '../drive/index.js';
import { limits } from '../util/limits.js';
import type { GetObjectOptions, ObjectInfo } from './types.js';
import { toObjectInfo } from './object-info.js';
import { hasLocalData } from './tier-gateway.js';

export async function headObject(config: SetConfig, bucket: string, key: string, versionId?: string): Promise<ObjectInfo> {
  const resolved = await resolveForRead(config, bucket, key, versionId);
  return toObjectInfo(bucket, key, resolved.version, resolved.isLatest);
}

/** A resolved version and the directory its object lives in on the drives. */
export type ResolvedObject = ResolvedVersion & { dir: string };

/** Metadata of the version to read; a delete marker reads as NoSuchKey (or MethodNotAllowed by id). */
export async function resolveForRead(config: SetConfig, bucket: string, key: string, versionId?: string): Promise<ResolvedObject> {
  const { dir, answers } = await readObjectMeta(config, bucket, key, settleFor(config, versionId));
  const resolved = { ...resolveVersion(answers, config.drives.length, versionId), dir };
  if (resolved.version.deleteMarker) {
    const details = { deleteMarker: true, versionId: resolved.version.versionId, modTimeMs: resolved.version.modTimeMs };
    if (versionId === undefined) throw new SvcError('NoSuchKey', undefined, details);
    throw new SvcError('MethodNotAllowed', 'The specified method is not allowed against a delete marker.', details);
  }
  return resolved;
}

/**
 * A read of the latest version need not wait for every drive: it goes on once the answers settle
 * the vote (and the silent drives had their grace). A read by version id waits for all: whether
 * that version is the latest is judged from every answer.
 */
function settleFor(config: SetConfig, versionId: string | undefined): ((answers: DriveMetaAnswer[], pending: number) => boolean) | undefined {
  if (versionId !== undefined) return undefined;
  const drives = config.drives.length;
  return (answers, pending) => latestVoteSettled(answers, drives, pending);
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

/**
 * A read lock keeps a version's shard files in place while a GET streams them (an overwrite
 * removes the old data directory once it commits). An inline object has no shard files: its
 * bytes are in the xl.meta every drive answered with. So a GET first reads the metadata without
 * the lock, and serves it as read when it is clean: an inline version (not a delete marker) on
 * which every online drive of the set that answered agrees (a drive still silent when the answers
 * settled counts as offline: the version holds its read quorum, K or more drives, so any
 * acknowledged newer write, on a write quorum of drives, would have shown on one of them). A
 * concurrent write publishes its xl.meta drive by drive, so a clean answer is the state before
 * that write or after it, never a mix. Anything
 * else (shard files, drives disagreeing or failing, no such key) is read again under the lock,
 * as before. SPEC asks the object lock of writes, not of reads.
 */
async function resolveInlineWithoutLock(config: SetConfig, bucket: string, key: string, versionId?: string): Promise<ResolvedObject | undefined> {
  const { dir, answers } = await readObjectMeta(config, bucket, key, settleFor(config, versionId));
  const online = (slot: number): boolean => config.drives[slot] !== undefined;
  if (answers.some((answer) => answer.state !== 'found' && online(answer.slot))) return undefined;
  let resolved: ResolvedVersion;
  try {
    resolved = resolveVersion(answers, config.drives.length, versionId);
  } catch {
    return undefined;
  }
  if (resolved.version.deleteMarker || resolved.version.dataDir !== undefined || resolved.version.transition !== undefined || resolved.outdated.some(online)) return undefined;
  return { ...resolved, dir };
}

export async function getObject(config: SetConfig, bucket: string, key: string, options: GetObjectOptions = {}): Promise<ObjectReader> {
  const unlocked = options.lockHeld ? undefined : await resolveInlineWithoutLock(config, bucket, key, options.versionId);
  const release = options.lockHeld || unlocked ? () => undefined : await config.locker.acquire(objectResource(bucket, key), 'read');
  try {
    const resolved = unlocked ?? (await resolveForRead(config, bucket, key, options.versionId));
    const info = toObjectInfo(bucket, key, resolved.version, resolved.isLatest);
    if (info.encryption && options.sealed !== true) {
      throw new SvcError('InvalidRequest', 'The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.', { encryption: info.encryption.kind });
    }
    const storedSizeBytes = resolved.version.sizeBytes;
    const asked = options.prepare?.(info) ?? options.range ?? { offset: 0, length: options.sealed === true ? storedSizeBytes : info.sizeBytes };
    // A compressed version is read as the client's bytes unless the caller takes the stored ones.
    const inflating = info.compression && options.sealed !== true ? compressedRangeOf(info.compression, asked) : undefined;
    const range = inflating ? { offset: inflating.storedOffset, length: inflating.storedLength } : asked;
    if (range.offset < 0 || range.length < 0 || range.offset + range.length > storedSizeBytes) {
      throw new SvcError('InvalidRange', undefined, { offset: range.offset, length: range.length, sizeBytes: storedSizeBytes });
    }
    const local = hasLocalData(resolved.version);
    const stored = local ? releasingBody((releaseOnce) => streamRange(config, bucket, key, resolved, range, releaseOnce), release) : await readFromTier(config, resolved.version, range, release);
    const releaseChunk = local ? (chunk: Uint8Array) => readBuffers.release(chunk) : () => undefined;
    // A read of no bytes has no block to decompress: its stored stream is empty, and read to its end it releases the lock.
    if (inflating && inflating.lengthBytes > 0) return { info, body: decompressStream(stored, info.compression!, inflating, releaseChunk), release: () => undefined };
    return { info, body: stored, release: releaseChunk };
  } catch (error) {
    release();
    throw error;
  }
}

/**
 * A transitioned version's bytes, read through from its tier under the read lock (held until the
 * stream ends, so a delete cannot free the tier's object under a reader).
 */
async function readFromTier(config: SetConfig, version: ObjectVersion, range: { offset: number; length: number }, release: () => void): Promise<AsyncIterable<Uint8Array>> {
  if (!config.tiers) throw new SvcError('TierUnreachable', `the version's data is on tier ${version.transition!.tier}, which this node cannot reach`, { tier: version.transition!.tier });
  const remote = range.length === 0 ? [] : await config.tiers.open(version.transition!, range);
  return (async function* () {
    try {
      yield* remote;
    } finally {
      release();
    }
  })();
}

/**
 * The body of a read, whose lock goes when it ends, fails, or is returned, even returned before
 * its first chunk (a generator returned before it starts never runs its own `finally`): a reader
 * that stops at once (an empty range, a refused key) must not keep the object locked.
 */
function releasingBody(streamOf: (releaseOnce: () => void) => AsyncGenerator<Uint8Array>, release: () => void): AsyncIterable<Uint8Array> {
  let released = false;
  const releaseOnce = (): void => {
    if (released) return;
    released = true;
    release();
  };
  const stream = streamOf(releaseOnce);
  const iterator: AsyncIterator<Uint8Array> = {
    next: () => stream.next(),
    return: async (value?: unknown) => {
      try {
        return await stream.return(value as undefined);
      } finally {
        releaseOnce();
      }
    },
    throw: (error?: unknown) => stream.throw(error),
  };
  return { [Symbol.asyncIterator]: () => iterator };
}

/** One part of one version being read: the shard files opened for it, and the slots found bad. */
interface PartRead {
  config: SetConfig;
  bucket: string;
  key: string;
  resolved: ResolvedObject;
  partNumber: number;
  partSizeBytes: number;
  badSlots: Set<number>;
  /** Each slot's shard file of this part, opened at its first read and closed when the part is done. */
  readers: Map<number, Promise<FileReader>>;
  /** Reads out on each slot's shard file. */
  reading: Map<number, Set<Promise<unknown>>>;
}

async function* streamRange(
  config: SetConfig,
  bucket: string,
  key: string,
  resolved: ResolvedObject,
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
        const read: PartRead = { config, bucket, key, resolved, partNumber: part.number, partSizeBytes: part.sizeBytes, badSlots, readers: new Map(), reading: new Map() };
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

/**
 * Bytes [from, to) of one part, read in runs of whole blocks: one read per shard file per run.
 * The first run is one block, so the first bytes go out soon; later runs are
 * limits.readRunBytes long, and limits.readRunsAhead runs are read from the drives while one is
 * sent.
 */
async function* streamPart(part: PartRead, from: number, to: number): AsyncGenerator<Uint8Array> {
  const blockSize = part.resolved.version.erasure!.blockSizeBytes;
  const firstBlock = Math.floor(from / blockSize);
  const lastBlock = Math.floor((to - 1) / blockSize);
  const runBlocks = Math.max(1, Math.floor(limits.readRunBytes / blockSize));
  const reading: Promise<ReadRun>[] = [];
  let nextBlock = firstBlock;
  const readAhead = (): void => {
    while (reading.length <= limits.readRunsAhead && nextBlock <= lastBlock) {
      const count = nextBlock === firstBlock ? 1 : Math.min(runBlocks, lastBlock - nextBlock + 1);
      const pending = readRun(part, nextBlock, count);
      pending.catch(() => undefined); // observed when awaited
      reading.push(pending);
      nextBlock += count;
    }
  };
  try {
    readAhead();
    while (reading.length > 0) {
      const run: ReadRun = await reading[0]!;
      reading.shift();
      readAhead();
      try {
        for (const [position, block] of run.blocks.entries()) {
          const blockStart = (run.firstBlock + position) * blockSize;
          const views = blockViews(block.dataShards, block.lengthBytes, Math.max(from - blockStart, 0), Math.min(to - blockStart, block.lengthBytes));
          for (const view of views) yield readBuffers.lend(view);
        }
      } finally {
        // The views handed on keep their buffers; the rest (parity, bytes outside the range) go back now.
        for (const buffer of run.buffers) readBuffers.release(buffer);
      }
    }
  } finally {
    await closePart(part, reading);
  }
}

/**
 * Waits out the runs still being read (their buffers go back), then closes the part's shard
 * files: at once where no read is out, and where a late read was left behind (hedged reads), when
 * it ends, without waiting for it.
 */
async function closePart(part: PartRead, reading: Promise<ReadRun>[]): Promise<void> {
  for (const pending of reading) {
    const unsent = await pending.catch(() => undefined);
    for (const buffer of unsent?.buffers ?? []) readBuffers.release(buffer);
  }
  await Promise.all(
    [...part.readers.entries()].map(async ([slot, opening]) => {
      const close = async (): Promise<void> => (await opening.catch(() => undefined))?.close();
      const out = [...(part.reading.get(slot) ?? [])];
      if (out.length > 0) void Promise.allSettled(out).then(close);
      else await close();
    }),
  );
}

/** Consecutive blocks of a part: each one's data shards, and every pooled buffer read for them. */
interface ReadRun {
  firstBlock: number;
  blocks: { dataShards: Uint8Array[]; lengthBytes: number }[];
  buffers: Uint8Array[];
}

/** One slot's verified chunks of a run, and the pooled buffer they are views of (none for inline data). */
interface ShardAnswer {
  chunks: Uint8Array[];
  buffer?: Uint8Array;
}

/**
 * Reads `count` blocks from `firstBlock` on: from K shard files whose chunks all verify, data
 * shards first, parity as needed, and parity also for a shard that is late (hedged reads,
 * shard-hedge.ts). A slot with a chunk missing or corrupt is left for the rest of the GET. Fewer
 * than K good slots fails closed.
 */
async function readRun(part: PartRead, firstBlock: number, count: number): Promise<ReadRun> {
  const erasure = part.resolved.version.erasure!;
  const k = erasure.dataShards;
  const chunks = Array.from({ length: count }, (_, position) => chunkOffsetInShardFile(firstBlock + position, part.partSizeBytes, k, erasure.blockSizeBytes));
  const slotOfShard = new Map<number, number>();
  for (const [slot, version] of part.resolved.holders) if (!part.badSlots.has(slot)) slotOfShard.set(version.erasure!.index, slot);
  const stats = shardReadStatsOf(part.config);
  const nowMs = performance.now();
  const driveOf = (shardIndex: number): Drive => part.config.drives[slotOfShard.get(shardIndex)!]!;
  // Data shards first; a drive that was late just now after every other.
  const byIndex = [...slotOfShard.keys()].sort((a, b) => a - b);
  const order = [...byIndex.filter((index) => !stats.asksLast(driveOf(index), nowMs)), ...byIndex.filter((index) => stats.asksLast(driveOf(index), nowMs))];
  const onDrives = part.resolved.version.inlineData === undefined;
  const delayMs = onDrives ? stats.hedgeDelayMs(order.map(driveOf)) : Infinity;
  const { answers, failed, hedged } = await gatherFirst<ShardAnswer>({
    candidates: order,
    needed: k,
    delayMs,
    read: async (shardIndex) => {
      if (!onDrives) return readShardRun(part, slotOfShard.get(shardIndex)!, chunks);
      const drive = driveOf(shardIndex);
      const started = performance.now();
      stats.asked(drive, started);
      const answer = await readShardRun(part, slotOfShard.get(shardIndex)!, chunks);
      if (answer) stats.answered(drive, performance.now() - started, delayMs);
      return answer;
    },
    onUnused: (answer) => {
      if (answer.buffer) readBuffers.release(answer.buffer);
    },
    onLate: (late) => late.forEach((shardIndex) => stats.wasLate(driveOf(shardIndex))),
  });
  stats.hedgedReads += hedged;
  for (const shardIndex of failed) part.badSlots.add(slotOfShard.get(shardIndex)!);
  const buffers = [...answers.values()].flatMap((answer) => (answer.buffer ? [answer.buffer] : []));
  if (answers.size < k) {
    for (const buffer of buffers) readBuffers.release(buffer);
    throw new SvcError('ErasureReadQuorum', undefined, { bucket: part.bucket, key: part.key, partNumber: part.partNumber, blockIndex: firstBlock, goodShards: answers.size, needed: k });
  }
  const shards: (Uint8Array | null)[][] = chunks.map(() => new Array<Uint8Array | null>(k + erasure.parityShards).fill(null));
  for (const [shardIndex, answer] of answers) answer.chunks.forEach((chunk, block) => (shards[block]![shardIndex - 1] = chunk));
  const blocks = shards.map((blockShards, position) => {
    const lengthBytes = Math.min(erasure.blockSizeBytes, part.partSizeBytes - (firstBlock + position) * erasure.blockSizeBytes);
    const dataComplete = blockShards.slice(0, k).every((shard) => shard !== null);
    const dataShards = dataComplete ? (blockShards.slice(0, k) as Uint8Array[]) : codecFor(erasure.codec, k, erasure.parityShards).reconstruct(blockShards, { dataOnly: true }).slice(0, k);
    return { dataShards, lengthBytes };
  });
  return { firstBlock, blocks, buffers };
}

/**
 * One slot's chunks of consecutive blocks (`chunks`, adjacent in its shard file), verified, read
 * in one call into a pooled buffer; undefined when any is missing or corrupt. A buffer whose read
 * failed is not reused: a call past its deadline may still write into it.
 */
async function readShardRun(part: PartRead, slot: number, chunks: { offset: number; lengthBytes: number }[]): Promise<ShardAnswer | undefined> {
  const version: ObjectVersion = part.resolved.holders.get(slot)!;
  const start = chunks[0]!.offset;
  const last = chunks[chunks.length - 1]!;
  const lengthBytes = last.offset + last.lengthBytes - start;
  if (version.inlineData) {
    const verified = verifiedChunks(version.inlineData.subarray(start, start + lengthBytes), chunks, start, lengthBytes);
    return verified && { chunks: verified };
  }
  let reader: FileReader;
  try {
    reader = await readerOf(part, slot, version);
  } catch {
    return undefined;
  }
  const into = readBuffers.acquire(lengthBytes);
  let framed: Uint8Array;
  try {
    framed = await whileReading(part, slot, reader.read(start, lengthBytes, into));
  } catch {
    readBuffers.forget(into);
    return undefined;
  }
  const verified = verifiedChunks(framed, chunks, start, lengthBytes);
  if (!verified) {
    readBuffers.release(into);
    return undefined;
  }
  return { chunks: verified, buffer: into };
}

/** The chunks' data from their framed bytes (read from `start` on), each bitrot-checked; undefined when any fails. */
function verifiedChunks(framed: Uint8Array, chunks: { offset: number; lengthBytes: number }[], start: number, lengthBytes: number): Uint8Array[] | undefined {
  if (framed.length !== lengthBytes) return undefined;
  const verified: Uint8Array[] = [];
  for (const chunk of chunks) {
    const data = unframeChunk(framed.subarray(chunk.offset - start, chunk.offset - start + chunk.lengthBytes));
    if (!data) return undefined;
    verified.push(data);
  }
  return verified;
}

/** Notes a read on the slot's shard file until it settles, so the file is closed only after it (closePart). */
function whileReading<T>(part: PartRead, slot: number, reading: Promise<T>): Promise<T> {
  let out = part.reading.get(slot);
  if (!out) {
    out = new Set();
    part.reading.set(slot, out);
  }
  const tracked = out;
  tracked.add(reading);
  const forget = (): void => void tracked.delete(reading);
  reading.then(forget, forget);
  return reading;
}

function readerOf(part: PartRead, slot: number, version: ObjectVersion): Promise<FileReader> {
  let reader = part.readers.get(slot);
  if (!reader) {
    reader = part.config.drives[slot]!.openReader(partPathIn(part.resolved.dir, version.dataDir!, part.partNumber));
    reader.catch(() => undefined); // observed by readShardRun
    part.readers.set(slot, reader);
  }
  return reader;
}
