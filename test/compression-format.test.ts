/**
 * The compressed-block format (src/format/compressed-blocks.ts), its xl.meta record and golden
 * fixtures, and the compression settings (SVC_COMPRESSION_*): round trips and ranges over random
 * sizes across block boundaries, raw blocks for data that does not shrink, strict decoding, the
 * start-up refusals, and which objects are picked.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CompressionIndex, blockCountOf, compressStream, compressedRangeOf, compressionBlockPlainBytes, decompressStream,
} from '../src/format/compressed-blocks.js';
import { decodeXlMeta, encodeXlMeta } from '../src/format/xl-meta.js';
import { validateCompression } from '../src/format/xl-meta-compression.js';
import type { CompressionInfo, ObjectVersion } from '../src/format/xl-meta-types.js';
import { isSvcError } from '../src/errors/index.js';
import { readCompressionSettings, shouldCompress } from '../src/cluster/compression-config.js';
import { readServerConfig } from '../src/cluster/server-config.js';
import { compressedMetas, compressedMetasV2, compressionFixturePlaintext } from './fixtures/compression-fixture-values.js';
import { codeOf } from './helpers/codes.js';

const seed = Number(process.env.SVC_PROPERTY_SEED ?? Date.now() % 2 ** 31);
const runs = Number(process.env.SVC_PROPERTY_RUNS ?? 20);
console.log(`compression-format property seed ${seed} (replay with SVC_PROPERTY_SEED=${seed})`);

const MiB = 1024 * 1024;
const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

async function collect(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

async function* chunked(bytes: Uint8Array, sizes: number[]): AsyncGenerator<Uint8Array> {
  let offset = 0;
  for (let turn = 0; offset < bytes.length; turn += 1) {
    const size = Math.max(1, sizes[turn % sizes.length]!);
    yield bytes.subarray(offset, offset + size);
    offset += size;
  }
}

/** Text-like bytes (log lines), or random ones, or text with a random stretch in it. */
function bodyOf(kind: 'text' | 'random' | 'mixed', size: number, salt: number): Buffer {
  if (kind === 'random') return randomBytes(size);
  const body = Buffer.alloc(size);
  let offset = 0;
  for (let line = 0; offset < size; line += 1) {
    const text = `${salt} ${line} level=info msg="object stored" bucket=logs key=day-${line % 31}/part-${line % 113}.json took_ms=${(line * 37) % 1000}\n`;
    offset += body.write(text, offset, Math.min(text.length, size - offset), 'latin1');
  }
  if (kind === 'mixed' && size > 10) randomBytes(Math.floor(size / 3)).copy(body, Math.floor(size / 3));
  return body;
}

async function compress(body: Buffer, chunkSizes: number[]): Promise<{ stored: Buffer; index: CompressionIndex }> {
  const index = new CompressionIndex();
  const stored = await collect(compressStream(chunked(body, chunkSizes), index, 2));
  return { stored, index };
}

/** The record a body has even when nothing shrank (the raw layout), for reading tests. */
function recordOf(index: CompressionIndex): CompressionInfo {
  return index.record() ?? { algorithm: 'zstd-1m-v1', plainSizeBytes: index.plainSizeBytes, storedSizeBytes: index.storedSizeBytes, blocks: [...index.blocks] };
}

