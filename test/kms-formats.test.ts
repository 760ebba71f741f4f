/**
 * Golden fixtures of the KMS formats (docs/formats.md): kms.bin with a rotated root key and a
 * named key, a data key sealed by a later key version (`u8 2 | u32 version | sealed key`), and
 * kms-rewrap.bin of a re-wrap stopped mid-walk. Each is decoded field by field, read through the
 * code that reads it in a server (the built-in KMS, the state store), and made again byte for
 * byte by this build's encoders.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createMemfsDrive } from '../backends/memfs/memfs-drive.js';
import { systemDir, type Drive } from '../src/drive/index.js';
import { decodeStateFile, encodeStateFile } from '../src/format/state-file.js';
import { deriveKey, sealKey, unsealKey } from '../src/format/sealed-key.js';
import { BuiltinKms, decodeKmsBlob, validateKmsDocument, type KmsDocument } from '../src/ops/kms/builtin-kms.js';
import { validateRewrap, type RewrapDocument } from '../src/ops/kms/rewrap.js';
import { StateStore } from '../src/ops/state-store.js';
import { StateFileQuarantine } from '../src/cluster/state-quarantine.js';
import { kmsContexts, kmsFixture } from './fixtures/kms-fixture-values.js';
import { fixtureObjectContext, kmsFixtureDocument, kmsFixtureFiles } from './fixtures/kms-fixture-files.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const read = (name: string): Buffer => readFileSync(join(fixtures, name));
const quarantine = new StateFileQuarantine({ warn: () => undefined });

/** Four in-memory drives holding `bytes` as `.svc.sys/<name>`. */
async function drivesHolding(name: string, bytes: Uint8Array): Promise<Drive[]> {
  const drives = [0, 1, 2, 3].map((slot) => createMemfsDrive({ endpoint: `mem${slot}` }));
  for (const drive of drives) await drive.writeFileAtomic(`${systemDir}/${name}`, bytes);
  return drives;
}

async function fixtureKms(): Promise<BuiltinKms> {
  const drives = await drivesHolding('kms.bin', read('kms-v1.bin'));
  const store = new StateStore<KmsDocument>({ name: 'kms.bin', magic: 'SVKM', drives: () => drives, validate: validateKmsDocument, quarantine });
  const kms = new BuiltinKms({ root: kmsFixture.root, store, nowMs: () => Date.parse('2026-11-29T00:00:00Z') });
  await kms.load();
  return kms;
}

