/**
 * Heal of one object in one erasure set: every version the set's metadata vote trusts is brought
 * back onto every online drive of the set. Under the object's write lock:
 *
 * 1. xl.meta is read from every drive; each version id seen is resolved by the same vote reads
 *    use. A version most drives positively lack is dangling (left by a failed write or an
 *    interrupted delete): `remove` deletes it from the drives that still hold it.
 * 2. Each drive is classified: offline, missing (no xl.meta), corrupt (undecodable xl.meta or a
 *    shard that fails its check), outdated (lacks a trusted version), or ok. A normal scan checks
 *    that shard files exist with the right size; a deep scan verifies every bitrot hash.
 * 3. Each version is rebuilt block by block from K good shards (bitrot-verified as they are
 *    read) onto the drives that lack it: an outdated drive's outvoted copy (its data dir) is
 *    deleted first, so a full drive has the room; shard files go to tmp and are renamed into
 *    place, then xl.meta is written. Fewer than K good shards, zero parity, or a stored geometry that does
 *    not fit the set are refused with the reason; nothing is changed then.
 */
import { randomUUID } from 'node:crypto';
import { isSvcError, SvcError } from '../errors/index.js';
import { tmpDir, type Drive, type FileWriter } from '../drive/index.js';
import type { ObjectVersion, XlMeta } from '../format/xl-meta-types.js';
import { encodeXlMeta } from '../format/xl-meta.js';
import { codecFor } from '../erasure/codecs.js';
import { frameChunk, unframeChunk } from '../erasure/bitrot.js';
import { chunkOffsetInShardFile, framesSound, shardFileSizeBytes } from '../erasure/layout.js';
import { objectResource } from './locks.js';
import { readObjectMeta, removeDataDir } from './meta-io.js';
import { partPathIn, xlMetaPathIn } from './paths.js';
import { resolveVersion, type DriveMetaAnswer } from './quorum.js';
import type { SetConfig } from './set-context.js';
import { hasLocalData } from './tier-gateway.js';

export type SlotHealth = 'ok' | 'missing' | 'corrupt' | 'outdated' | 'offline';

export interface HealObjectOptions {
  /** Report only. */
  dryRun?: boolean;
  /** Delete versions a quorum agrees are dangling (they can never be read again). */
  remove?: boolean;
  /** Rewrite every online drive's copy, healthy or not. */
  recreate?: boolean;
  /** `deep` verifies every bitrot hash of every shard; `normal` checks presence and size. */
  scanMode?: 'normal' | 'deep';
  /** The caller holds the object's write lock. */
  lockHeld?: boolean;
}

export type HealOutcome = 'healthy' | 'healed' | 'would-heal' | 'unrecoverable' | 'absent';

export interface HealObjectResult {
  bucket: string;
  key: string;
  outcome: HealOutcome;
  reason?: string;
  before: SlotHealth[];
  after: SlotHealth[];
  /** Shard copies (version x drive) written. */
  shardsHealed: number;
  /** Dangling versions removed (with `remove`) or found (without). */
  danglingRemoved: number;
  danglingFound: number;
}

interface VersionPlan {
  version: ObjectVersion;
  /** Slots holding an agreeing copy of the metadata, with their copy. */
  holders: Map<number, ObjectVersion>;
  /** Holders whose shards passed the scan. */
  good: Set<number>;
}

interface Assessment {
  /** The object's directory on the drives (encoded, or where an older layout put it). */
  dir: string;
  answers: DriveMetaAnswer[];
  plans: VersionPlan[];
  dangling: string[];
  health: SlotHealth[];
  refusal?: string;
}

export async function healObject(config: SetConfig, bucket: string, key: string, options: HealObjectOptions = {}): Promise<HealObjectResult> {
  const release = options.lockHeld ? () => undefined : await config.locker.acquire(objectResource(bucket, key), 'write');
  try {
    const before = await assess(config, bucket, key, options.scanMode ?? 'normal');
    const result: HealObjectResult = {
      bucket,
      key,
      outcome: 'healthy',
      before: before.health,
      after: before.health,
      shardsHealed: 0,
      danglingRemoved: 0,
      danglingFound: before.dangling.length,
    };
    if (before.refusal) return { ...result, outcome: 'unrecoverable', reason: before.refusal };
    if (before.plans.length === 0 && before.dangling.length === 0) return { ...result, outcome: 'absent' };
    if (before.plans.length === 0 && !options.remove) {
      // Most drives positively lack every version left: it can never be read again.
      return { ...result, outcome: 'unrecoverable', reason: `${before.dangling.length} version(s) held by too few drives to be read again (dangling); heal with remove to delete them` };
    }
    const targets = targetSlots(config, before, options.recreate ?? false);
    const needsWork = targets.size > 0 || (options.remove === true && before.dangling.length > 0);
    if (!needsWork) return result;
    const refusal = unrecoverableReason(config, before, targets);
    if (refusal) return { ...result, outcome: 'unrecoverable', reason: refusal };
    if (options.dryRun) return { ...result, outcome: 'would-heal' };

    result.shardsHealed = await rebuild(config, bucket, key, before, targets, options.remove === true);
    if (options.remove) result.danglingRemoved = before.dangling.length;
    const after = await assess(config, bucket, key, options.scanMode ?? 'normal');
    result.after = after.health;
    result.outcome = 'healed';
    return result;
  } finally {
    release();
  }
}