describe('compressed blocks', () => {
  it('round-trip any size and any range across block boundaries, text or random, however the body is chunked', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('text' as const, 'random' as const, 'mixed' as const),
        fc.oneof(fc.integer({ min: 0, max: 3 * MiB + 5 }), fc.constantFrom(1, MiB - 1, MiB, MiB + 1, 2 * MiB)),
        fc.array(fc.integer({ min: 1, max: 300_000 }), { minLength: 1, maxLength: 4 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        async (kind, size, chunkSizes, start, span) => {
          const body = bodyOf(kind, size, 1);
          const { stored, index } = await compress(body, chunkSizes);
          expect(index.plainSizeBytes).toBe(size);
          expect(index.blocks.length).toBe(blockCountOf(size));
          expect(index.storedSizeBytes).toBe(stored.length);
          // No block is ever stored longer than it is.
          index.blocks.forEach((length, block) => expect(length).toBeLessThanOrEqual(Math.min(compressionBlockPlainBytes, size - block * compressionBlockPlainBytes)));
          if (kind === 'random') expect(index.record()).toBeUndefined();
          if (kind === 'text' && size >= 4096) expect(index.storedSizeBytes).toBeLessThan(size / 3);
          if (!index.record()) expect(stored.equals(body)).toBe(true);
          const info = recordOf(index);
          const offset = Math.min(size, Math.floor(start * size));
          const length = Math.min(size - offset, Math.floor(span * (size - offset)) + 1);
          const read = compressedRangeOf(info, { offset, length });
          const handed: Uint8Array[] = [];
          const sent: Uint8Array[] = [];
          const source = (async function* () {
            for await (const chunk of chunked(stored.subarray(read.storedOffset, read.storedOffset + read.storedLength), chunkSizes)) {
              sent.push(chunk);
              yield chunk;
            }
          })();
          const got = await collect(decompressStream(source, info, read, (chunk) => handed.push(chunk)));
          expect(got.equals(body.subarray(offset, offset + length))).toBe(true);
          // Every chunk read is handed back once (compared by identity: deep equality of MiBs is slow).
          expect(handed.length === sent.length && handed.every((chunk, position) => chunk === sent[position])).toBe(true);
        },
      ),
      { seed, numRuns: runs },
    );
  });

  it('a range reads only the blocks holding it', async () => {
    const body = bodyOf('text', 5 * MiB + 17, 2);
    const { index } = await compress(body, [MiB]);
    const info = index.record()!;
    const read = compressedRangeOf(info, { offset: 3 * MiB + 5, length: 10 });
    expect([read.firstBlock, read.blockCount, read.skipBytes]).toEqual([3, 1, 5]);
    expect(read.storedOffset).toBe(info.blocks[0]! + info.blocks[1]! + info.blocks[2]!);
    expect(read.storedLength).toBe(info.blocks[3]);
    expect(codeOf(() => compressedRangeOf(info, { offset: body.length, length: 1 }))).toBe('InvalidRange');
  });

  it('a damaged or short block is FileCorrupt, and nothing of it is handed on', async () => {
    const body = bodyOf('text', 2 * MiB + 100, 3);
    const { stored, index } = await compress(body, [70_000]);
    const info = index.record()!;
    const whole = compressedRangeOf(info, { offset: 0, length: body.length });
    const flipped = Buffer.from(stored);
    flipped[info.blocks[0]! + 40]! ^= 0x5a;
    const handed: Buffer[] = [];
    const failure = await (async () => {
      for await (const chunk of decompressStream((async function* () { yield flipped; })(), info, whole)) handed.push(Buffer.from(chunk));
    })().then(() => undefined, (error: unknown) => error);
    expect(isSvcError(failure) && failure.code).toBe('FileCorrupt');
    expect(Buffer.concat(handed).equals(body.subarray(0, MiB))).toBe(true);
    const short = await collect(decompressStream((async function* () { yield stored.subarray(0, stored.length - 1); })(), info, whole)).then(() => 'ok', (error: unknown) => (isSvcError(error) ? error.code : String(error)));
    expect(short).toBe('FileCorrupt');
  });

  it('decodes the golden compressed stream of compressed-blocks-v1 (two text blocks, a short raw block)', async () => {
    const info = JSON.parse(readFileSync(join(fixtures, 'compressed-blocks-v1.json'), 'utf8')) as CompressionInfo;
    const stored = readFileSync(join(fixtures, 'compressed-blocks-v1.bin'));
    const plain = compressionFixturePlaintext();
    expect(info.plainSizeBytes).toBe(plain.length);
    expect(info.blocks[2]).toBe(3000);
    expect(info.blocks[0]! + info.blocks[1]!).toBeLessThan(MiB / 4);
    const read = compressedRangeOf(info, { offset: 0, length: plain.length });
    expect((await collect(decompressStream((async function* () { yield stored; })(), info, read))).equals(plain)).toBe(true);
  });
});

