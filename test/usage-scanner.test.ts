/**
 * The data-usage scanner against a real object layer (memfs drives, one set of four, EC:2) with its
 * result and checkpoint in a real state store on the same drives:
 * - property: after random PUT, DELETE, version DELETE and versioning sequences over three buckets,
 *   a scan stopped after a random number of keys and taken up by a new scanner (a restart) counts
 *   what a full listing shows, and the second scanner walks only the keys after the checkpoint;
 * - a crash: saves stop reaching the drives mid-scan (as if the power went); the next scanner takes
 *   up the last checkpoint that was written, not the start;
 * - the persisted file is strict: a damaged copy is quarantined and the others answer.
 * SVC_PROPERTY_SEED replays a failure (the seed is printed); SVC_PROPERTY_RUNS sets the runs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ObjectLayer } from '../src/object/index.js';
import { StateStore } from '../src/ops/state-store.js';
import { UsageScanner, type BucketUsage, type UsageDocument, type UsageScannerOptions } from '../src/ops/usage-scanner.js';
import { storedUsageDocument, usageFileMagic, usageFileName, validateUsageDocument, type StoredUsageDocument } from '../src/ops/usage-file.js';
import { StateFileQuarantine } from '../src/cluster/state-quarantine.js';
import { encodeStateFile } from '../src/format/state-file.js';
import { makeTestSet, chunked, type TestSet } from './helpers/erasure-set.js';

const seed = process.env.SVC_PROPERTY_SEED === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.SVC_PROPERTY_SEED);
const numRuns = Number(process.env.SVC_PROPERTY_RUNS ?? 25);
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };
const buckets = ['b0', 'b1', 'b2'];
const keys = ['a', 'b', 'c/d', 'c/e', 'f g', 'z'];

interface World {
  test: TestSet;
  objects: ObjectLayer;
  store: StateStore<StoredUsageDocument>;
  quarantine: StateFileQuarantine;
}

const worlds: World[] = [];

afterEach(async () => {
  await Promise.all(worlds.splice(0).map((world) => world.test.cleanup()));
});

async function makeWorld(): Promise<World> {
  const test = await makeTestSet({ drives: 4, parity: 2, backend: 'memfs' });
  const objects = new ObjectLayer({ deploymentId: '00000000-0000-4000-8000-000000000000', pools: [{ index: 0, sets: [test.set] }], clock: { nowMs: () => Date.now() } });
  const quarantine = new StateFileQuarantine(silent);
  const store = new StateStore<StoredUsageDocument>({ name: usageFileName, magic: usageFileMagic, drives: () => test.faulty, validate: validateUsageDocument, quarantine });
  const world = { test, objects, store, quarantine };
  worlds.push(world);
  return world;
}

/** A scanner over `world` whose listing calls `onKey` before each key it hands out. */
function scanner(world: World, overrides: Partial<UsageScannerOptions> & { onKey?: () => void; saves?: UsageScannerOptions['store'] } = {}): UsageScanner {
  const { onKey, saves, ...rest } = overrides;
  const objects: UsageScannerOptions['objects'] = {
    listBuckets: () => world.objects.listBuckets(),
    list: async function* (bucket, options) {
      for await (const entry of world.objects.list(bucket, options)) {
        onKey?.();
        yield entry;
      }
    },
  };
  return new UsageScanner({
    objects,
    store: saves ?? { load: () => world.store.load(), save: (document) => world.store.save(storedUsageDocument(document)) },
    objectsPerSecond: 1_000_000,
    intervalMs: 60_000,
    firstDelayMs: 60_000,
    checkpointEveryKeys: 3,
    checkpointIntervalMs: 60_000,
    schedules: false,
    lockScan: async () => () => undefined,
    nowMs: () => Date.now(),
    logger: silent,
    ...rest,
  });
}

/** What a full listing of every bucket shows, counted here on its own. */
async function listingUsage(objects: ObjectLayer): Promise<{ usage: BucketUsage[]; keys: number }> {
  const usage: BucketUsage[] = [];
  let keyCount = 0;
  for (const record of await objects.listBuckets()) {
    const row: BucketUsage = { bucket: record.name, objects: 0, versions: 0, deleteMarkers: 0, sizeBytes: 0, currentSizeBytes: 0 };
    for await (const entry of objects.list(record.name, { prefix: '' })) {
      if (entry.kind !== 'object') continue;
      keyCount += 1;
      const live = entry.versions.filter((version) => !version.deleteMarker);
      row.deleteMarkers += entry.versions.length - live.length;
      row.versions += live.length;
      row.sizeBytes += live.reduce((sum, version) => sum + version.sizeBytes, 0);
      const current = entry.versions.find((version) => version.isLatest)!;
      if (!current.deleteMarker) {
        row.objects += 1;
        row.currentSizeBytes += current.sizeBytes;
      }
    }
    usage.push(row);
  }
  usage.sort((a, b) => (a.bucket < b.bucket ? -1 : 1));
  return { usage, keys: keyCount };
}

