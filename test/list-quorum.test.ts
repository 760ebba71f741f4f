/**
 * `SVC_LIST_OBJECTS_QUORUM` with drives lost while the server runs: each mode gives the answer
 * its README entry promises, the same as for drives missing at start-up. One set of four drives;
 * `ec0` is an EC:0 object (STANDARD), `ec1` an EC:1 one (REDUCED_REDUNDANCY).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { chunked, makeTestSet } from './helpers/erasure-set.js';
import { listSet } from '../src/object/list-objects.js';
import type { SetConfig } from '../src/object/index.js';

type Mode = 'disk' | 'reduced' | 'optimal' | 'auto' | 'strict';

/** What a listing answers with this many of the four drives offline: keys, or the error's name. */
const expected: Record<Mode, Record<1 | 2 | 3 | 4, string[] | string>> = {
  disk: { 1: ['ec0', 'ec1'], 2: ['ec0', 'ec1'], 3: ['ec0', 'ec1'], 4: 'ErasureReadQuorum' },
  reduced: { 1: ['ec0', 'ec1'], 2: [], 3: [], 4: 'ErasureReadQuorum' },
  optimal: { 1: ['ec0', 'ec1'], 2: 'ErasureReadQuorum', 3: 'ErasureReadQuorum', 4: 'ErasureReadQuorum' },
  auto: { 1: ['ec0', 'ec1'], 2: 'ErasureReadQuorum', 3: 'ErasureReadQuorum', 4: 'ErasureReadQuorum' },
  strict: { 1: 'ErasureReadQuorum', 2: 'ErasureReadQuorum', 3: 'ErasureReadQuorum', 4: 'ErasureReadQuorum' },
};

async function listing(s3: S3Client): Promise<string[] | string> {
  try {
    const answer = await s3.send(new ListObjectsV2Command({ Bucket: 'listed' }));
    return (answer.Contents ?? []).map((entry) => entry.Key!);
  } catch (error) {
    return (error as Error).name;
  }
}

interface ModeServer {
  root: string;
  server: SvcProcess;
  s3: S3Client;
  drives: string[];
}

/** One server per mode, started together: a set of four drives holding `ec0` and `ec1`. */
async function startModeServer(mode: Mode): Promise<ModeServer> {
  const root = await mkdtemp(join(tmpdir(), `svc-listq-${mode}-`));
  const server = await startSvc({
    args: [join(root, 'd{1...4}')],
    env: { SVC_FAULT_INJECTION: 'on', SVC_CONSOLE_ENABLE: 'false', SVC_LIST_OBJECTS_QUORUM: mode, SVC_STORAGE_CLASS_STANDARD: 'EC:0', SVC_STORAGE_CLASS_RRS: 'EC:1' },
  });
  const s3 = s3ClientFor(server.url);
  await s3.send(new CreateBucketCommand({ Bucket: 'listed' }));
  await s3.send(new PutObjectCommand({ Bucket: 'listed', Key: 'ec0', Body: 'zero parity' }));
  await s3.send(new PutObjectCommand({ Bucket: 'listed', Key: 'ec1', Body: 'one parity', StorageClass: 'REDUCED_REDUNDANCY' }));
  const drives = ((await admin(server.url, 'GET', '/svc/admin/v4/faults')).body.drives as { drive: string }[]).map((entry) => entry.drive).sort();
  return { root, server, s3, drives };
}

describe('listing quorum with drives lost at run time (one server per mode)', () => {
  const servers = new Map<Mode, ModeServer>();
  beforeAll(async () => {
    const modes = Object.keys(expected) as Mode[];
    const started = await Promise.allSettled(modes.map(startModeServer));
    started.forEach((result, index) => result.status === 'fulfilled' && servers.set(modes[index]!, result.value));
    const failed = started.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  }, 90_000);
  afterAll(async () => {
    for (const { server, root } of servers.values()) {
      await server.kill();
      await rm(root, { recursive: true, force: true });
    }
  });

  it.each(Object.keys(expected) as Mode[])('%s answers as documented with one, two, three and four drives offline', async (mode) => {
    const { server, s3, drives } = servers.get(mode)!;
    expect(await listing(s3)).toEqual(['ec0', 'ec1']);
    const answers: Record<number, string[] | string> = {};
    for (const lost of [1, 2, 3, 4] as const) {
      const answer = await admin(server.url, 'POST', '/svc/admin/v4/faults', `drive=${encodeURIComponent(drives[lost - 1]!)}`, { body: JSON.stringify({ offline: true }) });
      expect(answer.status).toBe(200);
      answers[lost] = await listing(s3);
    }
    expect(answers).toEqual(expected[mode]);
    for (const drive of drives) await admin(server.url, 'POST', '/svc/admin/v4/faults', `drive=${encodeURIComponent(drive)}`, { body: '{}' });
    expect(await listing(s3)).toEqual(['ec0', 'ec1']);
  }, 30_000);
});

/** A listing's keys, or the code of the error it failed with. */
async function listingOf(config: SetConfig): Promise<string[] | string> {
  const keys: string[] = [];
  try {
    for await (const entry of listSet(config, 'bucket', { prefix: '' })) keys.push(entry.key);
    return keys;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

describe('listing quorum: a drive lost before start-up and one lost while running give the same answer', () => {
  it('holds for every mode, objects written with drives missing, and any drives lost; optimal never leaves a committed object out', async () => {
    const slots = fc.subarray([0, 1, 2, 3]);
    const writes = fc.array(fc.record({ rrs: fc.boolean(), offline: slots }), { minLength: 1, maxLength: 6 });
    await fc.assert(fc.asyncProperty(writes, slots, async (objects, lost) => {
      // STANDARD EC:2 and REDUCED_REDUNDANCY EC:0 on four drives.
      const test = await makeTestSet({ drives: 4, parity: 2, rrsParity: 0 });
      try {
        const committed: string[] = [];
        for (const [index, object] of objects.entries()) {
          for (const slot of object.offline) test.faulty[slot]!.setFaults({ offline: true });
          const put = test.set.putObject('bucket', `k${index}`, chunked(new Uint8Array([index])), { storageClass: object.rrs ? 'REDUCED_REDUNDANCY' : 'STANDARD', versioning: 'unversioned' });
          if (await put.then(() => true, () => false)) committed.push(`k${index}`);
          for (const slot of object.offline) test.faulty[slot]!.setFaults({});
        }
        for (const mode of Object.keys(expected) as Mode[]) {
          const before = await listingOf({ ...test.set.config, listQuorum: mode, drives: test.faulty.map((drive, slot) => (lost.includes(slot) ? undefined : drive)) });
          for (const slot of lost) test.faulty[slot]!.setFaults({ offline: true });
          const after = await listingOf({ ...test.set.config, listQuorum: mode });
          for (const slot of lost) test.faulty[slot]!.setFaults({});
          expect(after, mode).toEqual(before);
          // optimal, auto and strict answer in full or fail: a committed object is never left out.
          if (mode !== 'disk' && mode !== 'reduced' && Array.isArray(after)) expect(after, mode).toEqual(expect.arrayContaining(committed));
        }
      } finally {
        await test.cleanup();
      }
    }), { numRuns: 40 });
  });
});
