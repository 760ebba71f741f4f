/**
 * PUT of a whole object into one erasure set: stream, erasure-code and frame each 1 MiB block
 * into a tmp area on every drive, then publish (rename data, write xl.meta) under the object's
 * write lock with write quorum, or leave nothing behind.
 */
import type { ObjectPart, ObjectVersion, XlMeta } from '../format/xl-meta-types.js';
import { upsertVersion, findVersion } from '../format/xl-meta.js';
import { codecFor, defaultCodecId } from '../erasure/codecs.js';
import { distributionFor } from '../erasure/layout.js';
import { inlineShardBudgetBytes, isInline } from '../erasure/geometry.js';
import { tmpDir, type Drive } from '../drive/index.js';
import { SvcError } from '../errors/index.js';
import { BlockReader, pipeBlocks, SlotWriters, type ReadBlock, type ShardStreamPlan } from './erasure-stream.js';
import { mainThreadCoding } from './coding/coding.js';
import { codeBlockInto, newFrames } from './coding/block-coder.js';
import { BodyDigests, type DigestAlgorithm, type DigestValues } from './coding/digests.js';
import { changeMeta } from './meta-io.js';
import { acquireWriteLock, checkWritePrecondition, type WritePrecondition } from './write-preconditions.js';
import { checkObjectKey } from './paths.js';
import { geometryForClass, onlineSlots, requireQuorum, type Geometry, type SetConfig } from './set-context.js';
import type { ObjectInfo, PutObjectOptions } from './types.js';
import { toObjectInfo } from './object-info.js';
import { PartSplitter } from './part-splitter.js';

/** What the data phase produced, ready to be published. */
interface StagedData {
  sizeBytes: number;
  digests: DigestValues;
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
    const extra = (await options.beforeCommit?.({ md5Hex: staged.digests.md5, sizeBytes: staged.sizeBytes, digests: staged.digests })) ?? {};
    requireQuorum(staged.slots.length, geometry.writeQuorum, 'write', { bucket, key });
    const version = newVersion(config, geometry, distribution, staged, options, extra);
    await publish(config, bucket, key, version, staged, geometry.writeQuorum, { bumpModTime: options.modTimeMs === undefined, lockHeld: options.lockHeld ?? false, ...(options.precondition ? { precondition: options.precondition } : {}) });
    return toObjectInfo(bucket, key, version, true);
  } finally {
    if (staged.tmpId) await removeTmp(config, staged.tmpId);
  }
}

/**
 * Receives the body: an object whose shards fit the inline budget is coded here and kept for
 * xl.meta; anything larger streams to shard files in the drives' tmp areas. A body of unknown
 * length is read a block or two ahead to tell which it is.
 */
async function stageData(
  config: SetConfig,
  geometry: Geometry,
  distribution: number[],
  body: AsyncIterable<Uint8Array>,
  options: PutObjectOptions,
): Promise<StagedData> {
  const k = geometry.dataShards;
  const algorithms = options.digests ?? [];
  const md5 = options.skipStoredMd5 !== true;
  if (options.parts && !(options.parts.length === 1 && options.parts[0]!.number === 1)) return stageParts(config, geometry, distribution, body, options.parts, algorithms);
  const reader = new BlockReader(body, config.blockSizeBytes, options.sizeBytes);
  const budget = inlineShardBudgetBytes({ dataShards: k, versioned: options.versioning !== 'unversioned', inlineBlockOverrideBytes: config.inlineBlockOverrideBytes });
  if (options.sizeBytes !== undefined && isInline(options.sizeBytes, k, budget)) {
    const block = await reader.next();
    await reader.next(); // verifies the declared size
    return stageInline(config, geometry, distribution, block, { algorithms, md5 }, reader.totalBytes);
  }
  const plan = { ...shardStreamPlan(config, geometry, distribution, algorithms), md5 };
  const { coding } = plan;
  const pending: ReadBlock[] = [];
  const readAhead = async (): Promise<number> => {
    const buffers = coding.acquireBuffers(config.blockSizeBytes, k, config.drives.length);
    const block = await reader.next(buffers.block);
    if (block) pending.push({ buffers, lengthBytes: block.length });
    else coding.releaseBuffers(buffers);
    return block?.length ?? 0;
  };
  if ((await readAhead()) === config.blockSizeBytes) await readAhead();
  if (pending.length <= 1 && isInline(pending[0]?.lengthBytes ?? 0, k, budget)) {
    const block = pending[0] ? pending[0].buffers.block.subarray(0, pending[0].lengthBytes) : undefined;
    const staged = stageInline(config, geometry, distribution, block, { algorithms, md5 }, reader.totalBytes);
    if (pending[0]) coding.releaseBuffers(pending[0].buffers);
    return staged;
  }
  const tmpId = config.newId();
  const { slots, digests } = await streamShardFiles(config, plan, reader, pending, `${tmpDir}/${tmpId}/part.1`, () => removeTmp(config, tmpId));
  return { sizeBytes: reader.totalBytes, digests, slots, tmpId };
}