type Step =
  | { kind: 'put'; bucket: number; key: number; sizeBytes: number }
  | { kind: 'delete'; bucket: number; key: number }
  | { kind: 'deleteVersion'; bucket: number; key: number; pick: number }
  | { kind: 'versioning'; bucket: number; status: 'enabled' | 'suspended' };

const bucketIndex = fc.nat(buckets.length - 1);
const keyIndex = fc.nat(keys.length - 1);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('put' as const), bucket: bucketIndex, key: keyIndex, sizeBytes: fc.nat(3000) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), bucket: bucketIndex, key: keyIndex }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteVersion' as const), bucket: bucketIndex, key: keyIndex, pick: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('versioning' as const), bucket: bucketIndex, status: fc.constantFrom('enabled' as const, 'suspended' as const) }) },
);

async function apply(objects: ObjectLayer, step: Step): Promise<void> {
  const bucket = buckets[step.bucket]!;
  if (step.kind === 'versioning') return objects.setBucketVersioning(bucket, step.status);
  const key = keys[step.key]!;
  if (step.kind === 'put') {
    await objects.putObject(bucket, key, chunked(Buffer.alloc(step.sizeBytes, 7)), { storageClass: 'STANDARD', sizeBytes: step.sizeBytes });
    return;
  }
  if (step.kind === 'delete') {
    await objects.deleteObject(bucket, key);
    return;
  }
  for await (const entry of objects.list(bucket, { prefix: key })) {
    if (entry.kind !== 'object' || entry.key !== key) continue;
    const version = entry.versions[step.pick % entry.versions.length]!;
    await objects.deleteObject(bucket, key, version.versionId);
    return;
  }
}

describe('data-usage scanner (property)', () => {
  it(`counts what a full listing shows after random writes, across a restart mid-scan (seed ${seed})`, async () => {
    console.log(`usage-scanner property seed ${seed} (SVC_PROPERTY_SEED replays it)`);
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 40 }), fc.nat(20), fc.integer({ min: 1, max: 5 }), async (steps, stopAfter, checkpointEveryKeys) => {
          const world = await makeWorld();
          for (const bucket of buckets) await world.objects.makeBucket(bucket);
          for (const step of steps) await apply(world.objects, step);
          const expected = await listingUsage(world.objects);

          // The first scanner is stopped (as a node stops) once it has counted `stopAfter` keys.
          let handedOut = 0;
          const first = scanner(world, { checkpointEveryKeys, onKey: () => void (++handedOut === stopAfter + 1 && first.close()) });
          const firstResult = await first.runScan();
          const stopped = firstResult === undefined;
          expect(stopped).toBe(stopAfter < expected.keys);
          const checkpoint = (await world.store.load())!.checkpoint;
          if (stopped) expect(checkpoint).toMatchObject({ keysWalked: stopAfter, resumes: 0 });
          else expect(checkpoint).toBeNull();

          // A new scanner (the restart) takes the scan up after the checkpoint's last key.
          const second = scanner(world, { checkpointEveryKeys });
          const snapshot = (stopped ? await second.runScan() : firstResult)!;
          expect(snapshot.buckets).toEqual(expected.usage);
          expect(snapshot.resumes).toBe(stopped ? 1 : 0);
          if (stopped) expect(second.keysWalkedThisRun()).toBe(expected.keys - stopAfter);
          const total = expected.usage.reduce((sum, row) => ({ objects: sum.objects + row.objects, versions: sum.versions + row.versions, deleteMarkers: sum.deleteMarkers + row.deleteMarkers, sizeBytes: sum.sizeBytes + row.sizeBytes, currentSizeBytes: sum.currentSizeBytes + row.currentSizeBytes }), { objects: 0, versions: 0, deleteMarkers: 0, sizeBytes: 0, currentSizeBytes: 0 });
          expect(snapshot.total).toEqual({ buckets: expected.usage.length, ...total });
          const status = await second.status();
          expect(status).toMatchObject({ running: false, current: null, last: snapshot });
          expect(status.ageSeconds).toBeGreaterThanOrEqual(0);
          await world.test.cleanup();
          worlds.splice(worlds.indexOf(world), 1);
        }),
        { seed, numRuns },
      );
    } catch (error) {
      console.error(`usage-scanner property failed: replay with SVC_PROPERTY_SEED=${seed}`);
      throw error;
    }
  });
});

