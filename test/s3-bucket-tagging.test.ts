/**
 * Bucket tagging through the AWS SDK: put, get, replace and delete a tag set; an empty set and
 * none at all answer NoSuchTagSet; every invalid set (too many, duplicate or reserved keys, keys
 * and values too long, malformed XML) is a named error and leaves the stored set as it was.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, DeleteBucketTaggingCommand, GetBucketTaggingCommand, PutBucketTaggingCommand, type S3Client, type Tag } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { signedRequest } from './helpers/raw-s3.js';
import { sdkErrorOf } from './helpers/codes.js';

let root: string;
let server: SvcProcess;
let s3: S3Client;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-bucket-tags-'));
  server = await startSvc({ args: [join(root, 'd{1...4}')] });
  s3 = s3ClientFor(server.url);
  await s3.send(new CreateBucketCommand({ Bucket: 'tagged' }));
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

const tagsNow = async (): Promise<Tag[] | string> => s3.send(new GetBucketTaggingCommand({ Bucket: 'tagged' })).then((answer) => answer.TagSet ?? [], (error: { name: string }) => error.name);

describe('bucket tagging', () => {
  it('puts, gets in the order given, replaces and deletes', async () => {
    expect(await tagsNow()).toBe('NoSuchTagSet');
    await s3.send(new PutBucketTaggingCommand({ Bucket: 'tagged', Tagging: { TagSet: [{ Key: 'team', Value: 'blue' }, { Key: 'cost-centre', Value: '' }] } }));
    expect(await tagsNow()).toEqual([{ Key: 'team', Value: 'blue' }, { Key: 'cost-centre', Value: '' }]);
    await s3.send(new PutBucketTaggingCommand({ Bucket: 'tagged', Tagging: { TagSet: [{ Key: 'env', Value: 'prod' }] } }));
    expect(await tagsNow()).toEqual([{ Key: 'env', Value: 'prod' }]);
    await s3.send(new DeleteBucketTaggingCommand({ Bucket: 'tagged' }));
    expect(await tagsNow()).toBe('NoSuchTagSet');
    await s3.send(new PutBucketTaggingCommand({ Bucket: 'tagged', Tagging: { TagSet: [{ Key: 'a', Value: 'b' }] } }));
    await s3.send(new PutBucketTaggingCommand({ Bucket: 'tagged', Tagging: { TagSet: [] } }));
    expect(await tagsNow()).toBe('NoSuchTagSet');
  });

  it('a bucket that does not exist is NoSuchBucket', async () => {
    expect(await sdkErrorOf(s3.send(new GetBucketTaggingCommand({ Bucket: 'no-such-bucket' })))).toEqual({ name: 'NoSuchBucket', status: 404 });
    expect(await sdkErrorOf(s3.send(new PutBucketTaggingCommand({ Bucket: 'no-such-bucket', Tagging: { TagSet: [{ Key: 'a', Value: 'b' }] } })))).toEqual({ name: 'NoSuchBucket', status: 404 });
  });

  it.each([
    ['51 tags', Array.from({ length: 51 }, (_, i) => ({ Key: `k${i}`, Value: 'v' }))],
    ['a duplicate key', [{ Key: 'a', Value: '1' }, { Key: 'a', Value: '2' }]],
    ['a reserved aws: key', [{ Key: 'aws:cloudformation', Value: 'x' }]],
    ['an empty key', [{ Key: '', Value: 'x' }]],
    ['a key of 129 characters', [{ Key: 'k'.repeat(129), Value: 'x' }]],
    ['a value of 257 characters', [{ Key: 'k', Value: 'v'.repeat(257) }]],
  ])('refuses %s with InvalidTag and keeps the stored set', async (_what, tagSet) => {
    await s3.send(new PutBucketTaggingCommand({ Bucket: 'tagged', Tagging: { TagSet: [{ Key: 'kept', Value: 'yes' }] } }));
    expect(await sdkErrorOf(s3.send(new PutBucketTaggingCommand({ Bucket: 'tagged', Tagging: { TagSet: tagSet } })))).toEqual({ name: 'InvalidTag', status: 400 });
    expect(await tagsNow()).toEqual([{ Key: 'kept', Value: 'yes' }]);
  });

  it('accepts exactly 50 tags', async () => {
    const fifty = Array.from({ length: 50 }, (_, i) => ({ Key: `k${i}`, Value: `v${i}` }));
    await s3.send(new PutBucketTaggingCommand({ Bucket: 'tagged', Tagging: { TagSet: fifty } }));
    expect(await tagsNow()).toEqual(fifty);
  });

  it('malformed XML is MalformedXML and keeps the stored set', async () => {
    await s3.send(new PutBucketTaggingCommand({ Bucket: 'tagged', Tagging: { TagSet: [{ Key: 'kept', Value: 'yes' }] } }));
    for (const body of ['<Tagging><TagSet><Tag><Value>x</Value></Tag></TagSet></Tagging>', '<Tagging><TagSet>', 'not xml', '<Other/>']) {
      const answer = await signedRequest(server.url, { method: 'PUT', path: '/tagged', query: { tagging: '' }, body });
      expect(answer.status, body).toBe(400);
      expect(answer.body, body).toContain('<Code>MalformedXML</Code>');
    }
    expect(await tagsNow()).toEqual([{ Key: 'kept', Value: 'yes' }]);
  });
});
