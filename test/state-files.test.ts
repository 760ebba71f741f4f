/**
 * State files under .svc.sys are decoded strictly and a refused one is quarantined: moved aside
 * into .svc.sys/quarantine, named in a log line, counted, never read again. Covered here: the
 * read-repair queue (through a heal manager on memfs drives), pool.bin / rebalance.bin / iam.bin
 * (the state store), storage-class.json (through startup), with corrupt, oversized and
 * wrong-version files.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemfsDrive } from '../backends/memfs/memfs-drive.js';
import type { Drive } from '../src/drive/index.js';
import { isSvcError } from '../src/errors/index.js';
import { decodeMrfFile, encodeMrfFile, type MrfFileEntry } from '../src/ops/mrf-file.js';
import { decodeStorageClassFile, encodeStorageClassFile } from '../src/cluster/storage-class-file.js';
import { quarantineDir, StateFileQuarantine } from '../src/cluster/state-quarantine.js';
import { StateStore } from '../src/ops/state-store.js';
import { encodeStateFile } from '../src/format/state-file.js';
import { readServerConfig } from '../src/cluster/server-config.js';
import { startStorage, storageClassConfigPath, type StartedStorage } from '../src/cluster/startup.js';
import { HealManager } from '../src/ops/heal.js';
import { LocalNamespaceLocker } from '../src/object/locks.js';
import { systemClock } from '../src/util/clock.js';
import { limits } from '../src/util/limits.js';
import { decodePartRecord, decodeUploadRecord } from '../src/object/upload-records.js';
import { waitFor } from './helpers/poll.js';

const bytesOf = (text: string): Uint8Array => Buffer.from(text, 'utf8');

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return isSvcError(error) ? error.code : `not a named error: ${String(error)}`;
  }
  return undefined;
}

class Lines {
  readonly lines: string[] = [];
  warn = (fields: Record<string, unknown>, message: string): void => void this.lines.push(`${message} ${JSON.stringify(fields)}`);
  info = this.warn;
  error = this.warn;
  debug = (): void => undefined;
}

async function quarantined(drive: Drive): Promise<string[]> {
  return drive.listDir(quarantineDir).catch(() => []);
}

describe('the read-repair queue file', () => {
  const entry = { pool: 0, set: 1, bucket: 'photos', key: 'a/b.jpg' };

  it('round-trips any entries within its limits (property)', () => {
    const seed = Number(process.env.FC_SEED ?? Date.now() % 1_000_000);
    console.log(`state-files property seed ${seed}`);
    const arbitraryEntry = fc.record({
      pool: fc.nat(8),
      set: fc.nat(32),
      bucket: fc.stringMatching(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/),
      key: fc.string({ minLength: 1, maxLength: 200, unit: 'binary' }),
    });
    fc.assert(
      fc.property(fc.array(arbitraryEntry, { maxLength: 30 }), (entries: MrfFileEntry[]) => {
        const { bytes, dropped } = encodeMrfFile(entries);
        expect(dropped).toBe(0);
        expect(decodeMrfFile(bytes)).toEqual(entries);
      }),
      { seed, numRuns: 100 },
    );
  });

  it('refuses what it does not understand, by name', () => {
    const file = (value: unknown) => bytesOf(JSON.stringify(value));
    expect(codeOf(() => decodeMrfFile(bytesOf('{"version": 1, "entries": [')))).toBe('CorruptFormat');
    expect(codeOf(() => decodeMrfFile(file({ version: 2, entries: [] })))).toBe('UnsupportedFormat');
    expect(codeOf(() => decodeMrfFile(file({ entries: [] })))).toBe('UnsupportedFormat');
    expect(codeOf(() => decodeMrfFile(file({ version: 1, entries: [], extra: true })))).toBe('CorruptFormat');
    expect(codeOf(() => decodeMrfFile(file({ version: 1, entries: [{ ...entry, pool: -1 }] })))).toBe('CorruptFormat');
    expect(codeOf(() => decodeMrfFile(file({ version: 1, entries: [{ ...entry, key: '' }] })))).toBe('CorruptFormat');
    expect(codeOf(() => decodeMrfFile(file({ version: 1, entries: [{ ...entry, key: 'k'.repeat(limits.maxObjectKeyBytes + 1) }] })))).toBe('CorruptFormat');
    expect(codeOf(() => decodeMrfFile(file({ version: 1, entries: [{ ...entry, attempts: 3 }] })))).toBe('CorruptFormat');
    expect(codeOf(() => decodeMrfFile(file({ version: 1, entries: Array.from({ length: limits.maxMrfFileEntries + 1 }, () => entry) })))).toBe('CorruptFormat');
    expect(codeOf(() => decodeMrfFile(new Uint8Array(limits.maxMrfFileBytes + 1)))).toBe('CorruptFormat');
  });

  it('keeps a saved queue within its limits, counting what it leaves out', () => {
    const { bytes, dropped } = encodeMrfFile(Array.from({ length: limits.maxMrfFileEntries + 5 }, (_, index) => ({ ...entry, key: `k${index}` })));
    expect(dropped).toBe(5);
    expect(decodeMrfFile(bytes)).toHaveLength(limits.maxMrfFileEntries);
  });
});

describe('storage-class.json', () => {
  it('round-trips its settings and refuses the rest by name', () => {
    const settings = { standard: { kind: 'explicit' as const, parity: 2 }, rrs: { kind: 'auto' as const }, optimize: 'availability', inlineBlockBytes: 65_536 };
    expect(decodeStorageClassFile(encodeStorageClassFile(settings))).toEqual(settings);
    expect(decodeStorageClassFile(encodeStorageClassFile({}))).toEqual({});
    expect(codeOf(() => decodeStorageClassFile(bytesOf('{"version":1,')))).toBe('CorruptFormat');
    expect(codeOf(() => decodeStorageClassFile(bytesOf('{"version":9}')))).toBe('UnsupportedFormat');
    expect(codeOf(() => decodeStorageClassFile(bytesOf('{"version":1,"standard":{"kind":"explicit","parity":"2"}}')))).toBe('CorruptFormat');
    expect(codeOf(() => decodeStorageClassFile(bytesOf('{"version":1,"colour":"blue"}')))).toBe('CorruptFormat');
    expect(codeOf(() => decodeStorageClassFile(new Uint8Array(limits.maxStorageClassFileBytes + 1)))).toBe('CorruptFormat');
  });
});

describe('the state store (pool.bin, rebalance.bin, iam.bin)', () => {
  interface Doc {
    generation: number;
    note: string;
  }
  const validate = (payload: unknown): Doc => {
    const doc = payload as Doc;
    if (typeof doc?.generation !== 'number' || typeof doc.note !== 'string') throw new Error('not a test document');
    return doc;
  };

  it('quarantines corrupt, oversized, wrong-version and invalid copies, and loads the good one', async () => {
    const drives = Array.from({ length: 5 }, (_, index) => createMemfsDrive({ endpoint: `/d${index}` }));
    const log = new Lines();
    const quarantine = new StateFileQuarantine(log);
    const store = new StateStore<Doc>({ name: 'test.bin', magic: 'SVTS', drives: () => drives, validate, quarantine, maxBytes: 1024 });
    await store.save({ generation: 4, note: 'good' });
    const good = encodeStateFile('SVTS', { generation: 4, note: 'good' });
    const wrongVersion = Buffer.from(good);
    wrongVersion.writeUInt16BE(2, 4);
    const flipped = Buffer.from(good);
    flipped[12] = flipped[12]! ^ 0xff;
    await drives[1]!.writeFileAtomic(store.path, flipped);
    await drives[2]!.writeFileAtomic(store.path, wrongVersion);
    await drives[3]!.writeFileAtomic(store.path, encodeStateFile('SVTS', { generation: 9, note: 'x'.repeat(2048) }));
    await drives[4]!.writeFileAtomic(store.path, encodeStateFile('SVTS', { generation: 99 }));

    expect(await store.load()).toEqual({ generation: 4, note: 'good' });
    expect(quarantine.quarantined()).toEqual({ 'test.bin': 4 });
    expect(await quarantined(drives[0]!)).toEqual([]);
    for (const drive of drives.slice(1)) expect((await quarantined(drive)).filter((name) => /^test\.bin\.\d+$/.test(name))).toHaveLength(1);
    // The first load spreads the good copy again onto the drives whose copy was moved aside.
    await store.spread();
    for (const drive of drives.slice(1)) expect(Buffer.from(await drive.readFile(store.path)).equals(good)).toBe(true);
    const text = log.lines.join('\n');
    expect(text).toMatch(/state file test\.bin refused \(CorruptFormat: SVTS: checksum mismatch\) and quarantined/);
    expect(text).toMatch(/state file test\.bin refused \(UnsupportedFormat: SVTS: unsupported version 2\) and quarantined/);
    expect(text).toMatch(/state file test\.bin refused \(CorruptFormat: .*more than the 1024 a state file may have\) and quarantined/);
    expect(text).toMatch(/state file test\.bin refused \(CorruptFormat: not a test document\) and quarantined/);

    // Never read again: a second load refuses nothing more.
    expect(await store.load()).toEqual({ generation: 4, note: 'good' });
    expect(quarantine.total()).toBe(4);
  });

  it('spreads the newest copy to the drives that lack it or hold an older one: it outlives the drives that held it', async () => {
    const older = Array.from({ length: 3 }, (_, index) => createMemfsDrive({ endpoint: `/old${index}` }));
    const added = Array.from({ length: 3 }, (_, index) => createMemfsDrive({ endpoint: `/new${index}` }));
    const make = (drives: Drive[], lock?: () => Promise<() => void>) =>
      new StateStore<Doc>({ name: 'test.bin', magic: 'SVTS', drives: () => drives, validate, quarantine: new StateFileQuarantine(new Lines()), maxBytes: 1024, ...(lock ? { lock } : {}) });
    await make(older).save({ generation: 5, note: 'saved before the pool was added' });
    await added[0]!.writeFileAtomic('.svc.sys/test.bin', encodeStateFile('SVTS', { generation: 2, note: 'stale' }));
    const locks: string[] = [];
    const lock = async () => {
      locks.push('taken');
      return () => void locks.push('released');
    };
    const store = make([...older, ...added], lock);
    expect(await store.load()).toEqual({ generation: 5, note: 'saved before the pool was added' });
    // The spread the first load started, then one more: nothing is left to write.
    await waitFor('the spread to end', () => (locks.length >= 2 ? true : undefined));
    expect(await store.spread()).toBe(0);
    expect(locks).toEqual(['taken', 'released', 'taken', 'released']);
    for (const drive of added) expect(await make([drive]).load()).toEqual({ generation: 5, note: 'saved before the pool was added' });
    // A later load does not spread again (once a process).
    await store.save({ generation: 6, note: 'after' });
    await store.load();
    expect(locks).toHaveLength(4);
  });

  it('refuses to save a file larger than it would load (StateFileTooLarge), writing nothing', async () => {
    const drives = [createMemfsDrive({ endpoint: '/d0' })];
    const store = new StateStore<Doc>({ name: 'test.bin', magic: 'SVTS', drives: () => drives, validate, quarantine: new StateFileQuarantine(new Lines()), maxBytes: 1024 });
    await expect(store.save({ generation: 1, note: 'x'.repeat(2048) })).rejects.toMatchObject({ code: 'StateFileTooLarge' });
    await expect(drives[0]!.readFile(store.path)).rejects.toMatchObject({ code: 'FileNotFound' });
  });
});

describe('a node starting on refused state files', () => {
  async function started(prepare: (drives: Drive[]) => Promise<void>): Promise<{ storage: StartedStorage; drives: Drive[]; log: Lines }> {
    const config = readServerConfig(['/s{1...4}'], { SVC_DRIVE_BACKEND: 'memfs' });
    const drives = Array.from({ length: 4 }, (_, index) => createMemfsDrive({ endpoint: `/s${index + 1}` }));
    const log = new Lines();
    // A first start formats the drives; the files are then put in place for the second.
    (await startStorage(config, [drives], { locker: new LocalNamespaceLocker(), clock: systemClock, logger: log })).stop();
    await prepare(drives);
    const storage = await startStorage(config, [drives], { locker: new LocalNamespaceLocker(), clock: systemClock, logger: log });
    return { storage, drives, log };
  }

  it('quarantines a corrupt read-repair queue, counts it, and starts with an empty queue', async () => {
    const mrfPath = '.svc.sys/mrf-node.json';
    const { storage, drives, log } = await started(async (all) => all[0]!.writeFileAtomic(mrfPath, bytesOf('{"version":1,"entries":[{"pool":0,"set":0,"bucket":"b')));
    const heal = new HealManager({ storage, nodeName: 'node', nowMs: () => Date.now(), logger: log, quarantine: storage.quarantine });
    await heal.start();
    try {
      expect(heal.backgroundStatus()).toMatchObject({ mrf: { queued: 0 }, stateFilesQuarantined: 1 });
      expect(storage.quarantine.quarantined()).toEqual({ mrf: 1 });
      expect((await quarantined(drives[0]!)).filter((name) => name.startsWith('mrf-node.json.'))).toHaveLength(1);
      await expect(drives[0]!.readFile(mrfPath)).rejects.toMatchObject({ code: 'FileNotFound' });
      expect(log.lines.join('\n')).toMatch(/state file mrf-node\.json refused \(CorruptFormat: read-repair queue file: not JSON\) and quarantined/);
    } finally {
      await heal.close();
      storage.stop();
    }
  });

  it('reads back a saved queue of the current version, dropping entries of sets the deployment lacks', async () => {
    const mrfPath = '.svc.sys/mrf-node.json';
    const saved = encodeMrfFile([{ pool: 0, set: 0, bucket: 'nobucket', key: 'k' }, { pool: 3, set: 0, bucket: 'nobucket', key: 'k' }]).bytes;
    const { storage, drives, log } = await started(async (all) => all[0]!.writeFileAtomic(mrfPath, saved));
    const heal = new HealManager({ storage, nodeName: 'node', nowMs: () => Date.now(), logger: log, quarantine: storage.quarantine });
    await heal.start();
    try {
      expect(storage.quarantine.total()).toBe(0);
      await expect(drives[0]!.readFile(mrfPath)).rejects.toMatchObject({ code: 'FileNotFound' });
      expect(log.lines.join('\n')).toContain('saved read-repair entries name erasure sets this deployment does not have: dropped');
      expect((heal.backgroundStatus().mrf as { dropped: number }).dropped).toBe(1);
    } finally {
      await heal.close();
      storage.stop();
    }
  });

  it('quarantines a wrong-version storage-class.json and starts from the environment', async () => {
    const { storage, drives, log } = await started(async (all) => all[0]!.writeFileAtomic(storageClassConfigPath, bytesOf('{"version":7,"standard":{"kind":"explicit","parity":1}}')));
    try {
      expect(storage.quarantine.quarantined()).toEqual({ 'storage-class': 1 });
      expect(storage.storageClass.standardParity(0)).toBe(2);
      expect((await quarantined(drives[0]!)).filter((name) => name.startsWith('storage-class.json.'))).toHaveLength(1);
      expect(decodeStorageClassFile(await drives[0]!.readFile(storageClassConfigPath))).toEqual({});
      expect(log.lines.join('\n')).toMatch(/state file storage-class\.json refused \(UnsupportedFormat: storage-class\.json: version 7 is not supported\) and quarantined/);
    } finally {
      storage.stop();
    }
  });
});

describe('multipart upload records', () => {
  const upload = {
    version: 1, uploadId: 'u1', bucket: 'photos', key: 'a.jpg', initiatedMs: 1, storageClass: 'STANDARD', userMetadata: { colour: 'blue' }, systemMetadata: {},
    dataShards: 2, parityShards: 2, distribution: [1, 2, 3, 4], dataDir: 'd1',
  };
  it('decode what is written and refuse the rest by name', () => {
    expect(decodeUploadRecord(JSON.stringify(upload))).toEqual(upload);
    expect(codeOf(() => decodeUploadRecord(JSON.stringify({ ...upload, version: 4 })))).toBe('UnsupportedFormat');
    // Version 3 is a compressed upload (encrypted or not): its block format, and only there.
    expect(decodeUploadRecord(JSON.stringify({ ...upload, version: 3, compression: 'zstd-1m-v1' }))).toEqual({ ...upload, version: 3, compression: 'zstd-1m-v1' });
    expect(codeOf(() => decodeUploadRecord(JSON.stringify({ ...upload, version: 3 })))).toBe('CorruptFormat');
    expect(codeOf(() => decodeUploadRecord(JSON.stringify({ ...upload, compression: 'zstd-1m-v1' })))).toBe('CorruptFormat');
    expect(codeOf(() => decodeUploadRecord(JSON.stringify({ ...upload, version: 3, compression: 'lz4-v9' })))).toBe('UnsupportedFormat');
    // Version 2 is an encrypted upload: its sealed key record, and only there.
    const sealed = { kind: 'SSE-C', cipher: 'aes-256-gcm-64k-v1', keyId: '', sealedKey: 'AQID', customerKeyHmac: 'BAUG' };
    expect(decodeUploadRecord(JSON.stringify({ ...upload, version: 2, encryption: sealed }))).toEqual({ ...upload, version: 2, encryption: sealed });
    expect(codeOf(() => decodeUploadRecord(JSON.stringify({ ...upload, version: 2 })))).toBe('CorruptFormat');
    expect(decodeUploadRecord(JSON.stringify({ ...upload, version: 3, encryption: sealed, compression: 'zstd-1m-v1' }))).toEqual({ ...upload, version: 3, encryption: sealed, compression: 'zstd-1m-v1' });
    expect(codeOf(() => decodeUploadRecord(JSON.stringify({ ...upload, encryption: sealed })))).toBe('CorruptFormat');
    const { customerKeyHmac: _hmac, ...withoutHmac } = sealed;
    for (const encryption of [withoutHmac, { ...sealed, kind: 'SSE-S3' }, { ...sealed, cipher: 'rot13' }, { ...sealed, customerKey: 'AQID' }, { ...sealed, sealedKey: 'not base64!' }]) {
      expect(codeOf(() => decodeUploadRecord(JSON.stringify({ ...upload, version: 2, encryption }))), JSON.stringify(encryption)).toBe('CorruptFormat');
    }
    expect(codeOf(() => decodeUploadRecord(JSON.stringify({ ...upload, distribution: [1, 2, 3] })))).toBe('CorruptFormat');
    expect(codeOf(() => decodeUploadRecord(JSON.stringify({ ...upload, storageClass: 'GLACIER' })))).toBe('CorruptFormat');
    expect(codeOf(() => decodeUploadRecord(JSON.stringify({ ...upload, userMetadata: { n: 1 } })))).toBe('CorruptFormat');
    expect(codeOf(() => decodeUploadRecord('{"version":1,'))).toBe('CorruptFormat');
    const part = { number: 1, sizeBytes: 5, etag: '"abc"', modTimeMs: 2 };
    expect(decodePartRecord(JSON.stringify(part))).toEqual(part);
    expect(codeOf(() => decodePartRecord(JSON.stringify({ ...part, sizeBytes: -1 })))).toBe('CorruptFormat');
    const sealedPart = { ...part, storedSizeBytes: 21, keySalt: 'AAAAAAAAAAAAAAAAAAAAAA==' };
    expect(decodePartRecord(JSON.stringify(sealedPart))).toEqual(sealedPart);
    expect(codeOf(() => decodePartRecord(JSON.stringify({ ...part, storedSizeBytes: 21 })))).toBe('CorruptFormat');
    expect(codeOf(() => decodePartRecord(JSON.stringify({ ...sealedPart, keySalt: 7 })))).toBe('CorruptFormat');
    // A compressed part keeps its blocks' stored lengths (one per 1 MiB of the part), sealed or not.
    const bigPart = { ...part, sizeBytes: 1024 * 1024 + 10 };
    const compressedPart = { ...bigPart, storedSizeBytes: 3010, compressedBlocks: [3000, 10] };
    expect(decodePartRecord(JSON.stringify(compressedPart))).toEqual(compressedPart);
    expect(decodePartRecord(JSON.stringify({ ...compressedPart, keySalt: 'AAAAAAAAAAAAAAAAAAAAAA==' }))).toEqual({ ...compressedPart, keySalt: 'AAAAAAAAAAAAAAAAAAAAAA==' });
    for (const blocks of [[3000], [3000, 11], [0, 10], [3000, 10, 1], 'all']) {
      expect(codeOf(() => decodePartRecord(JSON.stringify({ ...compressedPart, compressedBlocks: blocks }))), JSON.stringify(blocks)).toBe('CorruptFormat');
    }
    const { storedSizeBytes: _stored, ...unsized } = compressedPart;
    expect(codeOf(() => decodePartRecord(JSON.stringify(unsized)))).toBe('CorruptFormat');
  });
});
