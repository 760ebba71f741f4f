/**
 * Compressed objects through a real object layer on in-memory drives (no mocks on the storage
 * path): random sizes across block and erasure-block boundaries, compressible and random bodies,
 * random ranges, with and without SSE (compressed, then sealed), come back exactly as put; the
 * client's size and ETag are kept while the drives hold less; stored bytes flipped on more drives
 * than parity are detected, never returned; the inline rule judges the compressed size.
 */
import { createHash, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { ObjectLayer } from '../src/object/index.js';
import { readObject, storeObject, type StoreAs } from '../src/ops/compression/compressed-objects.js';
import { isSvcError } from '../src/errors/index.js';
import { KiB, MiB } from '../src/util/limits.js';
import { collect, filesOn, makeTestSet, type TestSet } from './helpers/erasure-set.js';

const seed = Number(process.env.SVC_PROPERTY_SEED ?? Date.now() % 2 ** 31);
const runs = Number(process.env.SVC_PROPERTY_RUNS ?? 12);
console.log(`compression-objects property seed ${seed} (replay with SVC_PROPERTY_SEED=${seed})`);

let test: TestSet | undefined;
afterEach(async () => {
  await test?.cleanup();
  test = undefined;
});

async function layer(options: { drives: number; parity: number }): Promise<ObjectLayer> {
  test = await makeTestSet(options);
  const objects = new ObjectLayer({ deploymentId: '00000000-0000-4000-8000-000000000000', pools: [{ index: 0, sets: [test.set] }], clock: { nowMs: () => Date.now() } });
  await objects.makeBucket('data');
  return objects;
}

function textBody(size: number, salt: number): Buffer {
  const body = Buffer.alloc(size);
  let offset = 0;
  for (let line = 0; offset < size; line += 1) {
    const text = `{"salt":${salt},"line":${line},"user":"u${line % 89}","event":"view","path":"/items/${line % 503}"}\n`;
    offset += body.write(text, offset, Math.min(text.length, size - offset), 'latin1');
  }
  return body;
}

async function* chunks(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size);
}

const md5 = (bytes: Uint8Array) => createHash('md5').update(bytes).digest('hex');
const customerKey = randomBytes(32);
const asked = (compress: boolean, sealed: boolean): StoreAs => ({ compress, ...(sealed ? { sse: { kind: 'SSE-C' as const, customerKey } } : {}) });
const secrets = (sealed: boolean) => (sealed ? { secrets: { customerKey } } : {});

async function put(objects: ObjectLayer, key: string, body: Buffer, as: StoreAs, chunkSize = 65_537) {
  return storeObject(objects, undefined, as, 'data', key, chunks(body, chunkSize), { storageClass: 'STANDARD', sizeBytes: body.length });
}

