/**
 * `SVC_LIST_OBJECTS_QUORUM` with drives lost while the server runs: each mode gives the answer
 * its README entry promises, the same as for drives missing at start-up. One set of four drives;
 * `ec0` is an EC:0 object (STANDARD), `ec1` an EC:1 one (REDUCED_REDUNDANCY).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';

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

describe.each(Object.keys(expected) as Mode[])('listing quorum %s with drives lost at run time', (mode) => {
  let root: string;
  let server: SvcProcess;
  let s3: S3Client;
  let drives: string[];

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), `svc-listq-${mode}-`));
    server = await startSvc({
      args: [join(root, 'd{1...4}')],
      env: { SVC_FAULT_INJECTION: 'on', SVC_CONSOLE_ENABLE: 'false', SVC_LIST_OBJECTS_QUORUM: mode, SVC_STORAGE_CLASS_STANDARD: 'EC:0', SVC_STORAGE_CLASS_RRS: 'EC:1' },
    });
    s3 = s3ClientFor(server.url);
    await s3.send(new CreateBucketCommand({ Bucket: 'listed' }));
    await s3.send(new PutObjectCommand({ Bucket: 'listed', Key: 'ec0', Body: 'zero parity' }));
    await s3.send(new PutObjectCommand({ Bucket: 'listed', Key: 'ec1', Body: 'one parity', StorageClass: 'REDUCED_REDUNDANCY' }));
    drives = ((await admin(server.url, 'GET', '/svc/admin/v4/faults')).body.drives as { drive: string }[]).map((entry) => entry.drive).sort();
  }, 60_000);
  afterAll(async () => {
    await server?.kill();
    await rm(root, { recursive: true, force: true });
  });

  it('answers as documented with one, two, three and four drives offline', async () => {
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
