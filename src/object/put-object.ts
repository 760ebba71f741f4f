/**
 * PUT of a whole object into one erasure set: stream, erasure-code and frame each 1 MiB block
 * into a tmp area on every drive, then publish (rename data, write xl.meta) under the object's
 * write lock with write quorum, or leave nothing behind.
 */
import type { ObjectVersion, XlMeta } from '../format/xl-meta-types.js';
import { upsertVersion, findVersion } from '../format/xl-meta.js';
import { codecFor, defaultCodecId } from '../erasure/codecs.js';
import { distributionFor } from '../erasure/layout.js';
import { inlineShardBudgetBytes, isInline } from '../erasure/geometry.js';
import { tmpDir, type Drive } from '../drive/index.js';
import type { ErasureCodec } from '../erasure/codec.js';
import { SvcError } from '../errors/index.js';
import { BlockReader, encodeBlockForSlots, SlotWriters } from './erasure-stream.js';
import { changeMeta } from './meta-io.js';
import { objectResource } from './locks.js';
import { checkObjectKey, dataDirPath } from './paths.js';
import { geometryForClass, onlineSlots, requireQuorum, type Geometry, type SetConfig } from './set-context.js';
import type { ObjectInfo, PutObjectOptions } from './types.js';
import { toObjectInfo } from './object-info.js';

/** What the data phase produced, ready to be published. */
interface StagedData {
  sizeBytes: number;
  md5Hex: string;
  /** Slots holding a complete tmp copy (streamed) or every online slot (inline). */
  slots: number[];
  /** Per-slot framed shard file when inline. */
  inlineFrames?: Uint8Array[];
  /** tmp directory name (streamed data). */
  tmpId?: string;
}

export async function putObject(
  config: SetConfig,
  bucket: string,
  key: string,
  body: AsyncIterable<Uint8Array>,
  options: PutObjectOptions,
): Promise<ObjectInfo> {
  checkObjectKey(key);
  const geometry = geometryForClass(config, options.storageClass);
  requireQuorum(onlineSlots(config).length, geometry.writeQuorum, 'write', { bucket, key });
  const distribution = distributionFor(key, config.drives.length);
  const staged = await stageData(config, geometry, distribution, body, options);
  try {
    const extra = (await options.beforeCommit?.({ md5Hex: staged.md5Hex, sizeBytes: staged.sizeBytes })) ?? {};
    requireQuorum(staged.slots.length, geometry.writeQuorum, 'write', { bucket, key });
    const version = newVersion(config, geometry, distribution, staged, options, extra);
    await publish(config, bucket, key, version, staged, geometry.writeQuorum, { bumpModTime: options.modTimeMs === undefined, lockHeld: options.lockHeld ?? false });
    return toObjectInfo(bucket, key, version, true);
  } finally {
    if (staged.tmpId) await removeTmp(config, staged.tmpId);
  }
}

async function stageData(
  config: SetConfig,
  geometry: Geometry,
  distribution: number[],
  body: AsyncIterable<Uint8Array>,
  options: PutObjectOptions,
): Promise<StagedData> {
  const codec = codecFor(defaultCodecId, geometry.dataShards, geometry.parityShards);
  const reader = new BlockReader(body, config.blockSizeBytes, options.sizeBytes);
  const first = await reader.next();
  const second = first && first.length === config.blockSizeBytes ? await reader.next() : undefined;
  const budget = inlineShardBudgetBytes({
    dataShards: geometry.dataShards,
    versioned: options.versioning !== 'unversioned',
    inlineBlockOverrideBytes: config.inlineBlockOverrideBytes,
  });
  if (!second && isInline(first?.length ?? 0, geometry.dataShards, budget)) {
    const inlineFrames = first ? encodeBlockForSlots(codec, first, distribution) : distribution.map(() => new Uint8Array(0));
    await reader.next(); // verifies the declared size
    return { sizeBytes: reader.totalBytes, md5Hex: reader.md5Hex(), slots: onlineSlots(config), inlineFrames };
  }
  const tmpId = config.newId();
  const slots = await streamShardFiles(config, codec, distribution, reader, [first, second], `${tmpDir}/${tmpId}/part.1`, geometry.writeQuorum, () => removeTmp(config, tmpId));
  return { sizeBytes: reader.totalBytes, md5Hex: reader.md5Hex(), slots, tmpId };
}

/**
 * Erasure-codes the rest of a stream (after `pending` blocks already read) into one shard file
 * per drive at `path`. Returns the slots that hold a complete copy; below `quorum` it aborts,
 * runs `cleanup` and fails with ErasureWriteQuorum.
 */
