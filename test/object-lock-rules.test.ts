/**
 * The object lock rules of the object layer, against a reference written here: who may remove a
 * version, who may change its retention, and what a bucket record may hold. fast-check prints the
 * seed of a failure; OBJECT_LOCK_SEED replays it.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeBucketRecord, encodeBucketRecord, type BucketRecord } from '../src/object/bucket-metadata.js';
import { checkRemovable, checkRetentionChange, defaultRetainUntilMs, withBucketLock, type Retention } from '../src/object/object-lock.js';
import { legalHoldKey, lockModeKey, lockRetainUntilKey, type RetentionMode } from '../src/object/object-lock-fields.js';

const seed = process.env.OBJECT_LOCK_SEED === undefined ? undefined : Number(process.env.OBJECT_LOCK_SEED);
const options = { numRuns: 500, ...(seed === undefined ? {} : { seed }) };
const nowMs = Date.UTC(2026, 0, 1);

const mode = fc.constantFrom<RetentionMode>('GOVERNANCE', 'COMPLIANCE');
const offsetMs = fc.integer({ min: -10_000, max: 10_000 });
const lockState = fc.record({ retention: fc.option(fc.record({ mode, offsetMs }), { nil: undefined }), hold: fc.constantFrom<'ON' | 'OFF' | undefined>('ON', 'OFF', undefined) });

function versionOf(state: { retention: { mode: RetentionMode; offsetMs: number } | undefined; hold: 'ON' | 'OFF' | undefined }) {
  const systemMetadata: Record<string, string> = {};
  if (state.retention) {
    systemMetadata[lockModeKey] = state.retention.mode;
    systemMetadata[lockRetainUntilKey] = new Date(nowMs + state.retention.offsetMs).toISOString();
  }
  if (state.hold) systemMetadata[legalHoldKey] = state.hold;
  return { versionId: 'v', systemMetadata };
}

const refusal = (action: () => void): string => {
  try {
    action();
    return 'allowed';
  } catch (error) {
    return (error as { code: string }).code;
  }
};

describe('object lock rules', () => {
  it('a version can be removed exactly when no legal hold is ON and its retention has passed, or is GOVERNANCE and bypassed', () => {
    fc.assert(
      fc.property(lockState, fc.boolean(), (state, bypass) => {
        const retained = state.retention !== undefined && state.retention.offsetMs > 0;
        const expected = state.hold === 'ON' || (retained && (state.retention!.mode === 'COMPLIANCE' || !bypass)) ? 'AccessDenied' : 'allowed';
        expect(refusal(() => checkRemovable(versionOf(state), nowMs, bypass))).toBe(expected);
      }),
      options,
    );
  });

  it('retention is extended freely; COMPLIANCE never weakens before its date; GOVERNANCE weakens only with the bypass', () => {
    const next = fc.option(fc.record({ mode, offsetMs: fc.integer({ min: -10_000, max: 20_000 }) }), { nil: undefined });
    fc.assert(
      fc.property(lockState, next, fc.boolean(), (state, change, bypass) => {
        const wanted: Retention | undefined = change && { mode: change.mode, retainUntilMs: nowMs + change.offsetMs };
        const current = state.retention && state.retention.offsetMs > 0 ? state.retention : undefined;
        const weakened = current !== undefined && (change === undefined || change.offsetMs < current.offsetMs);
        let expected = 'allowed';
        if (change && change.offsetMs <= 0) expected = 'InvalidArgument';
        else if (current?.mode === 'COMPLIANCE' && (weakened || change!.mode !== 'COMPLIANCE')) expected = 'AccessDenied';
        else if (current?.mode === 'GOVERNANCE' && weakened && !bypass) expected = 'AccessDenied';
        expect(refusal(() => checkRetentionChange(versionOf(state), wanted, nowMs, bypass))).toBe(expected);
      }),
      options,
    );
  });

  it('a bucket default applies to versions that name no retention; lock fields on a bucket without object lock are InvalidRequest', () => {
    const lock = { enabled: true as const, defaultRetention: { mode: 'COMPLIANCE' as const, years: 1 } };
    expect(withBucketLock(lock, {}, nowMs)).toEqual({ [lockModeKey]: 'COMPLIANCE', [lockRetainUntilKey]: '2027-01-01T00:00:00.000Z' });
    expect(withBucketLock(lock, { [lockModeKey]: 'GOVERNANCE', [lockRetainUntilKey]: 'x' }, nowMs)[lockModeKey]).toBe('GOVERNANCE');
    expect(withBucketLock({ enabled: true }, { a: 'b' }, nowMs)).toEqual({ a: 'b' });
    expect(refusal(() => withBucketLock(undefined, { [legalHoldKey]: 'OFF' }, nowMs))).toBe('InvalidRequest');
    expect(defaultRetainUntilMs({ mode: 'GOVERNANCE', days: 2 }, nowMs)).toBe(nowMs + 2 * 86_400_000);
    expect(new Date(defaultRetainUntilMs({ mode: 'GOVERNANCE', years: 1 }, Date.UTC(2028, 1, 29))).toISOString()).toBe('2029-03-01T00:00:00.000Z');
  });

  it('a bucket record keeps its object lock through encode and decode, and a malformed one is CorruptFormat', () => {
    const base: BucketRecord = { version: 1, name: 'b', createdMs: 1, updatedMs: 2, versioning: 'enabled' };
    const locked: BucketRecord = { ...base, objectLock: { enabled: true, defaultRetention: { mode: 'GOVERNANCE', days: 30 } } };
    expect(decodeBucketRecord(encodeBucketRecord(locked))).toEqual(locked);
    expect(decodeBucketRecord(encodeBucketRecord(base))).toEqual(base);
    const bad: unknown[] = [
      { enabled: false },
      { enabled: true, defaultRetention: { mode: 'FOREVER', days: 1 } },
      { enabled: true, defaultRetention: { mode: 'GOVERNANCE', days: 1, years: 1 } },
      { enabled: true, defaultRetention: { mode: 'GOVERNANCE', days: 0 } },
      'yes',
    ];
    for (const objectLock of bad) {
      expect([objectLock, refusal(() => decodeBucketRecord(Buffer.from(JSON.stringify({ ...base, objectLock }))))]).toEqual([objectLock, 'CorruptFormat']);
    }
    expect(refusal(() => decodeBucketRecord(encodeBucketRecord({ ...locked, versioning: 'suspended' })))).toBe('CorruptFormat');
  });
});
