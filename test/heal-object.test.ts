import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createUpload, uploadPart, completeUpload } from '../src/object/multipart.js';
import { collect, chunked, makeTestSet, patternBytes, type TestSet } from './helpers/erasure-set.js';
import type { Drive } from '../src/drive/index.js';
import { KiB, MiB } from '../src/util/limits.js';

let current: TestSet | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

const blockSizeBytes = 64 * KiB;
type Damage = 'wipe' | 'corrupt';

/** The objects of one run: key -> versions (bytes, or null for a delete marker), oldest first. */
interface Stored {
  key: string;
  versions: { versionId: string; bytes: Uint8Array | null }[];
}

async function writeObjects(test: TestSet, seed: number): Promise<Stored[]> {
  const { set } = test;
  const put = async (key: string, bytes: Uint8Array, versioning: 'unversioned' | 'enabled') =>
    (await set.putObject('bucket', key, chunked(bytes, 30_011), { storageClass: 'STANDARD', versioning, sizeBytes: bytes.length })).versionId;
  const stored: Stored[] = [];
  const inline = patternBytes(700, seed);
  stored.push({ key: 'inline', versions: [{ versionId: await put('inline', inline, 'unversioned'), bytes: inline }] });
  const multi = patternBytes(3 * blockSizeBytes + 1_234, seed + 1);
  stored.push({ key: 'multi', versions: [{ versionId: await put('multi', multi, 'unversioned'), bytes: multi }] });
  const first = patternBytes(2 * blockSizeBytes + 5, seed + 2);
  const second = patternBytes(100, seed + 3);
  stored.push({
    key: 'versioned',
    versions: [
      { versionId: await put('versioned', first, 'enabled'), bytes: first },
      { versionId: await put('versioned', second, 'enabled'), bytes: second },
    ],
  });
  const shadowed = patternBytes(90_000, seed + 4);
  const shadowedId = await put('marker', shadowed, 'enabled');
  const marker = await set.deleteObject('bucket', 'marker', { versioning: 'enabled' });
  stored.push({ key: 'marker', versions: [{ versionId: shadowedId, bytes: shadowed }, { versionId: marker.versionId, bytes: null }] });
  const upload = await createUpload(set.config, 'bucket', 'mp', 'upload-1', { storageClass: 'STANDARD' });
  const partOne = patternBytes(5 * MiB, seed + 5);
  const partTwo = patternBytes(70_000, seed + 6);
  const parts = [await uploadPart(set.config, upload, 1, chunked(partOne), {}), await uploadPart(set.config, upload, 2, chunked(partTwo), {})];
  const done = await completeUpload(set.config, upload, parts.map((part) => ({ number: part.number, etag: part.etag })), 'unversioned');
  stored.push({ key: 'mp', versions: [{ versionId: done.versionId, bytes: Buffer.concat([partOne, partTwo]) }] });
  return stored;
}

async function filesUnder(drive: Drive, prefix: string): Promise<string[]> {
  const files: string[] = [];
  for await (const path of drive.walk(prefix)) files.push(path);
  return files;
}

/** Wipes one object's directory on a drive, or flips one byte in every file of it. */
async function damage(drive: Drive, key: string, kind: Damage, seed: number): Promise<void> {
  const dir = `bucket/${key}`;
  if (kind === 'wipe') {
    await drive.deleteRecursive(dir).catch(() => undefined);
    return;
  }
  for (const path of await filesUnder(drive, dir)) {
    const bytes = new Uint8Array(await drive.readFile(path));
    if (bytes.length === 0) continue;
    const at = seed % bytes.length;
    bytes[at] = (bytes[at] ?? 0) ^ 0x5a;
    await drive.writeFile(path, bytes);
  }
}

async function snapshot(drive: Drive, key: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const path of await filesUnder(drive, `bucket/${key}`)) files.set(path, Buffer.from(await drive.readFile(path)).toString('base64'));
  return files;
}

async function expectReadable(test: TestSet, object: Stored): Promise<void> {
  for (const version of object.versions) {
    if (!version.bytes) continue;
    const reader = await test.set.getObject('bucket', object.key, { versionId: version.versionId });
    expect(Buffer.compare(Buffer.from(await collect(reader.body)), Buffer.from(version.bytes))).toBe(0);
  }
}