/**
 * Data movement of a multipart object: each part of the body goes to its own shard files
 * (`part.<N>`), as its upload wrote it. The slots kept are those that hold every part.
 */
async function stageParts(config: SetConfig, geometry: Geometry, distribution: number[], body: AsyncIterable<Uint8Array>, parts: readonly ObjectPart[], algorithms: readonly DigestAlgorithm[]): Promise<StagedData> {
  const tmpId = config.newId();
  const digests = new BodyDigests(algorithms);
  const source = new PartSplitter(body, (chunk) => digests.update(chunk));
  const plan = shardStreamPlan(config, geometry, distribution, []);
  let slots = onlineSlots(config);
  let sizeBytes = 0;
  try {
    for (const part of parts) {
      const reader = new BlockReader(source.take(part.sizeBytes), config.blockSizeBytes, part.sizeBytes);
      const written = await streamShardFiles(config, plan, reader, [], `${tmpDir}/${tmpId}/part.${part.number}`, () => removeTmp(config, tmpId));
      slots = slots.filter((slot) => written.slots.includes(slot));
      requireQuorum(slots.length, geometry.writeQuorum, 'write', { phase: 'data', partNumber: part.number });
      sizeBytes += reader.totalBytes;
    }
    await source.end();
  } catch (error) {
    await removeTmp(config, tmpId);
    throw error;
  }
  return { sizeBytes, digests: digests.finish(), slots, tmpId };
}

/** Codes an inline object's one block (or none) here, into frames xl.meta will keep. */
function stageInline(config: SetConfig, geometry: Geometry, distribution: number[], block: Uint8Array | undefined, wanted: { algorithms: readonly DigestAlgorithm[]; md5: boolean }, sizeBytes: number): StagedData {
  const digests = new BodyDigests(wanted.algorithms, { md5: wanted.md5 });
  let inlineFrames: Uint8Array[] = distribution.map(() => new Uint8Array(0));
  if (block) {
    const codec = codecFor(defaultCodecId, geometry.dataShards, geometry.parityShards);
    digests.update(block);
    const framed = codeBlockInto(codec, block, newFrames(block.length, codec));
    inlineFrames = distribution.map((shardIndex) => framed[shardIndex - 1]!);
  }
  return { sizeBytes, digests: digests.finish(), slots: onlineSlots(config), inlineFrames };
}

/** How this set streams a body of the given geometry into shard files. */
export function shardStreamPlan(
  config: SetConfig,
  geometry: Pick<Geometry, 'dataShards' | 'parityShards' | 'writeQuorum'>,
  distribution: number[],
  algorithms: readonly DigestAlgorithm[],
): ShardStreamPlan {
  return {
    coding: config.coding ?? mainThreadCoding,
    dataShards: geometry.dataShards,
    parityShards: geometry.parityShards,
    blockSizeBytes: config.blockSizeBytes,
    distribution,
    algorithms,
    quorum: geometry.writeQuorum,
  };
}

