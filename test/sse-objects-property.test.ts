/**
 * Property: an object PUT encrypted in one part (SSE-S3, SSE-KMS, SSE-C) through the code the S3
 * handlers call reads back exactly, whole and by any range, for sizes at and around the 64 KiB
 * package and 1 MiB erasure-block boundaries and bodies arriving in chunks of any size; its ETag
 * is the client's (the stored bytes' MD5 is not taken), and the stored part carries that ETag.
 * The GET hands every stored chunk back to the read buffers as it goes, so a chunk reused while a
 * package was still being opened would show. Blocks are coded on a coding thread, as a server does.
 * Seeded: the seed is printed and SVC_PROPERTY_SEED replays it (SVC_PROPERTY_RUNS sets the runs).
 */
import { createHash, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObjectLayer, WorkerCoding } from '../src/object/index.js';
import { isSvcError } from '../src/errors/index.js';
import { getDecrypted, putEncrypted } from '../src/ops/sse/encrypted-objects.js';
import type { SseRequest } from '../src/ops/sse/object-keys.js';
import { MiB } from '../src/util/limits.js';
import { makeTestSet, type TestSet } from './helpers/erasure-set.js';
import { kmsFor, secretsFor } from './helpers/sse-layer.js';

const seed = Number(process.env.SVC_PROPERTY_SEED ?? Date.now() % 2 ** 31);
const runs = Number(process.env.SVC_PROPERTY_RUNS ?? 12);
console.log(`sse-objects property seed ${seed} (replay with SVC_PROPERTY_SEED=${seed})`);

const packageBytes = 64 * 1024;
const coding = new WorkerCoding(1);
let set: TestSet;
let objects: ObjectLayer;
let kms: ReturnType<typeof kmsFor>;

beforeAll(async () => {
  set = await makeTestSet({ drives: 4, parity: 2, coding });
  objects = new ObjectLayer({ deploymentId: '00000000-0000-4000-8000-000000000000', pools: [{ index: 0, sets: [set.set] }], clock: { nowMs: () => Date.now() }, random: () => 0 });
  await objects.makeBucket('prop');
  kms = kmsFor(objects);
});
afterAll(async () => {
  await set?.cleanup();
  await coding.close();
});

/** Sizes at and around the package and erasure-block boundaries, and anything up to 3 MiB. */
const boundary = fc.constantFrom(0, packageBytes, 2 * packageBytes, 16 * packageBytes, MiB, 2 * MiB, 3 * MiB);
const size = fc.oneof(fc.tuple(boundary, fc.integer({ min: -17, max: 17 })).map(([at, offset]) => Math.max(0, at + offset)), fc.integer({ min: 0, max: 3 * MiB }));
const scenario = fc.record({
  size,
  kind: fc.constantFrom<'SSE-S3' | 'SSE-KMS' | 'SSE-C'>('SSE-S3', 'SSE-KMS', 'SSE-C'),
  chunkSizes: fc.array(fc.integer({ min: 1, max: 300_000 }), { minLength: 1, maxLength: 4 }),
  ranges: fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1, max: 3 * MiB })), { minLength: 1, maxLength: 3 }),
  fill: fc.integer({ min: 1, max: 2 ** 31 }),
});

function sseOf(kind: 'SSE-S3' | 'SSE-KMS' | 'SSE-C'): SseRequest {
  if (kind === 'SSE-C') return { kind, customerKey: randomBytes(32) };
  return kind === 'SSE-KMS' ? { kind, context: { purpose: 'property' } } : { kind };
}

function bodyOf(length: number, fill: number): Buffer {
  const body = Buffer.allocUnsafe(length);
  let state = fill >>> 0;
  for (let index = 0; index < length; index += 1) {
    state = (state * 1_103_515_245 + 12_345) >>> 0;
    body[index] = state >>> 24;
  }
  return body;
}

/** `bytes` in chunks of the given sizes, cycled, as a request body arrives. */
async function* chunks(bytes: Uint8Array, sizes: number[]): AsyncGenerator<Uint8Array> {
  let turn = 0;
  for (let offset = 0; offset < bytes.length; ) {
    const length = sizes[turn++ % sizes.length]!;
    yield bytes.subarray(offset, offset + length);
    offset += length;
  }
}

/** The plaintext of a range, each stored chunk handed back to the read buffers as the GET goes. */
async function read(key: string, sse: SseRequest, range?: { offset: number; length: number }): Promise<Buffer> {
  const reader = await getDecrypted(objects, kms, 'prop', key, { secrets: secretsFor(sse), ...(range ? { range } : {}) });
  const pieces: Buffer[] = [];
  for await (const chunk of reader.body) {
    pieces.push(Buffer.from(chunk));
    reader.release(chunk);
  }
  return Buffer.concat(pieces);
}

const md5 = (bytes: Uint8Array) => createHash('md5').update(bytes).digest('hex');

describe('encrypted single-part objects (property)', () => {
  it('read back exactly, whole and by range; the ETag and the stored part are the client\'s', async () => {
    let round = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async ({ size, kind, chunkSizes, ranges, fill }) => {
        const key = `object-${round++}`;
        const body = bodyOf(size, fill);
        const sse = sseOf(kind);
        const info = await putEncrypted(objects, kms, sse, 'prop', key, chunks(body, chunkSizes), { storageClass: 'STANDARD', sizeBytes: size });
        expect(info.sizeBytes).toBe(size);
        if (kind === 'SSE-S3') expect(info.etag).toBe(md5(body));
        else expect(info.etag).toMatch(/^[0-9a-f]{32}$/);
        expect(info.parts.map((part) => part.etag)).toEqual([info.etag]);
        expect((await read(key, sse)).equals(body), `whole object of ${size}`).toBe(true);
        for (const [where, wanted] of ranges) {
          if (size === 0) break;
          const offset = Math.min(size - 1, Math.floor(where * size));
          const length = Math.min(wanted, size - offset);
          expect((await read(key, sse, { offset, length })).equals(body.subarray(offset, offset + length)), `range ${offset}+${length} of ${size}`).toBe(true);
        }
        await objects.deleteObject('prop', key);
      }),
      { seed, numRuns: runs },
    );
  }, 120_000);

  it('a put that leaves out the stored bytes\' MD5 without giving an ETag fails and stores nothing', async () => {
    async function* body(): AsyncGenerator<Uint8Array> {
      yield Buffer.alloc(2 * MiB, 7);
    }
    const failure = await objects.putObject('prop', 'no-etag', body(), { storageClass: 'STANDARD', sizeBytes: 2 * MiB, skipStoredMd5: true }).then(() => undefined, (error: unknown) => error);
    expect(isSvcError(failure, 'InternalError'), String(failure)).toBe(true);
    await expect(objects.headObject('prop', 'no-etag')).rejects.toMatchObject({ code: 'NoSuchKey' });
  });
});
