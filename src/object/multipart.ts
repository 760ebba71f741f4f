/**
 * Multipart uploads in one erasure set. An upload lives under
 * `.svc.sys/multipart/<bucket>/<key hash>/<upload id>/` on every drive: `upload.json` (the
 * object's future metadata and geometry), the parts' shard files in `<data-dir>/part.<N>`, and
 * `part.<N>.json` per part. Parts use the object's geometry and write quorum; an uploaded part is
 * not an object: only Complete publishes, under the object lock, with commit quorum.
 */
import { createHash } from 'node:crypto';
import { SvcError, isSvcError } from '../errors/index.js';
import { systemDir, tmpDir, type Drive } from '../drive/index.js';
import type { CompressionInfo, EncryptionInfo, EncryptionKeyRecord, ObjectVersion, StorageClass, XlMeta } from '../format/xl-meta-types.js';
import { multipartCompression } from '../format/compressed-blocks.js';
import { findVersion, upsertVersion } from '../format/xl-meta.js';
import { defaultCodecId } from '../erasure/codecs.js';
import { distributionFor } from '../erasure/layout.js';
import { limits } from '../util/limits.js';
import { BlockReader } from './erasure-stream.js';
import type { DigestAlgorithm, DigestValues } from './coding/digests.js';
import { changeMeta } from './meta-io.js';
import { acquireWriteLock, checkWritePrecondition, type WritePrecondition } from './write-preconditions.js';
import { checkObjectKey } from './paths.js';
import { removeTmp, shardStreamPlan, streamShardFiles } from './put-object.js';
import { geometryForClass, majority, onlineSlots, requireQuorum, type SetConfig } from './set-context.js';
import { toObjectInfo } from './object-info.js';
import type { BucketVersioning, MultipartChecksum, ObjectInfo, ReceivedBody } from './types.js';
import { checkCompletionClaims, checkListedChecksums, objectChecksumOf, type CompletionClaims, type RequestedPart } from './multipart-checksums.js';
import { decodePartRecord, decodeUploadRecord, type PartRecord, type UploadRecord } from './upload-records.js';

export type { PartRecord, UploadRecord } from './upload-records.js';

export function uploadDir(bucket: string, key: string, uploadId: string): string {
  return `${systemDir}/multipart/${bucket}/${createHash('sha256').update(key).digest('hex').slice(0, 32)}/${uploadId}`;
}

export async function createUpload(
  config: SetConfig,
  bucket: string,
  key: string,
  uploadId: string,
  options: { storageClass: StorageClass; contentType?: string; userMetadata?: Record<string, string>; systemMetadata?: Record<string, string>; checksum?: MultipartChecksum; encryption?: EncryptionKeyRecord; compression?: CompressionInfo['algorithm'] },
): Promise<UploadRecord> {
  checkObjectKey(key);
  const geometry = geometryForClass(config, options.storageClass);
  requireQuorum(onlineSlots(config).length, geometry.writeQuorum, 'write', { bucket, key, operation: 'create-multipart-upload' });
  const record: UploadRecord = {
    version: options.compression ? 3 : options.encryption ? 2 : 1, uploadId, bucket, key, initiatedMs: config.clock.nowMs(), storageClass: options.storageClass,
    ...(options.contentType !== undefined ? { contentType: options.contentType } : {}),
    userMetadata: options.userMetadata ?? {}, systemMetadata: options.systemMetadata ?? {},
    dataShards: geometry.dataShards, parityShards: geometry.parityShards,
    distribution: distributionFor(key, config.drives.length), dataDir: config.newId(),
    ...(options.checksum ? { checksum: options.checksum } : {}),
    ...(options.encryption ? { encryption: options.encryption } : {}),
    ...(options.compression ? { compression: options.compression } : {}),
  };
  const bytes = Buffer.from(JSON.stringify(record));
  const written = await onDrives(config, (drive) => drive.writeFileAtomic(`${uploadDir(bucket, key, uploadId)}/upload.json`, bytes));
  if (written.length < geometry.writeQuorum) {
    await onDrives(config, (drive) => drive.deleteRecursive(uploadDir(bucket, key, uploadId)));
    throw new SvcError('ErasureWriteQuorum', undefined, { bucket, key, succeeded: written.length });
  }
  return record;
}

