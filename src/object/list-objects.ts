/**
 * Listing one erasure set: walk drives in key order, merge, and resolve every version of every
 * key by a metadata vote. A drive answers when its walk runs to the end; a drive missing since
 * start-up and one whose walk fails (offline, I/O error) count alike, so each
 * `SVC_LIST_OBJECTS_QUORUM` mode means the same whenever the drive was lost:
 *   disk           one drive walked and trusted alone; when it fails, the next drive continues
 *                  after the last key listed. ErasureReadQuorum only when no drive answers.
 *   reduced        every drive walked; a version is listed when it has its listing vote among
 *                  the drives that answer, and a key they cannot decide is left out.
 *                  ErasureReadQuorum only when no drive answers.
 *   optimal, auto  as reduced, but a key the answering drives cannot decide, or fewer answering
 *                  drives than a committed version needs to be seen at all, fails the listing
 *                  with ErasureReadQuorum: nothing committed is left out silently.
 *   strict         every drive must answer, else ErasureReadQuorum.
 * The listing vote is `listingVotesNeeded` (read quorum or majority, whichever is smaller).
 */
import { SvcError, isSvcError } from '../errors/index.js';
import type { ObjectVersion } from '../format/xl-meta-types.js';
import { decodeXlMeta } from '../format/xl-meta.js';
import { deleteQuorum } from '../erasure/geometry.js';
import { mergeSorted } from '../util/merge.js';
import { listingVotesNeeded, resolveVersion, type DriveMetaAnswer } from './quorum.js';
import { onlineSlots, type ListQuorumMode, type SetConfig } from './set-context.js';
import { walkKeys, type WalkEntry, type WalkOptions } from './walk-keys.js';
import { toObjectInfo } from './object-info.js';
import type { ObjectInfo } from './types.js';

export type ListEntry = { kind: 'object'; key: string; versions: ObjectInfo[] } | { kind: 'prefix'; key: string };

type SlotEntry = WalkEntry & { slot: number };

export async function* listSet(config: SetConfig, bucket: string, options: WalkOptions): AsyncGenerator<ListEntry> {
  if (config.listQuorum === 'disk') {
    yield* listOneDrive(config, bucket, options);
    return;
  }
  const walked = onlineSlots(config);
  const failed = new Set(config.drives.map((_, slot) => slot).filter((slot) => !walked.includes(slot)));
  const needed = answersNeeded(config.listQuorum, config.drives.length);
  const sources = walked.map((slot) => tagged(walkKeys(config.drives[slot]!, bucket, options), slot, failed));
  for await (const [key, group] of mergeSorted(sources, (entry) => entry.key)) {
    requireAnswers(config, failed, needed);
    if (group.some((entry) => entry.kind === 'prefix')) {
      yield { kind: 'prefix', key };
      continue;
    }
    const versions = resolveAllVersions(config, bucket, key, group, failed);
    if (versions.length > 0) yield { kind: 'object', key, versions };
  }
  requireAnswers(config, failed, needed);
}

/**
 * Drives that must answer: one for disk and reduced; for optimal and auto, enough that at least
 * one drive holding any committed version answers (every write quorum is at least a majority);
 * for strict, all.
 */
export function answersNeeded(mode: ListQuorumMode, setDriveCount: number): number {
  if (mode === 'strict') return setDriveCount;
  if (mode === 'optimal' || mode === 'auto') return setDriveCount - deleteQuorum(setDriveCount) + 1;
  return 1;
}

function requireAnswers(config: SetConfig, failed: Set<number>, needed: number): void {
  const answering = config.drives.length - failed.size;
  if (answering >= needed) return;
  throw new SvcError('ErasureReadQuorum', `the ${config.listQuorum} listing quorum needs ${needed} of the set's ${config.drives.length} drives to answer; ${answering} did`, {
    pool: config.poolIndex, set: config.setIndex, answering, needed,
  });
}

