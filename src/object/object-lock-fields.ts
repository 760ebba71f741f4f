/**
 * Where a version's object-lock state lives: three entries of its `systemMetadata` in xl.meta,
 * named after the S3 headers that set them. Because they are ordinary version metadata, heal,
 * rebalance and decommission carry them with the version unchanged.
 *
 * - `x-amz-object-lock-mode`: `GOVERNANCE` or `COMPLIANCE` (absent: no retention);
 * - `x-amz-object-lock-retain-until-date`: ISO 8601 instant, UTC (absent with no mode);
 * - `x-amz-object-lock-legal-hold`: `ON` or `OFF` (absent: `OFF`).
 */
import type { ObjectVersion } from '../format/xl-meta-types.js';

export const lockModeKey = 'x-amz-object-lock-mode';
export const lockRetainUntilKey = 'x-amz-object-lock-retain-until-date';
export const legalHoldKey = 'x-amz-object-lock-legal-hold';

export type RetentionMode = 'GOVERNANCE' | 'COMPLIANCE';

export interface VersionLock {
  retention?: { mode: RetentionMode; retainUntilMs: number };
  legalHold: boolean;
}

/** The lock state recorded on a version; unknown or malformed entries count as no lock. */
export function versionLock(version: Pick<ObjectVersion, 'systemMetadata'>): VersionLock {
  const meta = version.systemMetadata;
  const mode = meta[lockModeKey];
  const until = Date.parse(meta[lockRetainUntilKey] ?? '');
  const legalHold = meta[legalHoldKey] === 'ON';
  if ((mode !== 'GOVERNANCE' && mode !== 'COMPLIANCE') || !Number.isFinite(until)) return { legalHold };
  return { retention: { mode, retainUntilMs: until }, legalHold };
}

/**
 * Whether a version may not be deleted at `nowMs` by anyone who cannot bypass governance:
 * a legal hold, or a retention date still in the future.
 */
export function isVersionLocked(version: Pick<ObjectVersion, 'systemMetadata'>, nowMs: number): boolean {
  const lock = versionLock(version);
  return lock.legalHold || (lock.retention !== undefined && lock.retention.retainUntilMs > nowMs);
}