export async function readUpload(config: SetConfig, bucket: string, key: string, uploadId: string): Promise<UploadRecord> {
  const path = `${uploadDir(bucket, key, uploadId)}/upload.json`;
  const records = await readVotes(config, path, decodeUploadRecord);
  const best = records.best;
  if (!best || best.count < Math.min(majority(config), best.record.dataShards)) {
    // Absent only where a majority says so: drives that failed to answer make it a quorum error.
    if (records.missing >= majority(config)) throw new SvcError('NoSuchUpload', undefined, { uploadId });
    throw new SvcError('ErasureReadQuorum', undefined, { uploadId });
  }
  if (best.record.bucket !== bucket || best.record.key !== key) throw new SvcError('NoSuchUpload', undefined, { uploadId });
  return best.record;
}

export async function uploadPart(
  config: SetConfig,
  record: UploadRecord,
  partNumber: number,
  body: AsyncIterable<Uint8Array>,
  options: PartOptions,
): Promise<UploadedPart> {
  if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > limits.maxPartNumber) throw new SvcError('InvalidArgument', `part number must be an integer from 1 to ${limits.maxPartNumber}`);
  const kept = record.checksum?.algorithm;
  const other = options.sentChecksums?.find((algorithm) => algorithm !== kept);
  if (kept !== undefined && other !== undefined) throw new SvcError('InvalidRequest', `Checksum Type mismatch occurred, expected checksum Type: ${kept}, actual checksum Type: ${other}`, { partNumber });
  const quorum = geometryForClass(config, record.storageClass).writeQuorum;
  const reader = new BlockReader(body, config.blockSizeBytes, options.sizeBytes);
  const tmpId = config.newId();
  const transforms = record.encryption !== undefined || record.compression !== undefined;
  if (transforms !== (options.transformed !== undefined)) throw new SvcError('InternalError', 'a part of an encrypted or compressed upload must come sealed or compressed, and only such a part');
  // A transformed part's digests (its ETag's MD5 among them) are taken over the client's bytes by the caller: none of the stored bytes here.
  const algorithms = options.transformed ? [] : [...(options.digests ?? []), ...(kept ? [kept] : [])];
  const plan = { ...shardStreamPlan(config, { dataShards: record.dataShards, parityShards: record.parityShards, writeQuorum: quorum }, record.distribution, algorithms), md5: !options.transformed };
  const { slots, digests } = await streamShardFiles(config, plan, reader, [], `${tmpDir}/${tmpId}/part`, () => removeTmp(config, tmpId));
  try {
    await options.beforeCommit?.({ md5Hex: digests.md5, sizeBytes: reader.totalBytes, digests });
    const shown = options.transformed?.();
    if (shown && ((record.encryption !== undefined) !== (shown.keySalt !== undefined) || (record.compression !== undefined) !== (shown.compressedBlocks !== undefined))) {
      throw new SvcError('InternalError', 'a part was not sealed or compressed as its upload says');
    }
    const client = shown ? shown.digests : digests;
    const part: PartRecord = {
      number: partNumber, sizeBytes: shown?.sizeBytes ?? reader.totalBytes, etag: shown?.etag ?? digests.md5, modTimeMs: config.clock.nowMs(),
      ...(kept ? { checksum: Buffer.from(client[kept]!, 'hex').toString('base64') } : {}),
      ...(shown ? { storedSizeBytes: reader.totalBytes } : {}),
      ...(shown?.keySalt !== undefined ? { keySalt: shown.keySalt } : {}),
      ...(shown?.compressedBlocks ? { compressedBlocks: [...shown.compressedBlocks] } : {}),
    };
    const dir = uploadDir(record.bucket, record.key, record.uploadId);
    const bytes = Buffer.from(JSON.stringify(part));
    const committed = await onDrives(config, async (drive) => {
      await drive.stat(`${dir}/upload.json`);
      await drive.rename(`${tmpDir}/${tmpId}/part`, `${dir}/${record.dataDir}/part.${partNumber}`);
      await drive.writeFileAtomic(`${dir}/part.${partNumber}.json`, bytes);
    }, slots);
    requireQuorum(committed.length, quorum, 'write', { uploadId: record.uploadId, partNumber });
    return { ...part, ...(kept ? { checksumAlgorithm: kept } : {}) };
  } finally {
    await removeTmp(config, tmpId);
  }
}

/** Parts agreed on by enough drives (read quorum K), ascending by number. */
/** A part just stored, with the algorithm of its checksum. */
export type UploadedPart = PartRecord & { checksumAlgorithm?: DigestAlgorithm };

