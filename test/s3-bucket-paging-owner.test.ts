/**
 * Bucket-level answers as the AWS S3 API reference gives them, through the AWS SDK and boto3:
 * ListBuckets paging (max-buckets, continuation-token, prefix, bucket-region), the expected
 * bucket owner on bucket and object operations (403 AccessDenied, nothing changed), re-creating
 * one's own bucket in us-east-1 (200), the delete marker of a suspended bucket, and keys with
 * control characters listed without encoding-type.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CopyObjectCommand, CreateBucketCommand, DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, ListBucketsCommand, ListObjectsV2Command,
  PutBucketVersioningCommand, PutObjectCommand, type S3Client,
} from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { signedOnSocket, signedRequest } from './helpers/raw-s3.js';
import { sdkErrorOf } from './helpers/codes.js';
import { ownerAccountId } from '../src/api/s3/expected-owner.js';

let root: string;
let server: SvcProcess;
let s3: S3Client;
const names = ['page-a1', 'page-a2', 'page-b1', 'page-b2', 'page-c1'];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-bucket-paging-'));
  server = await startSvc({ args: [join(root, 'd{1...4}')] });
  s3 = s3ClientFor(server.url);
  for (const name of names) await s3.send(new CreateBucketCommand({ Bucket: name }));
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

describe('ListBuckets paging', () => {
  it('pages with max-buckets and the continuation token, every bucket once, in name order', async () => {
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await s3.send(new ListBucketsCommand({ MaxBuckets: 2, Prefix: 'page-', ...(token ? { ContinuationToken: token } : {}) }));
      expect(page.Buckets!.length).toBeLessThanOrEqual(2);
      expect(page.Prefix).toBe('page-');
      for (const bucket of page.Buckets!) expect(bucket.BucketRegion).toBe('us-east-1');
      seen.push(...page.Buckets!.map((bucket) => bucket.Name!));
      token = page.ContinuationToken;
      pages += 1;
    } while (token !== undefined);
    expect(seen).toEqual(names);
    expect(pages).toBe(3);
  });

  it('filters by prefix and by bucket region; without max-buckets every bucket and no token', async () => {
    const b = await s3.send(new ListBucketsCommand({ Prefix: 'page-b' }));
    expect(b.Buckets!.map((bucket) => bucket.Name)).toEqual(['page-b1', 'page-b2']);
    expect(b.ContinuationToken).toBeUndefined();
    const here = await s3.send(new ListBucketsCommand({ BucketRegion: 'us-east-1' }));
    expect(here.Buckets!.map((bucket) => bucket.Name)).toEqual(names);
    const elsewhere = await s3.send(new ListBucketsCommand({ BucketRegion: 'eu-west-1' }));
    expect(elsewhere.Buckets ?? []).toEqual([]);
  });

  it.each([['0'], ['10001'], ['-1'], ['many']])('max-buckets=%s is 400 InvalidArgument', async (value) => {
    const answer = await signedRequest(server.url, { method: 'GET', path: '/', query: { 'max-buckets': value } });
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('<Code>InvalidArgument</Code>');
  });

  it('a continuation token it did not give is 400 InvalidArgument', async () => {
    const answer = await signedRequest(server.url, { method: 'GET', path: '/', query: { 'max-buckets': '1', 'continuation-token': '!!not-a-token' } });
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('<Code>InvalidArgument</Code>');
  });

  it('boto3 pages the same buckets', () => {
    const script = [
      'import boto3, json, sys',
      "s3 = boto3.client('s3', endpoint_url=sys.argv[1], aws_access_key_id=sys.argv[2], aws_secret_access_key=sys.argv[3], region_name='us-east-1')",
      'names, token = [], None',
      'while True:',
      "    answer = s3.list_buckets(MaxBuckets=3, Prefix='page-', **({'ContinuationToken': token} if token else {}))",
      "    names += [b['Name'] for b in answer['Buckets']]",
      "    token = answer.get('ContinuationToken')",
      '    if not token: break',
      'print(json.dumps(names))',
    ].join('\n');
    const output = execFileSync('python3', ['-c', script, server.url, testCredentials.accessKeyId, testCredentials.secretAccessKey], { encoding: 'utf8' });
    expect(JSON.parse(output)).toEqual(names);
  });
});

describe('x-amz-expected-bucket-owner', () => {
  it('the owner account id is accepted on bucket and object operations', async () => {
    await s3.send(new HeadBucketCommand({ Bucket: 'page-a1', ExpectedBucketOwner: ownerAccountId }));
    await s3.send(new PutObjectCommand({ Bucket: 'page-a1', Key: 'owned', Body: 'x', ExpectedBucketOwner: ownerAccountId }));
    await s3.send(new CopyObjectCommand({ Bucket: 'page-a1', Key: 'copied', CopySource: 'page-a1/owned', ExpectedBucketOwner: ownerAccountId, ExpectedSourceBucketOwner: ownerAccountId }));
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'page-a1', ExpectedBucketOwner: ownerAccountId }));
    expect(listed.Contents!.map((item) => item.Key)).toEqual(['copied', 'owned']);
  });

  it('another account is 403 AccessDenied and changes nothing', async () => {
    const other = '111122223333';
    expect((await sdkErrorOf(s3.send(new HeadBucketCommand({ Bucket: 'page-a1', ExpectedBucketOwner: other })))).status).toBe(403);
    expect(await sdkErrorOf(s3.send(new PutObjectCommand({ Bucket: 'page-a1', Key: 'refused', Body: 'x', ExpectedBucketOwner: other })))).toEqual({ name: 'AccessDenied', status: 403 });
    expect(await sdkErrorOf(s3.send(new GetObjectCommand({ Bucket: 'page-a1', Key: 'owned', ExpectedBucketOwner: other })))).toEqual({ name: 'AccessDenied', status: 403 });
    expect(await sdkErrorOf(s3.send(new DeleteObjectCommand({ Bucket: 'page-a1', Key: 'owned', ExpectedBucketOwner: other })))).toEqual({ name: 'AccessDenied', status: 403 });
    expect(await sdkErrorOf(s3.send(new CopyObjectCommand({ Bucket: 'page-a1', Key: 'refused', CopySource: 'page-a1/owned', ExpectedSourceBucketOwner: other })))).toEqual({ name: 'AccessDenied', status: 403 });
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'page-a1' }));
    expect(listed.Contents!.map((item) => item.Key)).toEqual(['copied', 'owned']);
  });
});

describe('smaller bucket answers', () => {
  it('re-creating a bucket one owns in us-east-1 answers 200 and keeps its objects', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'page-c1', Key: 'kept', Body: 'k' }));
    const again = await s3.send(new CreateBucketCommand({ Bucket: 'page-c1' }));
    expect(again.$metadata.httpStatusCode).toBe(200);
    const body = await (await s3.send(new GetObjectCommand({ Bucket: 'page-c1', Key: 'kept' }))).Body!.transformToString();
    expect(body).toBe('k');
  });

  it('a delete in a suspended bucket names its null delete marker; in an unversioned bucket no marker', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'suspended' }));
    await s3.send(new PutBucketVersioningCommand({ Bucket: 'suspended', VersioningConfiguration: { Status: 'Suspended' } }));
    await s3.send(new PutObjectCommand({ Bucket: 'suspended', Key: 'gone', Body: 'g' }));
    const deleted = await signedRequest(server.url, { method: 'DELETE', path: '/suspended/gone' });
    expect([deleted.status, deleted.headers['x-amz-delete-marker'], deleted.headers['x-amz-version-id']]).toEqual([204, 'true', 'null']);
    await s3.send(new PutObjectCommand({ Bucket: 'page-b1', Key: 'gone', Body: 'g' }));
    const plain = await signedRequest(server.url, { method: 'DELETE', path: '/page-b1/gone' });
    expect([plain.status, plain.headers['x-amz-delete-marker'], plain.headers['x-amz-version-id']]).toEqual([204, undefined, undefined]);
  });

  it('a PUT of unknown length (Transfer-Encoding: chunked, no Content-Length) is 411 MissingContentLength and stores nothing', async () => {
    const answer = await signedOnSocket(server.url, 'PUT', '/page-b1/chunked', { 'transfer-encoding': 'chunked' }, Buffer.from('5\r\nhello\r\n0\r\n\r\n'));
    expect(answer).toMatch(/^HTTP\/1.1 411/);
    expect(answer).toContain('<Code>MissingContentLength</Code>');
    expect(await sdkErrorOf(s3.send(new GetObjectCommand({ Bucket: 'page-b1', Key: 'chunked' })))).toMatchObject({ status: 404 });
  });

  it('keys with control characters are listed raw without encoding-type (as character references), and read back by the SDK', async () => {
    const keys = ['line\nbreak', 'tab\tkey', 'bell\u0007key', 'cr\rkey'];
    for (const key of keys) await s3.send(new PutObjectCommand({ Bucket: 'page-b2', Key: key, Body: 'c' }));
    const raw = await signedRequest(server.url, { method: 'GET', path: '/page-b2', query: { 'list-type': '2' } });
    expect(raw.body).toContain('<Key>line&#10;break</Key>');
    expect(raw.body).toContain('<Key>bell&#7;key</Key>');
    expect(raw.body).toContain('<Key>cr&#xD;key</Key>');
    expect(raw.body).not.toContain('%0A');
    const v1 = await signedRequest(server.url, { method: 'GET', path: '/page-b2', query: { prefix: 'line\n' } });
    expect(v1.body).toContain('<Prefix>line&#10;</Prefix>');
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'page-b2', Prefix: 'line' }));
    expect(listed.Contents!.map((item) => item.Key)).toEqual(['line\nbreak']);
  });
});
