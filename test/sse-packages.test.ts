import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  cipherRangeOf, openPackage, openStream, packageCount, packagePlainBytes, packageSealedBytes, plainSizeOf, sealPackage, sealStream, sealedSizeBytes,
  type PackageKey, type SealedPart,
} from '../src/format/sse-packages.js';
import { isSvcError } from '../src/errors/index.js';
import { ssePackageFixture } from './fixtures/sse-fixture-values.js';

const seed = Number(process.env.SVC_PROPERTY_SEED ?? Date.now() % 2 ** 31);
const runs = Number(process.env.SVC_PROPERTY_RUNS ?? 25);
console.log(`sse-packages property seed ${seed} (replay with SVC_PROPERTY_SEED=${seed})`);

async function collect(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** `bytes` delivered in chunks of the given sizes (cycled), as an erasure stream would. */
async function* chunked(bytes: Uint8Array, sizes: number[]): AsyncGenerator<Uint8Array> {
  let offset = 0;
  let turn = 0;
  while (offset < bytes.length) {
    const size = Math.max(1, sizes[turn++ % sizes.length]!);
    yield bytes.subarray(offset, offset + size);
    offset += size;
  }
}

function newKey(): PackageKey {
  return { dataKey: randomBytes(32), nonceBase: randomBytes(12) };
}

function patterned(length: number, salt: number): Buffer {
  const bytes = Buffer.allocUnsafe(length);
  for (let index = 0; index < length; index += 1) bytes[index] = (index * 131 + salt) & 0xff;
  return bytes;
}

/** Seals each part as its own package sequence, concatenated as an object's stored bytes. */
async function sealParts(key: PackageKey, plains: Buffer[], chunkSizes: number[]): Promise<Buffer> {
  const sealed: Buffer[] = [];
  for (const [index, plain] of plains.entries()) sealed.push(await collect(sealStream(chunked(plain, chunkSizes), key, index + 1)));
  return Buffer.concat(sealed);
}

const interestingSize = fc.oneof(
  fc.integer({ min: 0, max: 3 * packagePlainBytes + 10 }),
  fc.constantFrom(0, 1, packagePlainBytes - 1, packagePlainBytes, packagePlainBytes + 1, 1024 * 1024 - 1, 1024 * 1024, 1024 * 1024 + 1),
  fc.integer({ min: 0, max: 3 * 1024 * 1024 + 17 }),
);

describe('encrypted packages', () => {
  it('sizes: sealed size and plaintext size are inverse, one tag per package, an empty part has one package', () => {
    expect(sealedSizeBytes(0)).toBe(16);
    expect(packageCount(0)).toBe(1);
    expect(sealedSizeBytes(packagePlainBytes)).toBe(packageSealedBytes);
    expect(sealedSizeBytes(packagePlainBytes + 1)).toBe(packageSealedBytes + 17);
    fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 40 }), (size) => plainSizeOf(sealedSizeBytes(size)) === size), { seed, numRuns: 200 });
    expect(plainSizeOf(5)).toBeUndefined();
  });

  it('random sizes, parts, chunkings and ranges round-trip through seal and open of only the packages touched', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(interestingSize, { minLength: 1, maxLength: 3 }),
        fc.array(fc.integer({ min: 1, max: 300_000 }), { minLength: 1, maxLength: 4 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        async (sizes, chunkSizes, startFraction, lengthFraction) => {
          const key = newKey();
          const plains = sizes.map((size, index) => patterned(size, index + 1));
          const whole = Buffer.concat(plains);
          const stored = await sealParts(key, plains, chunkSizes);
          const parts: SealedPart[] = sizes.map((size, index) => ({ partNumber: index + 1, plainSizeBytes: size }));
          expect(stored.length).toBe(sizes.reduce((sum, size) => sum + sealedSizeBytes(size), 0));
          const offset = Math.floor(startFraction * whole.length);
          const length = Math.floor(lengthFraction * (whole.length - offset));
          const read = cipherRangeOf(parts, { offset, length });
          const slice = stored.subarray(read.cipherOffset, read.cipherOffset + read.cipherLength);
          const sent: Uint8Array[] = [];
          const handedBack: Uint8Array[] = [];
          const source = (async function* () {
            for await (const chunk of chunked(slice, chunkSizes)) {
              sent.push(chunk);
              yield chunk;
            }
          })();
          const opened = await collect(openStream(source, key, read, (chunk) => handedBack.push(chunk)));
          expect(opened.equals(whole.subarray(offset, offset + length))).toBe(true);
          // Every chunk read is handed back once, after its packages were opened.
          expect(handedBack).toEqual(sent);
          // The whole object starts at its first package with plaintext (an empty first part's lone tag is not read).
          const everything = cipherRangeOf(parts, { offset: 0, length: whole.length });
          const all = await collect(openStream(chunked(stored.subarray(everything.cipherOffset, everything.cipherOffset + everything.cipherLength), chunkSizes), key, everything));
          expect(all.equals(whole)).toBe(true);
        },
      ),
      { seed, numRuns: runs },
    );
  });

  it('a flipped byte, a truncation or a swapped package is detected and nothing of the package is returned', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 4 * packagePlainBytes }), fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1, max: 255 }), async (size, where, mask) => {
        const key = newKey();
        const plain = patterned(size, 9);
        const stored = await sealParts(key, [plain], [size]);
        const read = cipherRangeOf([{ partNumber: 1, plainSizeBytes: size }], { offset: 0, length: size });
        const position = Math.min(stored.length - 1, Math.floor(where * stored.length));
        const flipped = Buffer.from(stored);
        flipped[position]! ^= mask;
        const handed: Buffer[] = [];
        const failure = await (async () => {
          for await (const chunk of openStream([flipped], key, read)) handed.push(Buffer.from(chunk));
        })().then(() => undefined, (error: unknown) => error);
        expect(isSvcError(failure) && failure.code).toBe('ObjectTampered');
        // Only packages before the damaged one were handed on, and they are the true plaintext.
        const good = Buffer.concat(handed);
        expect(good.length).toBeLessThanOrEqual(Math.floor(position / packageSealedBytes) * packagePlainBytes);
        expect(good.equals(plain.subarray(0, good.length))).toBe(true);
      }),
      { seed, numRuns: runs },
    );
    const key = newKey();
    const plain = patterned(3 * packagePlainBytes, 3);
    const stored = await sealParts(key, [plain], [plain.length]);
    const read = cipherRangeOf([{ partNumber: 1, plainSizeBytes: plain.length }], { offset: 0, length: plain.length });
    const truncated = stored.subarray(0, 2 * packageSealedBytes);
    await expect(collect(openStream([truncated], key, { ...read, runs: [{ ...read.runs[0]!, count: 2, partPackages: 2, plainSizeBytes: 2 * packagePlainBytes }] }))).rejects.toMatchObject({ code: 'ObjectTampered' });
    const swapped = Buffer.concat([stored.subarray(packageSealedBytes, 2 * packageSealedBytes), stored.subarray(0, packageSealedBytes), stored.subarray(2 * packageSealedBytes)]);
    await expect(collect(openStream([swapped], key, read))).rejects.toMatchObject({ code: 'ObjectTampered' });
    await expect(collect(openStream([stored], newKey(), read))).rejects.toMatchObject({ code: 'ObjectTampered' });
  });

  it('hands on the packages opened from the stored bytes at hand as one piece, before it waits for more', async () => {
    const key = newKey();
    const plain = patterned(4 * packagePlainBytes, 5);
    const stored = await sealParts(key, [plain], [plain.length]);
    const read = cipherRangeOf([{ partNumber: 1, plainSizeBytes: plain.length }], { offset: 0, length: plain.length });
    const pieces = async (source: Iterable<Uint8Array>) => {
      const handed: Buffer[] = [];
      for await (const piece of openStream(source, key, read)) handed.push(Buffer.from(piece));
      expect(Buffer.concat(handed).equals(plain)).toBe(true);
      return handed.map((piece) => piece.length);
    };
    // All four packages in one stored chunk: one piece. Two packages a chunk: two pieces.
    expect(await pieces([stored])).toEqual([plain.length]);
    expect(await pieces([stored.subarray(0, 2 * packageSealedBytes), stored.subarray(2 * packageSealedBytes)])).toEqual([2 * packagePlainBytes, 2 * packagePlainBytes]);
    // A package split across chunks goes out with the piece after the wait that completes it.
    expect(await pieces([stored.subarray(0, packageSealedBytes + 10), stored.subarray(packageSealedBytes + 10)])).toEqual([packagePlainBytes, 3 * packagePlainBytes]);
  });

  it('gathers a piece of several packages into the memory `gather` lends, and a piece of one package into none', async () => {
    const key = newKey();
    const plain = patterned(3 * packagePlainBytes, 6);
    const stored = await sealParts(key, [plain], [plain.length]);
    const read = cipherRangeOf([{ partNumber: 1, plainSizeBytes: plain.length }], { offset: 0, length: plain.length });
    const lent: ArrayBufferLike[] = [];
    const gather = (lengthBytes: number): Uint8Array => {
      const memory = Buffer.allocUnsafeSlow(lengthBytes + 100); // larger than asked, as a pool's buffers are
      lent.push(memory.buffer);
      return memory;
    };
    const handed: Uint8Array[] = [];
    // Two packages in the first chunk, the third alone in the second.
    for await (const piece of openStream([stored.subarray(0, 2 * packageSealedBytes), stored.subarray(2 * packageSealedBytes)], key, read, undefined, gather)) handed.push(Buffer.from(piece.buffer, piece.byteOffset, piece.length));
    expect(handed.map((piece) => piece.length)).toEqual([2 * packagePlainBytes, packagePlainBytes]);
    expect(lent).toHaveLength(1);
    expect(handed[0]!.buffer).toBe(lent[0]);
    expect(handed[1]!.buffer).not.toBe(lent[0]);
    expect(Buffer.concat(handed).equals(plain)).toBe(true);
  });

  it('decodes the golden fixture (format version 1)', async () => {
    const fixture = readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'sse-packages-v1.bin'));
    const plain = ssePackageFixture.plaintext();
    expect(fixture.length).toBe(sealedSizeBytes(plain.length));
    const parts = [{ partNumber: ssePackageFixture.partNumber, plainSizeBytes: plain.length }];
    expect((await collect(openStream([fixture], ssePackageFixture.key, cipherRangeOf(parts, { offset: 0, length: plain.length })))).equals(plain)).toBe(true);
    const tail = cipherRangeOf(parts, { offset: 65_530, length: 100 });
    expect(tail).toMatchObject({ cipherOffset: 0, cipherLength: fixture.length, skipBytes: 65_530 });
    const second = cipherRangeOf(parts, { offset: 65_536, length: 10 });
    expect(second).toMatchObject({ cipherOffset: packageSealedBytes, cipherLength: fixture.length - packageSealedBytes, skipBytes: 0 });
    const opened = await collect(openStream([fixture.subarray(second.cipherOffset)], ssePackageFixture.key, second));
    expect(opened.equals(plain.subarray(65_536, 65_546))).toBe(true);
  });

  it('makes the golden fixture again byte for byte, as a stream (whatever the chunking) and package by package', async () => {
    const fixture = readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'sse-packages-v1.bin'));
    const plain = ssePackageFixture.plaintext();
    const { key, partNumber } = ssePackageFixture;
    for (const sizes of [[plain.length], [1], [65_535, 2], [4096, 70_000], [65_536]]) {
      expect((await collect(sealStream(chunked(plain, sizes), key, partNumber))).equals(fixture), `chunks of ${sizes.join(',')}`).toBe(true);
    }
    const first = sealPackage(key, { partNumber, index: 0, final: false }, plain.subarray(0, packagePlainBytes));
    const last = sealPackage(key, { partNumber, index: 1, final: true }, plain.subarray(packagePlainBytes));
    expect(Buffer.concat([first, last]).equals(fixture)).toBe(true);
    expect(openPackage(key, { partNumber, index: 1, final: true }, fixture.subarray(packageSealedBytes)).equals(plain.subarray(packagePlainBytes))).toBe(true);
    expect(() => openPackage(key, { partNumber, index: 1, final: false }, fixture.subarray(packageSealedBytes))).toThrow(expect.objectContaining({ code: 'ObjectTampered' }));
  });
});
