/**
 * Reading an object's xl.meta from every drive of a set, and changing it on every drive with
 * quorum and rollback: the one place where metadata reaches drives.
 */
import { isSvcError, SvcError } from '../errors/index.js';
import type { TransitionInfo, XlMeta } from '../format/xl-meta-types.js';
import { decodeXlMeta, encodeXlMeta } from '../format/xl-meta.js';
import type { Drive } from '../drive/index.js';
import type { DriveMetaAnswer } from './quorum.js';
import type { SetConfig } from './set-context.js';
import { isPartFileName, legacyObjectDir, objectDir, xlMetaPathIn } from './paths.js';
import { limits } from '../util/limits.js';
import { shardReadStatsOf, type ShardReadStats } from './shard-hedge.js';

/**
 * When a read may stop waiting for drives: `settled(answers, pending)` says whether the answers so
 * far decide it whatever the pending drives say (see `latestVoteSettled`).
 */
export type MetaSettle = (answers: DriveMetaAnswer[], pending: number) => boolean;

/**
 * Every drive's answer for the xl.meta in one object directory. `throughFiles`: the path may run
 * through a file (an older layout's raw names, where a key segment can be a shard file's name),
 * which then means the key is not there; elsewhere such an error is the drive's fault.
 *
 * With `settle`, the answers are returned once they settle the read and the drives still silent
 * have had a grace to answer too (`metaReadGrace`), so one slow drive does not slow every read;
 * those drives are left out of the list (in slot order, answered drives only). Without it, every
 * drive's answer is awaited (writes, heal, placement: they must see every drive).
 */
export async function readMetaAnswers(config: SetConfig, dir: string, options: { throughFiles?: boolean; settle?: MetaSettle } = {}): Promise<DriveMetaAnswer[]> {
  const path = xlMetaPathIn(dir);
  const asks = config.drives.map(async (drive, slot): Promise<DriveMetaAnswer> => {
    if (!drive) return { slot, state: 'failed', error: new SvcError('DriveOffline') };
    try {
      return { slot, state: 'found', meta: decodeXlMeta(await drive.readFile(path)) };
    } catch (error) {
      if (isSvcError(error, 'FileNotFound') || (options.throughFiles && isSvcError(error, 'NotADirectory'))) return { slot, state: 'missing' };
      return { slot, state: 'failed', error };
    }
  });
  if (!options.settle) return Promise.all(asks);
  return settledAnswers(asks, options.settle, config.drives, shardReadStatsOf(config));
}

/**
 * Collects answers as they come. Once they settle the read, the silent drives get a grace of
 * `metaReadGraceFloorMs` plus the time taken so far (under load every answer is slower, and a
 * healthy drive a little behind the others is still awaited; a drive seconds behind is not).
 * A drive left out this way is known late (`lateness`) and gets no grace from the reads that
 * follow, until one of its answers comes within the grace its read would have given it.
 */
function settledAnswers(asks: Promise<DriveMetaAnswer>[], settled: MetaSettle, drives: (Drive | undefined)[], lateness: ShardReadStats): Promise<DriveMetaAnswer[]> {
  const started = performance.now();
  const answers: DriveMetaAnswer[] = [];
  const answered = new Set<number>();
  /** When the grace of this read ends (or would have, had it been waited out), from `started`. */
  let graceEndMs = Infinity;
  return new Promise((resolve) => {
    let grace: ReturnType<typeof setTimeout> | undefined;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      if (grace !== undefined) clearTimeout(grace);
      let without = false;
      drives.forEach((drive, slot) => {
        if (!drive || answered.has(slot)) return;
        without = true;
        lateness.metaAnswered(drive, false);
      });
      if (without) lateness.metaReadsWithoutDrive += 1;
      resolve([...answers].sort((a, b) => a.slot - b.slot));
    };
    for (const ask of asks) {
      void ask.then((answer) => {
        const elapsedMs = performance.now() - started;
        const drive = drives[answer.slot];
        if (done) {
          if (drive && elapsedMs <= graceEndMs) lateness.metaAnswered(drive, true);
          return;
        }
        answered.add(answer.slot);
        if (drive) lateness.metaAnswered(drive, true);
        answers.push(answer);
        const pending = asks.length - answers.length;
        if (pending === 0) finish();
        else if (grace === undefined && settled(answers, pending)) {
          const graceMs = limits.metaReadGraceFloorMs + elapsedMs;
          graceEndMs = elapsedMs + graceMs;
          const silent = drives.filter((each, slot) => each !== undefined && !answered.has(slot)) as Drive[];
          if (silent.every((each) => lateness.metaLate(each))) finish();
          else grace = setTimeout(finish, graceMs);
        }
      });
    }
  });
}