export async function streamShardFiles(
  config: SetConfig,
  codec: ErasureCodec,
  distribution: number[],
  reader: BlockReader,
  pending: (Uint8Array | undefined)[],
  path: string,
  quorum: number,
  cleanup: () => Promise<void>,
): Promise<number[]> {
  const writers = new SlotWriters(await openWriters(config, path));
  // One block is written while the next one is received and coded: the network and the drives
  // work at the same time, and at most two blocks per stream are in memory.
  let inFlight: Promise<void> = Promise.resolve();
  try {
    const write = async (block: Uint8Array): Promise<void> => {
      const frames = encodeBlockForSlots(codec, block, distribution);
      await inFlight;
      requireQuorum(writers.aliveCount, quorum, 'write', { phase: 'data' });
      inFlight = writers.writeAll(frames);
    };
    for (const block of pending) if (block) await write(block);
    for (let block = await reader.next(); block; block = await reader.next()) await write(block);
    await inFlight;
    requireQuorum(writers.aliveCount, quorum, 'write', { phase: 'data' });
    await writers.closeAll();
    requireQuorum(writers.aliveCount, quorum, 'write', { phase: 'data' });
  } catch (error) {
    await inFlight.catch(() => undefined);
    await writers.abortAll();
    await cleanup();
    throw error;
  }
  return writers.aliveSlots();
}

async function openWriters(config: SetConfig, path: string) {
  return Promise.all(
    config.drives.map(async (drive) => {
      if (!drive) return undefined;
      try {
        return await drive.openWriter(path);
      } catch {
        return undefined;
      }
    }),
  );
}

function newVersion(
  config: SetConfig,
  geometry: Geometry,
  distribution: number[],
  staged: StagedData,
  options: PutObjectOptions,
  extra: Record<string, string>,
): ObjectVersion {
  const versionId = options.versionId ?? (options.versioning === 'enabled' ? config.newId() : 'null');
  return {
    versionId,
    modTimeMs: options.modTimeMs ?? config.clock.nowMs(),
    deleteMarker: false,
    sizeBytes: staged.sizeBytes,
    etag: options.etag ?? staged.md5Hex,
    ...(options.contentType !== undefined ? { contentType: options.contentType } : {}),
    userMetadata: options.userMetadata ?? {},
    systemMetadata: { ...(options.systemMetadata ?? {}), ...extra },
    storageClass: options.storageClass,
    ...(staged.inlineFrames ? {} : { dataDir: config.newId() }),
    erasure: {
      codec: defaultCodecId,
      dataShards: geometry.dataShards,
      parityShards: geometry.parityShards,
      blockSizeBytes: config.blockSizeBytes,
      index: 1,
      distribution,
      checksumAlgorithm: 'xxh64',
    },
    parts: [{ number: 1, sizeBytes: staged.sizeBytes, etag: staged.md5Hex }],
  };
}

/** Publishes a version on every staged slot under the object's write lock. */
async function publish(config: SetConfig, bucket: string, key: string, version: ObjectVersion, staged: StagedData, quorum: number, options: { bumpModTime: boolean; lockHeld: boolean }): Promise<void> {
  const bumpModTime = options.bumpModTime;
  const release = options.lockHeld ? () => undefined : await config.locker.acquire(objectResource(bucket, key), 'write');
  try {
    const result = await changeMeta(config, bucket, key, staged.slots, {
      prepare: (newest) => {
        if (bumpModTime && version.modTimeMs <= newest) version.modTimeMs = newest + 1;
      },
      apply: (meta: XlMeta, slot: number) => {
        const replaced = findVersion(meta, version.versionId);
        const own: ObjectVersion = {
          ...version,
          erasure: { ...version.erasure!, index: version.erasure!.distribution[slot]! },
          ...(staged.inlineFrames ? { inlineData: staged.inlineFrames[slot]! } : {}),
        };
        return {
          meta: upsertVersion(meta, own),
          ...(staged.tmpId ? { beforePublish: (drive: Drive) => drive.rename(`${tmpDir}/${staged.tmpId}`, dataDirPath(bucket, key, version.dataDir!)) } : {}),
          garbageDataDirs: replaced?.dataDir && replaced.dataDir !== version.dataDir ? [replaced.dataDir] : [],
        };
      },
      ...(version.dataDir ? { undoBeforePublish: (drive: Drive) => drive.deleteRecursive(dataDirPath(bucket, key, version.dataDir!)) } : {}),
    }, quorum);
    const missed = config.drives.map((_, slot) => slot).filter((slot) => !result.committedSlots.includes(slot));
    if (missed.length > 0) config.onRepairNeeded?.({ bucket, key, versionId: version.versionId, reason: 'write-partial', slots: missed });
  } catch (error) {
    if (error instanceof SvcError) throw error;
    throw new SvcError('InternalError', String(error), {}, { cause: error });
  } finally {
    release();
  }
}

export async function removeTmp(config: SetConfig, tmpId: string): Promise<void> {
  await Promise.all(config.drives.map((drive) => drive?.deleteRecursive(`${tmpDir}/${tmpId}`).catch(() => undefined)));
}
