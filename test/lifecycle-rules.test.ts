/**
 * Properties of the lifecycle planner (src/ops/lifecycle-rules.ts) on random keys, versions,
 * lock states, rules and instants: nothing locked is ever removed, and what is due stays due as
 * time passes. LIFECYCLE_SEED replays a failure (fast-check prints the seed); LIFECYCLE_RUNS
 * raises the number of runs. Also: the scanner's settings from the environment.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { BucketVersioning, LifecycleRule, ObjectInfo } from '../src/object/index.js';
import { isVersionLocked, legalHoldKey, lockModeKey, lockRetainUntilKey } from '../src/object/object-lock-fields.js';
import { planKey, type LifecycleAction } from '../src/ops/lifecycle-rules.js';
import { readServerConfig } from '../src/cluster/server-config.js';
import { limits } from '../src/util/limits.js';
import { codeOf } from './helpers/codes.js';

const runs = Number(process.env.LIFECYCLE_RUNS ?? 300);
const seed = process.env.LIFECYCLE_SEED === undefined ? undefined : Number(process.env.LIFECYCLE_SEED);
const options = { numRuns: runs, ...(seed === undefined ? {} : { seed }) };

const dayMs = 86_400_000;
const baseMs = Date.parse('2030-01-01T00:00:00Z');

const lockArb = fc.oneof(
  fc.constant<Record<string, string>>({}),
  fc.constant<Record<string, string>>({ [legalHoldKey]: 'ON' }),
  fc.record({ mode: fc.constantFrom('GOVERNANCE', 'COMPLIANCE'), untilDays: fc.integer({ min: 0, max: 60 }) }).map(({ mode, untilDays }) => ({ [lockModeKey]: mode, [lockRetainUntilKey]: new Date(baseMs + untilDays * dayMs).toISOString() })),
);

const versionArb = fc.record({ deleteMarker: fc.boolean(), sizeBytes: fc.integer({ min: 0, max: 20 }), lock: lockArb, tagged: fc.boolean(), gapMs: fc.integer({ min: 1, max: 5 * dayMs }) });

/** Versions newest first, with increasing age; the oldest may be the null version. */
const versionsArb = fc.tuple(fc.array(versionArb, { minLength: 1, maxLength: 6 }), fc.boolean()).map(([drafts, oldestIsNull]) => {
  let modTimeMs = baseMs + 20 * dayMs;
  return drafts.map((draft, index): ObjectInfo => {
    modTimeMs -= draft.gapMs;
    const systemMetadata = { ...(draft.deleteMarker ? {} : draft.lock), ...(draft.tagged && !draft.deleteMarker ? { 'x-amz-tagging': 'class=temp' } : {}) };
    return {
      bucket: 'b', key: 'logs/k', versionId: oldestIsNull && index === drafts.length - 1 ? 'null' : `v${index}`, isLatest: index === 0, deleteMarker: draft.deleteMarker,
      sizeBytes: draft.deleteMarker ? 0 : draft.sizeBytes, etag: 'e', modTimeMs, userMetadata: {}, systemMetadata, storageClass: 'STANDARD', parts: [], inline: true, dataShards: 2, parityShards: 2,
    };
  });
});

const ruleArb = fc.record({
  filter: fc.constantFrom<LifecycleRule['filter']>({}, { prefix: 'logs/' }, { prefix: 'other/' }, { tags: [{ key: 'class', value: 'temp' }] }, { sizeGreaterThanBytes: 5, sizeLessThanBytes: 15 }),
  expiration: fc.option(fc.oneof(fc.integer({ min: 1, max: 10 }).map((days) => ({ days })), fc.integer({ min: 0, max: 40 }).map((days) => ({ dateMs: baseMs + days * dayMs })), fc.constant({ expiredObjectDeleteMarker: true })), { nil: undefined }),
  noncurrent: fc.option(fc.record({ noncurrentDays: fc.integer({ min: 1, max: 10 }), newerNoncurrentVersions: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }) }), { nil: undefined }),
}).map(({ filter, expiration, noncurrent }): LifecycleRule => ({
  id: 'r', enabled: true, filter,
  ...(expiration ? { expiration } : {}),
  ...(noncurrent ? { noncurrentVersionExpiration: { noncurrentDays: noncurrent.noncurrentDays, ...(noncurrent.newerNoncurrentVersions !== undefined ? { newerNoncurrentVersions: noncurrent.newerNoncurrentVersions } : {}) } } : {}),
}));

const versioningArb = fc.constantFrom<BucketVersioning>('unversioned', 'enabled', 'suspended');
const nowArb = fc.integer({ min: 0, max: 80 * dayMs }).map((offsetMs) => baseMs + offsetMs);