/**
 * A key's directory in this set and every drive's answer from it: the encoded directory, unless
 * no drive has the object there and some drive has it where the older layout put it (raw
 * segments, see paths.ts), in which case the object is read, changed and healed in place there.
 */
export async function readObjectMeta(config: SetConfig, bucket: string, key: string, settle?: MetaSettle): Promise<{ dir: string; answers: DriveMetaAnswer[] }> {
  const dir = objectDir(bucket, key);
  const answers = await readMetaAnswers(config, dir, { settle });
  const legacy = legacyObjectDir(bucket, key);
  if (legacy === undefined || answers.some((answer) => answer.state === 'found')) return { dir, answers };
  const legacyAnswers = await readMetaAnswers(config, legacy, { throughFiles: true });
  return legacyAnswers.some((answer) => answer.state === 'found') ? { dir: legacy, answers: legacyAnswers } : { dir, answers };
}

/** The directory a change to the key goes to (the same choice as readObjectMeta, by a cheaper probe). */
export async function objectDirOf(config: SetConfig, bucket: string, key: string): Promise<string> {
  const dir = objectDir(bucket, key);
  const legacy = legacyObjectDir(bucket, key);
  if (legacy === undefined || (await anyDriveHas(config, xlMetaPathIn(dir)))) return dir;
  return (await anyDriveHas(config, xlMetaPathIn(legacy))) ? legacy : dir;
}

async function anyDriveHas(config: SetConfig, path: string): Promise<boolean> {
  const found = await Promise.all(config.drives.map((drive) => drive?.stat(path).then(() => true, () => false) ?? false));
  return found.includes(true);
}

/** What one drive holds before a metadata change, kept for rollback. */
interface Snapshot {
  slot: number;
  drive: Drive;
  before?: Uint8Array;
  meta: XlMeta;
}

export interface MetaChange {
  /**
   * Called once with the newest modification time found on any drive, before `apply`: a new
   * version must be strictly newer than every existing one, even within one millisecond.
   */
  prepare?(newestModTimeMs: number): void;
  /**
   * Called once with every reachable drive's current metadata, before `apply`: throwing refuses
   * the change with nothing written (a version that object lock protects).
   */
  check?(metas: XlMeta[]): void;
  /**
   * Applies the change to one drive's metadata. Returns the new metadata (undefined = remove
   * xl.meta), and optional work to do on that drive before the metadata is published (moving
   * shard data into place), plus the data dirs that become garbage once the change commits.
   */
  apply(meta: XlMeta, slot: number, dir: string): { meta: XlMeta | undefined; beforePublish?: (drive: Drive) => Promise<void>; garbageDataDirs?: string[] };
  /** Undo of beforePublish on a drive where the change is rolled back (`dir`: the object's directory). */
  undoBeforePublish?: (drive: Drive, dir: string) => Promise<void>;
  /**
   * A tier object that a committed change leaves no version naming is freed (config.tiers), as a
   * data dir is; data movement sets this when it removes a source copy whose moved copy names it.
   */
  keepTierObjects?: boolean;
}

export interface MetaChangeResult {
  committedSlots: number[];
  failedSlots: number[];
}

/**
 * Applies a change to every reachable drive's xl.meta in parallel (in the directory
 * `objectDirOf` chooses; `apply` is told which). When fewer than `quorum`
 * drives succeed, the drives that did succeed are restored to their previous bytes and the
 * change fails with ErasureWriteQuorum: nothing is left visible.
 */