/**
 * Erasure-codes the rest of a stream (after `pending` blocks already read) into one shard file
 * per drive at `path`. Returns the slots that hold a complete copy and the body's digests; below
 * the plan's quorum it aborts, runs `cleanup` and fails with ErasureWriteQuorum.
 */
export async function streamShardFiles(
  config: SetConfig,
  plan: ShardStreamPlan,
  reader: BlockReader,
  pending: ReadBlock[],
  path: string,
  cleanup: () => Promise<void>,
): Promise<{ slots: number[]; digests: DigestValues }> {
  const writers = new SlotWriters(await openWriters(config, path));
  try {
    const digests = await pipeBlocks(plan, reader, pending, writers);
    await writers.closeAll();
    requireQuorum(writers.aliveCount, plan.quorum, 'write', { phase: 'data' });
    return { slots: writers.aliveSlots(), digests };
  } catch (error) {
    await writers.abortAll();
    await cleanup();
    throw error;
  }
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
  const sealing = options.sealing?.();
  const encryption = sealing?.encryption ?? options.encryption;
  const compressing = options.compressing?.();
  const compression = compressing ? compressing.compression : options.compression;
  const etag = options.etag ?? sealing?.etag ?? compressing?.etag ?? staged.digests.md5;
  if (etag === '' && options.skipStoredMd5 === true) throw new SvcError('InternalError', 'the stored bytes\' MD5 was left out, and the caller gave no ETag');
  return {
    versionId,
    modTimeMs: options.modTimeMs ?? config.clock.nowMs(),
    deleteMarker: false,
    sizeBytes: staged.sizeBytes,
    etag,
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
    parts: partsOf(options.parts, staged.sizeBytes) ?? [{ number: 1, sizeBytes: staged.sizeBytes, etag: encryption || compression || options.skipStoredMd5 === true ? etag : staged.digests.md5 }],
    ...(encryption ? { encryption } : {}),
    ...(compression ? { compression } : {}),
  };
}

/** The part list a moved object keeps, checked against the bytes stored. */
function partsOf(parts: readonly ObjectPart[] | undefined, storedSizeBytes: number): ObjectPart[] | undefined {
  if (!parts) return undefined;
  if (parts.reduce((sum, part) => sum + part.sizeBytes, 0) !== storedSizeBytes) throw new SvcError('InternalError', 'the parts kept do not add up to the bytes stored');
  return parts.map((part) => ({ ...part }));
}

/** Publishes a version on every staged slot under the object's write lock. */
async function publish(config: SetConfig, bucket: string, key: string, version: ObjectVersion, staged: StagedData, quorum: number, options: { bumpModTime: boolean; lockHeld: boolean; precondition?: WritePrecondition }): Promise<void> {
  const bumpModTime = options.bumpModTime;
  const release = options.lockHeld ? () => undefined : await acquireWriteLock(config, bucket, key, options.precondition !== undefined);
  try {
    await checkWritePrecondition(config, bucket, key, options.precondition);
    const result = await changeMeta(config, bucket, key, staged.slots, {
      prepare: (newest) => {
        if (bumpModTime && version.modTimeMs <= newest) version.modTimeMs = newest + 1;
      },
      apply: (meta: XlMeta, slot: number, dir: string) => {
        const replaced = findVersion(meta, version.versionId);
        const own: ObjectVersion = {
          ...version,
          erasure: { ...version.erasure!, index: version.erasure!.distribution[slot]! },
          ...(staged.inlineFrames ? { inlineData: staged.inlineFrames[slot]! } : {}),
        };
        return {
          meta: upsertVersion(meta, own),
          ...(staged.tmpId ? { beforePublish: (drive: Drive) => drive.rename(`${tmpDir}/${staged.tmpId}`, `${dir}/${version.dataDir!}`) } : {}),
          garbageDataDirs: replaced?.dataDir && replaced.dataDir !== version.dataDir ? [replaced.dataDir] : [],
        };
      },
      ...(version.dataDir ? { undoBeforePublish: (drive: Drive, dir: string) => drive.deleteRecursive(`${dir}/${version.dataDir!}`) } : {}),
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