describe('the xl.meta compression record', () => {
  for (const [name, meta] of Object.entries(compressedMetas)) {
    it(`decodes xl-meta-v1-${name}.bin field by field; re-encoded it is format 2, its metadata unchanged`, () => {
      const bytes = Buffer.from(readFileSync(join(fixtures, `xl-meta-v1-${name}.bin`)));
      expect(bytes.readUInt16BE(4)).toBe(1);
      expect(decodeXlMeta(new Uint8Array(bytes))).toEqual(meta);
      const again = Buffer.from(encodeXlMeta(meta));
      expect(again.readUInt16BE(4)).toBe(2);
      // Only the format number and the CRC over it differ.
      expect(again.subarray(6, -4).equals(bytes.subarray(6, -4))).toBe(true);
    });
  }

  for (const [name, meta] of Object.entries(compressedMetasV2)) {
    it(`decodes xl-meta-v2-${name}.bin (a multipart object compressed part by part) field by field and re-encodes it byte-identically`, () => {
      const bytes = new Uint8Array(readFileSync(join(fixtures, `xl-meta-v2-${name}.bin`)));
      expect(Buffer.from(bytes).readUInt16BE(4)).toBe(2);
      expect(decodeXlMeta(bytes)).toEqual(meta);
      expect(Buffer.from(encodeXlMeta(meta)).equals(Buffer.from(bytes))).toBe(true);
    });
  }

  it('format 2 only for a file holding a compressed version: a build that predates compression refuses it rather than serve its blocks', () => {
    const { compression: _none, ...uncompressed } = compressedMetas.compressed!.versions[0]!;
    const plain = encodeXlMeta({ versions: [uncompressed] });
    expect(Buffer.from(plain).readUInt16BE(4)).toBe(1);
    const mixed = encodeXlMeta({ versions: [...compressedMetasV2['compressed-multipart']!.versions, ...compressedMetas['compressed-encrypted']!.versions] });
    expect(Buffer.from(mixed).readUInt16BE(4)).toBe(2);
    expect(decodeXlMeta(mixed).versions.map((version) => version.compression?.algorithm)).toEqual(['zstd-1m-v1', 'zstd-1m-v1']);
    const future = Buffer.from(mixed);
    future.writeUInt16BE(3, 4);
    expect(codeOf(() => decodeXlMeta(new Uint8Array(future)))).toBe('UnsupportedFormat');
  });

  it('is decoded strictly: unknown members, lengths that do not add up or do not fit, another algorithm', () => {
    const base = compressedMetas.compressed!.versions[0]!;
    const withCompression = (compression: unknown): Uint8Array => encodeXlMeta({ versions: [{ ...base, compression } as unknown as ObjectVersion] });
    const good = base.compression!;
    expect(codeOf(() => decodeXlMeta(withCompression(good)))).toBe('ok');
    const bad: [unknown, string][] = [
      [{ ...good, algorithm: 'zstd-4m-v9' }, 'UnsupportedFormat'],
      [{ ...good, blocks: good.blocks.slice(1) }, 'CorruptFormat'],
      [{ ...good, blocks: [good.blocks[0]! + 1, ...good.blocks.slice(1)] }, 'CorruptFormat'],
      [{ ...good, blocks: [0, good.blocks[1]! + good.blocks[0]!, good.blocks[2]] }, 'CorruptFormat'],
      [{ ...good, blocks: [good.blocks[0]! - 1, good.blocks[1]! + 1, good.blocks[2]] }, 'CorruptFormat'],
      [{ ...good, storedSizeBytes: good.storedSizeBytes + 1 }, 'CorruptFormat'],
      [{ ...good, plainSizeBytes: -1 }, 'CorruptFormat'],
    ];
    for (const [value, code] of bad) expect(codeOf(() => decodeXlMeta(withCompression(value))), JSON.stringify(value).slice(0, 80)).toBe(code);
    // What the encoder cannot write, as the decoder meets it on a drive.
    expect(codeOf(() => validateCompression({ ...good, extra: 1 }, 'versions[0]', good.storedSizeBytes))).toBe('CorruptFormat');
    expect(codeOf(() => validateCompression('zstd', 'versions[0]', good.storedSizeBytes))).toBe('CorruptFormat');
    expect(codeOf(() => validateCompression({ ...good, blocks: 'all' }, 'versions[0]', good.storedSizeBytes))).toBe('CorruptFormat');
  });

  it('a multipart record is decoded strictly too: parts that do not add up, out of order or with unknown members, blocks not per part', () => {
    const good = compressedMetasV2['compressed-multipart']!.versions[0]!.compression!;
    const check = (value: unknown) => codeOf(() => validateCompression(value, 'versions[0]', good.storedSizeBytes));
    expect(check(good)).toBe('ok');
    const [first, second] = good.parts!;
    const bad: unknown[] = [
      { ...good, parts: [] },
      { ...good, parts: [first] },
      { ...good, parts: [second, first] },
      { ...good, parts: [first, { ...second, number: first!.number }] },
      { ...good, parts: [first, { ...second, extra: 1 }] },
      { ...good, parts: [{ ...first, plainSizeBytes: first!.plainSizeBytes - 1 }, { ...second, plainSizeBytes: second!.plainSizeBytes + 1 }] },
      { ...good, parts: [first, { ...second, number: 10_001 }] },
      // Six blocks of part 1 and one of part 2: the short sixth block holds at most 100 bytes.
      { ...good, blocks: [...good.blocks.slice(0, 5), 101, 1499], storedSizeBytes: good.storedSizeBytes },
      { ...good, blocks: good.blocks.slice(0, -1), storedSizeBytes: good.storedSizeBytes - 1500 },
    ];
    for (const value of bad) expect(check(value), JSON.stringify(value).slice(0, 120)).toBe('CorruptFormat');
  });
});