// --- assessment ------------------------------------------------------------------------------

async function assess(config: SetConfig, bucket: string, key: string, scanMode: 'normal' | 'deep'): Promise<Assessment> {
  const setDriveCount = config.drives.length;
  const { dir, answers } = await readObjectMeta(config, bucket, key);
  const ids = new Set<string>();
  for (const answer of answers) if (answer.state === 'found') for (const version of answer.meta.versions) ids.add(version.versionId);
  const plans: VersionPlan[] = [];
  const dangling: string[] = [];
  let refusal: string | undefined;
  for (const versionId of ids) {
    try {
      const resolved = resolveVersion(answers, setDriveCount, versionId);
      plans.push({ version: resolved.version, holders: resolved.holders, good: new Set(resolved.holders.keys()) });
    } catch (error) {
      const copies = answers.flatMap((answer) => (answer.state === 'found' ? answer.meta.versions.filter((version) => version.versionId === versionId) : []));
      if (copies.some((copy) => copy.erasure?.parityShards === 0)) refusal ??= 'no-parity object is unrecoverable';
      else if (isSvcError(error, 'NoSuchVersion')) dangling.push(versionId);
      else refusal ??= `version ${versionId}: too few drives agree on its metadata to rebuild it (${error instanceof Error ? error.message : String(error)})`;
    }
  }
  plans.sort((a, b) => b.version.modTimeMs - a.version.modTimeMs || (a.version.versionId < b.version.versionId ? 1 : -1));
  for (const plan of plans) {
    const erasure = plan.version.erasure;
    if (!erasure) continue;
    if (erasure.dataShards + erasure.parityShards !== setDriveCount || erasure.distribution.length !== setDriveCount) {
      refusal ??= `version ${plan.version.versionId}: stored geometry ${erasure.dataShards}+${erasure.parityShards} does not match this set of ${setDriveCount} drives`;
      continue;
    }
    await Promise.all([...plan.holders].map(async ([slot, copy]) => {
      if (!(await shardsIntact(config, dir, plan.version, copy, slot, scanMode))) plan.good.delete(slot);
    }));
  }
  const health = answers.map((answer): SlotHealth => {
    if (!config.drives[answer.slot]) return 'offline';
    if (answer.state === 'failed') return isSvcError(answer.error, 'DriveOffline') ? 'offline' : 'corrupt';
    if (answer.state === 'missing') return plans.length > 0 ? 'missing' : 'ok';
    if (plans.some((plan) => plan.holders.has(answer.slot) && !plan.good.has(answer.slot))) return 'corrupt';
    if (plans.some((plan) => !plan.holders.has(answer.slot))) return 'outdated';
    return 'ok';
  });
  return { dir, answers, plans, dangling, health, ...(refusal ? { refusal } : {}) };
}

/** Are this drive's shards of a version there (normal) and sound (deep)? */
async function shardsIntact(config: SetConfig, dir: string, version: ObjectVersion, copy: ObjectVersion, slot: number, scanMode: 'normal' | 'deep'): Promise<boolean> {
  // A transitioned version's bytes are on its tier: the drives own only its metadata.
  if (!hasLocalData(version)) return true;
  const erasure = version.erasure!;
  const drive = config.drives[slot]!;
  try {
    for (const part of version.parts) {
      const expected = shardFileSizeBytes(part.sizeBytes, erasure.dataShards, erasure.blockSizeBytes);
      let bytes: Uint8Array | undefined;
      if (copy.inlineData) {
        if (copy.inlineData.length !== expected) return false;
        bytes = copy.inlineData;
      } else {
        const path = partPathIn(dir, copy.dataDir!, part.number);
        if ((await drive.stat(path)).sizeBytes !== expected) return false;
        if (scanMode === 'deep') bytes = await drive.readFile(path);
      }
      if (scanMode === 'deep' && bytes && !framesSound(bytes, part.sizeBytes, erasure.dataShards, erasure.blockSizeBytes)) return false;
    }
    return true;
  } catch {
    return false;
  }
}

