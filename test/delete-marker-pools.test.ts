/**
 * Delete markers as AWS S3 shows them, on a real two-pool server: a read of a key whose newest
 * version is a marker answers as one pool would (404 or 405 with x-amz-delete-marker), and
 * ListObjects lists no common prefix whose keys are all deleted, page by page as well.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand, DeleteObjectCommand, ListObjectVersionsCommand, ListObjectsCommand, ListObjectsV2Command, PutBucketVersioningCommand,
  PutObjectCommand, type S3Client,
} from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { signedRequest } from './helpers/raw-s3.js';

let root: string;
let server: SvcProcess;
let s3: S3Client;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-markers-'));
  server = await startSvc({ args: [join(root, 'p0-{1...2}'), join(root, 'p1-{1...2}')], env: { SVC_CONSOLE_ENABLE: 'false' } });
  s3 = s3ClientFor(server.url);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

async function versionedBucket(bucket: string): Promise<void> {
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  await s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
}
const put = (bucket: string, key: string) => s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: key }));
const remove = (bucket: string, key: string) => s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));

describe('a key whose newest version is a delete marker, with two pools', () => {
  it('answers GET and HEAD 404 with the marker headers, and 405 by the marker version id', async () => {
    await versionedBucket('marked');
    // Several keys so that both pools hold some (a new key goes to a pool weighted by free space).
    const keys = Array.from({ length: 6 }, (_, index) => `doc-${index}`);
    for (const key of keys) {
      await put('marked', key);
      const marker = await remove('marked', key);
      expect(marker.DeleteMarker).toBe(true);
      for (const method of ['GET', 'HEAD']) {
        const current = await signedRequest(server.url, { method, path: `/marked/${key}` });
        expect([current.status, current.headers['x-amz-delete-marker'], current.headers['x-amz-version-id']], `${method} ${key}`).toEqual([404, 'true', marker.VersionId]);
        const byId = await signedRequest(server.url, { method, path: `/marked/${key}`, query: { versionId: marker.VersionId! } });
        expect([byId.status, byId.headers['x-amz-delete-marker'], byId.headers['x-amz-version-id']], `${method} ${key} by id`).toEqual([405, 'true', marker.VersionId]);
      }
      await put('marked', key);
      const live = await signedRequest(server.url, { method: 'GET', path: `/marked/${key}` });
      expect([live.status, live.headers['x-amz-delete-marker']], `${key} written again`).toEqual([200, undefined]);
    }
  }, 60_000);
});

describe('common prefixes of deleted keys', () => {
  const bucket = 'folders';
  beforeAll(async () => {
    await versionedBucket(bucket);
    for (const key of ['a/b/c', 'b/x', 'b/y', 'c/1', 'd/gone-1', 'd/gone-2', 'd/kept', 'e/only', 'f.txt', 'g/x']) await put(bucket, key);
    for (const key of ['a/b/c', 'b/x', 'b/y', 'd/gone-1', 'd/gone-2', 'g/x']) await remove(bucket, key);
  }, 60_000);

  it('lists a prefix only while a key under it is not deleted (V2, V1, any delimiter)', async () => {
    const v2 = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Delimiter: '/' }));
    expect((v2.CommonPrefixes ?? []).map((item) => item.Prefix)).toEqual(['c/', 'd/', 'e/']);
    expect((v2.Contents ?? []).map((item) => item.Key)).toEqual(['f.txt']);
    expect(v2.KeyCount).toBe(4);
    const v1 = await s3.send(new ListObjectsCommand({ Bucket: bucket, Delimiter: '/' }));
    expect((v1.CommonPrefixes ?? []).map((item) => item.Prefix)).toEqual(['c/', 'd/', 'e/']);
    const nested = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'a/', Delimiter: '/' }));
    expect([nested.CommonPrefixes ?? [], nested.Contents ?? []]).toEqual([[], []]);
    const otherDelimiter = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Delimiter: '/b' }));
    expect((otherDelimiter.CommonPrefixes ?? []).map((item) => item.Prefix)).toEqual([]);
    expect((otherDelimiter.Contents ?? []).map((item) => item.Key)).toEqual(['c/1', 'd/kept', 'e/only', 'f.txt']);
  });

  it('pages across deleted prefixes with max-keys 1 without losing or repeating an entry', async () => {
    const seen: string[] = [];
    let token: string | undefined;
    for (let page = 0; page < 10; page++) {
      const answer = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Delimiter: '/', MaxKeys: 1, ...(token ? { ContinuationToken: token } : {}) }));
      seen.push(...(answer.CommonPrefixes ?? []).map((item) => item.Prefix!), ...(answer.Contents ?? []).map((item) => item.Key!));
      expect(answer.KeyCount).toBe(1);
      if (!answer.IsTruncated) break;
      token = answer.NextContinuationToken;
    }
    expect(seen).toEqual(['c/', 'd/', 'e/', 'f.txt']);
    const v1Seen: string[] = [];
    let marker: string | undefined;
    for (let page = 0; page < 10; page++) {
      const answer = await s3.send(new ListObjectsCommand({ Bucket: bucket, Delimiter: '/', MaxKeys: 2, ...(marker ? { Marker: marker } : {}) }));
      v1Seen.push(...(answer.CommonPrefixes ?? []).map((item) => item.Prefix!), ...(answer.Contents ?? []).map((item) => item.Key!));
      if (!answer.IsTruncated) break;
      marker = answer.NextMarker;
    }
    expect(v1Seen.sort()).toEqual(['c/', 'd/', 'e/', 'f.txt']);
  });

  it('still lists every prefix in ListObjectVersions, where the markers are shown', async () => {
    const versions = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket, Delimiter: '/' }));
    expect((versions.CommonPrefixes ?? []).map((item) => item.Prefix)).toEqual(['a/', 'b/', 'c/', 'd/', 'e/', 'g/']);
    const under = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: 'b/' }));
    expect((under.DeleteMarkers ?? []).map((item) => item.Key)).toEqual(['b/x', 'b/y']);
  });
});
