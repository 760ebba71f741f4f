/**
 * The pure parts of remote tiers: xl.meta's `transition` field (round trip, every refusal named),
 * tiers.bin's strict decoder (the secret never in the open), the lifecycle XML of transitions
 * (AWS's refusals), and the planner's transitions (which versions move, and when; a property over
 * random versions and instants, LIFECYCLE_SEED replays a failure).
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { crc32 } from 'node:zlib';
import { decodeXlMeta, encodeXlMeta } from '../src/format/xl-meta.js';
import type { ObjectVersion } from '../src/format/xl-meta-types.js';
import { validateTierDocument } from '../src/ops/tier/tier-document.js';
import { parseLifecycleConfiguration, lifecycleConfigurationXml } from '../src/api/s3/lifecycle-xml.js';
import { dueAfterDays, planKey, tiersNamed } from '../src/ops/lifecycle-rules.js';
import type { LifecycleRule, ObjectInfo } from '../src/object/index.js';
import { codeOf } from './helpers/codes.js';

const version: ObjectVersion = {
  versionId: '3f0b6a52-5a8e-4d0c-9a53-4a6f2c9d1e77', modTimeMs: 1_900_000_000_000, deleteMarker: false, sizeBytes: 10, etag: 'abc', userMetadata: {}, systemMetadata: {}, storageClass: 'STANDARD',
  erasure: { codec: 'rs-vandermonde', dataShards: 2, parityShards: 2, blockSizeBytes: 1_048_576, index: 1, distribution: [1, 2, 3, 4], checksumAlgorithm: 'xxh64' },
  parts: [{ number: 1, sizeBytes: 10, etag: 'abc' }],
  transition: { tier: 'WARM', remoteKey: 'svc/ab/cd/abcd', transitionedMs: 1_900_000_100_000 },
};

/** xl.meta bytes with the version's JSON changed (framed and checksummed anew), to test the decoder's refusals. */
function withJson(mutate: (json: Record<string, any>) => void): Uint8Array {
  const bytes = Buffer.from(encodeXlMeta({ versions: [version] }));
  const length = bytes.readUInt32BE(8);
  const json = JSON.parse(bytes.toString('utf8', 12, 12 + length));
  mutate(json.versions[0]);
  return encodeRaw(JSON.stringify(json));
}

/** The xl.meta frame around a metadata JSON text, with no inline data. */
function encodeRaw(json: string): Uint8Array {
  const body = Buffer.from(json, 'utf8');
  const out = Buffer.alloc(12 + body.length + 4 + 4);
  out.write('XLSV', 0, 'latin1');
  out.writeUInt16BE(1, 4);
  out.writeUInt16BE(0, 6);
  out.writeUInt32BE(body.length, 8);
  body.copy(out, 12);
  out.writeUInt32BE(0, 12 + body.length);
  out.writeUInt32BE(crc32(out.subarray(0, 16 + body.length)), 16 + body.length);
  return out;
}

describe("xl.meta's transition field", () => {
  it('round-trips, restored or not, with a tier version id', () => {
    for (const transition of [version.transition!, { ...version.transition!, remoteVersionId: 'v-7', restoreExpiryMs: 1_900_100_000_000 }]) {
      const decoded = decodeXlMeta(encodeXlMeta({ versions: [{ ...version, transition }] }));
      expect(decoded.versions[0]!.transition).toEqual(transition);
    }
  });

  it('is refused by name when malformed', () => {
    const cases: [string, (json: Record<string, any>) => void][] = [
      ['unknown member', (json) => (json.transition.cold = true)],
      ['lower-case tier', (json) => (json.transition.tier = 'warm')],
      ['empty remote key', (json) => (json.transition.remoteKey = '')],
      ['negative time', (json) => (json.transition.transitionedMs = -1)],
      ['restore expiry not a count', (json) => (json.transition.restoreExpiryMs = 'soon')],
    ];
    for (const [what, mutate] of cases) expect(codeOf(() => decodeXlMeta(withJson(mutate))), what).toBe('CorruptFormat');
    const marker = withJson((json) => {
      json.deleteMarker = true;
      delete json.erasure;
    });
    expect(codeOf(() => decodeXlMeta(marker))).toBe('CorruptFormat');
  });
});

