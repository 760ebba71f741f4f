/**
 * Object placement against a real server on real drives: for random objects (inline, one block,
 * many blocks, multipart) every shard file the endpoint names exists at the stated path with the
 * stated size and nothing else is there; `verify=true` reports exactly the shards the test
 * corrupted or deleted, and changes nothing. Then the failure what-if over the same server: the
 * objects it counts unreadable are exactly those a GET fails on once those drives are failed with
 * the fault-injecting backend. EXPLORER_SEED replays a run (the seed is printed on failure).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mkdtemp, readdir, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { patternBytes } from './helpers/erasure-set.js';
import { MiB } from '../src/util/limits.js';

let root: string;
let server: SvcProcess;
let s3: S3Client;
const drives = Array.from({ length: 8 }, (_, index) => `d${index + 1}`);
const seed = Number(process.env.EXPLORER_SEED ?? Date.now() % 2 ** 31);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-explorer-'));
  // Two sets of four (EC:2 STANDARD, EC:1 RRS), every drive behind the fault-injecting backend.
  server = await startSvc({ args: [join(root, 'd{1...8}')], env: { SVC_ERASURE_SET_DRIVE_COUNT: '4', SVC_FAULT_INJECTION: 'on', SVC_CONSOLE_ENABLE: 'false' } });
  s3 = s3ClientFor(server.url);
  await s3.send(new CreateBucketCommand({ Bucket: 'place' }));
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

const sizes = { inline: 3_000, oneBlock: 700_000, manyBlocks: 2 * MiB + 12_345, multipart: 5 * MiB + 777 } as const;
type Kind = keyof typeof sizes;

async function putKind(key: string, kind: Kind, storageClass: 'STANDARD' | 'REDUCED_REDUNDANCY', bytesSeed: number): Promise<Uint8Array> {
  const body = patternBytes(sizes[kind], bytesSeed);
  if (kind !== 'multipart') {
    await s3.send(new PutObjectCommand({ Bucket: 'place', Key: key, Body: body, StorageClass: storageClass }));
    return body;
  }
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'place', Key: key, StorageClass: storageClass }));
  const first = await s3.send(new UploadPartCommand({ Bucket: 'place', Key: key, UploadId, PartNumber: 1, Body: body.subarray(0, 5 * MiB) }));
  const second = await s3.send(new UploadPartCommand({ Bucket: 'place', Key: key, UploadId, PartNumber: 2, Body: body.subarray(5 * MiB) }));
  await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'place', Key: key, UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: first.ETag! }, { PartNumber: 2, ETag: second.ETag! }] } }));
  return body;
}

async function placement(key: string, verify = false, bucket = 'place'): Promise<Record<string, any>> {
  const answer = await admin(server.url, 'GET', '/svc/admin/v4/object/placement', `bucket=${bucket}&key=${encodeURIComponent(key)}${verify ? '&verify=true' : ''}`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}

/** Every file under the object's directory on one drive (relative to the drive). */
async function filesUnder(drive: string, dir: string): Promise<string[]> {
  const base = join(drive, dir);
  if (!existsSync(base)) return [];
  const entries = await readdir(base, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name).slice(drive.length + 1)).sort();
}

