import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeXlMeta, encodeXlMeta, upsertVersion, removeVersion, latestVersion, findVersion } from '../src/format/xl-meta.js';
import { decodeFormatJson, encodeFormatJson, findDriveSlot, newFormats } from '../src/format/format-json.js';
import type { ObjectVersion, XlMeta } from '../src/format/xl-meta-types.js';
import { isSvcError } from '../src/errors/index.js';
import { codeOf } from './helpers/codes.js';
import { fixtureFormat, fixtureMetas } from './fixtures/fixture-values.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const read = (name: string): Uint8Array => new Uint8Array(readFileSync(join(fixtures, name)));


describe('xl.meta golden fixtures (format version 1)', () => {
  for (const [name, expected] of Object.entries(fixtureMetas)) {
    it(`decodes xl-meta-v1-${name}.bin field by field and re-encodes it byte-identically`, () => {
      const bytes = read(`xl-meta-v1-${name}.bin`);
      expect(decodeXlMeta(bytes)).toEqual(expected);
      expect(Buffer.from(encodeXlMeta(expected)).equals(Buffer.from(bytes))).toBe(true);
    });
  }

  it('rejects every truncation, a flipped byte, a wrong magic and a future version', () => {
    const bytes = read('xl-meta-v1-versioned.bin');
    for (let length = 0; length < bytes.length; length += 1) {
      expect(['CorruptFormat', 'UnsupportedFormat']).toContain(codeOf(() => decodeXlMeta(bytes.subarray(0, length))));
    }
    for (let index = 8; index < bytes.length; index += 37) {
      const flipped = new Uint8Array(bytes);
      flipped[index] = flipped[index]! ^ 0x40;
      expect(codeOf(() => decodeXlMeta(flipped))).toBe('CorruptFormat');
    }
    const magic = new Uint8Array(bytes);
    magic[0] = 0x41;
    expect(codeOf(() => decodeXlMeta(magic))).toBe('UnsupportedFormat');
    const future = new Uint8Array(bytes);
    future[5] = 3; // format 2 is a file holding a compressed version
    expect(codeOf(() => decodeXlMeta(future))).toBe('UnsupportedFormat');
  });

  it('rejects invalid field values even with a valid checksum', () => {
    const base = fixtureMetas.plain!.versions[0]!;
    const broken: Partial<ObjectVersion>[] = [
      { versionId: 'not-a-uuid' },
      { sizeBytes: -1 },
      { storageClass: 'GLACIER' as never },
      { erasure: { ...base.erasure!, index: 9 } },
      { erasure: { ...base.erasure!, distribution: [1, 1, 2, 3] } },
      { erasure: { ...base.erasure!, parityShards: 3 } },
      { erasure: { ...base.erasure!, checksumAlgorithm: 'md5' as never } },
      { parts: [{ number: 2, sizeBytes: 1, etag: '' }, { number: 1, sizeBytes: 1, etag: '' }] },
      { deleteMarker: true },
      { dataDir: '../../etc' },
    ];
    for (const change of broken) {
      const bytes = encodeXlMeta({ versions: [{ ...base, ...change }] });
      expect(codeOf(() => decodeXlMeta(bytes)), JSON.stringify(change)).toBe('CorruptFormat');
    }
  });
});

const uuid = fc.uuid({ version: 4 });
const erasureFor = (n: number) =>
  fc.record({
    m: fc.integer({ min: 0, max: Math.floor(n / 2) }),
    index: fc.integer({ min: 1, max: n }),
    rotation: fc.integer({ min: 0, max: n - 1 }),
  }).map(({ m, index, rotation }) => ({
    codec: 'rs-vandermonde-gf8',
    dataShards: n - m,
    parityShards: m,
    blockSizeBytes: 1048576,
    index,
    distribution: Array.from({ length: n }, (_, drive) => ((drive + rotation) % n) + 1),
    checksumAlgorithm: 'xxh64' as const,
  }));
const version: fc.Arbitrary<ObjectVersion> = fc
  .record({
    versionId: fc.oneof(fc.constant('null'), uuid),
    modTimeMs: fc.integer({ min: 0, max: 2 ** 45 }),
    deleteMarker: fc.boolean(),
    sizeBytes: fc.integer({ min: 0, max: 2 ** 40 }),
    etag: fc.stringMatching(/^[0-9a-f]{0,34}$/),
    contentType: fc.option(fc.string(), { nil: undefined }),
    userMetadata: fc.dictionary(fc.string({ minLength: 1 }), fc.string()),
    systemMetadata: fc.dictionary(fc.string({ minLength: 1 }), fc.string()),
    storageClass: fc.constantFrom('STANDARD' as const, 'REDUCED_REDUNDANCY' as const),
    dataDir: fc.option(uuid, { nil: undefined }),
    erasure: fc.integer({ min: 1, max: 16 }).chain(erasureFor),
    partSizes: fc.array(fc.integer({ min: 0, max: 2 ** 33 }), { maxLength: 4 }),
    inlineData: fc.option(fc.uint8Array({ maxLength: 300 }), { nil: undefined }),
  })
  .map(({ partSizes, erasure, contentType, dataDir, inlineData, ...rest }) => {
    const parts = partSizes.map((sizeBytes, index) => ({ number: index + 1, sizeBytes, etag: `e${index}` }));
    const result: ObjectVersion = { ...rest, parts: rest.deleteMarker ? [] : parts };
    if (contentType !== undefined) result.contentType = contentType;
    if (!rest.deleteMarker) {
      result.erasure = erasure;
      if (dataDir !== undefined) result.dataDir = dataDir;
      if (inlineData !== undefined) result.inlineData = inlineData;
    }
    return result;
  });