export async function changeMeta(
  config: SetConfig,
  bucket: string,
  key: string,
  slots: number[],
  change: MetaChange,
  quorum: number,
): Promise<MetaChangeResult> {
  const dir = await objectDirOf(config, bucket, key);
  const path = xlMetaPathIn(dir);
  const snapshots = await Promise.all(slots.map((slot) => snapshotOf(config, slot, path)));
  change.check?.(snapshots.flatMap((snapshot) => (snapshot ? [snapshot.meta] : [])));
  change.prepare?.(Math.max(-1, ...snapshots.flatMap((snapshot) => snapshot?.meta.versions.map((version) => version.modTimeMs) ?? [])));
  const garbage = new Map<number, string[]>();
  const after = new Map<number, XlMeta | undefined>();
  const outcomes = await Promise.all(
    snapshots.map(async (snapshot) => {
      if (!snapshot) return false;
      try {
        const { meta, beforePublish, garbageDataDirs } = change.apply(snapshot.meta, snapshot.slot, dir);
        // A drive without xl.meta usually lacks the object's directory too. The renames and the
        // xl.meta write below make missing parents themselves, but only after a failed attempt:
        // the directory is made alongside the first of them (a local drive has it before the
        // tmp file is written; a remote drive gets both in one exchange).
        const made = !snapshot.before && meta ? snapshot.drive.makeDir(dir) : undefined;
        const xlMeta = meta ? encodeXlMeta(meta) : undefined;
        if (beforePublish) await Promise.all([made, beforePublish(snapshot.drive)]);
        if (xlMeta) await Promise.all([beforePublish ? undefined : made, snapshot.drive.writeFileAtomic(path, xlMeta)]);
        else await removeMetaFile(snapshot.drive, path);
        garbage.set(snapshot.slot, garbageDataDirs ?? []);
        after.set(snapshot.slot, meta);
        return true;
      } catch (error) {
        config.logger?.warn({ slot: snapshot.slot, bucket, key, error: String(error) }, 'metadata change failed on a drive');
        return false;
      }
    }),
  );
  const committedSlots = snapshots.filter((s, index) => s && outcomes[index]).map((s) => s!.slot);
  const failedSlots = slots.filter((slot) => !committedSlots.includes(slot));
  if (committedSlots.length < quorum) {
    const { unrestored, kept } = await rollback(snapshots.filter((s) => s && committedSlots.includes(s.slot)) as Snapshot[], dir, change);
    if (unrestored.length > 0) config.onRepairNeeded?.({ bucket, key, reason: 'rollback-incomplete', slots: unrestored });
    // ErasureWriteQuorum promises that nothing was committed. A drive that still holds the change
    // could carry it into a later vote, so when any does the answer says the outcome is unknown.
    if (kept.length > 0) throw new SvcError('WriteOutcomeUnknown', undefined, { bucket, key, succeeded: committedSlots.length, needed: quorum, keptOn: kept });
    throw new SvcError('ErasureWriteQuorum', undefined, { bucket, key, succeeded: committedSlots.length, needed: quorum });
  }
  await Promise.all(
    committedSlots.map(async (slot) => {
      const drive = config.drives[slot]!;
      for (const dataDir of garbage.get(slot) ?? []) await removeDataDir(drive, `${dir}/${dataDir}`).catch(() => undefined);
    }),
  );
  if (config.tiers && !change.keepTierObjects) for (const transition of releasedTierObjects(snapshots, committedSlots, after)) config.tiers.release(transition);
  return { committedSlots, failedSlots };
}

