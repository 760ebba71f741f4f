/**
 * What a bucket's lifecycle rules do to one key at one instant, as AWS S3 applies them. Pure:
 * versions and rules in, actions out; the scanner (lifecycle.ts) carries them out.
 *
 * - Days are counted from the version's modification time for the current version, and from the
 *   moment a version became noncurrent (its successor's modification time) for a noncurrent one;
 *   the result is rounded up to the next midnight UTC, so a version written on day D at any hour
 *   with `Days: 1` expires at the start of day D + 2 (as AWS: "rounded to the next midnight").
 * - Expiration of the current version: a delete removes it in an unversioned bucket and writes a
 *   delete marker in a versioned (or suspended) one; a current delete marker is left alone.
 * - NoncurrentVersionExpiration removes a noncurrent version (delete markers included) once it
 *   has been noncurrent for NoncurrentDays, keeping the NewerNoncurrentVersions newest ones.
 * - An expired object delete marker (the only version left of a key) is removed when a rule says
 *   ExpiredObjectDeleteMarker, or when a rule's Expiration Days have passed since it was written.
 * - A version locked by object lock (retention in the future, or a legal hold) is never removed;
 *   a delete marker may still be put on top of it, as AWS does.
 */
import { isVersionLocked } from '../object/object-lock-fields.js';
import type { BucketVersioning, LifecycleFilter, LifecycleRule, ObjectInfo, UploadRecord } from '../object/index.js';

export const dayMs = 86_400_000;

export type LifecycleActionKind = 'current' | 'noncurrent' | 'deleteMarker';

export interface LifecycleAction {
  kind: LifecycleActionKind;
  /** The version removed; for `current` in a bucket with versioning, the version a delete marker is put on. */
  versionId: string;
  ruleId: string;
  /** A removal of data (not a delete marker put on top of it). */
  removes: boolean;
}

/** A version whose data a Transition or NoncurrentVersionTransition moves to a tier now. */
export interface TransitionAction {
  versionId: string;
  tier: string;
  ruleId: string;
}

export interface KeyPlan {
  actions: LifecycleAction[];
  /** Versions to move to a tier (never one an action above removes, never one already moved). */
  transitions: TransitionAction[];
  /** Versions whose restored copy (RestoreObject) is past its expiry: the local bytes go, the tier's stay. */
  restoresEnded: string[];
  /** Versions a rule would have removed but object lock kept. */
  lockedKept: number;
}

/** The instant `days` after `fromMs`, rounded up to the next midnight UTC. */
export function dueAfterDays(fromMs: number, days: number): number {
  return (Math.floor((fromMs + days * dayMs) / dayMs) + 1) * dayMs;
}

/** The tag set stored with a version (`x-amz-tagging`, URL query form). */
export function versionTags(version: Pick<ObjectInfo, 'systemMetadata'>): Map<string, string> {
  return new Map(new URLSearchParams(version.systemMetadata['x-amz-tagging'] ?? ''));
}

/** Does the filter hold for this key and version? Size conditions do not apply to delete markers (they have no size). */
export function filterMatches(filter: LifecycleFilter, key: string, version: Pick<ObjectInfo, 'sizeBytes' | 'deleteMarker' | 'systemMetadata'>): boolean {
  if (filter.prefix !== undefined && !key.startsWith(filter.prefix)) return false;
  if (filter.tags && filter.tags.length > 0) {
    const tags = versionTags(version);
    if (!filter.tags.every((tag) => tags.get(tag.key) === tag.value)) return false;
  }
  if (version.deleteMarker) return true;
  if (filter.sizeGreaterThanBytes !== undefined && !(version.sizeBytes > filter.sizeGreaterThanBytes)) return false;
  if (filter.sizeLessThanBytes !== undefined && !(version.sizeBytes < filter.sizeLessThanBytes)) return false;
  return true;
}