export interface PartOptions {
  sizeBytes?: number;
  digests?: readonly DigestAlgorithm[];
  beforeCommit?: (received: ReceivedBody) => unknown;
  /** The algorithms of the checksums the request carries: one other than the upload's is refused. */
  sentChecksums?: readonly DigestAlgorithm[];
  /**
   * The body is not the client's bytes but what the upload stores of them: compressed blocks
   * and/or sealed packages (src/ops). Called once the body is stored and `beforeCommit` passed, it
   * gives the client's size, ETag and digests (the upload's checksum algorithm among them), the
   * salt of the part's key when sealed and the blocks' stored lengths when compressed.
   */
  transformed?: () => { sizeBytes: number; etag: string; digests: DigestValues; keySalt?: string; compressedBlocks?: readonly number[] };
}

export async function listParts(config: SetConfig, record: UploadRecord): Promise<PartRecord[]> {
  const dir = uploadDir(record.bucket, record.key, record.uploadId);
  const names = new Set<string>();
  await onDrives(config, async (drive) => {
    for (const name of await drive.listDir(dir)) if (/^part\.\d+\.json$/.test(name)) names.add(name);
  });
  const parts: PartRecord[] = [];
  for (const name of names) {
    const votes = await readVotes(config, `${dir}/${name}`, decodePartRecord);
    if (votes.best && votes.best.count >= record.dataShards) parts.push(votes.best.record);
  }
  return parts.sort((a, b) => a.number - b.number);
}

export async function abortUpload(config: SetConfig, record: UploadRecord): Promise<void> {
  await onDrives(config, (drive) => drive.deleteRecursive(uploadDir(record.bucket, record.key, record.uploadId)));
}

export async function completeUpload(
  config: SetConfig,
  record: UploadRecord,
  requested: RequestedPart[],
  versioning: BucketVersioning,
  precondition?: WritePrecondition,
  stated?: CompletionClaims,
): Promise<ObjectInfo> {
  const release = await acquireWriteLock(config, record.bucket, record.key, precondition !== undefined);
  try {
    await checkWritePrecondition(config, record.bucket, record.key, precondition);
    const available = new Map((await listParts(config, record)).map((part) => [part.number, part]));
    const chosen = choosePartsOrFail(requested, available);
    checkListedChecksums(record.checksum, requested, chosen);
    const objectChecksum = objectChecksumOf(record.checksum, chosen);
    const etag = `${createHash('md5').update(Buffer.concat(chosen.map((part) => Buffer.from(part.etag, 'hex')))).digest('hex')}-${chosen.length}`;
    const sizeBytes = chosen.reduce((sum, part) => sum + part.sizeBytes, 0);
    checkCompletionClaims(record.checksum, stated, objectChecksum, sizeBytes);
    const encryption = encryptionOf(record, chosen);
    const compression = compressionOf(record, chosen);
    const version: ObjectVersion = {
      versionId: versioning === 'enabled' ? config.newId() : 'null', modTimeMs: config.clock.nowMs(), deleteMarker: false,
      sizeBytes: chosen.reduce((sum, part) => sum + (part.storedSizeBytes ?? part.sizeBytes), 0), etag,
      ...(record.contentType !== undefined ? { contentType: record.contentType } : {}),
      userMetadata: record.userMetadata, systemMetadata: { ...record.systemMetadata, ...objectChecksum }, storageClass: record.storageClass, dataDir: record.dataDir,
      erasure: { codec: defaultCodecId, dataShards: record.dataShards, parityShards: record.parityShards, blockSizeBytes: config.blockSizeBytes, index: 1, distribution: record.distribution, checksumAlgorithm: 'xxh64' },
      parts: chosen.map((part) => ({ number: part.number, sizeBytes: part.storedSizeBytes ?? part.sizeBytes, etag: part.etag, ...(part.checksum !== undefined ? { checksum: part.checksum } : {}) })),
      ...(encryption ? { encryption } : {}),
      ...(compression ? { compression } : {}),
    };
    const dir = uploadDir(record.bucket, record.key, record.uploadId);
    const unused = [...available.keys()].filter((number) => !chosen.some((part) => part.number === number));
    await changeMeta(config, record.bucket, record.key, onlineSlots(config), {
      prepare: (newest) => {
        if (version.modTimeMs <= newest) version.modTimeMs = newest + 1;
      },
      apply: (meta: XlMeta, slot: number, objectDir: string) => {
        const replaced = findVersion(meta, version.versionId);
        return {
          meta: upsertVersion(meta, { ...version, erasure: { ...version.erasure!, index: record.distribution[slot]! } }),
          beforePublish: async (drive: Drive) => {
            for (const number of unused) await drive.deleteFile(`${dir}/${record.dataDir}/part.${number}`).catch(() => undefined);
            await drive.rename(`${dir}/${record.dataDir}`, `${objectDir}/${record.dataDir}`);
          },
          garbageDataDirs: replaced?.dataDir && replaced.dataDir !== record.dataDir ? [replaced.dataDir] : [],
        };
      },
      undoBeforePublish: (drive: Drive, objectDir: string) => drive.rename(`${objectDir}/${record.dataDir}`, `${dir}/${record.dataDir}`),
    }, geometryForClass(config, record.storageClass).writeQuorum);
    await onDrives(config, (drive) => drive.deleteRecursive(dir));
    return toObjectInfo(record.bucket, record.key, version, true);
  } finally {
    release();
  }
}

