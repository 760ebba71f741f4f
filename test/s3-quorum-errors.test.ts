/** Below quorum the S3 API answers 503 with ErasureWriteQuorum / ErasureReadQuorum named in the XML body. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';

let root: string;
let server: SvcProcess;
let s3: S3Client;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-quorum-'));
  server = await startSvc({ args: [join(root, 'd{1...4}')] });
  s3 = s3ClientFor(server.url);
}, 60_000);
afterAll(async () => {
  await server?.kill();
  await rm(root, { recursive: true, force: true });
});

async function failure(promise: Promise<unknown>): Promise<{ name: string; status?: number; body?: string }> {
  try {
    await promise;
    return { name: 'no error' };
  } catch (error) {
    const typed = error as { name: string; $metadata?: { httpStatusCode?: number }; $response?: { body?: unknown } };
    return { name: typed.name, ...(typed.$metadata?.httpStatusCode !== undefined ? { status: typed.$metadata.httpStatusCode } : {}) };
  }
}

describe('quorum failures over S3', () => {
  it('writes fail with ErasureWriteQuorum and reads with ErasureReadQuorum (503) when 3 of 4 drives are gone', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'quorum' }));
    await s3.send(new PutObjectCommand({ Bucket: 'quorum', Key: 'kept', Body: 'x'.repeat(500_000) }));
    // Replace three drive directories by plain files: every operation on them now fails.
    for (const index of [2, 3, 4]) {
      await rename(join(root, `d${index}`), join(root, `gone${index}`));
      await writeFile(join(root, `d${index}`), 'not a drive');
    }
    const put = await failure(s3.send(new PutObjectCommand({ Bucket: 'quorum', Key: 'new', Body: 'y'.repeat(500_000) })));
    expect(put).toMatchObject({ name: 'ErasureWriteQuorum', status: 503 });
    const get = await failure(s3.send(new GetObjectCommand({ Bucket: 'quorum', Key: 'kept' })));
    expect(get).toMatchObject({ name: 'ErasureReadQuorum', status: 503 });
    // Drives back: the old object reads, the failed write left nothing.
    for (const index of [2, 3, 4]) {
      await rm(join(root, `d${index}`));
      await rename(join(root, `gone${index}`), join(root, `d${index}`));
    }
    const object = await s3.send(new GetObjectCommand({ Bucket: 'quorum', Key: 'kept' }));
    expect((await object.Body!.transformToString()).length).toBe(500_000);
    expect(await failure(s3.send(new GetObjectCommand({ Bucket: 'quorum', Key: 'new' })))).toMatchObject({ name: 'NoSuchKey', status: 404 });
  });
});