/** The actions due for one key, its versions newest first. */
export function planKey(rules: LifecycleRule[], key: string, versions: ObjectInfo[], versioning: BucketVersioning, nowMs: number): KeyPlan {
  const plan: KeyPlan = { actions: [], transitions: [], restoresEnded: [], lockedKept: 0 };
  const enabled = rules.filter((rule) => rule.enabled);
  const current = versions[0];
  plan.restoresEnded = versions.filter((version) => version.transition?.restoreExpiryMs !== undefined && nowMs >= version.transition.restoreExpiryMs).map((version) => version.versionId);
  if (!current || enabled.length === 0) return plan;
  const ended = plan.restoresEnded;
  const add = (action: LifecycleAction, version: ObjectInfo): void => {
    if (action.removes && isVersionLocked(version, nowMs)) plan.lockedKept += 1;
    else plan.actions.push(action);
  };
  if (!current.deleteMarker) {
    const rule = enabled.find((candidate) => currentExpires(candidate, key, current, nowMs));
    // In a suspended bucket the delete marker takes the id `null`, replacing the null version.
    const replaced = versioning === 'unversioned' ? current : versioning === 'suspended' ? versions.find((version) => version.versionId === 'null' && !version.deleteMarker) : undefined;
    if (rule) add({ kind: 'current', versionId: current.versionId, ruleId: rule.id, removes: replaced !== undefined }, replaced ?? current);
  }
  let removedNoncurrent = 0;
  for (let index = 1; index < versions.length; index += 1) {
    const version = versions[index]!;
    const noncurrentSinceMs = versions[index - 1]!.modTimeMs;
    const rule = enabled.find((candidate) => noncurrentExpires(candidate, key, version, index - 1, noncurrentSinceMs, nowMs));
    if (!rule) continue;
    const before = plan.actions.length;
    add({ kind: 'noncurrent', versionId: version.versionId, ruleId: rule.id, removes: true }, version);
    if (plan.actions.length > before) removedNoncurrent += 1;
  }
  // A delete marker that is (or is about to be) the key's only version.
  if (current.deleteMarker && removedNoncurrent === versions.length - 1) {
    const rule = enabled.find((candidate) => markerExpires(candidate, key, current, nowMs));
    if (rule) plan.actions.push({ kind: 'deleteMarker', versionId: current.versionId, ruleId: rule.id, removes: true });
  }
  plan.transitions = transitionsDue(enabled, key, versions, plan.actions, nowMs);
  const removed = new Set(plan.actions.filter((action) => action.removes).map((action) => action.versionId));
  plan.restoresEnded = ended.filter((versionId) => !removed.has(versionId));
  return plan;
}

/**
 * The versions a transition moves now. A version has reached a transition `Days` after it was
 * written (or from `Date` on) when current, `NoncurrentDays` after it became noncurrent when
 * not; of every transition it has reached (all rules whose filter matches, each rule's several
 * transitions), it goes to the tier of the latest. A version already there stays; one on the
 * tier of an earlier reached transition moves on; one on a tier no reached transition names (the
 * rules changed since) is left where it is. A version this plan removes or expires is left alone.
 */
function transitionsDue(rules: LifecycleRule[], key: string, versions: ObjectInfo[], actions: LifecycleAction[], nowMs: number): TransitionAction[] {
  const touched = new Set(actions.map((action) => action.versionId));
  const due: TransitionAction[] = [];
  versions.forEach((version, index) => {
    if (version.deleteMarker || touched.has(version.versionId)) return;
    const reached = reachedTransitions(rules, key, version, index === 0 ? undefined : versions[index - 1]!.modTimeMs, nowMs);
    const latest = reached.reduce<ReachedTransition | undefined>((best, step) => (!best || step.dueMs > best.dueMs ? step : best), undefined);
    if (!latest) return;
    const on = version.transition?.tier;
    if (on === latest.tier) return;
    if (on !== undefined && !reached.some((step) => step.tier === on && step.dueMs < latest.dueMs)) return;
    due.push({ versionId: version.versionId, tier: latest.tier, ruleId: latest.ruleId });
  });
  return due;
}

interface ReachedTransition {
  tier: string;
  dueMs: number;
  ruleId: string;
}

/** Every transition this version has reached at `nowMs` (current when `noncurrentSinceMs` is undefined). */
function reachedTransitions(rules: LifecycleRule[], key: string, version: ObjectInfo, noncurrentSinceMs: number | undefined, nowMs: number): ReachedTransition[] {
  const reached: ReachedTransition[] = [];
  for (const rule of rules) {
    if (!filterMatches(rule.filter, key, version)) continue;
    const steps = noncurrentSinceMs === undefined
      ? currentTransitionsOf(rule).map((step) => ({ tier: step.storageClass, dueMs: step.days !== undefined ? dueAfterDays(version.modTimeMs, step.days) : step.dateMs }))
      : noncurrentTransitionsOf(rule).map((step) => ({ tier: step.storageClass, dueMs: dueAfterDays(noncurrentSinceMs, step.noncurrentDays) }));
    for (const step of steps) if (step.dueMs !== undefined && nowMs >= step.dueMs) reached.push({ tier: step.tier, dueMs: step.dueMs, ruleId: rule.id });
  }
  return reached;
}

