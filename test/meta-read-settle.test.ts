/**
 * Reads that do not wait for a slow drive (src/object/quorum.ts `latestVoteSettled`,
 * src/object/meta-io.ts): whenever the answers that arrived so far are called settled, the vote
 * over them decides exactly what the vote over every drive's answer decides, whatever the late
 * answers are and in whatever order they came. And a GET through the object layer returns while
 * one drive's xl.meta read hangs, or while its shard reads hang and its xl.meta answers (hedged
 * shard reads, src/object/shard-hedge.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { latestVoteSettled, resolveVersion, type DriveMetaAnswer } from '../src/object/quorum.js';
import { objectDir } from '../src/object/paths.js';
import { decodeXlMeta } from '../src/format/xl-meta.js';
import { readFile } from 'node:fs/promises';
import { parseExposition } from './helpers/metrics.js';
import type { ObjectVersion } from '../src/format/xl-meta-types.js';

function versionOf(id: number, dataShards: number, parityShards: number, deleteMarker: boolean): ObjectVersion {
  const drives = dataShards + parityShards;
  return {
    versionId: `v${id}`, modTimeMs: 1_000 + id, deleteMarker, sizeBytes: deleteMarker ? 0 : 10 * id, etag: `e${id}`, userMetadata: {}, systemMetadata: {}, storageClass: 'STANDARD', parts: deleteMarker ? [] : [{ number: 1, sizeBytes: 10 * id, etag: `e${id}` }],
    ...(deleteMarker ? {} : { erasure: { codec: 'rs-vandermonde', dataShards, parityShards, blockSizeBytes: 1 << 20, index: 1, distribution: Array.from({ length: drives }, (_, slot) => slot + 1), checksumAlgorithm: 'xxh64' as const } }),
  };
}

/** What a vote decides, comparable: the version, or the error's code. */
function verdict(answers: DriveMetaAnswer[], drives: number): string {
  try {
    const resolved = resolveVersion(answers, drives);
    return `${resolved.version.versionId}/${resolved.isLatest}`;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

describe('settled metadata reads', () => {
  it('property: a settled prefix of the answers decides as all of them do', () => {
    const scenario = fc
      .record({ drives: fc.integer({ min: 1, max: 16 }), parityFraction: fc.double({ min: 0, max: 0.5, noNaN: true }) })
      .chain(({ drives, parityFraction }) => {
        const parity = Math.floor(drives * parityFraction);
        const states = fc.oneof(
          { weight: 12, arbitrary: fc.record({ kind: fc.constant('found' as const), newest: fc.constant(3) }) },
          { weight: 4, arbitrary: fc.record({ kind: fc.constant('found' as const), newest: fc.integer({ min: 1, max: 2 }) }) },
          { weight: 1, arbitrary: fc.record({ kind: fc.constant('missing' as const) }) },
          { weight: 1, arbitrary: fc.record({ kind: fc.constant('failed' as const) }) },
        );
        return fc.record({
          drives: fc.constant(drives), parity: fc.constant(parity), markerOnTop: fc.boolean(),
          states: fc.array(states, { minLength: drives, maxLength: drives }),
          order: fc.shuffledSubarray(Array.from({ length: drives }, (_, slot) => slot), { minLength: drives, maxLength: drives }),
        });
      });
    const seed = Number(process.env.SVC_PROPERTY_SEED ?? Date.now() % 2 ** 31);
    let settledPrefixes = 0;
    try {
      fc.assert(
        fc.property(scenario, ({ drives, parity, markerOnTop, states, order }) => {
          const answers: DriveMetaAnswer[] = states.map((state, slot) => {
            if (state.kind === 'missing') return { slot, state: 'missing' };
            if (state.kind === 'failed') return { slot, state: 'failed', error: new Error('offline') };
            const versions = [versionOf(state.newest, drives - parity, parity, markerOnTop && state.newest === 3)];
            if (state.newest > 1) versions.push(versionOf(state.newest - 1, drives - parity, parity, false));
            return { slot, state: 'found', meta: { versions } };
          });
          const whole = verdict(answers, drives);
          for (let arrived = 1; arrived < drives; arrived += 1) {
            const prefix = order.slice(0, arrived).map((slot) => answers[slot]!);
            if (!latestVoteSettled(prefix, drives, drives - arrived)) continue;
            settledPrefixes += 1;
            expect(verdict(prefix, drives), `${arrived} of ${drives} answers settled the vote`).toBe(whole);
            const holders = [...resolveVersion(prefix, drives).holders.keys()];
            const all = resolveVersion(answers, drives);
            expect(holders.every((slot) => all.holders.has(slot))).toBe(true);
            expect(resolveVersion(prefix, drives).outdated.every((slot) => order.slice(0, arrived).includes(slot))).toBe(true);
          }
        }),
        { seed, numRuns: 2_000 },
      );
    } catch (error) {
      throw new Error(`settled-vote property failed with seed ${seed}: ${(error as Error).message}`);
    }
    // The property means something only if prefixes do settle.
    expect(settledPrefixes).toBeGreaterThan(100);
  });
});

describe('a GET beside a hung drive', () => {
  let root: string;
  let server: SvcProcess;
  let s3: S3Client;
  const small = Buffer.from('small and inline');
  const large = Buffer.alloc(3 * 1024 * 1024 + 5, 'shards');

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-settle-'));
    // No drive deadline worth the name: without settled reads, a GET would wait for the hung drive.
    server = await startSvc({ args: [join(root, 'd{1...4}')], env: { SVC_CONSOLE_ENABLE: 'false', SVC_FAULT_INJECTION: 'on', SVC_DRIVE_MAX_TIMEOUT: '10m', SVC_PROMETHEUS_AUTH_TYPE: 'public' } });
    s3 = s3ClientFor(server.url);
    await s3.send(new CreateBucketCommand({ Bucket: 'settle' }));
    await s3.send(new PutObjectCommand({ Bucket: 'settle', Key: 'small', Body: small }));
    await s3.send(new PutObjectCommand({ Bucket: 'settle', Key: 'large', Body: large }));
  }, 60_000);
  afterAll(async () => {
    await server?.kill();
    await rm(root, { recursive: true, force: true });
  });

  it('answers from the other drives while one drive never answers its xl.meta reads, then the drive is fine again', async () => {
    const drives = ((await admin(server.url, 'GET', '/svc/admin/v4/faults')).body.drives as { drive: string }[]).map((entry) => entry.drive);
    const hang = { operations: { readFile: { hang: true, pathContains: 'xl.meta' } } };
    expect((await admin(server.url, 'POST', '/svc/admin/v4/faults', `drive=${encodeURIComponent(drives[1]!)}`, { body: JSON.stringify(hang) })).status).toBe(200);
    const read = async (key: string): Promise<Buffer> => Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket: 'settle', Key: key }))).Body!.transformToByteArray());
    // Bounded by the test's own timeout: the hang lasts until the plan changes, so these return only by not waiting for it.
    for (let round = 0; round < 3; round += 1) {
      expect((await read('small')).equals(small)).toBe(true);
      expect((await read('large')).equals(large)).toBe(true);
    }
    expect((await admin(server.url, 'POST', '/svc/admin/v4/faults', `drive=${encodeURIComponent(drives[1]!)}`, { body: JSON.stringify({}) })).status).toBe(200);
    expect((await read('large')).equals(large)).toBe(true);
  }, 60_000);

  it('answers from parity while the drive of a data shard never answers its shard reads (its xl.meta does), asking parity first after that', async () => {
    const drives = ((await admin(server.url, 'GET', '/svc/admin/v4/faults')).body.drives as { drive: string }[]).map((entry) => entry.drive);
    const indexes = await Promise.all(drives.map(async (drive) => decodeXlMeta(await readFile(join(drive, objectDir('settle', 'large'), 'xl.meta'))).versions[0]!.erasure!.index));
    const dataDrive = drives[indexes.indexOf(1)]!;
    const hung = { operations: { readRange: { hang: true } } };
    const setPlan = async (plan: unknown): Promise<void> => {
      expect((await admin(server.url, 'POST', '/svc/admin/v4/faults', `drive=${encodeURIComponent(dataDrive)}`, { body: JSON.stringify(plan) })).status).toBe(200);
    };
    const hedgedReads = async (): Promise<number> => {
      const families = parseExposition(await (await fetch(`${server.url}/svc/metrics/node`)).text());
      return families.get('svc_erasure_hedged_reads_total')?.samples[0]?.value ?? Number.NaN;
    };
    const read = async (): Promise<Buffer> => Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket: 'settle', Key: 'large' }))).Body!.transformToByteArray());
    const before = await hedgedReads();
    expect(before).toBeGreaterThanOrEqual(0);
    await setPlan(hung);
    // Bounded by the test's own timeout: the drive answers no shard read until its plan changes, so
    // each GET returns only by asking parity instead, and the read it left behind is still hung.
    expect((await read()).equals(large)).toBe(true);
    const afterFirst = await hedgedReads();
    expect(afterFirst).toBeGreaterThan(before);
    for (let round = 0; round < 3; round += 1) expect((await read()).equals(large)).toBe(true);
    const planNow = ((await admin(server.url, 'GET', '/svc/admin/v4/faults')).body.drives as { drive: string; faults: unknown }[]).find((entry) => entry.drive === dataDrive)!.faults;
    expect(planNow).toEqual(hung);
    await setPlan({});
    expect((await read()).equals(large)).toBe(true);
  }, 60_000);
});