const geometry = fc.integer({ min: 2, max: 8 }).chain((drives) => fc.record({ drives: fc.constant(drives), parity: fc.integer({ min: 0, max: Math.floor(drives / 2) }) }));

describe('object heal', () => {
  it('rebuilds wiped and corrupted shards within parity (deep scan clean, bytes unchanged); beyond parity it refuses and damages nothing else', async () => {
    await fc.assert(
      fc.asyncProperty(geometry, fc.integer({ min: 0, max: 2 ** 31 - 1 }), fc.array(fc.constantFrom<Damage>('wipe', 'corrupt'), { minLength: 8, maxLength: 8 }), async ({ drives, parity }, seed, kinds) => {
        current = await makeTestSet({ drives, parity, blockSizeBytes });
        const test = current;
        const objects = await writeObjects(test, seed);
        const slots = [...Array(drives).keys()].sort((a, b) => ((a * 7919 + seed) % 101) - ((b * 7919 + seed) % 101));
        // Every object is damaged on at most `parity` drives, except 'multi', damaged on one more when that leaves fewer than K.
        const beyond = parity + 1 < drives ? slots.slice(0, parity + 1) : [];
        for (const [index, object] of objects.entries()) {
          // A delete marker's metadata is trusted on a majority vote (N/2 + 1), so it tolerates fewer lost drives.
          const tolerance = object.key === 'marker' ? Math.min(parity, drives - Math.floor(drives / 2) - 1) : parity;
          const count = object.key === 'multi' ? beyond.length : Math.min(tolerance, 1 + (seed + index) % Math.max(parity, 1));
          for (const [position, slot] of slots.slice(0, object.key === 'multi' ? count : parity === 0 ? 0 : count).entries()) {
            await damage(test.inner[slot]!, object.key, kinds[position % kinds.length]!, seed + position);
          }
        }
        const untouched = new Map<number, Map<string, string>>();
        for (let slot = 0; slot < drives; slot += 1) if (!beyond.includes(slot)) untouched.set(slot, await snapshot(test.inner[slot]!, 'multi'));

        for (const object of objects) {
          const result = await test.set.healObject('bucket', object.key, { scanMode: 'deep' });
          if (object.key === 'multi' && beyond.length > 0) {
            expect(result.outcome, JSON.stringify(result)).toBe('unrecoverable');
            expect(result.reason).toMatch(parity === 0 ? /no-parity object is unrecoverable/ : /more shards are missing than parity|too few drives agree|dangling/);
            continue;
          }
          expect(['healed', 'healthy'], JSON.stringify(result)).toContain(result.outcome);
          const check = await test.set.healObject('bucket', object.key, { scanMode: 'deep', dryRun: true });
          expect(check.outcome, JSON.stringify(check)).toBe('healthy');
          expect(check.before.every((state) => state === 'ok')).toBe(true);
          await expectReadable(test, object);
        }
        // The refused object: the drives it was not damaged on are exactly as they were.
        for (const [slot, files] of untouched) expect(await snapshot(test.inner[slot]!, 'multi')).toEqual(files);
      }),
      { numRuns: 25 },
    );
  }, 300_000);

  it('a dry run reports without writing; remove deletes a version a quorum agrees is dangling', async () => {
    current = await makeTestSet({ drives: 4, parity: 2, blockSizeBytes });
    const { set, inner } = current;
    const bytes = patternBytes(200_000, 9);
    const kept = await set.putObject('bucket', 'k', chunked(bytes), { storageClass: 'STANDARD', versioning: 'enabled', sizeBytes: bytes.length });
    await inner[0]!.deleteRecursive('bucket/k');
    const before = await snapshot(inner[0]!, 'k');
    const dry = await set.healObject('bucket', 'k', { dryRun: true });
    expect(dry.outcome).toBe('would-heal');
    expect(dry.before[0]).toBe('missing');
    expect(await snapshot(inner[0]!, 'k')).toEqual(before);

    // A version only one drive holds (a write that never reached quorum): dangling.
    const healed = await set.healObject('bucket', 'k');
    expect(healed.outcome).toBe('healed');
    const stray = await inner[3]!.readFile('bucket/k/xl.meta');
    const { decodeXlMeta, encodeXlMeta } = await import('../src/format/xl-meta.js');
    const meta = decodeXlMeta(stray);
    const ghost = { ...meta.versions[0]!, versionId: '11111111-2222-4333-8444-555555555555', modTimeMs: meta.versions[0]!.modTimeMs + 1_000 };
    await inner[3]!.writeFileAtomic('bucket/k/xl.meta', encodeXlMeta({ versions: [ghost, ...meta.versions] }));
    const found = await set.healObject('bucket', 'k');
    expect(found.danglingFound).toBe(1);
    expect(found.danglingRemoved).toBe(0);
    const removed = await set.healObject('bucket', 'k', { remove: true });
    expect(removed.danglingRemoved).toBe(1);
    expect(decodeXlMeta(await inner[3]!.readFile('bucket/k/xl.meta')).versions.map((version) => version.versionId)).toEqual([kept.versionId]);
    const reader = await set.getObject('bucket', 'k');
    expect(Buffer.compare(Buffer.from(await collect(reader.body)), Buffer.from(bytes))).toBe(0);
  });

  it('two drives holding an older copy on full drives: heal drops the outvoted copy, rebuilds the newer one in its room and leaves no stale data', async () => {
    // As in a chaos run on a full pool: an overwrite reached drives 0 and 1, its rollback failed
    // there, and drives 2 and 3 kept the older copy (xl.meta and shards). The vote trusts the newer.
    current = await makeTestSet({ drives: 4, parity: 2, blockSizeBytes, capacityBytes: 4 * MiB });
    const { set, inner } = current;
    const older = patternBytes(300_000, 21);
    const newer = patternBytes(300_000, 22);
    const put = (bytes: Uint8Array) => set.putObject('bucket', 'k', chunked(bytes), { storageClass: 'STANDARD', versioning: 'unversioned', sizeBytes: bytes.length });
    await put(older);
    const olderCopies = await Promise.all([2, 3].map(async (slot) => {
      const files = new Map<string, Uint8Array>();
      for (const path of await filesUnder(inner[slot]!, 'bucket/k')) files.set(path, await inner[slot]!.readFile(path));
      return files;
    }));
    await put(newer);
    for (const [index, slot] of [2, 3].entries()) {
      await inner[slot]!.deleteRecursive('bucket/k');
      for (const [path, bytes] of olderCopies[index]!) await inner[slot]!.writeFile(path, bytes);
      // The drive is full: less room left than one shard file of the newer copy needs.
      const { freeBytes } = await inner[slot]!.diskInfo();
      await inner[slot]!.writeFile('filler', new Uint8Array(freeBytes - 4 * KiB));
    }
    const stale = [...olderCopies[0]!.keys()].find((path) => path.endsWith('/part.1'))!.split('/').slice(0, -1).join('/');

    const dry = await set.healObject('bucket', 'k', { dryRun: true, scanMode: 'deep' });
    expect([dry.outcome, dry.before]).toEqual(['would-heal', ['ok', 'ok', 'outdated', 'outdated']]);
    const healed = await set.healObject('bucket', 'k', { scanMode: 'deep', remove: true });
    expect([healed.outcome, healed.after], JSON.stringify(healed)).toEqual(['healed', ['ok', 'ok', 'ok', 'ok']]);
    expect((await set.healObject('bucket', 'k', { dryRun: true, scanMode: 'deep' })).outcome).toBe('healthy');
    for (const slot of [2, 3]) expect((await filesUnder(inner[slot]!, 'bucket/k')).filter((path) => path.startsWith(`${stale}/`))).toEqual([]);
    const reader = await set.getObject('bucket', 'k');
    expect(Buffer.compare(Buffer.from(await collect(reader.body)), Buffer.from(newer))).toBe(0);
  });

  it('zero parity: a lost shard is reported as a no-parity object that cannot be recovered', async () => {
    current = await makeTestSet({ drives: 3, parity: 0, blockSizeBytes });
    await current.set.putObject('bucket', 'z', chunked(patternBytes(100_000, 3)), { storageClass: 'STANDARD', versioning: 'unversioned' });
    await current.inner[1]!.deleteRecursive('bucket/z');
    const result = await current.set.healObject('bucket', 'z');
    expect([result.outcome, result.reason]).toEqual(['unrecoverable', 'no-parity object is unrecoverable']);
  });
});
