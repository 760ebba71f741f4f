/**
 * Listing one erasure set: walk the chosen drives in key order, merge, and resolve every
 * version of every key by the same metadata vote as reads. `SVC_LIST_OBJECTS_QUORUM` chooses
 * how many drives are walked and trusted:
 *   disk              one online drive, trusted alone (fastest, may show stale entries);
 *   reduced, optimal, auto   every online drive, a version listed when it has its read quorum;
 *   strict (any other value) every drive must be online, else ErasureReadQuorum.
 */
import { SvcError } from '../errors/index.js';
import type { ObjectVersion, XlMeta } from '../format/xl-meta-types.js';
import { decodeXlMeta } from '../format/xl-meta.js';
import { mergeSorted } from '../util/merge.js';
import { resolveVersion, type DriveMetaAnswer } from './quorum.js';
import { onlineSlots, type SetConfig } from './set-context.js';
import { walkKeys, type WalkEntry, type WalkOptions } from './walk-keys.js';
import { toObjectInfo } from './object-info.js';
import type { ObjectInfo } from './types.js';

export type ListEntry = { kind: 'object'; key: string; versions: ObjectInfo[] } | { kind: 'prefix'; key: string };

type SlotEntry = WalkEntry & { slot: number };

export async function* listSet(config: SetConfig, bucket: string, options: WalkOptions): AsyncGenerator<ListEntry> {
  const slots = listingSlots(config);
  const sources = slots.map((slot) => tagged(walkKeys(config.drives[slot]!, bucket, options), slot));
  for await (const [key, group] of mergeSorted(sources, (entry) => entry.key)) {
    if (group.some((entry) => entry.kind === 'prefix')) {
      yield { kind: 'prefix', key };
      continue;
    }
    const versions = resolveAllVersions(config, bucket, key, group, slots);
    if (versions.length > 0) yield { kind: 'object', key, versions };
  }
}

/**
 * Every key any online drive of the set holds (or an undecodable xl.meta for), in key order,
 * without a vote: what heal walks, so that a key left on a minority of drives is found too.
 */
export async function* listAnyKeys(config: SetConfig, bucket: string, options: { prefix: string; startAfter?: string }): AsyncGenerator<string> {
  const sources = onlineSlots(config).map((slot) => tagged(walkKeys(config.drives[slot]!, bucket, options), slot));
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
 * walk there: it simply stops answering, and the vote over the drives that do answer decides.
 */
async function* tagged(source: AsyncIterable<WalkEntry>, slot: number): AsyncGenerator<SlotEntry> {
  try {
    for await (const entry of source) yield { ...entry, slot };
  } catch {
    return;
  }
}

/** Every version of one key that has its quorum among the walked drives, newest first. */
function resolveAllVersions(config: SetConfig, bucket: string, key: string, group: SlotEntry[], slots: number[]): ObjectInfo[] {
  const answers: DriveMetaAnswer[] = slots.map((slot) => ({ slot, state: 'missing' }));
  for (const entry of group) {
    if (entry.kind !== 'object') continue;
    const index = slots.indexOf(entry.slot);
    try {
      answers[index] = { slot: entry.slot, state: 'found', meta: decodeXlMeta(entry.metaBytes) };
    } catch (error) {
      answers[index] = { slot: entry.slot, state: 'failed', error };
    }
  }
  const setDriveCount = config.listQuorum === 'disk' ? 1 : config.drives.length;
  const ids = versionIdsOf(answers);
  const resolved: ObjectVersion[] = [];
  for (const versionId of ids) {
    try {
      resolved.push(config.listQuorum === 'disk' ? trustOne(answers, versionId) : resolveVersion(answers, setDriveCount, versionId).version);
    } catch {
      // Below quorum: a partial write or a version being removed; not listed.
    }
  }
  resolved.sort((a, b) => b.modTimeMs - a.modTimeMs || (a.versionId < b.versionId ? 1 : -1));
  return resolved.map((version, index) => toObjectInfo(bucket, key, version, index === 0));
}

function versionIdsOf(answers: DriveMetaAnswer[]): string[] {
  const ids = new Set<string>();
  for (const answer of answers) if (answer.state === 'found') for (const version of answer.meta.versions) ids.add(version.versionId);
  return [...ids];
}

function trustOne(answers: DriveMetaAnswer[], versionId: string): ObjectVersion {
  const found = answers.find((answer): answer is { slot: number; state: 'found'; meta: XlMeta } => answer.state === 'found');
  const version = found?.meta.versions.find((candidate) => candidate.versionId === versionId);
  if (!version) throw new SvcError('NoSuchVersion');
  return version;
}
