/**
 * Behaviours real clients rely on, checked with the AWS SDK (and raw node:http where the SDK
 * cannot send the case): multipart retries, part reads, conditional reads, listing encodings,
 * presigned expiry, Content-Encoding, odd headers, delete markers, ACLs, early answers and the
 * refusal of server-side encryption.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import {
  CompleteMultipartUploadCommand, CopyObjectCommand, CreateBucketCommand, CreateMultipartUploadCommand, DeleteObjectCommand, GetBucketAclCommand,
  GetObjectAclCommand, GetObjectAttributesCommand, GetBucketCorsCommand, PutBucketCorsCommand, DeleteBucketCorsCommand, GetObjectCommand, GetObjectTaggingCommand, PutObjectTaggingCommand, DeleteObjectTaggingCommand, HeadObjectCommand, ListObjectsV2Command, PutBucketAclCommand, PutBucketVersioningCommand,
  PutObjectAclCommand, PutObjectCommand, UploadPartCommand, type S3Client,
} from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { dateSignedRequest, onSocket, presignedUrl, send, signedOnSocket, signedRequest } from './helpers/raw-s3.js';

let root: string;
let server: SvcProcess;
let s3: S3Client;
const MiB = 1024 * 1024;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-compat-'));
  server = await startSvc({ args: [join(root, 'd{1...4}')] });
  s3 = s3ClientFor(server.url);
  for (const bucket of ['compat', 'versioned']) await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  await s3.send(new PutBucketVersioningCommand({ Bucket: 'versioned', VersioningConfiguration: { Status: 'Enabled' } }));
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

async function failure(promise: Promise<unknown>): Promise<{ name: string; status?: number; headers?: Record<string, string> }> {
  try {
    await promise;
  } catch (error) {
    const typed = error as { name: string; $metadata?: { httpStatusCode?: number }; $response?: { headers?: Record<string, string> } };
    return { name: typed.name, ...(typed.$metadata?.httpStatusCode !== undefined ? { status: typed.$metadata.httpStatusCode } : {}), ...(typed.$response?.headers ? { headers: typed.$response.headers } : {}) };
  }
  return { name: 'no error' };
}

function bytes(size: number, seed: number): Buffer {
  const out = Buffer.alloc(size);
  for (let index = 0; index < size; index += 1) out[index] = (index * 31 + seed * 7) & 0xff;
  return out;
}

async function multipartObject(bucket: string, key: string, sizes: number[]): Promise<{ uploadId: string; parts: { PartNumber: number; ETag: string }[]; body: Buffer }> {
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
  const parts: { PartNumber: number; ETag: string }[] = [];
  const bodies: Buffer[] = [];
  for (const [index, size] of sizes.entries()) {
    const body = bytes(size, index + 1);
    bodies.push(body);
    const { ETag } = await s3.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber: index + 1, Body: body }));
    parts.push({ PartNumber: index + 1, ETag: ETag! });
  }
  return { uploadId: UploadId!, parts, body: Buffer.concat(bodies) };
}

describe('S3 behaviours clients trip on', () => {
  it('without a KMS refuses SSE-S3; SSE-C over plain HTTP; encryption on copy and multipart; and stores nothing', async () => {
    const sse = await failure(s3.send(new PutObjectCommand({ Bucket: 'compat', Key: 'secret', Body: 'clear?', ServerSideEncryption: 'AES256' })));
    expect([sse.name, sse.status]).toEqual(['KMSNotConfigured', 501]);
    const customerKey = Buffer.alloc(32, 7);
    const ssec = { SSECustomerAlgorithm: 'AES256', SSECustomerKey: customerKey.toString('base64'), SSECustomerKeyMD5: createHash('md5').update(customerKey).digest('base64') };
    expect(await failure(s3.send(new PutObjectCommand({ Bucket: 'compat', Key: 'secret', Body: 'clear?', ...ssec })))).toMatchObject({ name: 'InvalidRequest', status: 400 });
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'compat', Key: 'secret' })))).status).toBe(404);
    await s3.send(new PutObjectCommand({ Bucket: 'compat', Key: 'plain', Body: 'plain text' }));
    expect((await failure(s3.send(new GetObjectCommand({ Bucket: 'compat', Key: 'plain', ...ssec })))).name).toBe('InvalidRequest');
    expect((await failure(s3.send(new CopyObjectCommand({ Bucket: 'compat', Key: 'copy', CopySource: 'compat/plain', ServerSideEncryption: 'aws:kms' })))).name).toBe('KMSNotConfigured');
    expect((await failure(s3.send(new CreateMultipartUploadCommand({ Bucket: 'compat', Key: 'mp', ServerSideEncryption: 'AES256' })))).name).toBe('KMSNotConfigured');
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'compat', Key: 'copy' })))).status).toBe(404);
  });

  it('CompleteMultipartUpload sent again with the same parts answers the same ETag', async () => {
    const { uploadId, parts } = await multipartObject('compat', 'retried', [5 * MiB, 1000]);
    const complete = () => s3.send(new CompleteMultipartUploadCommand({ Bucket: 'compat', Key: 'retried', UploadId: uploadId, MultipartUpload: { Parts: parts } }));
    const first = await complete();
    const again = await complete();
    expect(again.ETag).toBe(first.ETag);
    // Twins sent at once (the second waits for the first's lock): both answer the same ETag.
    const twin = await multipartObject('compat', 'twins', [5 * MiB, 10]);
    const completeTwin = () => s3.send(new CompleteMultipartUploadCommand({ Bucket: 'compat', Key: 'twins', UploadId: twin.uploadId, MultipartUpload: { Parts: twin.parts } }));
    const [one, two] = await Promise.all([completeTwin(), completeTwin()]);
    expect(two.ETag).toBe(one.ETag);
    const other = await failure(s3.send(new CompleteMultipartUploadCommand({ Bucket: 'compat', Key: 'retried', UploadId: uploadId, MultipartUpload: { Parts: parts.slice(0, 1) } })));
    expect(other.name).toBe('NoSuchUpload');
  });

  it('GET and HEAD with partNumber return that part and the parts count', async () => {
    const { uploadId, parts, body } = await multipartObject('compat', 'parted', [5 * MiB, 5 * MiB, 777]);
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'compat', Key: 'parted', UploadId: uploadId, MultipartUpload: { Parts: parts } }));
    const second = await s3.send(new GetObjectCommand({ Bucket: 'compat', Key: 'parted', PartNumber: 2 }));
    expect([second.ContentLength, second.ContentRange, second.PartsCount]).toEqual([5 * MiB, `bytes ${5 * MiB}-${10 * MiB - 1}/${body.length}`, 3]);
    expect(Buffer.from(await second.Body!.transformToByteArray()).equals(body.subarray(5 * MiB, 10 * MiB))).toBe(true);
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'compat', Key: 'parted', PartNumber: 3 }));
    expect([head.ContentLength, head.PartsCount, head.$metadata.httpStatusCode]).toEqual([777, 3, 206]);
    expect((await failure(s3.send(new GetObjectCommand({ Bucket: 'compat', Key: 'parted', PartNumber: 4 })))).status).toBe(416);
    await s3.send(new PutObjectCommand({ Bucket: 'compat', Key: 'single', Body: 'one piece' }));
    const whole = await s3.send(new GetObjectCommand({ Bucket: 'compat', Key: 'single', PartNumber: 1 }));
    expect(await whole.Body!.transformToString()).toBe('one piece');
    const beyond = await failure(s3.send(new GetObjectCommand({ Bucket: 'compat', Key: 'single', PartNumber: 2 })));
    expect([beyond.name, beyond.status]).toEqual(['InvalidPartNumber', 416]);
  });

  it('304 carries ETag and Last-Modified; conditions follow RFC 9110 precedence', async () => {
    const put = await s3.send(new PutObjectCommand({ Bucket: 'compat', Key: 'cond', Body: 'conditional' }));
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'compat', Key: 'cond' }));
    const notModified = await signedRequest(server.url, { method: 'GET', path: '/compat/cond', headers: { 'if-none-match': put.ETag! } });
    expect([notModified.status, notModified.headers.etag, notModified.headers['last-modified']]).toEqual([304, put.ETag, head.LastModified!.toUTCString()]);
    const past = new Date(head.LastModified!.getTime() - 3_600_000);
    const future = new Date(head.LastModified!.getTime() + 3_600_000);
    // If-Match true wins over If-Unmodified-Since false.
    expect((await s3.send(new GetObjectCommand({ Bucket: 'compat', Key: 'cond', IfMatch: put.ETag, IfUnmodifiedSince: past }))).$metadata.httpStatusCode).toBe(200);
    // If-None-Match false (matches) wins over If-Modified-Since true: 304.
    expect((await failure(s3.send(new GetObjectCommand({ Bucket: 'compat', Key: 'cond', IfNoneMatch: put.ETag, IfModifiedSince: past })))).status).toBe(304);
    // If-None-Match true (differs) wins over If-Modified-Since false: 200.
    expect((await s3.send(new GetObjectCommand({ Bucket: 'compat', Key: 'cond', IfNoneMatch: '"other"', IfModifiedSince: future }))).$metadata.httpStatusCode).toBe(200);
    // If-Match false fails first, whatever else is sent.
    expect((await failure(s3.send(new GetObjectCommand({ Bucket: 'compat', Key: 'cond', IfMatch: '"other"', IfNoneMatch: '"other"' })))).status).toBe(412);
    expect((await failure(s3.send(new GetObjectCommand({ Bucket: 'compat', Key: 'cond', IfUnmodifiedSince: past })))).status).toBe(412);
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'compat', Key: 'cond', IfModifiedSince: future })))).status).toBe(304);
  });

  it('an empty continuation-token is no token, echoed back empty', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'compat', Key: 'list/a', Body: 'a' }));
    const response = await signedRequest(server.url, { method: 'GET', path: '/compat', query: { 'list-type': '2', 'continuation-token': '', prefix: 'list/' } });
    expect(response.status).toBe(200);
    expect(response.body).toContain('<ContinuationToken></ContinuationToken>');
    expect(response.body).toContain('<Key>list/a</Key>');
  });

  it('encoding-type=url encodes keys, prefixes and delimiters once; without it a prefix comes back as sent', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'compat', Key: 'enc/a b+c\nd', Body: 'x' }));
    const encoded = await signedRequest(server.url, { method: 'GET', path: '/compat', query: { 'list-type': '2', prefix: 'enc/', 'encoding-type': 'url', 'start-after': 'enc/ ' } });
    expect(encoded.body).toContain('<Key>enc/a%20b%2Bc%0Ad</Key>');
    expect(encoded.body).toContain('<StartAfter>enc/%20</StartAfter>');
    expect(encoded.body).toContain('<EncodingType>url</EncodingType>');
    // The AWS SDK for JavaScript reads a whitespace-only element as empty, so this is checked on the wire.
    const raw = await signedRequest(server.url, { method: 'GET', path: '/compat', query: { 'list-type': '2', prefix: '\n\r' } });
    expect(raw.body).toContain('<Prefix>&#10;&#xD;</Prefix>');
    const plain = await s3.send(new ListObjectsV2Command({ Bucket: 'compat', Prefix: 'enc/' }));
    expect(plain.Contents?.map((item) => item.Key)).toEqual(['enc/a b+c\nd']);
  });

  it('presigned URLs: expiry outside 1..604800 is AuthorizationQueryParametersError; a missing key is NoSuchKey', async () => {
    for (const expires of [0, 604801]) {
      const response = await fetch(await presignedUrl(server.url, 'GET', '/compat/plain', expires));
      expect(response.status, String(expires)).toBe(400);
      expect(await response.text()).toContain('<Code>AuthorizationQueryParametersError</Code>');
    }
    expect((await fetch(await presignedUrl(server.url, 'GET', '/compat/plain', 604800))).status).toBe(200);
    const missing = await fetch(await presignedUrl(server.url, 'GET', '/compat/no-such-key', 60));
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain('<Code>NoSuchKey</Code>');
  });

  it('Content-Encoding: aws-chunked is removed, anything else is kept exactly', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'compat', Key: 'encoded', Body: 'zz', ContentEncoding: 'deflate, gzip' }));
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'compat', Key: 'encoded' }))).ContentEncoding).toBe('deflate, gzip');
    const chunked = await signedRequest(server.url, { method: 'PUT', path: '/compat/chunked-enc', headers: { 'content-encoding': 'aws-chunked, gzip' }, body: 'zz' });
    expect(chunked.status).toBe(200);
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'compat', Key: 'chunked-enc' }))).ContentEncoding).toBe('gzip');
  });

  it('odd but valid requests: Expect other than 100-continue, empty Content-Type, Date instead of X-Amz-Date; no Content-Length is 411', async () => {
    const expect417 = await signedRequest(server.url, { method: 'PUT', path: '/compat/expect', headers: { expect: 'something-else', 'content-length': '1' }, body: 'e' });
    expect(expect417.status).toBe(200);
    const empty = await signedRequest(server.url, { method: 'PUT', path: '/compat/empty-type', headers: { 'content-type': '' }, body: 'typed' });
    expect(empty.status).toBe(200);
    const typed = await signedRequest(server.url, { method: 'HEAD', path: '/compat/empty-type' });
    expect(typed.headers['content-type']).toBe('');
    const dated = await dateSignedRequest(server.url, 'GET', '/compat/empty-type');
    expect([dated.status, dated.body]).toEqual([200, 'typed']);
    const noLength = await signedOnSocket(server.url, 'PUT', '/compat/no-length', {}, Buffer.alloc(0));
    expect(noLength).toMatch(/^HTTP\/1.1 411/);
    expect(noLength).toContain('<Code>MissingContentLength</Code>');
  });

  it('delete markers: 404 with the marker headers, 405 by version id, DELETE says what it made or removed', async () => {
    const put = await s3.send(new PutObjectCommand({ Bucket: 'versioned', Key: 'dm', Body: 'v1' }));
    const deleted = await s3.send(new DeleteObjectCommand({ Bucket: 'versioned', Key: 'dm' }));
    expect(deleted.DeleteMarker).toBe(true);
    expect(deleted.VersionId).toBeTruthy();
    for (const method of ['GET', 'HEAD']) {
      const current = await signedRequest(server.url, { method, path: '/versioned/dm' });
      expect([current.status, current.headers['x-amz-delete-marker'], current.headers['x-amz-version-id']], method).toEqual([404, 'true', deleted.VersionId]);
      const byId = await signedRequest(server.url, { method, path: '/versioned/dm', query: { versionId: deleted.VersionId! } });
      expect([byId.status, byId.headers['x-amz-delete-marker'], byId.headers['x-amz-version-id']], method).toEqual([405, 'true', deleted.VersionId]);
    }
    const removed = await s3.send(new DeleteObjectCommand({ Bucket: 'versioned', Key: 'dm', VersionId: deleted.VersionId }));
    expect([removed.DeleteMarker, removed.VersionId]).toEqual([true, deleted.VersionId]);
    const removedData = await s3.send(new DeleteObjectCommand({ Bucket: 'versioned', Key: 'dm', VersionId: put.VersionId }));
    expect([removedData.DeleteMarker ?? false, removedData.VersionId]).toEqual([false, put.VersionId]);
  });

  it('ACLs: the owner has FULL_CONTROL; private is accepted, grants to others are refused', async () => {
    const bucketAcl = await s3.send(new GetBucketAclCommand({ Bucket: 'compat' }));
    expect(bucketAcl.Grants?.map((grant) => grant.Permission)).toEqual(['FULL_CONTROL']);
    expect(bucketAcl.Owner?.ID).toBeTruthy();
    const objectAcl = await s3.send(new GetObjectAclCommand({ Bucket: 'compat', Key: 'plain' }));
    expect(objectAcl.Grants?.[0]?.Grantee?.ID).toBe(objectAcl.Owner?.ID);
    await s3.send(new PutBucketAclCommand({ Bucket: 'compat', ACL: 'private' }));
    await s3.send(new PutObjectAclCommand({ Bucket: 'compat', Key: 'plain', ACL: 'private' }));
    await s3.send(new PutObjectAclCommand({ Bucket: 'compat', Key: 'plain', AccessControlPolicy: { Owner: objectAcl.Owner, Grants: objectAcl.Grants } }));
    const publicRead = await failure(s3.send(new PutObjectAclCommand({ Bucket: 'compat', Key: 'plain', ACL: 'public-read' })));
    expect([publicRead.name, publicRead.status]).toEqual(['AccessControlListNotSupported', 400]);
    const grant = await failure(s3.send(new PutBucketAclCommand({ Bucket: 'compat', GrantRead: 'uri="http://acs.amazonaws.com/groups/global/AllUsers"' })));
    expect(grant.name).toBe('AccessControlListNotSupported');
    const body = await failure(s3.send(new PutObjectAclCommand({ Bucket: 'compat', Key: 'plain', AccessControlPolicy: { Owner: objectAcl.Owner, Grants: [{ Grantee: { Type: 'Group', URI: 'http://acs.amazonaws.com/groups/global/AllUsers' }, Permission: 'READ' }] } })));
    expect(body.name).toBe('AccessControlListNotSupported');
    expect((await failure(s3.send(new PutObjectCommand({ Bucket: 'compat', Key: 'public', Body: 'x', ACL: 'public-read' })))).name).toBe('AccessControlListNotSupported');
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'compat', Key: 'public' })))).status).toBe(404);
    await s3.send(new PutObjectCommand({ Bucket: 'compat', Key: 'private', Body: 'x', ACL: 'private' }));
  });

  it('a request refused before its body is read still ends the exchange at once', async () => {
    const url = new URL(server.url);
    const body = Buffer.alloc(256 * 1024, 1);
    for (const [path, headers] of [
      ['/compat/refused', { authorization: 'AWS4-HMAC-SHA256 Credential=nobody/20200101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=' + '0'.repeat(64) }],
      ['/compat', { 'content-type': 'multipart/form-data; boundary=xyz' }],
    ] as const) {
      const started = Date.now();
      const answer = await onSocket(server.url, `${path === '/compat' ? 'POST' : 'PUT'} ${path}`, { host: url.host, 'content-length': String(body.length), ...headers }, body);
      expect(answer, path).toMatch(/^HTTP\/1.1 4\d\d/);
      expect(Date.now() - started, path).toBeLessThan(5_000);
    }
  });
});

describe('conditional writes', () => {
  it('PutObject with If-None-Match: * and If-Match: 412 when the condition fails, nothing changed', async () => {
    const first = await s3.send(new PutObjectCommand({ Bucket: 'compat', Key: 'cw', Body: 'first', IfNoneMatch: '*' }));
    const taken = await failure(s3.send(new PutObjectCommand({ Bucket: 'compat', Key: 'cw', Body: 'second', IfNoneMatch: '*' })));
    expect([taken.name, taken.status]).toEqual(['PreconditionFailed', 412]);
    // Refused before the body is read: a large body gets its answer without being stored first.
    const early = await signedOnSocket(server.url, 'PUT', '/compat/cw', { 'if-none-match': '*', 'content-length': String(64 * MiB) }, Buffer.alloc(64 * 1024), { headersOnly: true });
    expect(early).toMatch(/^HTTP\/1.1 412/);
    const wrong = await failure(s3.send(new PutObjectCommand({ Bucket: 'compat', Key: 'cw', Body: 'second', IfMatch: '"0123456789abcdef0123456789abcdef"' })));
    expect(wrong.status).toBe(412);
    expect(await (await s3.send(new GetObjectCommand({ Bucket: 'compat', Key: 'cw' }))).Body!.transformToString()).toBe('first');
    await s3.send(new PutObjectCommand({ Bucket: 'compat', Key: 'cw', Body: 'third', IfMatch: first.ETag }));
    expect(await (await s3.send(new GetObjectCommand({ Bucket: 'compat', Key: 'cw' }))).Body!.transformToString()).toBe('third');
    expect((await failure(s3.send(new PutObjectCommand({ Bucket: 'compat', Key: 'cw-missing', Body: 'x', IfMatch: first.ETag })))).status).toBe(404);
    // A delete marker is no object: If-None-Match: * may write over it.
    await s3.send(new PutObjectCommand({ Bucket: 'versioned', Key: 'cw', Body: 'v' }));
    await s3.send(new DeleteObjectCommand({ Bucket: 'versioned', Key: 'cw' }));
    await s3.send(new PutObjectCommand({ Bucket: 'versioned', Key: 'cw', Body: 'again', IfNoneMatch: '*' }));
  });

  it('CompleteMultipartUpload with If-None-Match: * fails on an existing key and keeps the upload', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'compat', Key: 'cw-mp', Body: 'there' }));
    const { uploadId, parts } = await multipartObject('compat', 'cw-mp', [1000]);
    const complete = (extra: Record<string, string>) => s3.send(new CompleteMultipartUploadCommand({ Bucket: 'compat', Key: 'cw-mp', UploadId: uploadId, MultipartUpload: { Parts: parts }, ...extra }));
    expect((await failure(complete({ IfNoneMatch: '*' }))).status).toBe(412);
    expect(await (await s3.send(new GetObjectCommand({ Bucket: 'compat', Key: 'cw-mp' }))).Body!.transformToString()).toBe('there');
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'compat', Key: 'cw-mp' }));
    const done = await complete({ IfMatch: head.ETag! });
    expect(done.ETag).toMatch(/-1"$/);
  });

  it('concurrent If-None-Match: * writers of one key: exactly one wins', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, (_, index) => failure(s3.send(new PutObjectCommand({ Bucket: 'compat', Key: 'cw-race', Body: `writer ${index}`, IfNoneMatch: '*' })))));
    expect(results.filter((result) => result.name === 'no error')).toHaveLength(1);
    for (const result of results.filter((item) => item.name !== 'no error')) expect([412, 409]).toContain(result.status);
  });
});

describe('object tagging', () => {
  const tagsOf = async (key: string, versionId?: string) =>
    (await s3.send(new GetObjectTaggingCommand({ Bucket: 'versioned', Key: key, ...(versionId ? { VersionId: versionId } : {}) }))).TagSet?.map((tag) => `${tag.Key}=${tag.Value}`);

  it('tags from PUT, Put/Get/DeleteObjectTagging per version, the count on GET and HEAD', async () => {
    const first = await s3.send(new PutObjectCommand({ Bucket: 'versioned', Key: 'tagged', Body: 'one', Tagging: 'team=blue&note=a%20b' }));
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'versioned', Key: 'tagged' }))).TagCount).toBe(2);
    expect(await tagsOf('tagged')).toEqual(['team=blue', 'note=a b']);
    const second = await s3.send(new PutObjectCommand({ Bucket: 'versioned', Key: 'tagged', Body: 'two' }));
    expect((await s3.send(new GetObjectCommand({ Bucket: 'versioned', Key: 'tagged' }))).TagCount).toBeUndefined();
    const put = await s3.send(new PutObjectTaggingCommand({ Bucket: 'versioned', Key: 'tagged', VersionId: first.VersionId, Tagging: { TagSet: [{ Key: 'state', Value: 'old' }] } }));
    expect(put.VersionId).toBe(first.VersionId);
    expect(await tagsOf('tagged', first.VersionId)).toEqual(['state=old']);
    expect(await tagsOf('tagged', second.VersionId)).toEqual([]);
    const object = await s3.send(new GetObjectCommand({ Bucket: 'versioned', Key: 'tagged', VersionId: first.VersionId }));
    expect([object.TagCount, await object.Body!.transformToString()]).toEqual([1, 'one']);
    await s3.send(new DeleteObjectTaggingCommand({ Bucket: 'versioned', Key: 'tagged', VersionId: first.VersionId }));
    expect(await tagsOf('tagged', first.VersionId)).toEqual([]);
  });

  it("AWS's limits answer InvalidTag and change nothing", async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'versioned', Key: 'limits', Body: 'x', Tagging: 'keep=me' }));
    const eleven = Array.from({ length: 11 }, (_, index) => ({ Key: `k${index}`, Value: 'v' }));
    for (const TagSet of [eleven, [{ Key: 'k'.repeat(129), Value: 'v' }], [{ Key: 'k', Value: 'v'.repeat(257) }], [{ Key: 'aws:x', Value: 'v' }], [{ Key: 'd', Value: '1' }, { Key: 'd', Value: '2' }]]) {
      const refused = await failure(s3.send(new PutObjectTaggingCommand({ Bucket: 'versioned', Key: 'limits', Tagging: { TagSet } })));
      expect([refused.name, refused.status]).toEqual(['InvalidTag', 400]);
    }
    expect(await tagsOf('limits')).toEqual(['keep=me']);
    expect((await failure(s3.send(new PutObjectCommand({ Bucket: 'versioned', Key: 'limits', Body: 'y', Tagging: 'aws:no=1' })))).name).toBe('InvalidTag');
    expect(await (await s3.send(new GetObjectCommand({ Bucket: 'versioned', Key: 'limits' }))).Body!.transformToString()).toBe('x');
  });

  it('copy keeps or replaces tags; multipart uploads carry them', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'versioned', Key: 'copy-src', Body: 'c', Tagging: 'from=source' }));
    await s3.send(new CopyObjectCommand({ Bucket: 'versioned', Key: 'copy-kept', CopySource: 'versioned/copy-src' }));
    expect(await tagsOf('copy-kept')).toEqual(['from=source']);
    await s3.send(new CopyObjectCommand({ Bucket: 'versioned', Key: 'copy-new', CopySource: 'versioned/copy-src', TaggingDirective: 'REPLACE', Tagging: 'from=copy' }));
    expect(await tagsOf('copy-new')).toEqual(['from=copy']);
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'versioned', Key: 'mp-tagged', Tagging: 'kind=multipart' }));
    const { ETag } = await s3.send(new UploadPartCommand({ Bucket: 'versioned', Key: 'mp-tagged', UploadId, PartNumber: 1, Body: 'part' }));
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'versioned', Key: 'mp-tagged', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag }] } }));
    expect(await tagsOf('mp-tagged')).toEqual(['kind=multipart']);
  });
});

describe('GetObjectAttributes', () => {
  it('ETag, checksum, size, storage class, and the parts of a multipart object, paged', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'compat', Key: 'attrs', Body: 'attributes', ChecksumAlgorithm: 'SHA256', StorageClass: 'REDUCED_REDUNDANCY' }));
    const single = await s3.send(new GetObjectAttributesCommand({ Bucket: 'compat', Key: 'attrs', ObjectAttributes: ['ETag', 'Checksum', 'ObjectSize', 'StorageClass', 'ObjectParts'] }));
    expect([single.ETag, single.ObjectSize, single.StorageClass, single.ObjectParts]).toEqual([createHash('md5').update('attributes').digest('hex'), 10, 'REDUCED_REDUNDANCY', undefined]);
    expect(single.Checksum?.ChecksumSHA256).toBe(createHash('sha256').update('attributes').digest('base64'));
    const { uploadId, parts } = await multipartObject('compat', 'attrs-mp', [5 * MiB, 5 * MiB, 10]);
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'compat', Key: 'attrs-mp', UploadId: uploadId, MultipartUpload: { Parts: parts } }));
    const page = await s3.send(new GetObjectAttributesCommand({ Bucket: 'compat', Key: 'attrs-mp', ObjectAttributes: ['ObjectParts', 'ObjectSize'], MaxParts: 2, PartNumberMarker: '1' }));
    expect(page.ObjectSize).toBe(10 * MiB + 10);
    expect([page.ObjectParts?.TotalPartsCount, page.ObjectParts?.IsTruncated, page.ObjectParts?.Parts?.map((part) => [part.PartNumber, part.Size])]).toEqual([3, false, [[2, 5 * MiB], [3, 10]]]);
    expect((await failure(s3.send(new GetObjectAttributesCommand({ Bucket: 'compat', Key: 'attrs', ObjectAttributes: ['Colour' as 'ETag'] })))).name).toBe('InvalidArgument');
    expect((await failure(s3.send(new GetObjectAttributesCommand({ Bucket: 'compat', Key: 'no-such', ObjectAttributes: ['ETag'] })))).status).toBe(404);
  });
});

describe('bucket CORS', () => {
  const origin = 'https://app.example';
  const preflightFor = (path: string, method: string, headers: Record<string, string> = {}) =>
    send(server.url, 'OPTIONS', path, { origin, 'access-control-request-method': method, ...headers }, '');

  it('Put/Get/DeleteBucketCors, preflights allowed and refused, headers on actual answers (errors too)', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'cors' }));
    expect((await failure(s3.send(new GetBucketCorsCommand({ Bucket: 'cors' })))).name).toBe('NoSuchCORSConfiguration');
    expect((await preflightFor('/cors/file', 'PUT')).status).toBe(403);
    await s3.send(new PutBucketCorsCommand({
      Bucket: 'cors',
      CORSConfiguration: { CORSRules: [{ AllowedOrigins: ['https://*.example'], AllowedMethods: ['GET', 'PUT'], AllowedHeaders: ['content-type', 'x-amz-*'], ExposeHeaders: ['ETag'], MaxAgeSeconds: 600 }] },
    }));
    const stored = await s3.send(new GetBucketCorsCommand({ Bucket: 'cors' }));
    expect(stored.CORSRules?.[0]).toMatchObject({ AllowedOrigins: ['https://*.example'], AllowedMethods: ['GET', 'PUT'], ExposeHeaders: ['ETag'], MaxAgeSeconds: 600 });
    const allowed = await preflightFor('/cors/file', 'PUT', { 'access-control-request-headers': 'Content-Type, X-Amz-Date' });
    expect([allowed.status, allowed.headers['access-control-allow-origin'], allowed.headers['access-control-allow-methods'], allowed.headers['access-control-allow-headers'], allowed.headers['access-control-max-age']])
      .toEqual([200, origin, 'GET, PUT', 'content-type, x-amz-date', '600']);
    expect((await preflightFor('/cors/file', 'DELETE')).status).toBe(403);
    const badHeader = await preflightFor('/cors/file', 'PUT', { 'access-control-request-headers': 'x-custom' });
    expect([badHeader.status, badHeader.body.includes('<Code>CORSResponse</Code>')]).toEqual([403, true]);
    expect((await send(server.url, 'OPTIONS', '/cors/file', { origin: 'https://evil.test', 'access-control-request-method': 'GET' }, '')).status).toBe(403);
    await s3.send(new PutObjectCommand({ Bucket: 'cors', Key: 'file', Body: 'shared' }));
    const actual = await signedRequest(server.url, { method: 'GET', path: '/cors/file', headers: { origin } });
    expect([actual.status, actual.headers['access-control-allow-origin'], actual.headers['access-control-expose-headers']]).toEqual([200, origin, 'ETag']);
    const missing = await fetch(await presignedUrl(server.url, 'GET', '/cors/none', 60), { headers: { origin } });
    expect([missing.status, missing.headers.get('access-control-allow-origin')]).toEqual([404, origin]);
    const refusedOrigin = await signedRequest(server.url, { method: 'GET', path: '/cors/file', headers: { origin: 'https://evil.test' } });
    expect(refusedOrigin.headers['access-control-allow-origin']).toBeUndefined();
    const invalid = await failure(s3.send(new PutBucketCorsCommand({ Bucket: 'cors', CORSConfiguration: { CORSRules: [{ AllowedOrigins: ['*'], AllowedMethods: ['PATCH'] }] } })));
    expect(invalid.name).toBe('InvalidRequest');
    await s3.send(new DeleteBucketCorsCommand({ Bucket: 'cors' }));
    expect((await preflightFor('/cors/file', 'GET')).status).toBe(403);
  });
});

describe('POST Object (browser form upload)', () => {
  async function presignedPost(key: string, conditions: unknown[], fields: Record<string, string> = {}, expires = 300) {
    return createPresignedPost(s3, { Bucket: 'compat', Key: key, Conditions: conditions as never, Fields: fields, Expires: expires });
  }
  async function postForm(url: string, fields: Record<string, string>, file: Blob, fileName = 'upload.txt'): Promise<Response> {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    form.append('file', file, fileName);
    return fetch(url, { method: 'POST', body: form, redirect: 'manual' });
  }

  it('a presigned POST from the AWS SDK uploads; status, redirect and ${filename} as the policy says', async () => {
    const post = await presignedPost('forms/${filename}', [['starts-with', '$key', 'forms/'], ['content-length-range', 1, 1024], ['eq', '$Content-Type', 'text/plain']], { 'Content-Type': 'text/plain' });
    const uploaded = await postForm(post.url, post.fields, new Blob(['from a form']), 'hello.txt');
    expect(uploaded.status).toBe(204);
    expect(uploaded.headers.get('etag')).toBe(`"${createHash('md5').update('from a form').digest('hex')}"`);
    const stored = await s3.send(new GetObjectCommand({ Bucket: 'compat', Key: 'forms/hello.txt' }));
    expect([await stored.Body!.transformToString(), stored.ContentType]).toEqual(['from a form', 'text/plain']);
    const created = await presignedPost('forms/created', [{ success_action_status: '201' }], { success_action_status: '201' });
    const answer = await postForm(created.url, created.fields, new Blob(['x']));
    expect(answer.status).toBe(201);
    expect(await answer.text()).toContain('<Key>forms/created</Key>');
    const redirected = await presignedPost('forms/redirected', [{ success_action_redirect: 'https://app.example/done' }], { success_action_redirect: 'https://app.example/done' });
    const moved = await postForm(redirected.url, redirected.fields, new Blob(['x']));
    expect(moved.status).toBe(303);
    expect(moved.headers.get('location')).toMatch(/^https:\/\/app\.example\/done\?bucket=compat&key=forms%2Fredirected&etag=/);
  });

  it('refusals are named and answered at once, and store nothing', async () => {
    const post = await presignedPost('forms/limited', [['content-length-range', 1, 10]]);
    const tooLarge = await postForm(post.url, post.fields, new Blob([Buffer.alloc(64 * 1024, 1)]));
    expect([tooLarge.status, (await tooLarge.text()).includes('<Code>EntityTooLarge</Code>')]).toEqual([400, true]);
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'compat', Key: 'forms/limited' })))).status).toBe(404);
    const prefixed = await presignedPost('forms/ok', [['starts-with', '$key', 'forms/']]);
    const outside = await postForm(prefixed.url, { ...prefixed.fields, key: 'elsewhere/x' }, new Blob(['x']));
    expect([outside.status, (await outside.text()).includes('Policy Condition failed')]).toEqual([403, true]);
    const forged = await postForm(post.url, { ...post.fields, 'X-Amz-Signature': '0'.repeat(64) }, new Blob(['x']));
    expect([forged.status, (await forged.text()).includes('<Code>SignatureDoesNotMatch</Code>')]).toEqual([403, true]);
    const extra = await postForm(post.url, { ...post.fields, 'x-amz-meta-sneaky': 'yes' }, new Blob(['x']));
    expect([extra.status, (await extra.text()).includes('Extra input fields')]).toEqual([403, true]);
    const expired = await presignedPost('forms/expired', [], {}, -60);
    const late = await postForm(expired.url, expired.fields, new Blob(['x']));
    expect([late.status, (await late.text()).includes('Policy expired')]).toEqual([403, true]);
    const noFile = new FormData();
    for (const [name, value] of Object.entries(post.fields)) noFile.append(name, value);
    const missing = await fetch(post.url, { method: 'POST', body: noFile });
    expect([missing.status, (await missing.text()).includes('exactly one file')]).toEqual([400, true]);
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'compat', Key: 'elsewhere/x' })))).status).toBe(404);
  });

  it('the tagging field stores its tag set with the object; tags PutObjectTagging refuses are refused and store nothing', async () => {
    const tagging = '<Tagging><TagSet><Tag><Key>team</Key><Value>blue</Value></Tag><Tag><Key>stage</Key><Value>draft &amp; 1</Value></Tag></TagSet></Tagging>';
    const post = await presignedPost('forms/tagged', [{ tagging }], { tagging });
    const uploaded = await postForm(post.url, post.fields, new Blob(['tagged by a form']));
    expect(uploaded.status, await uploaded.clone().text()).toBe(204);
    const tags = await s3.send(new GetObjectTaggingCommand({ Bucket: 'compat', Key: 'forms/tagged' }));
    expect(tags.TagSet).toEqual([{ Key: 'team', Value: 'blue' }, { Key: 'stage', Value: 'draft & 1' }]);
    const read = await s3.send(new GetObjectCommand({ Bucket: 'compat', Key: 'forms/tagged' }));
    expect([await read.Body!.transformToString(), read.TagCount]).toEqual(['tagged by a form', 2]);
    const refusals: [string, number, string][] = [
      ['<Tagging><TagSet><Tag><Key>aws:owner</Key><Value>me</Value></Tag></TagSet></Tagging>', 400, 'InvalidTag'],
      ['<Tagging><TagSet><Tag><Key>twice</Key><Value>1</Value></Tag><Tag><Key>twice</Key><Value>2</Value></Tag></TagSet></Tagging>', 400, 'InvalidTag'],
      [`<Tagging><TagSet><Tag><Key>long</Key><Value>${'v'.repeat(257)}</Value></Tag></TagSet></Tagging>`, 400, 'InvalidTag'],
      ['<Tagging><TagSet><Tag><Key>open</Key>', 400, 'MalformedXML'],
      ['<Tags><Tag><Key>a</Key><Value>b</Value></Tag></Tags>', 400, 'MalformedXML'],
    ];
    for (const [document, status, code] of refusals) {
      const refused = await presignedPost('forms/badly-tagged', [{ tagging: document }], { tagging: document });
      const answer = await postForm(refused.url, refused.fields, new Blob(['x']));
      expect([answer.status, (await answer.text()).includes(`<Code>${code}</Code>`)], document).toEqual([status, true]);
    }
    // A tagging field the policy does not name is an extra field, as any other.
    const unnamed = await presignedPost('forms/badly-tagged', []);
    const extra = await postForm(unnamed.url, { ...unnamed.fields, tagging }, new Blob(['x']));
    expect([extra.status, (await extra.text()).includes('Extra input fields: tagging')]).toEqual([403, true]);
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'compat', Key: 'forms/badly-tagged' })))).status).toBe(404);
  });
});