describe('compression settings', () => {
  it('are off by default, with lists of text types when turned on', () => {
    expect(readCompressionSettings({})).toMatchObject({ enabled: false, allowEncryption: true });
    const on = readCompressionSettings({ SVC_COMPRESSION_ENABLE: 'on' });
    expect(on.enabled).toBe(true);
    expect(on.extensions).toContain('.csv');
    expect(on.mimeTypes).toContain('text/*');
    expect(readServerConfig(['/tmp/svc-compression-config/d{1...4}'], { SVC_COMPRESSION_ENABLE: 'on' }).compression.enabled).toBe(true);
  });

  it('refuse at start-up what they do not understand, naming the variable', () => {
    const refusal = (env: Record<string, string>): string => {
      try {
        readCompressionSettings(env);
        return 'accepted';
      } catch (error) {
        return isSvcError(error) ? `${error.code}: ${error.message}` : String(error);
      }
    };
    expect(refusal({ SVC_COMPRESSION_ENABLE: 'yes' })).toBe('InvalidConfiguration: SVC_COMPRESSION_ENABLE="yes" is not one of on, off');
    expect(refusal({ SVC_COMPRESSION_EXTENSIONS: 'txt' })).toMatch(/^InvalidConfiguration: SVC_COMPRESSION_EXTENSIONS: 'txt' is not an extension such as \.txt/);
    expect(refusal({ SVC_COMPRESSION_EXTENSIONS: '.txt,.gz' })).toBe("InvalidConfiguration: SVC_COMPRESSION_EXTENSIONS: '.gz' names data that is compressed already: svc never compresses it");
    expect(refusal({ SVC_COMPRESSION_MIME_TYPES: 'json' })).toMatch(/^InvalidConfiguration: SVC_COMPRESSION_MIME_TYPES: 'json' is not a media type/);
    expect(refusal({ SVC_COMPRESSION_MIME_TYPES: 'text/*,application/zip' })).toMatch(/'application\/zip' names data that is compressed already/);
    expect(refusal({ SVC_COMPRESSION_ALLOW_ENCRYPTION: '1' })).toMatch(/^InvalidConfiguration: SVC_COMPRESSION_ALLOW_ENCRYPTION="1"/);
    expect(refusal({ SVC_COMPRESSION_EXTENSIONS: ' .TXT , .Log ', SVC_COMPRESSION_MIME_TYPES: 'Text/CSV' })).toBe('accepted');
  });

  it('pick listed extensions and types, never compressed data, a content-encoded body, or (when not allowed) an encrypted one', () => {
    const on = readCompressionSettings({ SVC_COMPRESSION_ENABLE: 'on' });
    const picks = (key: string, contentType?: string, contentEncoding?: string, encrypted = false, settings = on) => shouldCompress(settings, { key, contentType, contentEncoding, encrypted });
    expect(picks('logs/2026/app.LOG')).toBe(true);
    expect(picks('data.bin', 'application/json; charset=utf-8')).toBe(true);
    expect(picks('page', 'text/html')).toBe(true);
    expect(picks('data.bin', 'application/octet-stream')).toBe(false);
    expect(picks('archive.tar.gz', 'text/plain')).toBe(false);
    expect(picks('photo.txt', 'image/jpeg')).toBe(false);
    expect(picks('movie', 'video/mp4')).toBe(false);
    expect(picks('app.log', 'text/plain', 'gzip')).toBe(false);
    expect(picks('app.log', 'text/plain', 'identity')).toBe(true);
    expect(picks('app.log', undefined, undefined, true)).toBe(true);
    expect(picks('app.log', undefined, undefined, true, readCompressionSettings({ SVC_COMPRESSION_ENABLE: 'on', SVC_COMPRESSION_ALLOW_ENCRYPTION: 'off' }))).toBe(false);
    expect(picks('app.log', undefined, undefined, false, readCompressionSettings({}))).toBe(false);
    const everything = readCompressionSettings({ SVC_COMPRESSION_ENABLE: 'on', SVC_COMPRESSION_EXTENSIONS: '*' });
    expect(picks('data.bin', 'application/octet-stream', undefined, false, everything)).toBe(true);
    expect(picks('data.zip', undefined, undefined, false, everything)).toBe(false);
  });
});
