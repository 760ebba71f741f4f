/**
 * The failure what-if against what really happens: for random geometries (widths 2 to 16, every
 * valid parity, both storage classes), object sizes (inline, one block, many blocks, multipart)
 * and failure sets (drives and whole nodes), the simulator's verdict for the object's class
 * agrees with the real storage path once those drives are failed with the fault-injecting
 * backend: a GET succeeds (with the right bytes) exactly when it says readable, a PUT exactly
 * when it says writable, a delete exactly when it says deletable. In-process over memfs drives
 * (a server per case would take minutes); nothing on the storage path is mocked. WHATIF_SEED
 * replays a run (fast-check prints the seed on failure); WHATIF_RUNS sets how many.
 */
import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { makeTestSet, patternBytes, chunked, collect, type TestSet } from './helpers/erasure-set.js';
import { createExplorer, type DriveView, type Explorer } from '../src/ops/explorer.js';
import { ObjectLayer, type ErasureSet } from '../src/object/index.js';
import { completeUpload, createUpload, uploadPart } from '../src/object/multipart.js';
import type { StorageClass } from '../src/format/xl-meta-types.js';
import { limits } from '../src/util/limits.js';

const blockSizeBytes = 64 * 1024;
const sizes = { inline: 40, oneBlock: 30_000, manyBlocks: 3 * blockSizeBytes + 500, multipart: limits.minPartSizeBytes + 1_000 } as const;
type Kind = keyof typeof sizes;

let current: TestSet | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

/** The explorer over one in-process set, its slots spread round-robin over `nodes` nodes. */
function explorerOver(test: TestSet, parities: { standard: number; rrs: number }, nodes: number): { explorer: Explorer; drives: DriveView[] } {
  const drives = test.faulty.map((drive, slot): DriveView => ({ endpoint: drive.endpoint, node: `node${slot % nodes}`, driveId: `id-${slot}`, state: 'online' }));
  const objects = new ObjectLayer({ deploymentId: test.set.config.deploymentId, pools: [{ index: 0, sets: [test.set] }], clock: { nowMs: () => Date.now() } });
  const explorer = createExplorer({ objects, sets: async () => [{ pool: 0, set: 0, erasureSet: test.set, drives }], parities: () => parities });
  return { explorer, drives };
}

async function store(set: ErasureSet, key: string, kind: Kind, storageClass: StorageClass, bytes: Uint8Array): Promise<void> {
  if (kind !== 'multipart') {
    await set.putObject('bucket', key, chunked(bytes), { storageClass, versioning: 'unversioned', sizeBytes: bytes.length });
    return;
  }
  const record = await createUpload(set.config, 'bucket', key, randomUUID(), { storageClass });
  const split = limits.minPartSizeBytes;
  const first = await uploadPart(set.config, record, 1, chunked(bytes.subarray(0, split)), { sizeBytes: split });
  const second = await uploadPart(set.config, record, 2, chunked(bytes.subarray(split)), { sizeBytes: bytes.length - split });
  await completeUpload(set.config, record, [{ number: 1, etag: first.etag }, { number: 2, etag: second.etag }], 'unversioned');
}

const succeeds = (action: () => Promise<unknown>): Promise<boolean> => action().then(() => true, () => false);

const geometry = fc
  .integer({ min: 2, max: 16 })
  .chain((drives) => fc.record({ drives: fc.constant(drives), parity: fc.integer({ min: 0, max: Math.floor(drives / 2) }) }))
  .chain(({ drives, parity }) => fc.record({ drives: fc.constant(drives), parity: fc.constant(parity), rrs: fc.integer({ min: 0, max: parity }), nodes: fc.integer({ min: 1, max: Math.min(4, drives) }) }));