/** Online slots to write, per version: those without a sound copy (every online slot with `recreate`). */
function targetSlots(config: SetConfig, assessment: Assessment, recreate: boolean): Map<string, number[]> {
  const targets = new Map<string, number[]>();
  for (const plan of assessment.plans) {
    const slots = config.drives.map((_, slot) => slot).filter((slot) => config.drives[slot] && (recreate || !plan.good.has(slot)));
    if (slots.length > 0) targets.set(plan.version.versionId, slots);
  }
  // A drive with unreadable xl.meta gets it rewritten even when every version's data is elsewhere.
  assessment.health.forEach((state, slot) => {
    if ((state === 'corrupt' || state === 'missing' || state === 'outdated') && assessment.plans.length > 0 && ![...targets.values()].some((slots) => slots.includes(slot))) {
      targets.set(`meta:${slot}`, [slot]);
    }
  });
  return targets;
}

function unrecoverableReason(config: SetConfig, assessment: Assessment, targets: Map<string, number[]>): string | undefined {
  for (const plan of assessment.plans) {
    if (!targets.has(plan.version.versionId) || !plan.version.erasure) continue;
    const { dataShards, parityShards } = plan.version.erasure;
    if (parityShards === 0) return 'no-parity object is unrecoverable';
    if (plan.good.size < dataShards) {
      return `version ${plan.version.versionId}: ${plan.good.size} sound shard(s), ${dataShards} needed; more shards are missing than parity (${parityShards}) can rebuild`;
    }
  }
  void config;
  return undefined;
}

// --- rebuilding ------------------------------------------------------------------------------

async function rebuild(config: SetConfig, bucket: string, key: string, assessment: Assessment, targets: Map<string, number[]>, removeDangling: boolean): Promise<number> {
  let shardsHealed = 0;
  const touched = new Set<number>([...targets.values()].flat());
  if (removeDangling) for (const answer of assessment.answers) if (answer.state === 'found' && answer.meta.versions.some((version) => assessment.dangling.includes(version.versionId))) touched.add(answer.slot);
  // Copies the vote ruled against go first: their room is what a full drive needs for the rebuild.
  await Promise.all([...touched].map(async (slot) => {
    const drive = config.drives[slot];
    if (!drive) return;
    for (const dataDir of supersededDataDirs(assessment, slot)) await removeDataDir(drive, `${assessment.dir}/${dataDir}`).catch(() => undefined);
  }));
  /** Per slot, the rebuilt copy of each version (inline data included) to write into its xl.meta. */
  const rebuilt = new Map<number, Map<string, ObjectVersion>>();
  for (const plan of assessment.plans) {
    const slots = targets.get(plan.version.versionId) ?? [];
    if (slots.length === 0) continue;
    const copies = await rebuildVersion(config, bucket, key, plan, slots, assessment.dir);
    for (const [slot, copy] of copies) {
      const perSlot = rebuilt.get(slot) ?? new Map<string, ObjectVersion>();
      perSlot.set(plan.version.versionId, copy);
      rebuilt.set(slot, perSlot);
      shardsHealed += 1;
    }
  }
  // xl.meta on every touched drive: the trusted versions, each with this drive's own shard index.
  await Promise.all([...touched].map(async (slot) => {
    const drive = config.drives[slot];
    if (!drive) return;
    const own = rebuilt.get(slot);
    const versions = assessment.plans.map((plan) => own?.get(plan.version.versionId) ?? plan.holders.get(slot) ?? ownCopy(plan.version, slot));
    if (versions.length > 0) {
      const meta: XlMeta = { versions };
      await drive.writeFileAtomic(xlMetaPathIn(assessment.dir), encodeXlMeta(meta));
    } else {
      await drive.deleteFile(xlMetaPathIn(assessment.dir)).catch(() => undefined);
    }
    if (removeDangling) {
      const answer = assessment.answers[slot];
      const stale = answer?.state === 'found' ? answer.meta.versions.filter((version) => assessment.dangling.includes(version.versionId) && version.dataDir) : [];
      for (const version of stale) await removeDataDir(drive, `${assessment.dir}/${version.dataDir!}`).catch(() => undefined);
    }
  }));
  return shardsHealed;
}

/**
 * The data dirs of a drive's outvoted copies: its copy of a trusted version with another data
 * dir than the trusted one (an overwrite that missed the drive, or was rolled back only there).
 * The rewritten xl.meta no longer names them.
 */
function supersededDataDirs(assessment: Assessment, slot: number): string[] {
  const answer = assessment.answers[slot];
  if (answer?.state !== 'found') return [];
  const trusted = new Map(assessment.plans.map((plan) => [plan.version.versionId, plan.version]));
  const kept = new Set(assessment.plans.map((plan) => plan.version.dataDir));
  return answer.meta.versions.flatMap((version) => (version.dataDir && trusted.has(version.versionId) && !kept.has(version.dataDir) ? [version.dataDir] : []));
}