/** disk: one drive's view; a drive that fails hands over to the next after the last key listed. */
async function* listOneDrive(config: SetConfig, bucket: string, options: WalkOptions): AsyncGenerator<ListEntry> {
  let startAfter = options.startAfter;
  for (const slot of onlineSlots(config)) {
    try {
      for await (const entry of walkKeys(config.drives[slot]!, bucket, { ...options, ...(startAfter !== undefined ? { startAfter } : {}) })) {
        startAfter = entry.key;
        const listed = entry.kind === 'prefix' ? entry : trustedEntry(bucket, entry.key, entry.metaBytes);
        if (listed) yield listed;
      }
      return;
    } catch {
      continue;
    }
  }
  requireAnswers(config, new Set(config.drives.map((_, slot) => slot)), 1);
}

function trustedEntry(bucket: string, key: string, metaBytes: Uint8Array): ListEntry | undefined {
  let versions: ObjectVersion[];
  try {
    versions = [...decodeXlMeta(metaBytes).versions];
  } catch {
    return undefined;
  }
  if (versions.length === 0) return undefined;
  return { kind: 'object', key, versions: newestFirst(versions).map((version, index) => toObjectInfo(bucket, key, version, index === 0)) };
}

/**
 * Every key any online drive of the set holds (or an undecodable xl.meta for), in key order,
 * without a vote: what heal walks, so that a key left on a minority of drives is found too.
 */
export async function* listAnyKeys(config: SetConfig, bucket: string, options: { prefix: string; startAfter?: string }): AsyncGenerator<string> {
  const sources = onlineSlots(config).map((slot) => tagged(walkKeys(config.drives[slot]!, bucket, options), slot, new Set()));
  for await (const [key, group] of mergeSorted(sources, (entry) => entry.key)) {
    if (group.some((entry) => entry.kind === 'object')) yield key;
  }
}

function listingSlots(config: SetConfig): number[] {
  const online = onlineSlots(config);
  if (config.listQuorum === 'disk') return online.slice(0, 1);
  if (config.listQuorum === 'strict' && online.length < config.drives.length) {
    throw new SvcError('ErasureReadQuorum', 'strict listing quorum needs every drive of the set online', { online: online.length });
  }
  return online;
}

/**
 * One drive's walk, tagged with its slot. A drive that fails mid-walk (offline, I/O error) ends its
 * walk there and joins `failed`: for every later key it has not answered.
 */
async function* tagged(source: AsyncIterable<WalkEntry>, slot: number, failed: Set<number>): AsyncGenerator<SlotEntry> {
  try {
    for await (const entry of source) yield { ...entry, slot };
  } catch {
    failed.add(slot);
  }
}

/**
 * Every version of one key that has its listing vote among the answering drives, newest first.
 * A version the answering drives cannot decide fails the listing, except with `reduced`.
 */
function resolveAllVersions(config: SetConfig, bucket: string, key: string, group: SlotEntry[], failed: Set<number>): ObjectInfo[] {
  const answers: DriveMetaAnswer[] = config.drives.map((_, slot) => (failed.has(slot) ? { slot, state: 'failed', error: undefined } : { slot, state: 'missing' }));
  for (const entry of group) {
    if (entry.kind !== 'object') continue;
    try {
      answers[entry.slot] = { slot: entry.slot, state: 'found', meta: decodeXlMeta(entry.metaBytes) };
    } catch (error) {
      answers[entry.slot] = { slot: entry.slot, state: 'failed', error };
    }
  }
  const resolved: ObjectVersion[] = [];
  for (const versionId of versionIdsOf(answers)) {
    try {
      resolved.push(resolveVersion(answers, config.drives.length, versionId, listingVotesNeeded).version);
    } catch (error) {
      // Known absent (a partial write, a version being removed): not listed.
      if (!isSvcError(error, 'ErasureReadQuorum') || config.listQuorum === 'reduced') continue;
      throw new SvcError('ErasureReadQuorum', `the drives that answer cannot decide whether ${key} is listed`, { pool: config.poolIndex, set: config.setIndex, bucket, key, versionId });
    }
  }
  return newestFirst(resolved).map((version, index) => toObjectInfo(bucket, key, version, index === 0));
}

function newestFirst(versions: ObjectVersion[]): ObjectVersion[] {
  return versions.sort((a, b) => b.modTimeMs - a.modTimeMs || (a.versionId < b.versionId ? 1 : -1));
}

function versionIdsOf(answers: DriveMetaAnswer[]): string[] {
  const ids = new Set<string>();
  for (const answer of answers) if (answer.state === 'found') for (const version of answer.meta.versions) ids.add(version.versionId);
  return [...ids];
}