describe('compressed objects in the object layer', () => {
  it('property: any size, body and range reads back exactly, with and without SSE; sizes and ETag are the client\'s', async () => {
    const objects = await layer({ drives: 4, parity: 2 });
    let turn = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.boolean(),
        fc.constantFrom('text' as const, 'random' as const),
        fc.oneof(fc.integer({ min: 0, max: 4 * MiB + 3 }), fc.constantFrom(1, 4 * KiB, MiB - 1, MiB, MiB + 1, 3 * MiB)),
        fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true })), { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 1, max: 400_000 }),
        async (sealed, kind, size, ranges, chunkSize) => {
          const key = `p/${(turn += 1)}.json`;
          const body = kind === 'text' ? textBody(size, turn) : randomBytes(size);
          const info = await put(objects, key, body, asked(true, sealed), chunkSize);
          // SSE-C's ETag is opaque (docs/encryption.md), compressed or not; otherwise the MD5 of the client's bytes.
          expect([info.sizeBytes, info.etag === md5(body), /^[0-9a-f]{32}$/.test(info.etag)]).toEqual([size, !sealed, true]);
          const head = await objects.headObject('data', key);
          expect([head.sizeBytes, head.etag, head.parts.map((part) => part.sizeBytes)]).toEqual([size, info.etag, [size]]);
          if (kind === 'random' || size >= 4 * KiB) expect(head.compression !== undefined).toBe(kind === 'text');
          if (head.compression && kind === 'text' && size > 64 * KiB) expect(head.storedSizeBytes!).toBeLessThan(size / 3);
          const whole = await readObject(objects, undefined, 'data', key, secrets(sealed));
          expect(Buffer.from(await collect(whole.body)).equals(body)).toBe(true);
          for (const [start, span] of ranges) {
            if (size === 0) continue;
            const offset = Math.min(size - 1, Math.floor(start * size));
            const length = Math.max(1, Math.floor(span * (size - offset)));
            const reader = await readObject(objects, undefined, 'data', key, { range: { offset, length }, ...secrets(sealed) });
            expect(Buffer.from(await collect(reader.body)).equals(body.subarray(offset, offset + length)), `${key} ${offset}+${length}`).toBe(true);
          }
        },
      ),
      { seed, numRuns: runs },
    );
  });

  it('a compressed object read without decompression support is still the client\'s bytes (object layer, console, part copy)', async () => {
    const objects = await layer({ drives: 4, parity: 2 });
    const body = textBody(2 * MiB + 99, 7);
    await put(objects, 'direct.log', body, asked(true, false));
    const reader = await objects.getObject('data', 'direct.log', { range: { offset: MiB - 10, length: 20 } });
    expect(Buffer.from(await collect(reader.body)).equals(body.subarray(MiB - 10, MiB + 10))).toBe(true);
    const stored = await objects.getObject('data', 'direct.log', { sealed: true });
    expect((await collect(stored.body)).length).toBe(stored.info.storedSizeBytes);
  });

  it('a flipped stored byte on more drives than parity is detected and never returned; on parity drives the bytes are right', async () => {
    const objects = await layer({ drives: 4, parity: 2 });
    const body = textBody(12 * MiB, 3);
    const info = await put(objects, 'rot.json', body, asked(true, false));
    expect(info.inline).toBe(false);
    const corruptOn = (slots: number[]) => {
      for (const [slot, faulty] of test!.faulty.entries()) faulty.setFaults(slots.includes(slot) ? { operations: { readRange: { corruptReads: { bitFlips: 1 } } } } : {});
    };
    for (const sealed of [false, true]) {
      const key = sealed ? 'rot-sealed.json' : 'rot.json';
      if (sealed) await put(objects, key, body, asked(true, true));
      corruptOn([0, 3]);
      const healthy = await readObject(objects, undefined, 'data', key, secrets(sealed));
      expect(Buffer.from(await collect(healthy.body)).equals(body)).toBe(true);
      corruptOn([0, 1, 3]);
      const handed: Buffer[] = [];
      const failure = await (async () => {
        const reader = await readObject(objects, undefined, 'data', key, secrets(sealed));
        for await (const chunk of reader.body) handed.push(Buffer.from(chunk));
      })().then(() => undefined, (error: unknown) => error);
      expect(isSvcError(failure) && failure.code).toBe('ErasureReadQuorum');
      const got = Buffer.concat(handed);
      expect(got.equals(body.subarray(0, got.length))).toBe(true);
      corruptOn([]);
    }
  });

  it('inlines by the compressed size: a body far over the inline budget inlines when its compressed stream fits', async () => {
    // Four drives, EC:2: K = 2 and 128 KiB a shard, so at most 256 KiB stored inline.
    const objects = await layer({ drives: 4, parity: 2 });
    const cases: [string, Buffer, StoreAs, boolean][] = [
      ['text-plain', textBody(MiB, 1), asked(false, false), false],
      ['text-compressed', textBody(MiB, 1), asked(true, false), true],
      ['text-compressed-sealed', textBody(MiB, 1), asked(true, true), true],
      ['random-compressed-at-budget', randomBytes(256 * KiB), asked(true, false), true],
      ['random-compressed-over-budget', randomBytes(256 * KiB + 1), asked(true, false), false],
      ['text-compressed-large', textBody(16 * MiB, 2), asked(true, false), false],
    ];
    for (const [key, body, as, inline] of cases) {
      const info = await put(objects, key, body, as);
      expect(info.inline, key).toBe(inline);
      const dataFiles = (await filesOn(test!.inner, 'data')).filter((path) => path.includes(`/${key}/`) && path.includes('/part.'));
      expect(dataFiles.length === 0, key).toBe(inline);
      const reader = await readObject(objects, undefined, 'data', key, secrets(as.sse !== undefined));
      expect(Buffer.from(await collect(reader.body)).equals(body), key).toBe(true);
    }
  });

  it('a body longer or shorter than declared stores nothing', async () => {
    const objects = await layer({ drives: 4, parity: 2 });
    const body = textBody(300 * KiB, 1);
    const refusal = async (declared: number) => storeObject(objects, undefined, asked(true, false), 'data', 'sized.json', chunks(body, 10_000), { storageClass: 'STANDARD', sizeBytes: declared }).then(() => 'stored', (error: unknown) => (isSvcError(error) ? error.code : String(error)));
    expect(await refusal(body.length + 1)).toBe('IncompleteBody');
    expect(await refusal(body.length - 1)).toBe('InvalidRequest');
    expect(await objects.headObject('data', 'sized.json').then(() => 'found', (error: unknown) => (isSvcError(error) ? error.code : String(error)))).toBe('NoSuchKey');
  });
});