/** A copy of a version for a drive that holds its shard `distribution[slot]` (no inline data). */
function ownCopy(version: ObjectVersion, slot: number): ObjectVersion {
  const { inlineData: _inline, ...rest } = version;
  return rest.erasure ? { ...rest, erasure: { ...rest.erasure, index: rest.erasure.distribution[slot]! } } : rest;
}

/** Rebuilds one version's shards onto `slots`; returns each slot's new copy of the version. */
async function rebuildVersion(config: SetConfig, bucket: string, key: string, plan: VersionPlan, slots: number[], dir: string): Promise<Map<number, ObjectVersion>> {
  const copies = new Map<number, ObjectVersion>();
  const version = plan.version;
  // A delete marker, or a transitioned version (its bytes are the tier's): metadata alone.
  if (!version.erasure || !hasLocalData(version)) {
    for (const slot of slots) copies.set(slot, ownCopy(version, slot));
    return copies;
  }
  const inline = [...plan.holders.values()].some((copy) => copy.inlineData !== undefined);
  if (inline) {
    const frames = new Map<number, Uint8Array[]>(slots.map((slot) => [slot, []]));
    await rebuildPart(config, { bucket, key, dir }, plan, version.parts[0] ?? { number: 1, sizeBytes: 0, etag: '' }, slots, async (slot, frame) => void frames.get(slot)!.push(frame));
    for (const slot of slots) copies.set(slot, { ...ownCopy(version, slot), inlineData: concat(frames.get(slot)!) });
    return copies;
  }
  const tmpId = randomUUID();
  const drives = new Map<number, Drive>(slots.map((slot) => [slot, config.drives[slot]!]));
  try {
    for (const part of version.parts) {
      const writers = new Map<number, FileWriter>();
      for (const [slot, drive] of drives) writers.set(slot, await drive.openWriter(`${tmpDir}/${tmpId}/part.${part.number}`));
      try {
        await rebuildPart(config, { bucket, key, dir }, plan, part, slots, (slot, frame) => writers.get(slot)!.write(frame));
        for (const writer of writers.values()) await writer.close();
      } catch (error) {
        for (const writer of writers.values()) await writer.abort();
        throw error;
      }
    }
    for (const [slot, drive] of drives) {
      const target = `${dir}/${version.dataDir!}`;
      await drive.deleteRecursive(target).catch(() => undefined);
      await drive.rename(`${tmpDir}/${tmpId}`, target);
      copies.set(slot, ownCopy(version, slot));
    }
    return copies;
  } finally {
    await Promise.all([...drives.values()].map((drive) => drive.deleteRecursive(`${tmpDir}/${tmpId}`).catch(() => undefined)));
  }
}

/** Streams one part: per block, K verified chunks from sound drives, all shards rebuilt, the targets' framed. */
async function rebuildPart(
  config: SetConfig,
  object: { bucket: string; key: string; dir: string },
  plan: VersionPlan,
  part: { number: number; sizeBytes: number },
  slots: number[],
  sink: (slot: number, frame: Uint8Array) => Promise<void>,
): Promise<void> {
  const erasure = plan.version.erasure!;
  const codec = codecFor(erasure.codec, erasure.dataShards, erasure.parityShards);
  const sources = [...plan.good];
  const blocks = Math.ceil(part.sizeBytes / erasure.blockSizeBytes);
  for (let block = 0; block < blocks; block += 1) {
    const chunk = chunkOffsetInShardFile(block, part.sizeBytes, erasure.dataShards, erasure.blockSizeBytes);
    const shards: (Uint8Array | null)[] = new Array(erasure.dataShards + erasure.parityShards).fill(null);
    let good = 0;
    for (const slot of sources) {
      if (good >= erasure.dataShards) break;
      const data = await readChunk(config, object.dir, plan.holders.get(slot)!, slot, part.number, chunk.offset, chunk.lengthBytes);
      if (!data) continue;
      shards[plan.holders.get(slot)!.erasure!.index - 1] = data;
      good += 1;
    }
    if (good < erasure.dataShards) throw new SvcError('ErasureReadQuorum', `block ${block} of part ${part.number}: ${good} of ${erasure.dataShards} shards readable`, { bucket: object.bucket, key: object.key });
    const full = codec.reconstruct(shards);
    for (const slot of slots) await sink(slot, frameChunk(full[erasure.distribution[slot]! - 1]!));
  }
}

async function readChunk(config: SetConfig, dir: string, copy: ObjectVersion, slot: number, partNumber: number, offset: number, lengthBytes: number): Promise<Uint8Array | undefined> {
  try {
    const framed = copy.inlineData
      ? copy.inlineData.subarray(offset, offset + lengthBytes)
      : await config.drives[slot]!.readRange(partPathIn(dir, copy.dataDir!, partNumber), offset, lengthBytes);
    return framed.length === lengthBytes ? unframeChunk(framed) : undefined;
  } catch {
    return undefined;
  }
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}