describe('object placement', () => {
  it('names every shard file at its path and size; verify reports exactly the shards corrupted or deleted, and changes nothing', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<Kind>('inline', 'oneBlock', 'manyBlocks', 'multipart'),
        fc.constantFrom<'STANDARD' | 'REDUCED_REDUNDANCY'>('STANDARD', 'REDUCED_REDUNDANCY'),
        fc.array(fc.constantFrom('keep', 'corrupt', 'delete'), { minLength: 4, maxLength: 4 }),
        async (kind, storageClass, damages) => {
          run += 1;
          const key = `obj-${seed}-${run}/${kind}`;
          await putKind(key, kind, storageClass, seed + run);
          const placed = await placement(key);
          const parity = storageClass === 'STANDARD' ? 2 : 1;
          expect(placed.geometry).toMatchObject({ setDriveCount: 4, dataShards: 4 - parity, parityShards: parity, inline: kind === 'inline', parts: kind === 'multipart' ? [{ number: 1 }, { number: 2 }] : [{ number: 1 }] });
          expect(placed.shards.map((shard: any) => shard.index)).toEqual([1, 2, 3, 4]);
          expect(placed.shards.map((shard: any) => shard.role)).toEqual([...Array(4 - parity).fill('data'), ...Array(parity).fill('parity')]);
          expect(placed.quorums.read.needed).toBe(4 - parity);
          // The bytes on disk: each named file exists with the named size; nothing else is there.
          for (const shard of placed.shards) {
            const drive = shard.drive.endpoint as string;
            expect(drive).toBe(join(root, drives[placed.set * 4 + shard.slot]!));
            const expected = shard.inline ? [placed.metaPath] : [placed.metaPath, ...shard.files.map((file: any) => file.path)];
            expect(await filesUnder(drive, placed.metaPath.slice(0, -'/xl.meta'.length))).toEqual(expected.sort());
            for (const file of shard.files) {
              if (shard.inline) expect(file.path).toBeUndefined();
              else expect((await stat(file.file)).size).toBe(file.sizeBytes);
            }
          }
          // Damage some shards; verify names exactly those, and leaves the damage as it found it.
          const expectedStatus = await damage(placed, damages);
          const before = await snapshotFiles(placed);
          const verified = await placement(key, true);
          expect(verified.verified).toBe(true);
          expect(Object.fromEntries(verified.shards.map((shard: any) => [shard.slot, shard.status])), JSON.stringify(verified.shards)).toEqual(expectedStatus);
          expect(await snapshotFiles(placed)).toEqual(before);
        },
      ),
      { numRuns: 8, seed, endOnFailure: true },
    );
  }, 120_000);

  it('refuses bad queries with named errors', async () => {
    expect((await admin(server.url, 'GET', '/svc/admin/v4/object/placement', 'bucket=place')).body.Code).toBe('InvalidQueryParameter');
    expect((await admin(server.url, 'GET', '/svc/admin/v4/object/placement', 'bucket=place&key=x&verify=yes')).body.Code).toBe('InvalidQueryParameter');
    expect((await admin(server.url, 'GET', '/svc/admin/v4/object/placement', 'bucket=place&key=absent')).body.Code).toBe('NoSuchKey');
    expect((await admin(server.url, 'GET', '/svc/admin/v4/object/placement', 'bucket=nobucket&key=x')).body.Code).toBe('NoSuchBucket');
  });
});

/** Applies one damage per slot; returns the status verify must report per slot. */
async function damage(placed: Record<string, any>, damages: string[]): Promise<Record<string, string>> {
  const expected: Record<string, string> = {};
  let damaged = 0;
  for (const shard of placed.shards) {
    // An inline shard lives in xl.meta: damaging more than parity copies leaves too few metadata
    // votes to know the object at all (placement then answers ErasureReadQuorum, as a GET would).
    const action = placed.geometry.inline && damaged >= placed.geometry.parityShards ? 'keep' : damages[shard.slot]!;
    if (action !== 'keep') damaged += 1;
    expected[shard.slot] = action === 'keep' ? 'ok' : action === 'corrupt' ? 'corrupt' : 'missing';
    if (action === 'keep') continue;
    const target: string = shard.inline ? join(shard.drive.endpoint, placed.metaPath) : shard.files.at(-1).file;
    if (action === 'delete') {
      await unlink(target);
      continue;
    }
    const bytes = await readFile(target);
    // The last byte: shard data (for inline objects, inside xl.meta's inline field or its checksum).
    bytes[bytes.length - 1]! ^= 0x5a;
    await writeFile(target, bytes);
  }
  return expected;
}

async function snapshotFiles(placed: Record<string, any>): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const shard of placed.shards) {
    for (const path of await filesUnder(shard.drive.endpoint, placed.metaPath.slice(0, -'/xl.meta'.length))) {
      files[`${shard.slot}:${path}`] = (await readFile(join(shard.drive.endpoint, path))).toString('base64').slice(-64);
    }
  }
  return files;
}