/** The version an action removes (undefined: a delete marker put on top, nothing removed). */
function removedVersion(action: LifecycleAction, versions: ObjectInfo[], versioning: BucketVersioning): ObjectInfo | undefined {
  if (!action.removes) return undefined;
  if (action.kind !== 'current') return versions.find((version) => version.versionId === action.versionId);
  return versioning === 'unversioned' ? versions[0] : versions.find((version) => version.versionId === 'null' && !version.deleteMarker);
}

const describeAction = (action: LifecycleAction) => `${action.kind}:${action.versionId}`;

describe('lifecycle planner properties', () => {
  it('never removes a version that object lock holds at that instant', () => {
    fc.assert(fc.property(fc.array(ruleArb, { minLength: 1, maxLength: 3 }), versionsArb, versioningArb, nowArb, (rules, versions, versioning, nowMs) => {
      const plan = planKey(rules, 'logs/k', versions, versioning, nowMs);
      for (const action of plan.actions) {
        const removed = removedVersion(action, versions, versioning);
        expect(removed === undefined || !isVersionLocked(removed, nowMs), `${describeAction(action)} removes a locked version`).toBe(true);
      }
    }), options);
  });

  it('keeps what is due due: without locks, every action planned at one instant is planned at any later one', () => {
    const unlocked = versionsArb.map((versions) => versions.map((version) => ({ ...version, systemMetadata: Object.fromEntries(Object.entries(version.systemMetadata).filter(([name]) => !name.startsWith('x-amz-object-lock'))) })));
    fc.assert(fc.property(fc.array(ruleArb, { minLength: 1, maxLength: 3 }), unlocked, versioningArb, nowArb, fc.integer({ min: 0, max: 30 * dayMs }), (rules, versions, versioning, nowMs, laterMs) => {
      const before = planKey(rules, 'logs/k', versions, versioning, nowMs).actions.map(describeAction);
      const after = new Set(planKey(rules, 'logs/k', versions, versioning, nowMs + laterMs).actions.map(describeAction));
      expect(before.filter((action) => !after.has(action))).toEqual([]);
    }), options);
  });

  it('plans each version at most once, and nothing for a rule whose prefix does not match', () => {
    fc.assert(fc.property(fc.array(ruleArb, { minLength: 1, maxLength: 3 }), versionsArb, versioningArb, nowArb, (rules, versions, versioning, nowMs) => {
      const actions = planKey(rules, 'logs/k', versions, versioning, nowMs).actions.map(describeAction);
      expect(new Set(actions).size).toBe(actions.length);
      const elsewhere = rules.map((rule) => ({ ...rule, filter: { ...rule.filter, prefix: 'other/' } }));
      expect(planKey(elsewhere, 'logs/k', versions, versioning, nowMs).actions).toEqual([]);
    }), options);
  });
});

describe('lifecycle scanner settings from the environment', () => {
  const settings = (env: Record<string, string>) => {
    const config = readServerConfig(['/srv/d{1...4}'], env);
    return { perSecond: config.lifecycleObjectsPerSecond, intervalMs: config.lifecycleIntervalMs, offsetMs: config.lifecycleClockOffsetMs };
  };

  it('default to the limits and read counts and durations', () => {
    expect(settings({})).toEqual({ perSecond: limits.lifecycleObjectsPerSecondDefault, intervalMs: limits.lifecycleIntervalMsDefault, offsetMs: 0 });
    expect(settings({ SVC_LIFECYCLE_OBJECTS_PER_SECOND: '50', SVC_LIFECYCLE_INTERVAL: '15m', SVC_LIFECYCLE_CLOCK_OFFSET: '2d' })).toEqual({ perSecond: 50, intervalMs: 15 * 60_000, offsetMs: 2 * dayMs });
    expect(settings({ SVC_LIFECYCLE_OBJECTS_PER_SECOND: '999999999' }).perSecond).toBe(limits.lifecycleObjectsPerSecondMax);
  });

  it('refuse what is not a count or a duration, a zero rate and an interval under a second', () => {
    for (const env of [{ SVC_LIFECYCLE_OBJECTS_PER_SECOND: '0' }, { SVC_LIFECYCLE_OBJECTS_PER_SECOND: 'fast' }, { SVC_LIFECYCLE_INTERVAL: '500ms' }, { SVC_LIFECYCLE_INTERVAL: 'hourly' }, { SVC_LIFECYCLE_CLOCK_OFFSET: '-1d' }] as Record<string, string>[]) {
      expect(codeOf(() => settings(env)), JSON.stringify(env)).toBe('InvalidConfiguration');
    }
  });
});
