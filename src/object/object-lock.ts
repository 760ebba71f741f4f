/**
 * Object lock rules of the object layer (write once, read many): a bucket's lock configuration
 * (stored in its bucket record), the default retention it gives new versions, and the checks that
 * keep a locked version from being removed or its retention from being weakened. The per-version
 * state itself lives in system metadata (object-lock-fields.ts).
 *
 * The rules, as S3 has them:
 * - a version under legal hold, or whose retention date is in the future, cannot be removed;
 * - GOVERNANCE retention gives way to a caller that asks to bypass it and may (the caller decides
 *   `bypassGovernance`); COMPLIANCE retention gives way to no one before its date;
 * - retention may always be extended; COMPLIANCE can never be shortened, removed or turned into
 *   GOVERNANCE before its date; GOVERNANCE only with the bypass.
 */
import { SvcError } from '../errors/index.js';
import type { ObjectVersion } from '../format/xl-meta-types.js';
import { isVersionLocked, legalHoldKey, lockModeKey, lockRetainUntilKey, versionLock, type RetentionMode } from './object-lock-fields.js';
import { limits } from '../util/limits.js';

export interface DefaultRetention {
  mode: RetentionMode;
  /** Exactly one of days and years, a positive integer. */
  days?: number;
  years?: number;
}

/** A bucket's object lock configuration; once present it is never removed. */
export interface BucketObjectLock {
  enabled: true;
  defaultRetention?: DefaultRetention;
}

export interface Retention {
  mode: RetentionMode;
  retainUntilMs: number;
}

const dayMs = 24 * 60 * 60 * 1000;

export function isRetentionMode(value: unknown): value is RetentionMode {
  return value === 'GOVERNANCE' || value === 'COMPLIANCE';
}

/** Checks a default retention's period as S3 does (InvalidRetentionPeriod / InvalidArgument / MalformedXML). */
export function checkDefaultRetention(rule: DefaultRetention): DefaultRetention {
  if ((rule.days === undefined) === (rule.years === undefined)) throw new SvcError('MalformedXML', 'DefaultRetention needs exactly one of Days and Years.');
  const value = rule.days ?? rule.years!;
  const max = rule.days !== undefined ? limits.maxRetentionDays : limits.maxRetentionYears;
  if (!Number.isSafeInteger(value) || value <= 0) throw new SvcError('InvalidRetentionPeriod', 'Default retention period must be a positive integer value.');
  if (value > max) throw new SvcError('InvalidArgument', `Default retention period is too large: at most ${limits.maxRetentionDays} days or ${limits.maxRetentionYears} years.`);
  return rule;
}

/** Validates the `objectLock` field of a stored bucket record (CorruptFormat when malformed). */
export function decodeBucketObjectLock(value: unknown): BucketObjectLock {
  const lock = value as Partial<BucketObjectLock> | null;
  if (typeof lock !== 'object' || lock === null || lock.enabled !== true) throw new SvcError('CorruptFormat', 'bucket record has an invalid objectLock field');
  const rule = lock.defaultRetention;
  if (rule === undefined) return { enabled: true };
  try {
    if (!isRetentionMode(rule.mode)) throw new SvcError('CorruptFormat', 'mode');
    checkDefaultRetention(rule);
  } catch {
    throw new SvcError('CorruptFormat', 'bucket record has an invalid objectLock default retention');
  }
  return { enabled: true, defaultRetention: { mode: rule.mode, ...(rule.days !== undefined ? { days: rule.days } : { years: rule.years! }) } };
}

/** The retain-until instant a default retention gives a version created at `nowMs` (years are calendar years, UTC). */
export function defaultRetainUntilMs(rule: DefaultRetention, nowMs: number): number {
  if (rule.days !== undefined) return nowMs + rule.days * dayMs;
  const date = new Date(nowMs);
  date.setUTCFullYear(date.getUTCFullYear() + rule.years!);
  return date.getTime();
}

/** Whether system metadata carries any lock field. */
export function hasLockFields(systemMetadata: Record<string, string>): boolean {
  return lockModeKey in systemMetadata || lockRetainUntilKey in systemMetadata || legalHoldKey in systemMetadata;
}