/** A rule's Transition elements (one, several, or none). */
export function currentTransitionsOf(rule: LifecycleRule): NonNullable<LifecycleRule['transitions']> {
  return rule.transitions ?? (rule.transition ? [rule.transition] : []);
}

/** A rule's NoncurrentVersionTransition elements (one, several, or none). */
export function noncurrentTransitionsOf(rule: LifecycleRule): NonNullable<LifecycleRule['noncurrentVersionTransitions']> {
  return rule.noncurrentVersionTransitions ?? (rule.noncurrentVersionTransition ? [rule.noncurrentVersionTransition] : []);
}

/** The tiers a bucket's rules name (a tier is in use while any rule names it). */
export function tiersNamed(rules: LifecycleRule[] | undefined): string[] {
  return [...new Set((rules ?? []).flatMap((rule) => [...currentTransitionsOf(rule), ...noncurrentTransitionsOf(rule)].map((step) => step.storageClass)))];
}

function currentExpires(rule: LifecycleRule, key: string, version: ObjectInfo, nowMs: number): boolean {
  const dueMs = currentDueMs(rule, key, version);
  return dueMs !== undefined && nowMs >= dueMs;
}

/** When a rule expires this current version (undefined: it does not). */
function currentDueMs(rule: LifecycleRule, key: string, version: Pick<ObjectInfo, 'modTimeMs' | 'sizeBytes' | 'deleteMarker' | 'systemMetadata'>): number | undefined {
  const expiration = rule.expiration;
  if (!rule.enabled || !expiration || version.deleteMarker || !filterMatches(rule.filter, key, version)) return undefined;
  if (expiration.days !== undefined) return dueAfterDays(version.modTimeMs, expiration.days);
  return expiration.dateMs;
}

/** The earliest expiration a bucket's rules give a current version, and the rule that gives it (the `x-amz-expiration` header). */
export function currentExpiration(rules: LifecycleRule[] | undefined, key: string, version: Pick<ObjectInfo, 'modTimeMs' | 'sizeBytes' | 'deleteMarker' | 'systemMetadata'>): { dueMs: number; ruleId: string } | undefined {
  let earliest: { dueMs: number; ruleId: string } | undefined;
  for (const rule of rules ?? []) {
    const dueMs = currentDueMs(rule, key, version);
    if (dueMs !== undefined && (!earliest || dueMs < earliest.dueMs)) earliest = { dueMs, ruleId: rule.id };
  }
  return earliest;
}

function noncurrentExpires(rule: LifecycleRule, key: string, version: ObjectInfo, newerNoncurrent: number, noncurrentSinceMs: number, nowMs: number): boolean {
  const action = rule.noncurrentVersionExpiration;
  if (!action || !filterMatches(rule.filter, key, version)) return false;
  if (newerNoncurrent < (action.newerNoncurrentVersions ?? 0)) return false;
  return nowMs >= dueAfterDays(noncurrentSinceMs, action.noncurrentDays);
}

function markerExpires(rule: LifecycleRule, key: string, marker: ObjectInfo, nowMs: number): boolean {
  const expiration = rule.expiration;
  if (!expiration || !filterMatches(rule.filter, key, marker)) return false;
  if (expiration.expiredObjectDeleteMarker === true) return true;
  return expiration.days !== undefined && nowMs >= dueAfterDays(marker.modTimeMs, expiration.days);
}

/** The rule that aborts this incomplete upload now, if any (uploads are matched by prefix). */
export function uploadAbortRule(rules: LifecycleRule[], upload: Pick<UploadRecord, 'key' | 'initiatedMs'>, nowMs: number): LifecycleRule | undefined {
  return rules.find((rule) =>
    rule.enabled &&
    rule.abortIncompleteMultipartUploadDays !== undefined &&
    (rule.filter.prefix === undefined || upload.key.startsWith(rule.filter.prefix)) &&
    nowMs >= dueAfterDays(upload.initiatedMs, rule.abortIncompleteMultipartUploadDays));
}

/** Rules with something for the scanner to do (enabled). */
export function activeRules(rules: LifecycleRule[] | undefined): LifecycleRule[] {
  return (rules ?? []).filter((rule) => rule.enabled);
}
