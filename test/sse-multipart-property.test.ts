/**
 * Property: an encrypted multipart object (SSE-S3, SSE-KMS, SSE-C) of random part counts and sizes
 * (an empty last part, sizes at the 64 KiB package and 1 MiB erasure block boundaries) reads back
 * exactly as uploaded, whole, by random ranges and by part number; its parts swapped on the drives
 * fail authentication; and no drive holds any of its plaintext. Each part's MD5 (its ETag) is taken
 * once, over its plaintext, where the set codes blocks, and none over the sealed bytes. Seeded: the seed is printed and
 * SVC_PROPERTY_SEED replays it (SVC_PROPERTY_RUNS sets the number of runs).
 */
import { createHash, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MainThreadCoding, ObjectLayer, type BlockCoding, type DigestAlgorithm } from '../src/object/index.js';
import { readObject, storeObject } from '../src/ops/compression/compressed-objects.js';
import { isSvcError } from '../src/errors/index.js';
import type { SseRequest } from '../src/ops/sse/object-keys.js';
import { MiB, limits } from '../src/util/limits.js';
import { makeTestSet, type TestSet } from './helpers/erasure-set.js';
import { filesHolding, kmsFor, partRangeOf, putEncryptedMultipart, readDecrypted } from './helpers/sse-layer.js';

const seed = Number(process.env.SVC_PROPERTY_SEED ?? Date.now() % 2 ** 31);
const runs = Number(process.env.SVC_PROPERTY_RUNS ?? 6);
console.log(`sse-multipart property seed ${seed} (replay with SVC_PROPERTY_SEED=${seed})`);

const packageBytes = 64 * 1024;
let set: TestSet;
let objects: ObjectLayer;
let kms: ReturnType<typeof kmsFor>;

beforeAll(async () => {
  set = await makeTestSet({ drives: 4, parity: 2 });
  objects = new ObjectLayer({ deploymentId: '00000000-0000-4000-8000-000000000000', pools: [{ index: 0, sets: [set.set] }], clock: { nowMs: () => Date.now() }, random: () => 0 });
  await objects.makeBucket('prop');
  kms = kmsFor(objects);
});
afterAll(async () => {
  await set?.cleanup();
});

/** Offsets from a boundary that matter to the package and block arithmetic. */
const nearBoundary = fc.constantFrom(-1, 0, 1, packageBytes - 1, packageBytes, packageBytes + 1, MiB - 1, MiB, MiB + 1, 3 * packageBytes + 17);
const innerPart = fc.oneof(nearBoundary.map((extra) => limits.minPartSizeBytes + Math.max(0, extra)), fc.integer({ min: 0, max: 300_000 }).map((extra) => limits.minPartSizeBytes + extra));
const lastPart = fc.oneof(fc.constant(0), nearBoundary.map((extra) => Math.max(0, extra)), fc.integer({ min: 0, max: 2 * MiB + 5 }));
const sseKind = fc.constantFrom<'SSE-S3' | 'SSE-KMS' | 'SSE-C'>('SSE-S3', 'SSE-KMS', 'SSE-C');
const scenario = fc.record({
  inner: fc.array(innerPart, { minLength: 0, maxLength: 2 }),
  last: lastPart,
  kind: sseKind,
  ranges: fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1, max: 3 * MiB })), { minLength: 1, maxLength: 4 }),
  fill: fc.integer({ min: 0, max: 2 ** 31 }),
});

function sseOf(kind: 'SSE-S3' | 'SSE-KMS' | 'SSE-C'): SseRequest {
  if (kind === 'SSE-C') return { kind, customerKey: randomBytes(32) };
  return kind === 'SSE-KMS' ? { kind, context: { purpose: 'property' } } : { kind };
}

/** A part body: a printable marker (found by the drive grep if ever stored in the clear), then seeded bytes. */
function partBody(size: number, fill: number, marker: string): Buffer {
  const body = Buffer.alloc(size);
  let state = fill >>> 0 || 1;
  for (let index = 0; index < size; index += 1) {
    state = (state * 1_103_515_245 + 12_345) >>> 0;
    body[index] = state >>> 24;
  }
  const stamp = Buffer.from(marker);
  for (let offset = 0; offset + stamp.length <= size; offset += 200_000) stamp.copy(body, offset);
  return body;
}