describe('tiers.bin', () => {
  const tier = { name: 'WARM', endpoint: 'http://127.0.0.1:9100', bucket: 'warm', prefix: 'svc/', region: 'us-east-1', accessKey: 'tier-user', sealedSecret: 'c2VhbGVk', createdAt: '2026-11-29T07:00:00.000Z' };

  it('decodes a valid document and refuses anything else by name', () => {
    expect(validateTierDocument({ generation: 3, tiers: [tier] })).toEqual({ generation: 3, tiers: [tier] });
    const refused = [
      { generation: 1, tiers: [tier], extra: 1 },
      { generation: -1, tiers: [] },
      { generation: 1, tiers: [{ ...tier, secretKey: 'in the open' }] },
      { generation: 1, tiers: [{ ...tier, name: 'warm' }] },
      { generation: 1, tiers: [{ ...tier, name: 'STANDARD' }] },
      { generation: 1, tiers: [{ ...tier, endpoint: 'ftp://x' }] },
      { generation: 1, tiers: [{ ...tier, prefix: 'no-slash' }] },
      { generation: 1, tiers: [tier, tier] },
    ];
    for (const document of refused) expect(codeOf(() => validateTierDocument(document)), JSON.stringify(document)).toBe('CorruptFormat');
  });
});

describe('transition rules in the lifecycle XML', () => {
  const rule = (inner: string) => Buffer.from(`<LifecycleConfiguration><Rule><ID>r</ID><Status>Enabled</Status><Filter></Filter>${inner}</Rule></LifecycleConfiguration>`);

  it('are read and written back as sent (the tier name in upper case)', () => {
    const rules = parseLifecycleConfiguration(rule('<Transition><Days>30</Days><StorageClass>warm</StorageClass></Transition><NoncurrentVersionTransition><NoncurrentDays>7</NoncurrentDays><StorageClass>COLD</StorageClass></NoncurrentVersionTransition>'));
    expect(rules[0]).toMatchObject({ transition: { days: 30, storageClass: 'WARM' }, noncurrentVersionTransition: { noncurrentDays: 7, storageClass: 'COLD' } });
    expect(tiersNamed(rules).sort()).toEqual(['COLD', 'WARM']);
    const xml = lifecycleConfigurationXml(rules);
    expect(xml).toContain('<Transition><Days>30</Days><StorageClass>WARM</StorageClass></Transition>');
    expect(parseLifecycleConfiguration(Buffer.from(xml))).toEqual(rules);
    expect(parseLifecycleConfiguration(rule('<Transition><Date>2031-01-01T00:00:00Z</Date><StorageClass>WARM</StorageClass></Transition>'))[0]!.transition).toEqual({ dateMs: Date.parse('2031-01-01T00:00:00Z'), storageClass: 'WARM' });
  });

  it('are refused with AWS codes', () => {
    const cases: [string, string][] = [
      ['<Transition><StorageClass>WARM</StorageClass></Transition>', 'MalformedXML'],
      ['<Transition><Days>1</Days><Date>2031-01-01T00:00:00Z</Date><StorageClass>WARM</StorageClass></Transition>', 'MalformedXML'],
      ['<Transition><Days>1</Days></Transition>', 'MalformedXML'],
      ['<Transition><Days>-1</Days><StorageClass>WARM</StorageClass></Transition>', 'InvalidArgument'],
      ['<Transition><Date>2031-01-01T10:00:00Z</Date><StorageClass>WARM</StorageClass></Transition>', 'InvalidArgument'],
      ['<Transition><Days>1</Days><StorageClass>no such class!</StorageClass></Transition>', 'InvalidStorageClass'],
      ['<NoncurrentVersionTransition><StorageClass>WARM</StorageClass></NoncurrentVersionTransition>', 'MalformedXML'],
      ['<NoncurrentVersionTransition><NoncurrentDays>1</NoncurrentDays><NewerNoncurrentVersions>2</NewerNoncurrentVersions><StorageClass>WARM</StorageClass></NoncurrentVersionTransition>', 'NotImplemented'],
    ];
    for (const [inner, code] of cases) expect(codeOf(() => parseLifecycleConfiguration(rule(inner))), inner).toBe(code);
  });
});

