import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, CreateMultipartUploadCommand, ListMultipartUploadsCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';

let root: string;
let server: SvcProcess;
let s3: S3Client;
const created: string[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-uploads-'));
  server = await startSvc({ args: [join(root, 'd{1...4}')], env: { SVC_CONSOLE_ENABLE: 'false' } });
  s3 = s3ClientFor(server.url);
  await s3.send(new CreateBucketCommand({ Bucket: 'uploads' }));
  for (const key of ['a', 'a', 'b/1', 'b/2', 'c']) {
    const upload = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'uploads', Key: key }));
    created.push(`${key} ${upload.UploadId}`);
  }
}, 60_000);
afterAll(async () => {
  await server?.kill();
  await rm(root, { recursive: true, force: true });
});

describe('ListMultipartUploads', () => {
  it('pages with max-uploads and the key and upload-id markers, every upload once, by key', async () => {
    const seen: string[] = [];
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    for (let page = 0; page < 10; page += 1) {
      const answer = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'uploads', MaxUploads: 2, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker }));
      expect((answer.Uploads ?? []).length).toBeLessThanOrEqual(2);
      for (const upload of answer.Uploads ?? []) seen.push(`${upload.Key} ${upload.UploadId}`);
      if (!answer.IsTruncated) break;
      keyMarker = answer.NextKeyMarker;
      uploadIdMarker = answer.NextUploadIdMarker;
    }
    expect(seen.sort()).toEqual([...created].sort());
    expect(seen.map((line) => line.split(' ')[0])).toEqual(['a', 'a', 'b/1', 'b/2', 'c']);
  });

  it('groups keys under a delimiter into common prefixes, and refuses a malformed max-uploads', async () => {
    const grouped = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'uploads', Delimiter: '/' }));
    expect((grouped.Uploads ?? []).map((upload) => upload.Key)).toEqual(['a', 'a', 'c']);
    expect((grouped.CommonPrefixes ?? []).map((prefix) => prefix.Prefix)).toEqual(['b/']);
    const prefixed = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'uploads', Prefix: 'b/' }));
    expect((prefixed.Uploads ?? []).map((upload) => upload.Key)).toEqual(['b/1', 'b/2']);
    const malformed = await admin(server.url, 'GET', '/uploads', 'uploads=&max-uploads=many');
    expect(malformed.status).toBe(400);
    expect(malformed.body.raw).toContain('<Code>InvalidArgument</Code>');
  });

  it('names an upload only where as many drives hold its record as reading it needs (not a copy left on one drive)', async () => {
    const upload = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'uploads', Key: 'leftover' }));
    const base = join(root, 'd1', '.svc.sys', 'multipart', 'uploads');
    let dir: string | undefined;
    for (const hash of await readdir(base)) if ((await readdir(join(base, hash))).includes(upload.UploadId!)) dir = join(hash, upload.UploadId!);
    expect(dir).toMatch(new RegExp(`/${upload.UploadId}$`));
    const listed = async () => ((await s3.send(new ListMultipartUploadsCommand({ Bucket: 'uploads', Prefix: 'leftover' }))).Uploads ?? []).map((entry) => entry.UploadId);
    // Two copies of four (K of EC 2+2) still read: listed. One copy, as a drive cut off while the
    // upload was completed or aborted elsewhere keeps it: not listed.
    for (const drive of ['d3', 'd4']) await rm(join(root, drive, '.svc.sys', 'multipart', 'uploads', dir!), { recursive: true });
    expect(await listed()).toEqual([upload.UploadId]);
    await rm(join(root, 'd2', '.svc.sys', 'multipart', 'uploads', dir!), { recursive: true });
    expect(await listed()).toEqual([]);
  });
});