describe('encrypted multipart objects (property)', () => {
  it('read back exactly, whole, by range and by part number; no drive holds their plaintext', async () => {
    let round = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async ({ inner, last, kind, ranges, fill }) => {
        const key = `object-${round++}`;
        const marker = `plain-marker-${randomBytes(6).toString('hex')}`;
        const sizes = [...inner, last];
        const parts = sizes.map((size, index) => partBody(size, fill + index, marker));
        const body = Buffer.concat(parts);
        const sse = sseOf(kind);
        const info = await putEncryptedMultipart(objects, kms, 'prop', key, sse, parts);
        expect([info.sizeBytes, info.etag.endsWith(`-${sizes.length}`), info.parts.map((part) => part.sizeBytes)]).toEqual([body.length, true, sizes]);
        expect((await readDecrypted(objects, kms, 'prop', key, sse)).equals(body)).toBe(true);
        for (const [where, wanted] of ranges) {
          if (body.length === 0) break;
          const offset = Math.min(body.length - 1, Math.floor(where * body.length));
          const length = Math.min(wanted, body.length - offset);
          const got = await readDecrypted(objects, kms, 'prop', key, sse, { offset, length });
          expect(got.equals(body.subarray(offset, offset + length)), `range ${offset}+${length} of ${sizes.join(',')}`).toBe(true);
        }
        for (const [index, size] of sizes.entries()) {
          const range = partRangeOf(info, index + 1);
          expect(range.length).toBe(size);
          expect((await readDecrypted(objects, kms, 'prop', key, sse, range)).equals(parts[index]!)).toBe(true);
        }
        if (sizes.some((size) => size >= marker.length)) expect(await filesHolding(set.inner, marker)).toEqual([]);
        await objects.deleteObject('prop', key);
      }),
      { seed, numRuns: runs },
    );
  }, 300_000);

  it('two parts swapped on every drive fail authentication (ObjectTampered), never returning their bytes', async () => {
    const sse: SseRequest = { kind: 'SSE-S3' };
    const size = limits.minPartSizeBytes;
    const parts = [partBody(size, 1, 'first'), partBody(size, 2, 'second')];
    const info = await putEncryptedMultipart(objects, kms, 'prop', 'swapped', sse, parts);
    expect(info.parts.length).toBe(2);
    let swapped = 0;
    for (const drive of set.inner) {
      for await (const path of drive.walk('prop/swapped')) {
        if (!path.endsWith('/part.1')) continue;
        const other = path.replace(/part\.1$/, 'part.2');
        const [one, two] = [Buffer.from(await drive.readFile(path)), Buffer.from(await drive.readFile(other))];
        await drive.writeFileAtomic(path, two);
        await drive.writeFileAtomic(other, one);
        swapped += 1;
      }
    }
    expect(swapped).toBe(4);
    let failure: unknown;
    try {
      await readDecrypted(objects, kms, 'prop', 'swapped', sse);
    } catch (error) {
      failure = error;
    }
    expect(isSvcError(failure, 'ObjectTampered'), String(failure)).toBe(true);
  });
});

/** The set's own coding, noting every session it opens: how many data shards it codes, and whether it takes an MD5. */
class NotedCoding implements BlockCoding {
  readonly name = 'noted';
  readonly sessions: { dataShards: number; md5: boolean }[] = [];
  private readonly inner = new MainThreadCoding();
  open(dataShards: number, parityShards: number, algorithms: readonly DigestAlgorithm[], md5 = true) {
    this.sessions.push({ dataShards, md5 });
    return this.inner.open(dataShards, parityShards, algorithms, md5);
  }
  acquireBuffers(blockSizeBytes: number, dataShards: number, totalShards: number) {
    return this.inner.acquireBuffers(blockSizeBytes, dataShards, totalShards);
  }
  releaseBuffers(buffers: Parameters<BlockCoding['releaseBuffers']>[0]): void {
    this.inner.releaseBuffers(buffers);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

describe('the MD5 of an encrypted body', () => {
  it('is taken once per part and per compressed PUT, over the plaintext, on the set\'s coding; never over the sealed bytes', async () => {
    const coding = new NotedCoding();
    const noted = await makeTestSet({ drives: 4, parity: 2, coding });
    try {
      const layer = new ObjectLayer({ deploymentId: '00000000-0000-4000-8000-000000000000', pools: [{ index: 0, sets: [noted.set] }], clock: { nowMs: () => Date.now() }, random: () => 0 });
      await layer.makeBucket('md5');
      const layerKms = kmsFor(layer);
      const parts = [partBody(limits.minPartSizeBytes, 3, 'one'), partBody(MiB + 5, 4, 'two')];
      coding.sessions.length = 0;
      const info = await putEncryptedMultipart(layer, layerKms, 'md5', 'parts', { kind: 'SSE-S3' }, parts);
      expect(info.parts.map((part) => part.etag)).toEqual(parts.map((part) => createHash('md5').update(part).digest('hex')));
      // Per part: one session digests the plaintext (no data shards) with its MD5; the one coding the sealed bytes takes none.
      expect(coding.sessions).toEqual(parts.flatMap(() => [{ dataShards: 0, md5: true }, { dataShards: 2, md5: false }]));
      const text = Buffer.from('a line of text that compresses well\n'.repeat(90_000));
      async function* body(): AsyncGenerator<Uint8Array> {
        yield text;
      }
      coding.sessions.length = 0;
      const stored = await storeObject(layer, layerKms, { sse: { kind: 'SSE-S3' }, compress: true }, 'md5', 'compressed', body(), { storageClass: 'STANDARD', sizeBytes: text.length });
      expect(stored.etag).toBe(createHash('md5').update(text).digest('hex'));
      // Stored compressed: a line repeated 90,000 times shrinks to a small part of its size.
      expect(stored.compression?.plainSizeBytes).toBe(text.length);
      expect(stored.compression!.storedSizeBytes).toBeLessThan(text.length / 10);
      // The compressed stream may be small enough to inline (coded without a session): either way one MD5, the plaintext's.
      expect(coding.sessions.filter((session) => session.md5)).toEqual([{ dataShards: 0, md5: true }]);
      const reader = await readObject(layer, layerKms, 'md5', 'compressed', {});
      const chunks: Buffer[] = [];
      for await (const chunk of reader.body) chunks.push(Buffer.from(chunk));
      expect(Buffer.concat(chunks).equals(text)).toBe(true);
    } finally {
      await noted.cleanup();
    }
  });
});
