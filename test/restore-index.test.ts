/**
 * The restored-copy index (src/ops/tier/restore-index.ts) on one set of four real fs drives:
 * copies are noted with their latest expiry, found due, settled; a new index over the same drives
 * (a restart) reads them back; the strict decoder refuses what it does not know; a refused copy is
 * quarantined and marks the set for a repair walk, which `repaired` clears; a full index refuses
 * one more copy with SlowDown.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalNamespaceLocker } from '../src/object/index.js';
import { StateFileQuarantine } from '../src/cluster/state-quarantine.js';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeStateFile, encodeStateFile } from '../src/format/state-file.js';
import { RestoreIndex, restoreIndexMagic, validateRestoreIndex } from '../src/ops/tier/restore-index.js';
import { limits } from '../src/util/limits.js';
import { makeTestSet, type TestSet } from './helpers/erasure-set.js';
import { codeOf } from './helpers/codes.js';

const silent = { warn: () => undefined };
const path = '.svc.sys/restored.bin';
const versionId = '0b7c3f4e-2a1d-4c5b-9e8f-112233445566';
let test: TestSet;
let quarantine: StateFileQuarantine;
const locker = new LocalNamespaceLocker();

beforeEach(async () => {
  test = await makeTestSet({ drives: 4, parity: 2, backend: 'fs' });
  quarantine = new StateFileQuarantine(silent);
});
afterEach(async () => {
  await test.cleanup();
});

const openIndex = (): RestoreIndex =>
  new RestoreIndex({ sets: [{ poolIndex: 0, setIndex: 0, drives: () => test.set.config.drives }], quarantine, lock: (resource) => locker.acquire(resource, 'write'), logger: silent });

const document = (fields: Record<string, unknown> = {}): Record<string, unknown> => ({ version: 1, generation: 1, repair: false, copies: [{ bucket: 'photos', key: 'a.jpg', versionId: 'null', expiryMs: 1_000 }], ...fields });

describe('the restored-copy index', () => {
  it('notes copies with their latest expiry, finds them due, settles them, and keeps them across a restart', async () => {
    const index = openIndex();
    expect(await index.due(Number.MAX_SAFE_INTEGER)).toEqual([]);
    await index.recorderFor(0, 0).record({ bucket: 'photos', key: 'a.jpg', versionId: 'null', expiryMs: 2_000 });
    await index.record(0, 0, { bucket: 'photos', key: 'a.jpg', versionId: 'null', expiryMs: 1_000 });
    await index.record(0, 0, { bucket: 'photos', key: 'b.jpg', versionId, expiryMs: 5_000 });
    expect(await index.due(1_999)).toEqual([]);
    const due = await index.due(2_000);
    expect(due).toEqual([{ bucket: 'photos', key: 'a.jpg', versionId: 'null', expiryMs: 2_000, poolIndex: 0, setIndex: 0 }]);

    // A restart: another index over the same drives reads the same copies.
    const reopened = openIndex();
    expect((await reopened.due(10_000)).map((copy) => [copy.key, copy.expiryMs])).toEqual([['a.jpg', 2_000], ['b.jpg', 5_000]]);

    // Restored again meanwhile (a later expiry): settling what was read keeps the copy.
    await reopened.record(0, 0, { bucket: 'photos', key: 'a.jpg', versionId: 'null', expiryMs: 3_000 });
    await reopened.settle([{ copy: due[0]! }]);
    expect((await reopened.due(10_000)).map((copy) => [copy.key, copy.expiryMs])).toEqual([['a.jpg', 3_000], ['b.jpg', 5_000]]);
    // A copy found lasting longer is moved to its expiry; an ended one is forgotten.
    const [a, b] = await reopened.due(10_000);
    await reopened.settle([{ copy: a!, laterExpiryMs: 8_000 }, { copy: b! }]);
    expect((await openIndex().due(10_000)).map((copy) => [copy.key, copy.expiryMs])).toEqual([['a.jpg', 8_000]]);
    expect(await openIndex().needingRepair()).toEqual([]);
  });

  it('decodes its golden fixture field by field and encodes it to the same bytes', async () => {
    const fixture = await readFile(join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'restored-v1.bin'));
    const decoded = validateRestoreIndex(decodeStateFile(restoreIndexMagic, fixture));
    expect(decoded).toEqual({
      version: 1,
      generation: 3,
      repair: false,
      copies: [
        { bucket: 'photos', key: '2026/cat.jpg', versionId, expiryMs: Date.parse('2026-12-01T00:00:00Z') },
        { bucket: 'logs', key: 'app/1.log', versionId: 'null', expiryMs: Date.parse('2026-12-02T00:00:00Z') },
      ],
    });
    expect(Buffer.from(encodeStateFile(restoreIndexMagic, decoded)).equals(fixture)).toBe(true);
    // Another magic is not this file.
    expect(codeOf(() => decodeStateFile('SVTR', fixture))).toBe('UnsupportedFormat');
  });

  it('has a strict decoder', () => {
    expect(validateRestoreIndex(document())).toEqual(document());
    expect(codeOf(() => validateRestoreIndex(document({ version: 2 })))).toBe('UnsupportedFormat');
    const refused: Record<string, unknown>[] = [
      document({ extra: true }),
      document({ repair: 'no' }),
      document({ generation: -1 }),
      document({ copies: {} }),
      document({ copies: [{ bucket: 'photos', key: 'a', versionId: 'null', expiryMs: 1, size: 3 }] }),
      document({ copies: [{ bucket: 'photos', key: 'a', versionId: 'v1', expiryMs: 1 }] }),
      document({ copies: [{ bucket: 'ab', key: 'a', versionId: 'null', expiryMs: 1 }] }),
      document({ copies: [{ bucket: 'photos', key: '', versionId: 'null', expiryMs: 1 }] }),
      document({ copies: [{ bucket: 'photos', key: 'a', versionId: 'null', expiryMs: 1.5 }] }),
      document({ copies: [{ bucket: 'photos', key: 'a', versionId: 'null', expiryMs: 1 }, { bucket: 'photos', key: 'a', versionId: 'null', expiryMs: 2 }] }),
    ];
    for (const value of refused) expect(codeOf(() => validateRestoreIndex(value)), JSON.stringify(value)).toBe('CorruptFormat');
  });

  it('quarantines a refused copy and marks the set for a repair walk, which repaired clears', async () => {
    const index = openIndex();
    await index.record(0, 0, { bucket: 'photos', key: 'a.jpg', versionId, expiryMs: 1_000 });
    const drive = test.set.config.drives[2]!;
    await drive.writeFileAtomic(path, encodeStateFile(restoreIndexMagic, document({ generation: 9, copies: 'many' })));
    expect(await index.needingRepair()).toEqual([{ poolIndex: 0, setIndex: 0 }]);
    expect(quarantine.quarantined()).toEqual({ 'restored.bin': 1 });
    // The mark is saved: a restart still knows the repair is due, and the copies the others held are kept.
    const reopened = openIndex();
    expect(await reopened.needingRepair()).toEqual([{ poolIndex: 0, setIndex: 0 }]);
    expect((await reopened.due(1_000)).map((copy) => copy.key)).toEqual(['a.jpg']);
    await reopened.repaired([{ poolIndex: 0, setIndex: 0 }]);
    expect(await openIndex().needingRepair()).toEqual([]);
  });

  it('refuses one copy more than a set may hold with SlowDown, keeping the index', async () => {
    const copies = Array.from({ length: limits.maxRestoredCopiesPerSet }, (_, index) => ({ bucket: 'photos', key: `k${index}`, versionId: 'null', expiryMs: 5_000 }));
    const full = encodeStateFile(restoreIndexMagic, document({ generation: 1, copies }));
    for (const drive of test.set.config.drives) await drive!.writeFileAtomic(path, full);
    const index = openIndex();
    await expect(index.record(0, 0, { bucket: 'photos', key: 'one-more', versionId: 'null', expiryMs: 5_000 })).rejects.toMatchObject({ code: 'SlowDown' });
    // A copy already noted may still have its expiry moved.
    await index.record(0, 0, { bucket: 'photos', key: 'k0', versionId: 'null', expiryMs: 9_000 });
    const due = await index.due(9_000);
    expect(due).toHaveLength(limits.maxRestoredCopiesPerSet);
    expect(due.find((copy) => copy.key === 'k0')?.expiryMs).toBe(9_000);
  });
});