/** What a part's stored bytes are the sealing of: its compressed stream when compressed, else the client's bytes. */
function sealedInputBytes(part: PartRecord): number {
  return part.compressedBlocks ? part.compressedBlocks.reduce((sum, length) => sum + length, 0) : part.sizeBytes;
}

/** An encrypted upload's object record: the upload's sealed key, each part's sealed input size and key salt. */
function encryptionOf(record: UploadRecord, chosen: PartRecord[]): EncryptionInfo | undefined {
  if (!record.encryption) return undefined;
  const plainParts = chosen.map((part) => {
    if (part.keySalt === undefined || part.storedSizeBytes === undefined) throw new SvcError('InternalError', `part ${part.number} of an encrypted upload was stored unsealed`, { partNumber: part.number });
    return { number: part.number, sizeBytes: sealedInputBytes(part), keySalt: part.keySalt };
  });
  return { ...record.encryption, plainSizeBytes: plainParts.reduce((sum, part) => sum + part.sizeBytes, 0), plainParts };
}

/** A compressed upload's object record (parts compressed one by one), or none when no block of any part shrank. */
function compressionOf(record: UploadRecord, chosen: PartRecord[]): CompressionInfo | undefined {
  if (!record.compression) return undefined;
  return multipartCompression(
    chosen.map((part) => {
      if (!part.compressedBlocks) throw new SvcError('InternalError', `part ${part.number} of a compressed upload was stored uncompressed`, { partNumber: part.number });
      return { number: part.number, plainSizeBytes: part.sizeBytes, blocks: part.compressedBlocks };
    }),
  );
}

