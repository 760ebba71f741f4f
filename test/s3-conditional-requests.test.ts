/**
 * Conditional requests as the AWS S3 API reference and user guide give them, through the AWS SDK
 * and boto3: conditional deletes (If-Match with an ETag or `*`, x-amz-if-match-last-modified-time,
 * x-amz-if-match-size; the ETag element of DeleteObjects entries), conditional writes on PUT and
 * CompleteMultipartUpload, the x-amz-copy-source-if-* conditions of CopyObject, and the ETag of a
 * 304. Every refusal leaves the object as it was.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CompleteMultipartUploadCommand, CopyObjectCommand, CreateBucketCommand, CreateMultipartUploadCommand, DeleteObjectCommand, DeleteObjectsCommand,
  GetObjectCommand, HeadObjectCommand, PutBucketVersioningCommand, PutObjectCommand, S3Client, UploadPartCommand,
} from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { signedRequest } from './helpers/raw-s3.js';
import { sdkErrorOf } from './helpers/codes.js';
import { admin } from './helpers/admin-client.js';

let root: string;
let server: SvcProcess;
let s3: S3Client;
const bucket = 'cond';

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-conditional-'));
  server = await startSvc({ args: [join(root, 'd{1...4}')] });
  s3 = s3ClientFor(server.url);
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  await s3.send(new CreateBucketCommand({ Bucket: 'cond-versioned' }));
  await s3.send(new PutBucketVersioningCommand({ Bucket: 'cond-versioned', VersioningConfiguration: { Status: 'Enabled' } }));
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

const exists = (key: string, where = bucket): Promise<boolean> => s3.send(new HeadObjectCommand({ Bucket: where, Key: key })).then(() => true, () => false);

describe('conditional deletes', () => {
  it('If-Match: the current ETag or * deletes (204); another ETag is 412 and keeps it; no object is 404 NoSuchKey', async () => {
    const put = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'd1', Body: 'one' }));
    expect(await sdkErrorOf(s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'd1', IfMatch: '"0123456789abcdef0123456789abcdef"' })))).toEqual({ name: 'PreconditionFailed', status: 412 });
    expect(await exists('d1')).toBe(true);
    const deleted = await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'd1', IfMatch: put.ETag }));
    expect(deleted.$metadata.httpStatusCode).toBe(204);
    expect(await exists('d1')).toBe(false);
    expect(await sdkErrorOf(s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'd1', IfMatch: '*' })))).toEqual({ name: 'NoSuchKey', status: 404 });
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'd2', Body: 'two' }));
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'd2', IfMatch: '*' }));
    expect(await exists('d2')).toBe(false);
  });

  it('a delete marker as current version is no object: If-Match is 404 and adds no marker', async () => {
    const where = 'cond-versioned';
    await s3.send(new PutObjectCommand({ Bucket: where, Key: 'm', Body: 'v1' }));
    const marker = await s3.send(new DeleteObjectCommand({ Bucket: where, Key: 'm', IfMatch: '*' }));
    expect(marker.DeleteMarker).toBe(true);
    expect(await sdkErrorOf(s3.send(new DeleteObjectCommand({ Bucket: where, Key: 'm', IfMatch: '*' })))).toEqual({ name: 'NoSuchKey', status: 404 });
  });

  it('x-amz-if-match-size and x-amz-if-match-last-modified-time: a mismatch is 412, a match deletes, no object is 204', async () => {
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'd3', Body: 'three' }));
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'd3' }));
    expect(await sdkErrorOf(s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'd3', IfMatchSize: 4 })))).toEqual({ name: 'PreconditionFailed', status: 412 });
    expect(await sdkErrorOf(s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'd3', IfMatchLastModifiedTime: new Date(head.LastModified!.getTime() - 5000) })))).toEqual({ name: 'PreconditionFailed', status: 412 });
    expect(await exists('d3')).toBe(true);
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'd3', IfMatchSize: 5, IfMatchLastModifiedTime: head.LastModified }));
    expect(await exists('d3')).toBe(false);
    const absent = await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'd3', IfMatchSize: 5 }));
    expect(absent.$metadata.httpStatusCode).toBe(204);
    const bad = await signedRequest(server.url, { method: 'DELETE', path: `/${bucket}/d3`, headers: { 'x-amz-if-match-size': 'many' } });
    expect([bad.status, /<Code>InvalidArgument<\/Code>/.test(bad.body)]).toEqual([400, true]);
  });

  it('DeleteObjects checks each entry\'s ETag: the matching ones go, the others are PreconditionFailed and stay', async () => {
    const a = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'many/a', Body: 'a' }));
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'many/b', Body: 'b' }));
    const answer = await s3.send(new DeleteObjectsCommand({
      Bucket: bucket,
      Delete: { Objects: [{ Key: 'many/a', ETag: a.ETag }, { Key: 'many/b', ETag: '"ffffffffffffffffffffffffffffffff"' }, { Key: 'many/c', ETag: '*' }] },
    }));
    expect(answer.Deleted!.map((item) => item.Key)).toEqual(['many/a']);
    expect(answer.Errors!.map((item) => [item.Key, item.Code])).toEqual([['many/b', 'PreconditionFailed'], ['many/c', 'NoSuchKey']]);
    expect([await exists('many/a'), await exists('many/b')]).toEqual([false, true]);
  });

  it('a user who may delete but not read is refused a delete on an ETag (403), and the object stays', async () => {
    const iam = '/svc/admin/v4/iam';
    const root = async (method: 'POST', path: string, query: string, body?: unknown): Promise<void> => {
      const answer = await admin(server.url, method, path, query, body === undefined ? {} : { body: JSON.stringify(body) });
      expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(300);
    };
    await root('POST', `${iam}/policy/create`, 'name=delete-only', { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:DeleteObject'], Resource: [`arn:aws:s3:::${bucket}/*`] }] });
    await root('POST', `${iam}/user/add`, '', { accessKey: 'deleter', secretKey: 'deleter-secret-1', policies: ['delete-only'] });
    const deleter = new S3Client({ endpoint: server.url, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'deleter', secretAccessKey: 'deleter-secret-1' } });
    const put = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'guarded', Body: 'g' }));
    expect(await sdkErrorOf(deleter.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'guarded', IfMatch: put.ETag })))).toEqual({ name: 'AccessDenied', status: 403 });
    expect(await exists('guarded')).toBe(true);
    await deleter.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'guarded' }));
    expect(await exists('guarded')).toBe(false);
  });

  it('boto3 deletes on an ETag and is refused on another', () => {
    const script = [
      'import boto3, json, sys',
      "s3 = boto3.client('s3', endpoint_url=sys.argv[1], aws_access_key_id=sys.argv[2], aws_secret_access_key=sys.argv[3], region_name='us-east-1')",
      "etag = s3.put_object(Bucket='cond', Key='py', Body=b'py')['ETag']",
      'try:',
      "    s3.delete_object(Bucket='cond', Key='py', IfMatch='\"00000000000000000000000000000000\"')",
      "    refused = 'none'",
      'except s3.exceptions.ClientError as error:',
      "    refused = error.response['Error']['Code']",
      "status = s3.delete_object(Bucket='cond', Key='py', IfMatch=etag)['ResponseMetadata']['HTTPStatusCode']",
      'print(json.dumps([refused, status]))',
    ].join('\n');
    const output = execFileSync('python3', ['-c', script, server.url, testCredentials.accessKeyId, testCredentials.secretAccessKey], { encoding: 'utf8' });
    expect(JSON.parse(output)).toEqual(['PreconditionFailed', 204]);
  });
});

describe('conditional writes', () => {
  it('PUT If-None-Match: * refuses an existing key with 412; If-Match needs the current ETag (412) and an object (404)', async () => {
    const first = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'w', Body: 'first', IfNoneMatch: '*' }));
    expect(await sdkErrorOf(s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'w', Body: 'second', IfNoneMatch: '*' })))).toEqual({ name: 'PreconditionFailed', status: 412 });
    expect(await sdkErrorOf(s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'w', Body: 'second', IfMatch: '"ffffffffffffffffffffffffffffffff"' })))).toEqual({ name: 'PreconditionFailed', status: 412 });
    expect(await sdkErrorOf(s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'never-written', Body: 'x', IfMatch: first.ETag })))).toEqual({ name: 'NoSuchKey', status: 404 });
    expect(await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'w' }))).Body!.transformToString()).toBe('first');
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'w', Body: 'second', IfMatch: first.ETag }));
    expect(await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'w' }))).Body!.transformToString()).toBe('second');
  });

  it('CompleteMultipartUpload If-None-Match: * is 412 when the key was written meanwhile, and the upload can still complete without it', async () => {
    const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'mp' }));
    const part = await s3.send(new UploadPartCommand({ Bucket: bucket, Key: 'mp', UploadId: created.UploadId, PartNumber: 1, Body: 'only part' }));
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'mp', Body: 'meanwhile' }));
    const parts = { Parts: [{ PartNumber: 1, ETag: part.ETag }] };
    expect(await sdkErrorOf(s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'mp', UploadId: created.UploadId, MultipartUpload: parts, IfNoneMatch: '*' })))).toEqual({ name: 'PreconditionFailed', status: 412 });
    expect(await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'mp' }))).Body!.transformToString()).toBe('meanwhile');
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'mp', UploadId: created.UploadId, MultipartUpload: parts }));
    expect(await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'mp' }))).Body!.transformToString()).toBe('only part');
  });
});

describe('CopyObject source conditions and 304', () => {
  it('x-amz-copy-source-if-match / -if-none-match / -if-modified-since / -if-unmodified-since: 412 when they fail, nothing copied', async () => {
    const source = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'src', Body: 'source' }));
    const modified = (await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'src' }))).LastModified!;
    const before = new Date(modified.getTime() - 60_000);
    const after = new Date(modified.getTime() + 60_000);
    const copy = (conditions: Record<string, unknown>): Promise<{ name?: string; status?: number }> => sdkErrorOf(s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'dst', CopySource: `${bucket}/src`, ...conditions })));
    expect(await copy({ CopySourceIfMatch: '"ffffffffffffffffffffffffffffffff"' })).toEqual({ name: 'PreconditionFailed', status: 412 });
    expect(await copy({ CopySourceIfNoneMatch: source.ETag })).toEqual({ name: 'PreconditionFailed', status: 412 });
    expect(await copy({ CopySourceIfModifiedSince: after })).toEqual({ name: 'PreconditionFailed', status: 412 });
    expect(await copy({ CopySourceIfUnmodifiedSince: before })).toEqual({ name: 'PreconditionFailed', status: 412 });
    expect(await exists('dst')).toBe(false);
    // AWS: If-Match true and If-Unmodified-Since false copy; If-None-Match false and If-Modified-Since true refuse.
    expect(await copy({ CopySourceIfMatch: source.ETag, CopySourceIfUnmodifiedSince: before })).toEqual({});
    expect(await copy({ CopySourceIfNoneMatch: source.ETag, CopySourceIfModifiedSince: before })).toEqual({ name: 'PreconditionFailed', status: 412 });
    expect(await copy({ CopySourceIfNoneMatch: '"ffffffffffffffffffffffffffffffff"', CopySourceIfModifiedSince: before })).toEqual({});
    expect(await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'dst' }))).Body!.transformToString()).toBe('source');
  });

  it('a 304 to GET and HEAD carries the ETag and Last-Modified', async () => {
    const put = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'cached', Body: 'c' }));
    for (const method of ['GET', 'HEAD']) {
      const answer = await signedRequest(server.url, { method, path: `/${bucket}/cached`, headers: { 'if-none-match': put.ETag! } });
      expect([answer.status, answer.headers.etag, typeof answer.headers['last-modified']], method).toEqual([304, put.ETag, 'string']);
    }
  });
});