/**
 * The system metadata a new version of a bucket is written with: lock fields are refused on a
 * bucket without object lock (InvalidRequest, as S3), and without an explicit retention the
 * bucket's default retention is applied.
 */
export function withBucketLock(lock: BucketObjectLock | undefined, systemMetadata: Record<string, string>, nowMs: number): Record<string, string> {
  if (!lock) {
    if (hasLockFields(systemMetadata)) throw new SvcError('InvalidRequest', 'Bucket is missing Object Lock Configuration');
    return systemMetadata;
  }
  const rule = lock.defaultRetention;
  if (!rule || lockModeKey in systemMetadata) return systemMetadata;
  return { ...systemMetadata, ...retentionFields({ mode: rule.mode, retainUntilMs: defaultRetainUntilMs(rule, nowMs) }) };
}

/** System metadata entries of a retention. */
export function retentionFields(retention: Retention): Record<string, string> {
  return { [lockModeKey]: retention.mode, [lockRetainUntilKey]: new Date(retention.retainUntilMs).toISOString() };
}

/** System metadata with the retention replaced (undefined: removed). */
export function withRetention(systemMetadata: Record<string, string>, retention: Retention | undefined): Record<string, string> {
  const { [lockModeKey]: _mode, [lockRetainUntilKey]: _until, ...rest } = systemMetadata;
  return retention ? { ...rest, ...retentionFields(retention) } : rest;
}

/** System metadata with the legal hold set to ON or OFF (undefined: never set, no entry). */
export function withLegalHold(systemMetadata: Record<string, string>, status: 'ON' | 'OFF' | undefined): Record<string, string> {
  const { [legalHoldKey]: _old, ...rest } = systemMetadata;
  return status === undefined ? rest : { ...rest, [legalHoldKey]: status };
}

/** System metadata without any lock field (a copy does not inherit its source's locks). */
export function withoutLockFields(systemMetadata: Record<string, string>): Record<string, string> {
  return withLegalHold(withRetention(systemMetadata, undefined), undefined);
}

function lockedError(reason: string): SvcError {
  return new SvcError('AccessDenied', `Access Denied because object protected by object lock (${reason}).`, { objectLock: true });
}

/** Throws AccessDenied when the version may not be removed at `nowMs`. */
export function checkRemovable(version: Pick<ObjectVersion, 'systemMetadata' | 'versionId'>, nowMs: number, bypassGovernance: boolean): void {
  if (!isVersionLocked(version, nowMs)) return;
  const lock = versionLock(version);
  if (lock.legalHold) throw lockedError(`version ${version.versionId} is under legal hold`);
  const retention = lock.retention!;
  const until = new Date(retention.retainUntilMs).toISOString();
  if (retention.mode === 'COMPLIANCE') throw lockedError(`version ${version.versionId} is in COMPLIANCE mode until ${until}`);
  if (!bypassGovernance) throw lockedError(`version ${version.versionId} is in GOVERNANCE mode until ${until}; bypassing it needs x-amz-bypass-governance-retention and s3:BypassGovernanceRetention`);
}

/**
 * Throws AccessDenied when the version's retention may not become `next` (undefined: removed)
 * at `nowMs`; a new retention date must lie in the future (InvalidArgument).
 */
export function checkRetentionChange(version: Pick<ObjectVersion, 'systemMetadata'>, next: Retention | undefined, nowMs: number, bypassGovernance: boolean): void {
  if (next && next.retainUntilMs <= nowMs) throw new SvcError('InvalidArgument', 'The retain until date must be in the future!');
  const current = versionLock(version).retention;
  if (!current || current.retainUntilMs <= nowMs) return;
  const weakened = !next || next.retainUntilMs < current.retainUntilMs;
  if (current.mode === 'COMPLIANCE') {
    if (weakened || next.mode !== 'COMPLIANCE') throw lockedError('COMPLIANCE retention cannot be shortened, removed or changed to GOVERNANCE before its date');
    return;
  }
  if (weakened && !bypassGovernance) throw lockedError('GOVERNANCE retention can be shortened or removed only with x-amz-bypass-governance-retention and s3:BypassGovernanceRetention');
}