function choosePartsOrFail(requested: { number: number; etag: string }[], available: Map<number, PartRecord>): PartRecord[] {
  if (requested.length === 0) throw new SvcError('MalformedXML', 'CompleteMultipartUpload lists no parts');
  const chosen: PartRecord[] = [];
  for (const [index, item] of requested.entries()) {
    if (index > 0 && item.number <= requested[index - 1]!.number) throw new SvcError('InvalidPartOrder');
    const part = available.get(item.number);
    if (!part || part.etag !== item.etag.replace(/"/g, '')) throw new SvcError('InvalidPart', `part ${item.number} was not uploaded or its ETag does not match`, { partNumber: item.number });
    chosen.push(part);
  }
  chosen.forEach((part, index) => {
    if (index < chosen.length - 1 && part.sizeBytes < limits.minPartSizeBytes) throw new SvcError('EntityTooSmall', `part ${part.number} is ${part.sizeBytes} bytes; every part but the last must be at least 5 MiB`, { partNumber: part.number });
  });
  return chosen;
}

/** Uploads of a bucket found on the set's drives (each listed once). */
export async function listUploads(config: SetConfig, bucket: string): Promise<UploadRecord[]> {
  // An upload is listed only where as many drives hold it as readUpload needs: a copy left on the
  // drives of a node cut off while the upload was completed or aborted elsewhere is not one.
  const found = new Map<string, { record: UploadRecord; copies: number }>();
  await onDrives(config, async (drive) => {
    const base = `${systemDir}/multipart/${bucket}`;
    for (const hash of await drive.listDir(base).catch(() => [] as string[])) {
      for (const id of await drive.listDir(`${base}/${hash.slice(0, -1)}`).catch(() => [] as string[])) {
        try {
          const record = decodeUploadRecord(Buffer.from(await drive.readFile(`${base}/${hash.slice(0, -1)}/${id.slice(0, -1)}/upload.json`)).toString());
          const entry = found.get(record.uploadId) ?? { record, copies: 0 };
          entry.copies += 1;
          found.set(record.uploadId, entry);
        } catch {
          // incomplete, removed meanwhile, or refused by its decoder: this drive's copy casts no vote
        }
      }
    }
  });
  return [...found.values()].filter((entry) => entry.copies >= Math.min(majority(config), entry.record.dataShards)).map((entry) => entry.record);
}

/** An upload's directory found on some drives of a set, its record below the quorum reading it needs. */
export interface UploadLeftover {
  /** The directory (uploadDir's path). */
  dir: string;
  uploadId: string;
  /** Slots of the drives that hold it. */
  slots: number[];
  /** The upload's key, when a copy of its record could be read. */
  key?: string;
}

/**
 * Uploads of a bucket whose directories a minority of the set's drives still hold while a
 * majority answer that the upload is not there: an upload completed or aborted while those drives
 * were cut off (or out of their node's reach), or a Create refused below quorum whose rollback
 * missed them. Such a copy is never listed or read (readUpload and listUploads need a quorum of
 * copies), and nothing else removes it. An upload being created looks the same for a moment (its
 * record reaches the drives one by one), so a leftover is removed only when a second look, at
 * least one drive deadline later, still finds it so (`removeUploadLeftovers`).
 */
export async function findUploadLeftovers(config: SetConfig, bucket: string): Promise<UploadLeftover[]> {
  const base = `${systemDir}/multipart/${bucket}`;
  const holders = new Map<string, { uploadId: string; slots: number[] }>();
  await Promise.all(onlineSlots(config).map(async (slot) => {
    const drive = config.drives[slot]!;
    for (const hash of await drive.listDir(base).catch(() => [] as string[])) {
      if (!hash.endsWith('/')) continue;
      for (const id of await drive.listDir(`${base}/${hash.slice(0, -1)}`).catch(() => [] as string[])) {
        if (!id.endsWith('/')) continue;
        const dir = `${base}/${hash.slice(0, -1)}/${id.slice(0, -1)}`;
        const entry = holders.get(dir) ?? { uploadId: id.slice(0, -1), slots: [] };
        entry.slots.push(slot);
        holders.set(dir, entry);
      }
    }
  }));
  const leftovers: UploadLeftover[] = [];
  for (const [dir, { uploadId, slots }] of holders) {
    const votes = await readVotes(config, `${dir}/upload.json`, decodeUploadRecord);
    const best = votes.best;
    if (best && best.count >= Math.min(majority(config), best.record.dataShards)) continue;
    if (votes.missing < majority(config)) continue; // too few drives answered to say it is gone
    leftovers.push({ dir, uploadId, slots: slots.sort((a, b) => a - b), ...(best ? { key: best.record.key } : {}) });
  }
  return leftovers.sort((a, b) => (a.dir < b.dir ? -1 : a.dir > b.dir ? 1 : 0));
}

/**
 * Looks again at leftovers found earlier (findUploadLeftovers) and removes those still left over
 * from the drives that hold them (unless `dryRun`); returns them. The caller makes sure the first
 * look is at least a drive deadline old, so a Create in flight then has ended since.
 */
export async function removeUploadLeftovers(config: SetConfig, bucket: string, earlier: UploadLeftover[], dryRun: boolean): Promise<UploadLeftover[]> {
  if (earlier.length === 0) return [];
  const seen = new Set(earlier.map((leftover) => leftover.dir));
  const still = (await findUploadLeftovers(config, bucket)).filter((leftover) => seen.has(leftover.dir));
  if (!dryRun) {
    for (const leftover of still) {
      await Promise.all(leftover.slots.map((slot) => config.drives[slot]?.deleteRecursive(leftover.dir).catch(() => undefined)));
    }
  }
  return still;
}

async function onDrives(config: SetConfig, action: (drive: Drive) => Promise<void>, slots?: number[]): Promise<number[]> {
  const chosen = slots ?? onlineSlots(config);
  const results = await Promise.all(
    chosen.map(async (slot) => {
      try {
        await action(config.drives[slot]!);
        return slot;
      } catch {
        return undefined;
      }
    }),
  );
  return results.filter((slot): slot is number => slot !== undefined);
}

/** The copies of a record on the set's drives, by identical text; a copy its decoder refuses casts no vote. */
async function readVotes<T>(config: SetConfig, path: string, decode: (text: string) => T): Promise<{ best?: { record: T; count: number }; missing: number }> {
  const counts = new Map<string, { record: T; count: number }>();
  let missing = 0;
  await Promise.all(
    config.drives.map(async (drive) => {
      if (!drive) return;
      try {
        const text = Buffer.from(await drive.readFile(path)).toString('utf8');
        const entry = counts.get(text) ?? { record: decode(text), count: 0 };
        entry.count += 1;
        counts.set(text, entry);
      } catch (error) {
        if (isSvcError(error, 'FileNotFound')) missing += 1;
      }
    }),
  );
  const best = [...counts.values()].sort((a, b) => b.count - a.count)[0];
  return { ...(best ? { best } : {}), missing };
}
