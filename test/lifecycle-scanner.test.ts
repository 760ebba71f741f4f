/**
 * The lifecycle scanner against a real object layer on real drives (fs, four drives, EC:2), with
 * one fake clock for both the object layer (modification times) and the scanner (`now`): every
 * rule is checked one day before, just before and at its boundary.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ObjectLayer, type LifecycleRule, type ObjectInfo } from '../src/object/index.js';
import { LifecycleScanner } from '../src/ops/lifecycle.js';
import { dueAfterDays, planKey } from '../src/ops/lifecycle-rules.js';
import { legalHoldKey, lockModeKey, lockRetainUntilKey } from '../src/object/object-lock-fields.js';
import { makeTestSet, chunked, type TestSet } from './helpers/erasure-set.js';
import { waitFor } from './helpers/poll.js';

const dayMs = 86_400_000;
const t0 = Date.parse('2030-01-10T10:30:00Z');
const silent = { info: () => undefined, warn: () => undefined };

let test: TestSet;
let objects: ObjectLayer;
let nowMs = t0;

beforeEach(async () => {
  nowMs = t0;
  test = await makeTestSet({ drives: 4, parity: 2, backend: 'fs', nowMs: () => nowMs });
  objects = new ObjectLayer({ deploymentId: '00000000-0000-4000-8000-000000000000', pools: [{ index: 0, sets: [test.set] }], clock: { nowMs: () => nowMs } });
});

afterEach(async () => {
  await test.cleanup();
});

function scanner(objectsPerSecond = 100_000): LifecycleScanner {
  return new LifecycleScanner({ objects, now: () => nowMs, objectsPerSecond, intervalMs: 60_000, ownsBucket: () => true, lockBucket: async () => () => undefined, logger: silent });
}

async function bucketWith(name: string, rules: LifecycleRule[], versioning?: 'enabled' | 'object-lock'): Promise<void> {
  await objects.makeBucket(name, versioning === 'object-lock' ? { objectLock: true } : {});
  if (versioning === 'enabled') await objects.setBucketVersioning(name, versioning);
  await objects.setBucketLifecycle(name, rules);
}

async function put(bucket: string, key: string, body = 'x', systemMetadata: Record<string, string> = {}): Promise<ObjectInfo> {
  return objects.putObject(bucket, key, chunked(Buffer.from(body)), { storageClass: 'STANDARD', sizeBytes: body.length, systemMetadata });
}

async function versionsOf(bucket: string, key: string): Promise<ObjectInfo[]> {
  for await (const entry of objects.list(bucket, { prefix: key })) if (entry.kind === 'object' && entry.key === key) return entry.versions;
  return [];
}

async function keysOf(bucket: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const entry of objects.list(bucket, { prefix: '' })) if (entry.kind === 'object' && !entry.versions[0]!.deleteMarker) keys.push(entry.key);
  return keys;
}

/** Runs a cycle at `atMs`. */
async function cycleAt(atMs: number, objectsPerSecond?: number) {
  nowMs = atMs;
  return scanner(objectsPerSecond).runCycle('manual');
}

const rule = (fields: Partial<LifecycleRule>): LifecycleRule => ({ id: 'r', enabled: true, filter: {}, ...fields });