/** Tier objects some committed drive's copy named before the change and none names after it (a transitioned version deleted or overwritten). */
function releasedTierObjects(snapshots: (Snapshot | undefined)[], committedSlots: number[], after: Map<number, XlMeta | undefined>): TransitionInfo[] {
  const named = (meta: XlMeta | undefined): TransitionInfo[] => meta?.versions.flatMap((version) => (version.transition ? [version.transition] : [])) ?? [];
  // A tier object is its tier and key: a version moved from one tier to another releases the first one's.
  const identity = (transition: TransitionInfo): string => `${transition.tier}\0${transition.remoteKey}`;
  const kept = new Set(committedSlots.flatMap((slot) => named(after.get(slot)).map(identity)));
  const released = new Map<string, TransitionInfo>();
  for (const snapshot of snapshots) {
    if (!snapshot || !committedSlots.includes(snapshot.slot)) continue;
    for (const transition of named(snapshot.meta)) if (!kept.has(identity(transition))) released.set(identity(transition), transition);
  }
  return [...released.values()];
}

async function snapshotOf(config: SetConfig, slot: number, path: string): Promise<Snapshot | undefined> {
  const drive = config.drives[slot];
  if (!drive) return undefined;
  try {
    const before = await drive.readFile(path);
    let meta: XlMeta;
    try {
      meta = decodeXlMeta(before);
    } catch {
      meta = { versions: [] }; // an undecodable copy is replaced; heal would do the same
    }
    return { slot, drive, before, meta };
  } catch (error) {
    if (isSvcError(error, 'FileNotFound')) return { slot, drive, meta: { versions: [] } };
    return undefined;
  }
}

/**
 * Puts every drive that took a failed change back as it was. Restoring the old bytes needs room
 * for a new file; where that fails (a full drive, say) the drive's xl.meta is removed instead,
 * which needs none: a drive without a copy only lowers the object's redundancy until heal, while
 * a drive left with the change could let it win a tied vote and show a write that was refused.
 * Returns the slots not restored to their old bytes (heal must visit them), and of those the
 * slots where even the removal failed, so the change is still there (an unreachable drive).
 */
async function rollback(snapshots: Snapshot[], dir: string, change: MetaChange): Promise<{ unrestored: number[]; kept: number[] }> {
  const path = xlMetaPathIn(dir);
  const unrestored: number[] = [];
  const kept: number[] = [];
  await Promise.all(
    snapshots.map(async (snapshot) => {
      try {
        if (snapshot.before) await snapshot.drive.writeFileAtomic(path, snapshot.before);
        else await removeMetaFile(snapshot.drive, path);
      } catch {
        unrestored.push(snapshot.slot);
        // The old bytes cannot go back: take the change off this drive the one way left.
        await snapshot.drive.deleteFile(path).catch((error: unknown) => {
          if (!isSvcError(error, 'FileNotFound')) kept.push(snapshot.slot);
        });
      }
      if (change.undoBeforePublish) await change.undoBeforePublish(snapshot.drive, dir).catch(() => undefined);
    }),
  );
  return { unrestored, kept };
}

/**
 * Removes a data directory no version uses any more. Only shard files are ever written into one;
 * anything else there is a key the older layout stored inside it (a UUID-named key directory that
 * happened to match), which is kept: the shard files go, the directory stays.
 */
export async function removeDataDir(drive: Drive, path: string): Promise<void> {
  const entries = await drive.listDir(path).catch(() => [] as string[]);
  if (entries.every(isPartFileName)) {
    await drive.deleteRecursive(path);
    return;
  }
  for (const entry of entries.filter(isPartFileName)) await drive.deleteFile(`${path}/${entry}`);
}

/** Removes xl.meta, then the object's directory and empty parents (never a non-empty one). */
async function removeMetaFile(drive: Drive, path: string): Promise<void> {
  await drive.deleteFile(path).catch((error: unknown) => {
    if (!isSvcError(error, 'FileNotFound')) throw error;
  });
  await removeEmptyParents(drive, path.slice(0, path.lastIndexOf('/')));
}

export async function removeEmptyParents(drive: Drive, dir: string): Promise<void> {
  let current = dir;
  // Stop below the bucket directory (the first segment).
  while (current.includes('/')) {
    try {
      await drive.deleteDir(current);
    } catch {
      return;
    }
    current = current.slice(0, current.lastIndexOf('/'));
  }
}