describe('the planner moves versions to tiers', () => {
  const dayMs = 86_400_000;
  const baseMs = Date.parse('2030-01-01T00:00:00Z');
  const info = (index: number, modTimeMs: number, extra: Partial<ObjectInfo> = {}): ObjectInfo => ({
    bucket: 'b', key: 'k', versionId: `v${index}`, isLatest: index === 0, deleteMarker: false, sizeBytes: 5, etag: 'e', modTimeMs, userMetadata: {}, systemMetadata: {}, storageClass: 'STANDARD', parts: [], inline: true, dataShards: 2, parityShards: 2, ...extra,
  });
  const rules: LifecycleRule[] = [
    { id: 'warm', enabled: true, filter: {}, transition: { days: 3, storageClass: 'WARM' } },
    { id: 'old', enabled: true, filter: {}, noncurrentVersionTransition: { noncurrentDays: 2, storageClass: 'COLD' } },
  ];

  it('each version once it is due, never a moved, removed or delete-marker one; ended restores are named', () => {
    const seed = process.env.LIFECYCLE_SEED === undefined ? undefined : Number(process.env.LIFECYCLE_SEED);
    fc.assert(
      fc.property(fc.array(fc.record({ gapDays: fc.integer({ min: 0, max: 5 }), marker: fc.boolean(), moved: fc.boolean(), restoredUntilDay: fc.option(fc.integer({ min: 0, max: 20 })) }), { minLength: 1, maxLength: 5 }), fc.integer({ min: 0, max: 20 }), (drafts, nowDay) => {
        let modTimeMs = baseMs + 10 * dayMs;
        const versions = drafts.map((draft, index) => {
          modTimeMs -= draft.gapDays * dayMs + 1000;
          const transition = draft.moved && !draft.marker ? { tier: 'WARM', remoteKey: `r${index}`, transitionedMs: modTimeMs, ...(draft.restoredUntilDay === null ? {} : { restoreExpiryMs: baseMs + draft.restoredUntilDay * dayMs }) } : undefined;
          return info(index, modTimeMs, { deleteMarker: draft.marker, ...(transition ? { transition } : {}) });
        });
        const nowMs = baseMs + nowDay * dayMs;
        const plan = planKey(rules, 'k', versions, 'enabled', nowMs);
        for (const moved of plan.transitions) {
          const index = versions.findIndex((candidate) => candidate.versionId === moved.versionId);
          const target = versions[index]!;
          expect(target.deleteMarker || target.transition !== undefined).toBe(false);
          const dueMs = index === 0 ? dueAfterDays(target.modTimeMs, 3) : dueAfterDays(versions[index - 1]!.modTimeMs, 2);
          expect(nowMs).toBeGreaterThanOrEqual(dueMs);
          expect(moved.tier).toBe(index === 0 ? 'WARM' : 'COLD');
        }
        const expected = versions.filter((candidate, index) => !candidate.deleteMarker && !candidate.transition && nowMs >= (index === 0 ? dueAfterDays(candidate.modTimeMs, 3) : dueAfterDays(versions[index - 1]!.modTimeMs, 2)));
        expect(plan.transitions.map((moved) => moved.versionId)).toEqual(expected.map((candidate) => candidate.versionId));
        expect(plan.restoresEnded).toEqual(versions.filter((candidate) => candidate.transition?.restoreExpiryMs !== undefined && nowMs >= candidate.transition.restoreExpiryMs).map((candidate) => candidate.versionId));
      }),
      { numRuns: 300, ...(seed === undefined ? {} : { seed }) },
    );
  });
});