describe('lifecycle scanner on a real object layer with an injected clock', () => {
  it('rounds days up to the next midnight UTC after the modification time plus the days', () => {
    expect(new Date(dueAfterDays(t0, 1)).toISOString()).toBe('2030-01-12T00:00:00.000Z');
    expect(new Date(dueAfterDays(Date.parse('2030-01-10T00:00:00Z'), 1)).toISOString()).toBe('2030-01-12T00:00:00.000Z');
    expect(new Date(dueAfterDays(Date.parse('2030-01-10T23:59:59.999Z'), 3)).toISOString()).toBe('2030-01-14T00:00:00.000Z');
  });

  it('expires a current object exactly at its boundary in an unversioned bucket (deleted), with the status counting it', async () => {
    await bucketWith('plain', [rule({ expiration: { days: 1 } })]);
    await put('plain', 'a');
    const due = Date.parse('2030-01-12T00:00:00Z');
    expect((await cycleAt(due - dayMs)).expired.currentVersions).toBe(0);
    expect((await cycleAt(due - 1)).expired.currentVersions).toBe(0);
    expect(await keysOf('plain')).toEqual(['a']);
    const cycle = await cycleAt(due);
    expect(cycle).toMatchObject({ bucketsScanned: 1, objectsScanned: 1, versionsScanned: 1, errors: 0, expired: { currentVersions: 1, noncurrentVersions: 0, deleteMarkers: 0, multipartUploads: 0 } });
    expect(cycle.finishedAt).not.toBeNull();
    expect(await versionsOf('plain', 'a')).toEqual([]);
  });

  it('expires by Date: kept before the date, expired from it on', async () => {
    const dateMs = Date.parse('2030-02-01T00:00:00Z');
    await bucketWith('dated', [rule({ expiration: { dateMs } })]);
    await put('dated', 'a');
    await cycleAt(dateMs - 1);
    expect(await keysOf('dated')).toEqual(['a']);
    await cycleAt(dateMs);
    expect(await keysOf('dated')).toEqual([]);
  });

  it('puts a delete marker on an expired current version of a versioned bucket and keeps the version', async () => {
    await bucketWith('versioned', [rule({ expiration: { days: 2 } })], 'enabled');
    const written = await put('versioned', 'a');
    const due = dueAfterDays(t0, 2);
    await cycleAt(due - 1);
    expect((await versionsOf('versioned', 'a')).map((v) => v.deleteMarker)).toEqual([false]);
    const cycle = await cycleAt(due);
    expect(cycle.expired.currentVersions).toBe(1);
    const versions = await versionsOf('versioned', 'a');
    expect(versions.map((v) => v.deleteMarker)).toEqual([true, false]);
    expect(versions[1]!.versionId).toBe(written.versionId);
    // A second cycle adds no marker on top of the marker.
    expect((await cycleAt(due + dayMs)).expired.currentVersions).toBe(0);
    expect(await versionsOf('versioned', 'a')).toHaveLength(2);
  });

  it('counts noncurrent days from when a version became noncurrent (its successor\'s time), keeping NewerNoncurrentVersions', async () => {
    await bucketWith('nc', [rule({ noncurrentVersionExpiration: { noncurrentDays: 2, newerNoncurrentVersions: 1 } })], 'enabled');
    nowMs = Date.parse('2030-01-01T08:00:00Z');
    const v1 = await put('nc', 'k', 'one');
    nowMs = Date.parse('2030-01-05T08:00:00Z');
    const v2 = await put('nc', 'k', 'two');
    nowMs = Date.parse('2030-01-05T09:00:00Z');
    const v3 = await put('nc', 'k', 'three');
    nowMs = Date.parse('2030-01-05T10:00:00Z');
    const v4 = await put('nc', 'k', 'four');
    // v1 became noncurrent on 01-05 08:00 (v2's time): due 01-08 00:00, not 01-04 (from its own time).
    const due = Date.parse('2030-01-08T00:00:00Z');
    await cycleAt(due - dayMs);
    await cycleAt(due - 1);
    expect((await versionsOf('nc', 'k')).map((v) => v.versionId)).toEqual([v4, v3, v2, v1].map((v) => v.versionId));
    const cycle = await cycleAt(due);
    // v3 is the one newer noncurrent version kept; v2 and v1 go.
    expect(cycle.expired.noncurrentVersions).toBe(2);
    expect((await versionsOf('nc', 'k')).map((v) => v.versionId)).toEqual([v4, v3].map((v) => v.versionId));
  });

  it('removes an expired object delete marker once it is the only version, and not before', async () => {
    await bucketWith('markers', [rule({ expiration: { expiredObjectDeleteMarker: true }, noncurrentVersionExpiration: { noncurrentDays: 1 } })], 'enabled');
    await put('markers', 'gone');
    nowMs = t0 + 60_000;
    await objects.deleteObject('markers', 'gone');
    const due = dueAfterDays(t0 + 60_000, 1);
    const before = await cycleAt(due - 1);
    expect(before.expired).toMatchObject({ noncurrentVersions: 0, deleteMarkers: 0 });
    expect((await versionsOf('markers', 'gone')).map((v) => v.deleteMarker)).toEqual([true, false]);
    const at = await cycleAt(due);
    expect(at.expired).toMatchObject({ noncurrentVersions: 1, deleteMarkers: 1 });
    expect(await versionsOf('markers', 'gone')).toEqual([]);
  });

  it('removes a sole delete marker by Expiration Days counted from the marker\'s time', async () => {
    await bucketWith('marker-days', [rule({ expiration: { days: 3 } })], 'enabled');
    await objects.deleteObject('marker-days', 'lonely');
    const due = dueAfterDays(t0, 3);
    expect((await cycleAt(due - 1)).expired.deleteMarkers).toBe(0);
    expect(await versionsOf('marker-days', 'lonely')).toHaveLength(1);
    expect((await cycleAt(due)).expired.deleteMarkers).toBe(1);
    expect(await versionsOf('marker-days', 'lonely')).toEqual([]);
  });

  it('aborts an incomplete multipart upload at DaysAfterInitiation, by prefix', async () => {
    await bucketWith('uploads', [rule({ filter: { prefix: 'tmp/' }, abortIncompleteMultipartUploadDays: 1 })]);
    const abandoned = await objects.createMultipartUpload('uploads', 'tmp/big', { storageClass: 'STANDARD' });
    await objects.createMultipartUpload('uploads', 'keep/big', { storageClass: 'STANDARD' });
    const due = dueAfterDays(t0, 1);
    await cycleAt(due - 1);
    expect((await objects.listMultipartUploads('uploads')).map((u) => u.key)).toEqual(['keep/big', 'tmp/big']);
    const cycle = await cycleAt(due);
    expect(cycle.expired.multipartUploads).toBe(1);
    const left = await objects.listMultipartUploads('uploads');
    expect(left.map((u) => u.key)).toEqual(['keep/big']);
    expect(left.some((u) => u.uploadId === abandoned)).toBe(false);
  });

  it('applies filters by prefix, tag (all of them) and size', async () => {
    await bucketWith('filters', [
      rule({ id: 'logs', filter: { prefix: 'logs/' }, expiration: { days: 1 } }),
      rule({ id: 'tagged', filter: { tags: [{ key: 'class', value: 'temp' }, { key: 'team', value: 'a' }] }, expiration: { days: 1 } }),
      rule({ id: 'sized', filter: { prefix: 'sized/', sizeGreaterThanBytes: 2, sizeLessThanBytes: 5 }, expiration: { days: 1 } }),
      rule({ id: 'off', enabled: false, filter: { prefix: 'off/' }, expiration: { days: 1 } }),
    ]);
    await put('filters', 'logs/1');
    await put('filters', 'data/1');
    await put('filters', 'data/tagged', 'x', { 'x-amz-tagging': 'class=temp&team=a' });
    await put('filters', 'data/half-tagged', 'x', { 'x-amz-tagging': 'class=temp' });
    await put('filters', 'sized/2', '12');
    await put('filters', 'sized/3', '123');
    await put('filters', 'sized/5', '12345');
    await put('filters', 'off/1');
    await cycleAt(dueAfterDays(t0, 1));
    expect(await keysOf('filters')).toEqual(['data/1', 'data/half-tagged', 'off/1', 'sized/2', 'sized/5']);
  });

  it('never removes a version locked by retention or legal hold; a delete marker may still be put on it', async () => {
    const retainUntil = new Date(t0 + 10 * dayMs).toISOString();
    // Object lock needs versioning: the bucket is created with it (versioning on for good).
    await bucketWith('locked', [rule({ expiration: { days: 1 }, noncurrentVersionExpiration: { noncurrentDays: 1 } })], 'object-lock');
    const retained = await put('locked', 'retained', 'r', { [lockModeKey]: 'COMPLIANCE', [lockRetainUntilKey]: retainUntil });
    const held = await put('locked', 'held', 'h', { [legalHoldKey]: 'ON' });
    const governed = await put('locked', 'governed', 'g', { [lockModeKey]: 'GOVERNANCE', [lockRetainUntilKey]: retainUntil });
    await cycleAt(dueAfterDays(t0, 1));
    // Markers on top; the versions stay.
    expect((await versionsOf('locked', 'retained')).map((v) => [v.deleteMarker, v.versionId])[1]).toEqual([false, retained.versionId]);
    expect((await versionsOf('locked', 'held')).map((v) => v.deleteMarker)).toEqual([true, false]);
    expect((await versionsOf('locked', 'governed')).map((v) => v.versionId)[1]).toBe(governed.versionId);
    // Noncurrent and due, but locked: kept and counted.
    const kept = await cycleAt(t0 + 5 * dayMs);
    expect(kept.lockedVersionsKept).toBe(3);
    expect(kept.expired.noncurrentVersions).toBe(0);
    expect(await versionsOf('locked', 'held')).toHaveLength(2);
    // After the retention date the retained versions go (and their markers, now the only
    // versions, with them: Expiration Days removes expired delete markers); the legal hold keeps
    // the other one.
    const after = await cycleAt(t0 + 11 * dayMs);
    expect(after.expired).toMatchObject({ noncurrentVersions: 2, deleteMarkers: 2 });
    expect(await versionsOf('locked', 'retained')).toEqual([]);
    expect(await versionsOf('locked', 'governed')).toEqual([]);
    expect((await versionsOf('locked', 'held')).map((v) => v.versionId)[1]).toBe(held.versionId);
  });

  it('plans nothing for a locked version whatever the rules, over many instants', () => {
    const version = (id: string, modTimeMs: number, locked: boolean): ObjectInfo => ({
      bucket: 'b', key: 'k', versionId: id, isLatest: false, deleteMarker: false, sizeBytes: 1, etag: 'e', modTimeMs, userMetadata: {},
      systemMetadata: locked ? { [legalHoldKey]: 'ON' } : {}, storageClass: 'STANDARD', parts: [], inline: true, dataShards: 2, parityShards: 2,
    });
    const rules = [rule({ expiration: { days: 1 }, noncurrentVersionExpiration: { noncurrentDays: 1 } })];
    for (let day = 0; day < 400; day += 7) {
      const versions = [version('c', t0, true), version('n1', t0 - dayMs, true), version('n2', t0 - 2 * dayMs, false)];
      for (const versioning of ['unversioned', 'enabled', 'suspended'] as const) {
        const plan = planKey(rules, 'k', versions, versioning, t0 + day * dayMs);
        const removed = plan.actions.filter((action) => action.removes).map((action) => action.versionId);
        expect(removed.filter((id) => id !== 'n2')).toEqual([]);
      }
    }
  });

  it('walks at most the configured number of keys a second', async () => {
    await bucketWith('paced', [rule({ expiration: { days: 30 } })]);
    for (let index = 0; index < 10; index += 1) await put('paced', `k${index}`);
    const startedMs = performance.now();
    const cycle = await cycleAt(t0 + dayMs, 20);
    expect(cycle.objectsScanned).toBe(10);
    expect(performance.now() - startedMs).toBeGreaterThanOrEqual(450);
  });

  it('refuses a second cycle while one runs, and reports the running one as current', async () => {
    await bucketWith('busy', [rule({ expiration: { days: 30 } })]);
    for (let index = 0; index < 6; index += 1) await put('busy', `k${index}`);
    const scan = scanner(10);
    const started = scan.runNow();
    expect(started.trigger).toBe('manual');
    expect(() => scan.runNow()).toThrow(expect.objectContaining({ code: 'LifecycleScanRunning' }));
    const midway = await waitFor('the cycle to scan its first key', () => {
      const status = scan.status();
      return (status.current?.objectsScanned ?? 0) > 0 && status;
    });
    expect(midway.running).toBe(true);
    expect(midway.current!.objectsScanned).toBeLessThan(6);
    await waitFor('the cycle to end', () => !scan.status().running, { intervalMs: 50 });
    expect(scan.status()).toMatchObject({ running: false, current: null, last: { objectsScanned: 6, trigger: 'manual', errors: 0 } });
    expect(scan.status().last!.finishedAt).not.toBeNull();
    // Closing stops a running cycle between keys.
    scan.runNow();
    await scan.close();
    expect(scan.status().last!.objectsScanned).toBeLessThan(6);
  });
});
