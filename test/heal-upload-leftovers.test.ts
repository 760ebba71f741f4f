/**
 * A bucket heal removes the directory of a multipart upload that a drive kept after the upload
 * was completed or aborted on the others (a drive cut off at that moment), and leaves open
 * uploads alone. One real server on four fs drives (EC 2+2); the drive that missed the end is made
 * by putting back, after the Complete or Abort, the copy of the upload's directory it had before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, waitReady, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { uploadDir } from '../src/object/multipart.js';

const bucket = 'uploads';
let root: string;
let keep: string;
let server: SvcProcess;
let s3: S3Client;
const drive = (slot: number) => join(root, `d${slot + 1}`);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-upload-leftovers-'));
  keep = await mkdtemp(join(tmpdir(), 'svc-upload-kept-'));
  // The heal looks at a leftover again one drive deadline after it found it: 3 s here.
  server = await startSvc({ args: [join(root, 'd{1...4}')], env: { SVC_CONSOLE_ENABLE: 'false', SVC_DRIVE_MAX_TIMEOUT: '3s' }, waitReady: false });
  await waitReady(server, 90_000);
  s3 = s3ClientFor(server.url);
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
}, 120_000);

afterAll(async () => {
  await server?.kill();
  await rm(root, { recursive: true, force: true });
  await rm(keep, { recursive: true, force: true });
});

/** An upload with one part, left open. */
async function uploadWithPart(key: string): Promise<{ uploadId: string; etag: string }> {
  const uploadId = (await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }))).UploadId!;
  const part = await s3.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: 1, Body: `part of ${key} `.repeat(100) }));
  return { uploadId, etag: part.ETag! };
}

const onDrive = (slot: number, key: string, uploadId: string) => join(drive(slot), uploadDir(bucket, key, uploadId));
const exists = async (path: string) => (await readdir(path).catch(() => undefined)) !== undefined;

async function heal(options: Record<string, unknown>): Promise<Record<string, any>> {
  const started = await admin(server.url, 'POST', `/svc/admin/v3/heal/${bucket}`, '', { body: JSON.stringify(options) });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  for (;;) {
    const answer = await admin(server.url, 'POST', `/svc/admin/v3/heal/${bucket}`, `clientToken=${started.body.clientToken}`);
    expect(answer.status).toBe(200);
    if (answer.body.status !== 'running') return answer.body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('bucket heal and upload directories left behind', () => {
  it('removes a completed or aborted upload kept by one drive, and keeps the open one', async () => {
    const completed = await uploadWithPart('done');
    const aborted = await uploadWithPart('dropped');
    const open = await uploadWithPart('open');
    await cp(onDrive(0, 'done', completed.uploadId), join(keep, 'done'), { recursive: true });
    await cp(onDrive(1, 'dropped', aborted.uploadId), join(keep, 'dropped'), { recursive: true });
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'done', UploadId: completed.uploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: completed.etag }] } }));
    await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: 'dropped', UploadId: aborted.uploadId }));
    // Drive 1 missed the Complete, drive 2 the Abort.
    await cp(join(keep, 'done'), onDrive(0, 'done', completed.uploadId), { recursive: true });
    await cp(join(keep, 'dropped'), onDrive(1, 'dropped', aborted.uploadId), { recursive: true });
    const listed = (await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads?.map((upload) => upload.UploadId);
    expect(listed).toEqual([open.uploadId]);

    const scan = await heal({ dryRun: true });
    const wouldHeal = (scan.items as any[]).filter((item) => item.type === 'upload');
    expect(wouldHeal.map((item) => [item.object, item.outcome]).sort()).toEqual([['done', 'would-heal'], ['dropped', 'would-heal']]);
    expect(await exists(onDrive(0, 'done', completed.uploadId))).toBe(true);

    const healed = await heal({});
    expect(healed.counts.failures).toBe(0);
    const removed = (healed.items as any[]).filter((item) => item.type === 'upload');
    expect(removed.map((item) => [item.object, item.outcome]).sort()).toEqual([['done', 'healed'], ['dropped', 'healed']]);
    expect(removed.find((item) => item.object === 'done').reason).toContain(`upload ${completed.uploadId} ended`);
    expect(await exists(onDrive(0, 'done', completed.uploadId))).toBe(false);
    expect(await exists(onDrive(1, 'dropped', aborted.uploadId))).toBe(false);
    for (const slot of [0, 1, 2, 3]) expect(await exists(onDrive(slot, 'open', open.uploadId)), `open upload on drive ${slot + 1}`).toBe(true);

    // The open upload still completes, and a scan finds no leftover any more.
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'open', UploadId: open.uploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: open.etag }] } }));
    const body = await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'open' }))).Body!.transformToString();
    expect(body).toBe('part of open '.repeat(100));
    const again = await heal({ dryRun: true });
    expect((again.items as any[]).filter((item) => item.type === 'upload')).toEqual([]);
  }, 60_000);
});
