/**
 * The pieces of remote tiering that need no server:
 *
 * - ByteSlices (src/util/byte-slices.ts), which cuts one stream into parts for a multipart upload
 *   to a tier and for a restored copy carried between pools: any chunking, any slice lengths,
 *   the same bytes in the same order (property; TIER_SEED replays a failure);
 * - the part size of an upload to a tier;
 * - several transitions per rule: parsed, refused as AWS refuses them, and planned (a version goes
 *   to the tier of the latest transition it has reached, moving on from an earlier one);
 * - the tier deletion queue: entries written before they are tried, kept across a reopen while
 *   the tier fails, gone once it takes them; a removed tier's entries and missing objects are done.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ByteSlices } from '../src/util/byte-slices.js';
import { limits, MiB } from '../src/util/limits.js';
import { SvcError } from '../src/errors/index.js';
import { tierPartSizeBytes } from '../src/ops/tier/multipart-upload.js';
import { TierDeletionQueue, type TierDeletion } from '../src/ops/tier/deletion-queue.js';
import { planKey, tiersNamed } from '../src/ops/lifecycle-rules.js';
import { parseLifecycleConfiguration, lifecycleConfigurationXml } from '../src/api/s3/lifecycle-xml.js';
import type { LifecycleRule, ObjectInfo } from '../src/object/index.js';
import { codeOf } from './helpers/codes.js';
import { waitFor } from './helpers/poll.js';

const seed = Number(process.env.TIER_SEED ?? Date.now() % 1_000_000);
const dayMs = 86_400_000;

describe('ByteSlices', () => {
  it('gives back the stream cut at any lengths, whatever its chunks (property)', async () => {
    console.log(`tier-steps ByteSlices seed ${seed}`);
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 0, maxLength: 400 }), fc.array(fc.integer({ min: 1, max: 50 }), { maxLength: 20 }), fc.array(fc.integer({ min: 1, max: 90 }), { maxLength: 20 }), async (bytes, chunkCuts, sliceLengths) => {
        const chunks: Uint8Array[] = [];
        let at = 0;
        for (const cut of chunkCuts) {
          chunks.push(bytes.subarray(at, Math.min(bytes.length, at + cut)));
          at = Math.min(bytes.length, at + cut);
        }
        chunks.push(bytes.subarray(at));
        const slices = new ByteSlices((async function* () {
          yield* chunks;
        })());
        let offset = 0;
        for (const length of sliceLengths) {
          if (offset + length > bytes.length) break;
          const parts: Uint8Array[] = [];
          for await (const chunk of slices.next(length)) parts.push(chunk);
          expect(Buffer.concat(parts).equals(Buffer.from(bytes.subarray(offset, offset + length)))).toBe(true);
          offset += length;
        }
        await slices.close();
      }),
      { seed, numRuns: 200 },
    );
  });

  it('fails a slice the stream cannot fill, saying how much was missing', async () => {
    const slices = new ByteSlices((async function* () {
      yield new Uint8Array(10);
    })());
    const read = async () => {
      for await (const _chunk of slices.next(16)) void _chunk;
    };
    await expect(read()).rejects.toMatchObject({ code: 'InternalError', message: expect.stringContaining('6 bytes before the end of a 16-byte slice') });
  });
});

describe('the part size of an upload to a tier', () => {
  it('is at least 5 MiB, whole MiB, and never makes more than 10,000 parts', () => {
    expect(tierPartSizeBytes(6 * MiB)).toBe(limits.minPartSizeBytes);
    expect(tierPartSizeBytes(5 * 1024 * 1024 * MiB)).toBe(525 * MiB);
    fc.assert(fc.property(fc.integer({ min: 1, max: 5 * 1024 * 1024 * MiB }), (sizeBytes) => {
      const part = tierPartSizeBytes(sizeBytes);
      expect(part % MiB).toBe(0);
      expect(part).toBeGreaterThanOrEqual(limits.minPartSizeBytes);
      expect(Math.ceil(sizeBytes / part)).toBeLessThanOrEqual(limits.tierMultipartTargetParts);
    }), { seed, numRuns: 200 });
  });
});

const xml = (rule: string): Uint8Array => Buffer.from(`<LifecycleConfiguration><Rule><ID>r</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status>${rule}</Rule></LifecycleConfiguration>`);
const step = (days: number | string, tier: string): string => `<Transition>${typeof days === 'number' ? `<Days>${days}</Days>` : `<Date>${days}</Date>`}<StorageClass>${tier}</StorageClass></Transition>`;
const noncurrentStep = (days: number, tier: string): string => `<NoncurrentVersionTransition><NoncurrentDays>${days}</NoncurrentDays><StorageClass>${tier}</StorageClass></NoncurrentVersionTransition>`;

describe('several transitions per rule', () => {
  it('are parsed in the order sent and answered back the same way', () => {
    const rules = parseLifecycleConfiguration(xml(step(90, 'cold') + step(30, 'warm') + noncurrentStep(5, 'warm') + noncurrentStep(20, 'cold')));
    expect(rules[0]).toMatchObject({ transitions: [{ days: 90, storageClass: 'COLD' }, { days: 30, storageClass: 'WARM' }], noncurrentVersionTransitions: [{ noncurrentDays: 5, storageClass: 'WARM' }, { noncurrentDays: 20, storageClass: 'COLD' }] });
    expect(rules[0]!.transition).toBeUndefined();
    expect(tiersNamed(rules)).toEqual(['COLD', 'WARM']);
    const answer = lifecycleConfigurationXml(rules);
    expect(answer).toMatch(/<Transition><Days>90<\/Days><StorageClass>COLD<\/StorageClass><\/Transition><Transition><Days>30<\/Days><StorageClass>WARM<\/StorageClass><\/Transition>/);
    // One stays in the form it always had.
    expect(parseLifecycleConfiguration(xml(step(30, 'warm')))[0]).toMatchObject({ transition: { days: 30, storageClass: 'WARM' } });
  });

  it('are refused as AWS refuses them, by name', () => {
    const refused = (rule: string) => codeOf(() => parseLifecycleConfiguration(xml(rule)));
    expect(refused(step(30, 'warm') + step(60, 'warm'))).toBe('InvalidArgument');
    expect(refused(step(30, 'warm') + step(30, 'cold'))).toBe('InvalidArgument');
    expect(refused(step(30, 'warm') + step('2031-01-01T00:00:00Z', 'cold'))).toBe('InvalidRequest');
    expect(refused(step(30, 'warm') + '<Expiration><Date>2031-01-01T00:00:00Z</Date></Expiration>')).toBe('InvalidRequest');
    expect(refused(step(30, 'warm') + step(60, 'cold') + '<Expiration><Days>60</Days></Expiration>')).toBe('InvalidArgument');
    expect(refused(step('2031-01-01T00:00:00Z', 'warm') + '<Expiration><Date>2031-01-01T00:00:00Z</Date></Expiration>')).toBe('InvalidArgument');
    expect(refused(noncurrentStep(3, 'warm') + noncurrentStep(9, 'warm'))).toBe('InvalidArgument');
    expect(refused(noncurrentStep(3, 'warm') + noncurrentStep(3, 'cold'))).toBe('InvalidArgument');
    expect(refused(noncurrentStep(3, 'warm') + '<NoncurrentVersionExpiration><NoncurrentDays>3</NoncurrentDays></NoncurrentVersionExpiration>')).toBe('InvalidArgument');
    expect(refused(step(30, 'warm') + step(60, 'cold') + '<Expiration><Days>61</Days></Expiration>')).toBe('ok');
  });

  const baseMs = Date.parse('2030-01-01T00:00:00Z');
  const version = (id: string, modTimeMs: number, tier?: string): ObjectInfo => ({
    bucket: 'b', key: 'logs/k', versionId: id, isLatest: id === 'v0', deleteMarker: false, sizeBytes: 10, etag: 'e', modTimeMs, userMetadata: {}, systemMetadata: {},
    storageClass: 'STANDARD', parts: [], inline: false, dataShards: 2, parityShards: 2, ...(tier ? { transition: { tier, remoteKey: `k-${tier}`, transitionedMs: modTimeMs } } : {}),
  });
  const rule: LifecycleRule = {
    id: 'steps', enabled: true, filter: { prefix: 'logs/' },
    transitions: [{ days: 90, storageClass: 'COLD' }, { days: 30, storageClass: 'WARM' }],
    noncurrentVersionTransitions: [{ noncurrentDays: 2, storageClass: 'WARM' }, { noncurrentDays: 10, storageClass: 'COLD' }],
  };
  const tierAt = (versions: ObjectInfo[], days: number): string[] => planKey([rule], 'logs/k', versions, 'enabled', baseMs + days * dayMs).transitions.map((action) => `${action.versionId}:${action.tier}`);

  it('move a version to the tier of the latest transition it has reached, on from an earlier one', () => {
    expect(tierAt([version('v0', baseMs)], 10)).toEqual([]);
    expect(tierAt([version('v0', baseMs)], 40)).toEqual(['v0:WARM']);
    expect(tierAt([version('v0', baseMs)], 100)).toEqual(['v0:COLD']);
    expect(tierAt([version('v0', baseMs, 'WARM')], 40)).toEqual([]);
    expect(tierAt([version('v0', baseMs, 'WARM')], 100)).toEqual(['v0:COLD']);
    expect(tierAt([version('v0', baseMs, 'COLD')], 100)).toEqual([]);
    // On a tier no reached transition names (the rules changed): left where it is.
    expect(tierAt([version('v0', baseMs, 'OTHER')], 100)).toEqual([]);
    // Noncurrent: days since the successor was written.
    const versions = [version('v0', baseMs + 50 * dayMs), version('v1', baseMs)];
    expect(tierAt(versions, 52)).toEqual([]);
    expect(tierAt(versions, 53)).toEqual(['v1:WARM']);
    expect(tierAt([versions[0]!, version('v1', baseMs, 'WARM')], 62)).toEqual(['v1:COLD']);
    expect(tierAt(versions, 85)).toEqual(['v0:WARM', 'v1:COLD']);
  });
});

describe('the tier deletion queue', () => {
  const directories: string[] = [];
  afterAll(async () => {
    for (const directory of directories) await rm(directory, { recursive: true, force: true });
  });
  const fastTimers = { setTimeout: (callback: () => void) => setTimeout(callback, 5), clearTimeout: (handle: unknown) => clearTimeout(handle as NodeJS.Timeout) };
  const quiet = { warn: () => undefined };

  it('keeps entries on disk while the tier fails, across a reopen, until the tier takes them', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'svc-tier-deletions-'));
    directories.push(directory);
    let tierUp = false;
    const taken: TierDeletion[] = [];
    const remove = async (deletion: TierDeletion): Promise<void> => {
      if (deletion.remoteKey === 'gone') throw new SvcError('TierObjectNotFound', 'already gone');
      if (deletion.tier === 'OLD') throw new SvcError('TierNotFound', undefined, { tier: 'OLD' });
      if (!tierUp) throw new SvcError('TierUnreachable', 'connect ECONNREFUSED');
      taken.push(deletion);
    };
    const options = { directory, timers: fastTimers, nowMs: () => Date.now(), logger: quiet, remove };
    const first = await TierDeletionQueue.open(options);
    await first.enqueue({ tier: 'WARM', remoteKey: 'a', remoteVersionId: 'v1' });
    await first.enqueue({ tier: 'WARM', remoteKey: 'b' });
    await first.enqueue({ tier: 'WARM', remoteKey: 'gone' });
    await first.enqueue({ tier: 'OLD', remoteKey: 'c' });
    await waitFor('failed attempts', () => (first.statsOf('WARM').failed >= 2 ? true : undefined));
    expect(first.statsOf('WARM')).toMatchObject({ tier: 'WARM', pending: 3, deleted: 0, lastError: 'connect ECONNREFUSED' });
    await waitFor('the removed tier\'s entry to be dropped', () => (first.statsOf('OLD').pending === 0 ? true : undefined));
    await first.close();

    tierUp = true;
    const second = await TierDeletionQueue.open(options);
    expect(second.stats().map((stats) => stats.tier)).toEqual(['OLD', 'WARM']);
    await waitFor('every deletion to be taken', () => (second.statsOf('WARM').pending === 0 ? true : undefined));
    expect(taken).toEqual([{ tier: 'WARM', remoteKey: 'a', remoteVersionId: 'v1' }, { tier: 'WARM', remoteKey: 'b' }]);
    expect(second.statsOf('WARM')).toMatchObject({ pending: 0, deleted: 3, failed: 0 });
    expect(second.statsOf('NONE')).toEqual({ tier: 'NONE', pending: 0, deleted: 0, failed: 0, dropped: 0 });
    await second.close();
  });
});
