/**
 * Metadata voting: given what each drive of a set says about an object, decide which version is
 * authoritative, or fail closed. Pure; no I/O.
 */
import { SvcError, type ErrorCode } from '../errors/index.js';
import type { ObjectVersion, XlMeta } from '../format/xl-meta-types.js';
import { findVersion, latestVersion, xlMetaSignature } from '../format/xl-meta.js';
import { deleteQuorum, readQuorum } from '../erasure/geometry.js';

/** One drive's answer when asked for an object's xl.meta. */
export type DriveMetaAnswer =
  | { slot: number; state: 'found'; meta: XlMeta }
  | { slot: number; state: 'missing' }
  | { slot: number; state: 'failed'; error: unknown };

export interface ResolvedVersion {
  /** The version as stored on one of the agreeing drives (inline data of that drive included). */
  version: ObjectVersion;
  /** Slots whose copy of the version agrees, with their own copy (for per-drive shard index and inline data). */
  holders: Map<number, ObjectVersion>;
  /** True when this version is the newest one of the object. */
  isLatest: boolean;
  /** Slots that answered but lack the version, or failed: they need repair. */
  outdated: number[];
}

/** Votes needed before a version's metadata is trusted. */
export function votesNeeded(version: ObjectVersion, setDriveCount: number): number {
  if (version.deleteMarker || !version.erasure) return deleteQuorum(setDriveCount);
  return readQuorum(version.erasure.dataShards, version.erasure.parityShards);
}

/**
 * Votes a listing needs before it shows a version: its read quorum or a majority of the set,
 * whichever is smaller. Metadata on a majority is committed (every write quorum is at least a
 * majority), so an EC:0 object short of a drive is still listed; its GET then fails closed.
 */
export function listingVotesNeeded(version: ObjectVersion, setDriveCount: number): number {
  return Math.min(votesNeeded(version, setDriveCount), deleteQuorum(setDriveCount));
}

/**
 * Picks the version with the most agreeing drives (newest on a tie). It is trusted when it has at
 * least its read quorum of votes (majority for delete markers). Otherwise the object is absent
 * (NoSuchKey / NoSuchVersion) when at least half of the set positively lacks it, and unreadable
 * (ErasureReadQuorum) when too few drives answered to know. `needed` counts the votes required.
 */
export function resolveVersion(answers: DriveMetaAnswer[], setDriveCount: number, versionId?: string, needed: typeof votesNeeded = votesNeeded): ResolvedVersion {
  const groups = new Map<string, Map<number, ObjectVersion>>();
  let lacking = 0;
  for (const answer of answers) {
    const candidate = answer.state === 'found' ? pick(answer.meta, versionId) : undefined;
    if (!candidate) {
      if (answer.state !== 'failed') lacking += 1;
      continue;
    }
    const signature = xlMetaSignature(candidate);
    const group = groups.get(signature) ?? new Map<number, ObjectVersion>();
    group.set(answer.slot, candidate);
    groups.set(signature, group);
  }
  const best = bestGroup(groups);
  if (best && best.size >= needed(first(best), setDriveCount)) {
    const version = first(best);
    const outdated = answers.map((answer) => answer.slot).filter((slot) => !best.has(slot));
    return { version, holders: best, isLatest: isLatestAcross(version, answers, versionId), outdated };
  }
  if (lacking >= Math.ceil(setDriveCount / 2)) {
    const code: ErrorCode = versionId === undefined ? 'NoSuchKey' : 'NoSuchVersion';
    throw new SvcError(code, undefined, { versionId });
  }
  throw new SvcError('ErasureReadQuorum', undefined, {
    answered: answers.filter((answer) => answer.state !== 'failed').length,
    votes: best?.size ?? 0,
  });
}

/**
 * True when the answers so far settle the vote on an object's latest version whatever the
 * `pending` drives still to answer say: its group holds its read quorum and outnumbers the
 * runner-up by more than the pending answers, which could at most all join the runner-up (or a
 * group of their own). `resolveVersion` over these answers then decides exactly as it would over
 * all of them, so a read need not wait for a slow drive. The answers left out are neither holders
 * nor outdated: nothing is known of them.
 */
export function latestVoteSettled(answers: DriveMetaAnswer[], setDriveCount: number, pending: number): boolean {
  const groups = new Map<string, { version: ObjectVersion; size: number }>();
  for (const answer of answers) {
    const candidate = answer.state === 'found' ? latestVersion(answer.meta) : undefined;
    if (!candidate) continue;
    const signature = xlMetaSignature(candidate);
    const group = groups.get(signature);
    if (group) group.size += 1;
    else groups.set(signature, { version: candidate, size: 1 });
  }
  let best: { version: ObjectVersion; size: number } | undefined;
  let runnerUp = 0;
  for (const group of groups.values()) {
    if (!best || group.size > best.size) {
      runnerUp = best?.size ?? 0;
      best = group;
    } else runnerUp = Math.max(runnerUp, group.size);
  }
  return best !== undefined && best.size >= votesNeeded(best.version, setDriveCount) && best.size > runnerUp + pending;
}

function pick(meta: XlMeta, versionId: string | undefined): ObjectVersion | undefined {
  return versionId === undefined ? latestVersion(meta) : findVersion(meta, versionId);
}

function first(group: Map<number, ObjectVersion>): ObjectVersion {
  return group.values().next().value as ObjectVersion;
}

function bestGroup(groups: Map<string, Map<number, ObjectVersion>>): Map<number, ObjectVersion> | undefined {
  let best: Map<number, ObjectVersion> | undefined;
  for (const group of groups.values()) {
    if (!best || group.size > best.size || (group.size === best.size && first(group).modTimeMs > first(best).modTimeMs)) {
      best = group;
    }
  }
  return best;
}

/** A version read by id is the latest when most answering drives list it first. */
function isLatestAcross(version: ObjectVersion, answers: DriveMetaAnswer[], versionId: string | undefined): boolean {
  if (versionId === undefined) return true;
  let latest = 0;
  let found = 0;
  for (const answer of answers) {
    if (answer.state !== 'found') continue;
    found += 1;
    if (latestVersion(answer.meta)?.versionId === version.versionId) latest += 1;
  }
  return latest * 2 > found;
}