const meta: fc.Arbitrary<XlMeta> = fc.uniqueArray(version, { selector: (v) => v.versionId, maxLength: 5 }).map((versions) => ({ versions }));

describe('xl.meta codec properties', () => {
  it('decode(encode(meta)) = meta, and the encoding is deterministic', () => {
    fc.assert(
      fc.property(meta, (value) => {
        const bytes = encodeXlMeta(value);
        expect(decodeXlMeta(bytes)).toEqual(value);
        expect(Buffer.from(encodeXlMeta(decodeXlMeta(bytes))).equals(Buffer.from(bytes))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('upsertVersion keeps newest first and replaces by id; removeVersion drops one', () => {
    fc.assert(
      fc.property(fc.array(version, { maxLength: 8 }), (versions) => {
        let value: XlMeta = { versions: [] };
        for (const next of versions) value = upsertVersion(value, next);
        const ids = new Set(versions.map((v) => v.versionId));
        expect(value.versions.length).toBe(ids.size);
        for (let index = 1; index < value.versions.length; index += 1) expect(value.versions[index - 1]!.modTimeMs).toBeGreaterThanOrEqual(value.versions[index]!.modTimeMs);
        const last = versions.at(-1);
        if (last) {
          expect(findVersion(value, last.versionId)).toEqual(last);
          expect(findVersion(removeVersion(value, last.versionId), last.versionId)).toBeUndefined();
          expect(latestVersion(value)!.modTimeMs).toBe(Math.max(...value.versions.map((v) => v.modTimeMs)));
        }
      }),
    );
  });
});

describe('format.json', () => {
  it('decodes the golden fixture and re-encodes it byte-identically', () => {
    const bytes = read('format-v1.json');
    expect(decodeFormatJson(bytes)).toEqual(fixtureFormat);
    expect(Buffer.from(encodeFormatJson(fixtureFormat)).equals(Buffer.from(bytes))).toBe(true);
    expect(findDriveSlot(fixtureFormat, '66666666-7777-4888-9999-aaaaaaaaaaaa')).toEqual({ setIndex: 1, slotIndex: 1 });
  });

  it('rejects unknown versions and every invalid field', () => {
    const base = JSON.parse(Buffer.from(read('format-v1.json')).toString()) as Record<string, unknown>;
    const encode = (value: unknown): Uint8Array => Buffer.from(JSON.stringify(value));
    expect(codeOf(() => decodeFormatJson(encode({ ...base, version: 2 })))).toBe('UnsupportedFormat');
    expect(codeOf(() => decodeFormatJson(Buffer.from('{not json')))).toBe('CorruptFormat');
    const broken = [
      { layout: 'raid' },
      { deploymentId: 'x' },
      { poolIndex: -1 },
      { driveId: '00000000-0000-4000-8000-000000000000' },
      { sets: [] },
      { sets: [['f0e1d2c3-b4a5-4968-8776-655443322110'], ['01234567-89ab-4cde-8f01-23456789abcd', '11111111-2222-4333-8444-555555555555']] },
      { sets: [['f0e1d2c3-b4a5-4968-8776-655443322110', 'f0e1d2c3-b4a5-4968-8776-655443322110']] },
      { distributionAlgorithm: 'crc' },
    ];
    for (const change of broken) expect(codeOf(() => decodeFormatJson(encode({ ...base, ...change }))), JSON.stringify(change)).toBe('CorruptFormat');
  });

  it('newFormats gives every drive its own id, the same sets and the slot order of the endpoints', () => {
    let counter = 0;
    const newId = () => `00000000-0000-4000-8000-${String(counter++).padStart(12, '0')}`;
    const formats = newFormats({ deploymentId: fixtureFormat.deploymentId, poolIndex: 1, setCount: 2, setDriveCount: 3, layout: 'erasure', newId });
    expect(formats.length).toBe(6);
    formats.forEach((format, index) => {
      expect(findDriveSlot(format, format.driveId)).toEqual({ setIndex: Math.floor(index / 3), slotIndex: index % 3 });
      expect(decodeFormatJson(encodeFormatJson(format))).toEqual(format);
    });
  });
});