describe('data-usage scanner: restarts and its file', () => {
  async function filled(keyCount: number): Promise<World> {
    const world = await makeWorld();
    await world.objects.makeBucket('photos');
    await world.objects.makeBucket('logs');
    for (let index = 0; index < keyCount; index += 1) {
      const bucket = index % 2 === 0 ? 'photos' : 'logs';
      await world.objects.putObject(bucket, `k${String(index).padStart(3, '0')}`, chunked(Buffer.alloc(10, 1)), { storageClass: 'STANDARD', sizeBytes: 10 });
    }
    return world;
  }

  it('after a crash (saves stopped reaching the drives) resumes from the last checkpoint written, not from zero', async () => {
    const world = await filled(40);
    const durable = { load: () => world.store.load(), save: (document: UsageDocument) => world.store.save(storedUsageDocument(document)) };
    // Saves after the fourth are lost, as if the power went; the scan is then stopped at key 30.
    let saves = 0;
    const lossy = { load: durable.load, save: async (document: UsageDocument) => (++saves <= 4 ? durable.save(document) : undefined) };
    let handedOut = 0;
    const crashed = scanner(world, { saves: lossy, checkpointEveryKeys: 5, onKey: () => void (++handedOut === 31 && crashed.close()) });
    expect(await crashed.runScan()).toBeUndefined();
    // Saves: the start, then after 5, 10 and 15 keys; the drives hold the checkpoint at 15 keys.
    const checkpoint = (await world.store.load())!.checkpoint!;
    expect(checkpoint).toMatchObject({ keysWalked: 15, resumes: 0 });
    expect(checkpoint.afterKey).not.toBeNull();

    const restarted = scanner(world, { checkpointEveryKeys: 5 });
    const snapshot = (await restarted.runScan())!;
    expect(restarted.keysWalkedThisRun()).toBe(25);
    expect(snapshot.resumes).toBe(1);
    expect(snapshot.buckets).toEqual((await listingUsage(world.objects)).usage);
    expect(snapshot.total).toMatchObject({ buckets: 2, objects: 40, versions: 40, sizeBytes: 400 });
  });

  it('refuses a second scan while one runs (DataUsageScanRunning), and one whose lock another node holds', async () => {
    const world = await filled(6);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let waiting = true;
    const slow = scanner(world);
    const blocked = scanner(world, {
      saves: { load: () => world.store.load(), save: async (document) => { if (waiting) await gate; await world.store.save(storedUsageDocument(document)); } },
    });
    const running = blocked.runScan();
    await expect(blocked.runNow()).rejects.toMatchObject({ code: 'DataUsageScanRunning' });
    waiting = false;
    release();
    await running;
    const locked = scanner(world, { lockScan: async () => undefined });
    await expect(locked.runNow()).rejects.toMatchObject({ code: 'DataUsageScanRunning' });
    expect((await slow.runScan())!.total.objects).toBe(6);
  });

  it('quarantines a damaged copy of usage.bin and answers from the others', async () => {
    const world = await filled(4);
    const first = (await scanner(world).runScan())!;
    const drive = world.test.faulty[1]!;
    await drive.writeFileAtomic(world.store.path, Buffer.from('not a state file'));
    await world.test.faulty[2]!.writeFileAtomic(world.store.path, encodeStateFile(usageFileMagic, { version: 1, generation: 99, last: null, checkpoint: null, extra: 1 }));
    const status = await scanner(world).status();
    expect(status.last).toEqual(first);
    expect(world.quarantine.quarantined()).toEqual({ [usageFileName]: 2 });
    expect(() => validateUsageDocument({ version: 2, generation: 1, last: null, checkpoint: null })).toThrow(/document version 2/);
    expect(() => validateUsageDocument({ version: 1, generation: 1, last: null, checkpoint: { startedAt: 'x' } })).toThrow(/CorruptFormat|checkpoint/);
  });
});
