/**
 * Reading an object's xl.meta from every drive of a set, and changing it on every drive with
 * quorum and rollback: the one place where metadata reaches drives.
 */
import { isSvcError, SvcError } from '../errors/index.js';
import type { XlMeta } from '../format/xl-meta-types.js';
import { decodeXlMeta, encodeXlMeta } from '../format/xl-meta.js';
import type { Drive } from '../drive/index.js';
import type { DriveMetaAnswer } from './quorum.js';
import type { SetConfig } from './set-context.js';
import { objectDir, xlMetaPath } from './paths.js';

export async function readMetaAnswers(config: SetConfig, bucket: string, key: string): Promise<DriveMetaAnswer[]> {
  const path = xlMetaPath(bucket, key);
  return Promise.all(
    config.drives.map(async (drive, slot): Promise<DriveMetaAnswer> => {
      if (!drive) return { slot, state: 'failed', error: new SvcError('DriveOffline') };
      try {
        return { slot, state: 'found', meta: decodeXlMeta(await drive.readFile(path)) };
      } catch (error) {
        if (isSvcError(error, 'FileNotFound')) return { slot, state: 'missing' };
        return { slot, state: 'failed', error };
      }
    }),
  );
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
   * Applies the change to one drive's metadata. Returns the new metadata (undefined = remove
   * xl.meta), and optional work to do on that drive before the metadata is published (moving
   * shard data into place), plus the data dirs that become garbage once the change commits.
   */
  apply(meta: XlMeta, slot: number): { meta: XlMeta | undefined; beforePublish?: (drive: Drive) => Promise<void>; garbageDataDirs?: string[] };
  /** Undo of beforePublish on a drive where the change is rolled back. */
  undoBeforePublish?: (drive: Drive) => Promise<void>;
}

export interface MetaChangeResult {
  committedSlots: number[];
  failedSlots: number[];
}

/**
 * Applies a change to every reachable drive's xl.meta in parallel. When fewer than `quorum`
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
  const path = xlMetaPath(bucket, key);
  const snapshots = await Promise.all(slots.map((slot) => snapshotOf(config, slot, path)));
  change.prepare?.(Math.max(-1, ...snapshots.flatMap((snapshot) => snapshot?.meta.versions.map((version) => version.modTimeMs) ?? [])));
  const garbage = new Map<number, string[]>();
  const outcomes = await Promise.all(
    snapshots.map(async (snapshot) => {
      if (!snapshot) return false;
      try {
        const { meta, beforePublish, garbageDataDirs } = change.apply(snapshot.meta, snapshot.slot);
        // A drive without xl.meta usually lacks the object's directory too: make it first rather than
        // let the writes below fail on it and retry.
        if (!snapshot.before && meta) await snapshot.drive.makeDir(objectDir(bucket, key));
        if (beforePublish) await beforePublish(snapshot.drive);
        if (meta) await snapshot.drive.writeFileAtomic(path, encodeXlMeta(meta));
        else await removeMetaFile(snapshot.drive, path);
        garbage.set(snapshot.slot, garbageDataDirs ?? []);
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
    await rollback(snapshots.filter((s) => s && committedSlots.includes(s.slot)) as Snapshot[], path, change);
    throw new SvcError('ErasureWriteQuorum', undefined, { bucket, key, succeeded: committedSlots.length, needed: quorum });
  }
  await Promise.all(
    committedSlots.map(async (slot) => {
      const drive = config.drives[slot]!;
      for (const dataDir of garbage.get(slot) ?? []) await drive.deleteRecursive(`${objectDir(bucket, key)}/${dataDir}`).catch(() => undefined);
    }),
  );
  return { committedSlots, failedSlots };
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

async function rollback(snapshots: Snapshot[], path: string, change: MetaChange): Promise<void> {
  await Promise.all(
    snapshots.map(async (snapshot) => {
      try {
        if (snapshot.before) await snapshot.drive.writeFileAtomic(path, snapshot.before);
        else await removeMetaFile(snapshot.drive, path);
        if (change.undoBeforePublish) await change.undoBeforePublish(snapshot.drive);
      } catch {
        // The drive failed again; its stale copy loses the next quorum vote and heal repairs it.
      }
    }),
  );
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