describe('failure what-if on a running server', () => {
  it('counts as unreadable exactly the objects a GET fails on once the named drives fail', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'whatif' }));
    // Objects of both classes until set 0 holds an RRS one (the set a key lands in depends on the deployment id).
    const keys: string[] = [];
    let rrsInSetZero = 0;
    for (let index = 0; keys.length < 12 || (rrsInSetZero === 0 && index < 64); index += 1) {
      const key = `k${index}`;
      const storageClass = index % 3 === 0 ? 'REDUCED_REDUNDANCY' : 'STANDARD';
      await s3.send(new PutObjectCommand({ Bucket: 'whatif', Key: key, Body: `body ${index}`, StorageClass: storageClass }));
      keys.push(key);
      if (storageClass === 'REDUCED_REDUNDANCY' && (await placement(key, false, 'whatif')).set === 0) rrsInSetZero += 1;
    }
    expect(rrsInSetZero).toBeGreaterThan(0);
    // Two drives of set 0: STANDARD (EC:2, K = M = 2) objects there still read but nothing writes (K + 1 = 3) or deletes (majority 3); RRS (EC:1) ones do not read; set 1 is untouched.
    const failed = [join(root, 'd1'), join(root, 'd2')];
    const answer = await admin(server.url, 'POST', '/svc/admin/v4/simulate/failure', '', { body: JSON.stringify({ drives: failed, scope: { bucket: 'whatif' } }) });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const report = answer.body;
    expect(report.sets[0].failedSlots).toEqual([0, 1]);
    expect(report.sets[0].classes.map((entry: any) => [entry.storageClass, entry.readable, entry.writable, entry.deletable])).toEqual([['STANDARD', true, false, false], ['REDUCED_REDUNDANCY', false, false, false]]);
    expect(report.sets[1].classes.every((entry: any) => entry.readable && entry.writable && entry.deletable)).toBe(true);
    expect(report.scope).toMatchObject({ bucket: 'whatif', objectsScanned: keys.length, complete: true, scanLimit: 10_000 });
    // The simulator failed nothing: every object still reads.
    for (const key of keys) await s3.send(new GetObjectCommand({ Bucket: 'whatif', Key: key }));
    for (const drive of failed) expect((await admin(server.url, 'POST', '/svc/admin/v4/faults', `drive=${encodeURIComponent(drive)}`, { body: JSON.stringify({ offline: true }) })).status).toBe(200);
    try {
      const unreadable: string[] = [];
      for (const key of keys) {
        const ok = await s3.send(new GetObjectCommand({ Bucket: 'whatif', Key: key })).then(async (object) => (await object.Body!.transformToString()).startsWith('body'), () => false);
        if (!ok) unreadable.push(key);
      }
      expect(unreadable.length).toBeGreaterThanOrEqual(rrsInSetZero);
      expect(unreadable.sort()).toEqual([...report.scope.unreadableSample].sort());
      expect(report.scope.objectsUnreadable).toBe(unreadable.length);
    } finally {
      for (const drive of failed) await admin(server.url, 'POST', '/svc/admin/v4/faults', `drive=${encodeURIComponent(drive)}`, { body: '{}' });
    }
  }, 60_000);

  it('refuses unknown drives, nodes and fields by name', async () => {
    const ask = async (body: unknown) => (await admin(server.url, 'POST', '/svc/admin/v4/simulate/failure', '', { body: JSON.stringify(body) })).body;
    expect((await ask({ drives: ['/nowhere'] })).Message).toContain('/nowhere');
    expect((await ask({ nodes: ['elsewhere:1'] })).Code).toBe('InvalidArgument');
    expect((await ask({ drive: [] })).Message).toContain("unknown field 'drive'");
    expect((await ask({ scope: { bucket: 'absent-bucket' } })).Code).toBe('NoSuchBucket');
    expect((await admin(server.url, 'POST', '/svc/admin/v4/simulate/failure', 'drives=x', { body: '{}' })).body.Code).toBe('InvalidQueryParameter');
    expect((await admin(server.url, 'POST', '/svc/admin/v4/simulate/failure', '', { body: '[1]' })).body.Code).toBe('InvalidArgument');
  });
});