describe('KMS golden fixtures (format version 1)', () => {
  it('this build\'s encoders make every fixture again byte for byte', () => {
    for (const [name, bytes] of Object.entries(kmsFixtureFiles())) expect(Buffer.from(bytes).equals(read(name)), name).toBe(true);
  });

  it('kms.bin: decodes field by field; the KMS reads the rotated root key (version 2) and the named key from it', async () => {
    const bytes = read('kms-v1.bin');
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('SVKM');
    const document = validateKmsDocument(decodeStateFile('SVKM', bytes));
    expect(document).toEqual(kmsFixtureDocument());
    expect(Buffer.from(encodeStateFile('SVKM', document)).equals(bytes)).toBe(true);
    const rootKek = deriveKey(kmsFixture.root.key, 'svc-kms-root-kek');
    expect(unsealKey(rootKek, Buffer.from(document.versions![0]!.sealed, 'base64'), kmsContexts.keyVersion('fixture-root', 2))?.equals(kmsFixture.rootVersion2.material)).toBe(true);
    expect(unsealKey(rootKek, Buffer.from(document.keys[0]!.sealed, 'base64'), kmsContexts.keyVersion('fixture-named', 1))?.equals(kmsFixture.named.material)).toBe(true);
    const kms = await fixtureKms();
    expect(await kms.keyStatus('fixture-root')).toMatchObject({ origin: 'root', version: 2, rotatedAt: kmsFixture.rootVersion2.createdAt, enabled: true, decryptionOk: true });
    expect(await kms.keyStatus('fixture-named')).toMatchObject({ origin: 'named', version: 1, createdAt: kmsFixture.named.createdAt });
  });

  it('a data key sealed by key version 2: its form decodes, it unseals through the KMS, and it needs no re-wrap', async () => {
    const blob = read('kms-sealed-key-v2.bin');
    expect(blob[0]).toBe(2);
    expect(blob.readUInt32BE(1)).toBe(2);
    const { version, sealed } = decodeKmsBlob(blob);
    expect(version).toBe(2);
    expect(Buffer.from(sealed).equals(blob.subarray(5))).toBe(true);
    // The inner sealed key: u8 1 | the fixture's IV | ciphertext as long as the secret | 16-byte tag.
    expect([sealed[0], Buffer.from(sealed.subarray(1, 13)).equals(kmsFixture.secretIv), sealed.length]).toEqual([1, true, 1 + 12 + kmsFixture.secret.length + 16]);
    expect(unsealKey(kmsFixture.rootVersion2.material, sealed, kmsContexts.dataKey('fixture-root', fixtureObjectContext))?.equals(kmsFixture.secret)).toBe(true);
    const kms = await fixtureKms();
    expect((await kms.unsealDataKey('fixture-root', blob, fixtureObjectContext)).equals(kmsFixture.secret)).toBe(true);
    expect(await kms.rewrapDataKey('fixture-root', blob, fixtureObjectContext)).toBeUndefined();
    await expect(kms.unsealDataKey('fixture-root', blob, 'SSE-S3|fixtures/another.bin|')).rejects.toMatchObject({ code: 'KMSKeyUnsealFailed' });
  });

  it('a data key sealed by version 1 is re-wrapped into the versioned form, which opens to the same key', async () => {
    const kms = await fixtureKms();
    const version1Kek = deriveKey(kmsFixture.root.key, 'svc-kms-kek|fixture-root');
    const old = sealKey(version1Kek, kmsFixture.secret, kmsContexts.dataKey('fixture-root', fixtureObjectContext), kmsFixture.secretIv);
    expect(decodeKmsBlob(old).version).toBe(1);
    const rewrapped = await kms.rewrapDataKey('fixture-root', old, fixtureObjectContext);
    expect(rewrapped && [rewrapped[0], Buffer.from(rewrapped).readUInt32BE(1)]).toEqual([2, 2]);
    expect((await kms.unsealDataKey('fixture-root', rewrapped!, fixtureObjectContext)).equals(kmsFixture.secret)).toBe(true);
    expect(() => decodeKmsBlob(Buffer.from([3, 0, 0, 0, 2, 1]))).toThrow(expect.objectContaining({ code: 'CorruptFormat' }));
  });

  it('kms-rewrap.bin: decodes field by field, loads through the state store, and is saved again as the same bytes', async () => {
    const bytes = read('kms-rewrap-v1.bin');
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('SVKR');
    expect(validateRewrap(decodeStateFile('SVKR', bytes))).toEqual(kmsFixture.rewrap);
    const drives = await drivesHolding('kms-rewrap.bin', bytes);
    const store = new StateStore<RewrapDocument>({ name: 'kms-rewrap.bin', magic: 'SVKR', drives: () => drives, validate: validateRewrap, quarantine });
    const loaded = await store.load();
    expect(loaded).toEqual(kmsFixture.rewrap);
    await store.save(loaded!);
    for (const drive of drives) expect(Buffer.from(await drive.readFile(`${systemDir}/kms-rewrap.bin`)).equals(bytes)).toBe(true);
    expect(() => validateRewrap({ ...kmsFixture.rewrap, version: 2 })).toThrow(expect.objectContaining({ code: 'UnsupportedFormat' }));
    expect(() => validateRewrap({ ...kmsFixture.rewrap, cursor: { bucket: 'fixtures' } })).toThrow(expect.objectContaining({ code: 'CorruptFormat' }));
  });
});