describe('failure what-if', () => {
  it('says readable, writable, deletable exactly when GET, PUT and delete succeed with those drives failed', async () => {
    const seed = Number(process.env.WHATIF_SEED ?? Date.now() % 2 ** 31);
    await fc.assert(
      fc.asyncProperty(
        geometry,
        fc.constantFrom<Kind>('inline', 'oneBlock', 'manyBlocks', 'inline', 'oneBlock', 'manyBlocks', 'multipart'),
        fc.constantFrom<StorageClass>('STANDARD', 'REDUCED_REDUNDANCY'),
        // Failures around the thresholds: parity - 2 to parity + 2 drives, in a random order of slots,
        // and now and then a whole node.
        fc.integer({ min: -2, max: 2 }),
        fc.array(fc.integer({ min: 0, max: 1_000 }), { minLength: 16, maxLength: 16 }),
        fc.array(fc.integer({ min: 0, max: 5 }).map((roll) => roll === 0), { minLength: 4, maxLength: 4 }),
        fc.integer({ min: 1, max: 2 ** 30 }),
        async ({ drives, parity, rrs, nodes }, kind, storageClass, around, order, failNode, bytesSeed) => {
          await current?.cleanup();
          current = await makeTestSet({ drives, parity, rrsParity: rrs, blockSizeBytes, inlineBlockOverrideBytes: 64 });
          const test = current;
          const { explorer, drives: views } = explorerOver(test, { standard: parity, rrs }, nodes);
          const bytes = patternBytes(sizes[kind], bytesSeed);
          await store(test.set, 'object', kind, storageClass, bytes);

          const count = Math.max(0, Math.min(drives, (storageClass === 'STANDARD' ? parity : rrs) + around));
          const shuffled = views.map((view, slot) => ({ view, rank: order[slot]! * 16 + slot })).sort((a, b) => a.rank - b.rank);
          const failedDrives = shuffled.slice(0, count).map(({ view }) => view.endpoint);
          const failedNodes = [...new Set(views.map((view) => view.node))].filter((_, index) => failNode[index]);
          const report = await explorer.simulate({ drives: failedDrives, nodes: failedNodes });
          const verdict = report.sets[0]!.classes.find((entry) => entry.storageClass === storageClass)!;
          const failed = report.sets[0]!.failedSlots;
          expect(failed).toEqual(views.flatMap((view, slot) => (failedDrives.includes(view.endpoint) || failedNodes.includes(view.node) ? [slot] : [])));

          for (const slot of failed) test.faulty[slot]!.setFaults({ offline: true });
          const read = await succeeds(async () => {
            const got = await collect((await test.set.getObject('bucket', 'object')).body);
            if (!Buffer.from(got).equals(Buffer.from(bytes))) throw new Error('GET returned other bytes');
          });
          const written = await succeeds(() => store(test.set, 'another', kind, storageClass, bytes));
          const deleted = await succeeds(() => test.set.deleteObject('bucket', 'object', { versioning: 'unversioned' }));
          const context = `N=${drives} EC:${parity} RRS EC:${rrs} ${kind} ${storageClass}, failed slots ${failed.join(',') || 'none'}`;
          expect({ readable: read, writable: written, deletable: deleted }, context).toEqual({ readable: verdict.readable, writable: verdict.writable, deletable: verdict.deletable });
        },
      ),
      { numRuns: Number(process.env.WHATIF_RUNS ?? 40), seed },
    );
  }, 240_000);

  it('fills in the quorum formulas with the numbers', async () => {
    current = await makeTestSet({ drives: 4, parity: 2 });
    const { explorer } = explorerOver(current, { standard: 2, rrs: 1 }, 2);
    const report = await explorer.simulate({ nodes: ['node0'] });
    const [standard, rrs] = report.sets[0]!.classes;
    expect(report.sets[0]!.failedSlots).toEqual([0, 2]);
    expect(standard).toMatchObject({ dataShards: 2, parityShards: 2, readable: true, writable: false, deletable: false, moreFailuresTolerated: { read: 0, write: -1, delete: -1 } });
    expect(standard!.quorums.write).toEqual({ needed: 3, formula: 'K, or K + 1 when K = M', worked: 'N=4, K=2, M=2: K = M, so K + 1 = 3' });
    expect(standard!.quorums.delete.worked).toBe('N=4, K=2, M=2: floor(4/2) + 1 = 3');
    expect(rrs).toMatchObject({ dataShards: 3, parityShards: 1, readable: false, writable: false });
    expect(report.summary).toEqual({ readable: false, writable: false, deletable: false });
  });

  it('placement of an empty object and of an inline one verifies every shard ok', async () => {
    current = await makeTestSet({ drives: 5, parity: 2 });
    for (const [key, bytes] of [['empty', new Uint8Array(0)], ['small', patternBytes(100, 3)]] as const) {
      await current.set.putObject('bucket', key, chunked(bytes), { storageClass: 'STANDARD', versioning: 'unversioned', sizeBytes: bytes.length });
      const placed = await current.set.placeObject('bucket', key, { verify: true });
      expect(placed.inline, key).toBe(true);
      expect(placed.slots.map((slot) => slot.status), key).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
      expect(placed.slots.map((slot) => slot.shardIndex).sort(), key).toEqual([1, 2, 3, 4, 5]);
    }
  });
});
