import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import {
  AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CopyObjectCommand, CreateBucketCommand, CreateMultipartUploadCommand,
  DeleteBucketCommand, DeleteObjectCommand, DeleteObjectsCommand, GetBucketLocationCommand, GetBucketVersioningCommand, GetObjectCommand,
  HeadBucketCommand, HeadObjectCommand, ListBucketsCommand, ListMultipartUploadsCommand, ListObjectsCommand, ListObjectsV2Command,
  ListObjectVersionsCommand, ListPartsCommand, PutBucketVersioningCommand, PutObjectCommand, UploadPartCommand, UploadPartCopyCommand, type S3Client,
} from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from '@aws-crypto/sha256-js';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';

let root: string;
let server: SvcProcess;
let s3: S3Client;
const MiB = 1024 * 1024;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-s3-'));
  server = await startSvc({ args: [join(root, 'd{1...4}')], env: { SVC_DOMAIN: 's3.test' } });
  s3 = s3ClientFor(server.url);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

async function failure(promise: Promise<unknown>): Promise<{ name: string; status?: number }> {
  try {
    await promise;
  } catch (error) {
    const typed = error as { name: string; $metadata?: { httpStatusCode?: number } };
    return { name: typed.name, ...(typed.$metadata?.httpStatusCode !== undefined ? { status: typed.$metadata.httpStatusCode } : {}) };
  }
  return { name: 'no error' };
}

async function text(bucket: string, key: string, extra: Record<string, unknown> = {}): Promise<string> {
  const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, ...extra }));
  return object.Body!.transformToString();
}

function bytes(size: number, seed: number): Buffer {
  const out = Buffer.alloc(size);
  for (let index = 0; index < size; index += 1) out[index] = (index * 31 + seed * 7) & 0xff;
  return out;
}

describe('S3 API through the AWS SDK', () => {
  it('buckets: create, head, list, location, name rules, not empty, delete', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'alpha' }));
    expect((await s3.send(new CreateBucketCommand({ Bucket: 'alpha' }))).$metadata.httpStatusCode).toBe(200); // one's own bucket, us-east-1
    await s3.send(new HeadBucketCommand({ Bucket: 'alpha' }));
    expect((await failure(s3.send(new HeadBucketCommand({ Bucket: 'missing-bucket' })))).status).toBe(404);
    expect((await s3.send(new ListBucketsCommand({}))).Buckets!.map((bucket) => bucket.Name)).toContain('alpha');
    expect((await s3.send(new GetBucketLocationCommand({ Bucket: 'alpha' }))).LocationConstraint ?? '').toBe('');
    for (const bad of ['ab', 'UPPER', 'under_score', '-start', 'a..b', '192.168.1.1', 'x'.repeat(64)]) {
      expect((await failure(s3.send(new CreateBucketCommand({ Bucket: bad })))).name, bad).toBe('InvalidBucketName');
    }
    await s3.send(new PutObjectCommand({ Bucket: 'alpha', Key: 'k', Body: 'v' }));
    expect((await failure(s3.send(new DeleteBucketCommand({ Bucket: 'alpha' })))).name).toBe('BucketNotEmpty');
    await s3.send(new DeleteObjectCommand({ Bucket: 'alpha', Key: 'k' }));
    await s3.send(new DeleteBucketCommand({ Bucket: 'alpha' }));
    expect((await failure(s3.send(new HeadBucketCommand({ Bucket: 'alpha' })))).status).toBe(404);
  });

  it('objects: put, get, head with metadata, ranges, conditionals, storage classes, delete', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'objects' }));
    const body = bytes(2 * MiB + 333, 1);
    const put = await s3.send(new PutObjectCommand({ Bucket: 'objects', Key: 'dir/file.bin', Body: body, ContentType: 'application/x-test', Metadata: { owner: 'alice' }, CacheControl: 'no-cache' }));
    expect(put.ETag).toBe(`"${createHash('md5').update(body).digest('hex')}"`);
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'objects', Key: 'dir/file.bin' }));
    expect([head.ContentLength, head.ContentType, head.Metadata?.owner, head.CacheControl, head.StorageClass]).toEqual([body.length, 'application/x-test', 'alice', 'no-cache', 'STANDARD']);
    const ranged = await s3.send(new GetObjectCommand({ Bucket: 'objects', Key: 'dir/file.bin', Range: 'bytes=1048570-1048580' }));
    expect(ranged.ContentRange).toBe(`bytes 1048570-1048580/${body.length}`);
    expect(Buffer.from(await ranged.Body!.transformToByteArray()).equals(body.subarray(1048570, 1048581))).toBe(true);
    const suffix = await s3.send(new GetObjectCommand({ Bucket: 'objects', Key: 'dir/file.bin', Range: 'bytes=-10' }));
    expect(Buffer.from(await suffix.Body!.transformToByteArray()).equals(body.subarray(body.length - 10))).toBe(true);
    expect((await failure(s3.send(new GetObjectCommand({ Bucket: 'objects', Key: 'dir/file.bin', Range: `bytes=${body.length}-` })))).status).toBe(416);
    expect((await failure(s3.send(new GetObjectCommand({ Bucket: 'objects', Key: 'dir/file.bin', IfMatch: '"nope"' })))).status).toBe(412);
    expect((await failure(s3.send(new GetObjectCommand({ Bucket: 'objects', Key: 'dir/file.bin', IfNoneMatch: put.ETag })))).status).toBe(304);
    expect((await failure(s3.send(new GetObjectCommand({ Bucket: 'objects', Key: 'dir/file.bin', IfModifiedSince: new Date(Date.now() + 60_000) })))).status).toBe(304);
    expect((await failure(s3.send(new GetObjectCommand({ Bucket: 'objects', Key: 'dir/file.bin', IfUnmodifiedSince: new Date(Date.now() - 3_600_000) })))).status).toBe(412);
    await s3.send(new PutObjectCommand({ Bucket: 'objects', Key: 'rrs', Body: 'reduced', StorageClass: 'REDUCED_REDUNDANCY' }));
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'objects', Key: 'rrs' }))).StorageClass).toBe('REDUCED_REDUNDANCY');
    for (const storageClass of ['GLACIER', 'STANDARD_IA', 'bogus'] as const) {
      expect((await failure(s3.send(new PutObjectCommand({ Bucket: 'objects', Key: 'rejected', Body: 'x', StorageClass: storageClass as never })))).name).toBe('InvalidStorageClass');
    }
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'objects', Key: 'rejected' })))).status).toBe(404);
    await s3.send(new DeleteObjectCommand({ Bucket: 'objects', Key: 'rrs' }));
    expect((await failure(s3.send(new GetObjectCommand({ Bucket: 'objects', Key: 'rrs' })))).name).toBe('NoSuchKey');
    expect((await failure(s3.send(new GetObjectCommand({ Bucket: 'objects', Key: 'k'.repeat(1025) })))).name).toBe('KeyTooLongError');
  });

  it('integrity: Content-MD5 and checksum mismatches are refused and store nothing', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'integrity' }));
    const wrongMd5 = createHash('md5').update('other').digest('base64');
    expect((await failure(s3.send(new PutObjectCommand({ Bucket: 'integrity', Key: 'md5', Body: 'payload', ContentMD5: wrongMd5 })))).name).toBe('BadDigest');
    expect((await failure(s3.send(new PutObjectCommand({ Bucket: 'integrity', Key: 'crc', Body: 'payload', ChecksumCRC32: 'AAAAAA==' })))).name).toBe('BadDigest');
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'integrity', Key: 'md5' })))).status).toBe(404);
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'integrity', Key: 'crc' })))).status).toBe(404);
    const good = await s3.send(new PutObjectCommand({ Bucket: 'integrity', Key: 'sha', Body: 'payload', ChecksumAlgorithm: 'SHA256' }));
    const sha256 = createHash('sha256').update('payload').digest('base64');
    expect(good.ChecksumSHA256).toBe(sha256);
    // Asked for (checksum mode), a whole-object GET or HEAD returns the stored checksum, and the
    // SDK checks the body against it; a range or a request that does not ask gets none.
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'integrity', Key: 'sha', ChecksumMode: 'ENABLED' }))).ChecksumSHA256).toBe(sha256);
    const whole = await s3.send(new GetObjectCommand({ Bucket: 'integrity', Key: 'sha', ChecksumMode: 'ENABLED' }));
    expect([whole.ChecksumSHA256, await whole.Body!.transformToString()]).toEqual([sha256, 'payload']);
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'integrity', Key: 'sha' }))).ChecksumSHA256).toBeUndefined();
    const part = await s3.send(new GetObjectCommand({ Bucket: 'integrity', Key: 'sha', ChecksumMode: 'ENABLED', Range: 'bytes=0-2' }));
    expect([part.ChecksumSHA256, await part.Body!.transformToString()]).toEqual([undefined, 'pay']);
  });

  it('copy: metadata directives, copy to self to change the storage class', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'copies' }));
    await s3.send(new PutObjectCommand({ Bucket: 'copies', Key: 'src', Body: 'copy me', Metadata: { a: '1' } }));
    await s3.send(new CopyObjectCommand({ Bucket: 'copies', Key: 'dst', CopySource: 'copies/src' }));
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'copies', Key: 'dst' }))).Metadata).toEqual({ a: '1' });
    await s3.send(new CopyObjectCommand({ Bucket: 'copies', Key: 'dst2', CopySource: 'copies/src', MetadataDirective: 'REPLACE', Metadata: { b: '2' } }));
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'copies', Key: 'dst2' }))).Metadata).toEqual({ b: '2' });
    expect((await failure(s3.send(new CopyObjectCommand({ Bucket: 'copies', Key: 'src', CopySource: 'copies/src' })))).name).toBe('InvalidRequest');
    await s3.send(new CopyObjectCommand({ Bucket: 'copies', Key: 'src', CopySource: 'copies/src', StorageClass: 'REDUCED_REDUNDANCY' }));
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'copies', Key: 'src' }))).StorageClass).toBe('REDUCED_REDUNDANCY');
    expect(await text('copies', 'src')).toBe('copy me');
    expect((await failure(s3.send(new CopyObjectCommand({ Bucket: 'copies', Key: 'x', CopySource: 'copies/src', CopySourceIfMatch: '"nope"' })))).status).toBe(412);
  });

  it('listing: v1 and v2 paging, prefixes and delimiters, DeleteObjects in quiet mode', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'listing' }));
    const keys = ['a/1', 'a/2', 'a/b/3', 'b', 'c d', 'c+e', 'z/\u00e9'];
    for (const key of keys) await s3.send(new PutObjectCommand({ Bucket: 'listing', Key: key, Body: key }));
    const all: string[] = [];
    let token: string | undefined;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: 'listing', MaxKeys: 2, ContinuationToken: token }));
      all.push(...(page.Contents ?? []).map((item) => item.Key!));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    expect(all).toEqual([...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))));
    const top = await s3.send(new ListObjectsV2Command({ Bucket: 'listing', Delimiter: '/' }));
    expect(top.CommonPrefixes!.map((item) => item.Prefix)).toEqual(['a/', 'z/']);
    expect(top.Contents!.map((item) => item.Key)).toEqual(['b', 'c d', 'c+e']);
    const inA = await s3.send(new ListObjectsV2Command({ Bucket: 'listing', Prefix: 'a/', Delimiter: '/', StartAfter: 'a/1' }));
    expect([inA.Contents!.map((item) => item.Key), inA.CommonPrefixes!.map((item) => item.Prefix)]).toEqual([['a/2'], ['a/b/']]);
    const v1 = await s3.send(new ListObjectsCommand({ Bucket: 'listing', MaxKeys: 3 }));
    expect([v1.IsTruncated, v1.Contents!.length, v1.NextMarker]).toEqual([true, 3, 'a/b/3']);
    const v1next = await s3.send(new ListObjectsCommand({ Bucket: 'listing', Marker: v1.NextMarker }));
    expect(v1next.Contents![0]!.Key).toBe('b');
    const deleted = await s3.send(new DeleteObjectsCommand({ Bucket: 'listing', Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }));
    expect(deleted.Deleted ?? []).toEqual([]);
    expect((await s3.send(new ListObjectsV2Command({ Bucket: 'listing' }))).KeyCount).toBe(0);
  });

  it('versioning: version ids, delete markers, reads and deletes by version', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'versions' }));
    await s3.send(new PutBucketVersioningCommand({ Bucket: 'versions', VersioningConfiguration: { Status: 'Enabled' } }));
    expect((await s3.send(new GetBucketVersioningCommand({ Bucket: 'versions' }))).Status).toBe('Enabled');
    const one = await s3.send(new PutObjectCommand({ Bucket: 'versions', Key: 'doc', Body: 'one' }));
    const two = await s3.send(new PutObjectCommand({ Bucket: 'versions', Key: 'doc', Body: 'two' }));
    expect(one.VersionId).toBeTruthy();
    expect(one.VersionId).not.toBe(two.VersionId);
    expect(await text('versions', 'doc')).toBe('two');
    expect(await text('versions', 'doc', { VersionId: one.VersionId })).toBe('one');
    const marker = await s3.send(new DeleteObjectCommand({ Bucket: 'versions', Key: 'doc' }));
    expect(marker.DeleteMarker).toBe(true);
    expect((await failure(s3.send(new GetObjectCommand({ Bucket: 'versions', Key: 'doc' })))).name).toBe('NoSuchKey');
    const listed = await s3.send(new ListObjectVersionsCommand({ Bucket: 'versions' }));
    expect(listed.Versions!.map((version) => version.VersionId).sort()).toEqual([one.VersionId, two.VersionId].sort());
    expect(listed.DeleteMarkers!.map((item) => [item.VersionId, item.IsLatest])).toEqual([[marker.VersionId, true]]);
    await s3.send(new DeleteObjectCommand({ Bucket: 'versions', Key: 'doc', VersionId: marker.VersionId }));
    expect(await text('versions', 'doc')).toBe('two');
    await s3.send(new DeleteObjectCommand({ Bucket: 'versions', Key: 'doc', VersionId: two.VersionId }));
    expect(await text('versions', 'doc')).toBe('one');
    await s3.send(new PutBucketVersioningCommand({ Bucket: 'versions', VersioningConfiguration: { Status: 'Suspended' } }));
    const nullVersion = await s3.send(new PutObjectCommand({ Bucket: 'versions', Key: 'doc', Body: 'null one' }));
    expect(nullVersion.VersionId ?? 'null').toBe('null');
    expect(await text('versions', 'doc', { VersionId: one.VersionId })).toBe('one');
  });

  it('multipart: a 50 MiB upload, part rules, abort, list', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'multi' }));
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'multi', Key: 'big', StorageClass: 'REDUCED_REDUNDANCY', Metadata: { m: 'v' } }));
    const partSize = 10 * MiB;
    const data = bytes(50 * MiB + 1234, 5);
    const etags: string[] = [];
    for (let number = 1; number * partSize - partSize < data.length; number += 1) {
      const part = await s3.send(new UploadPartCommand({ Bucket: 'multi', Key: 'big', UploadId, PartNumber: number, Body: data.subarray((number - 1) * partSize, number * partSize) }));
      etags.push(part.ETag!);
    }
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'multi', Key: 'big' })))).status).toBe(404);
    const parts = await s3.send(new ListPartsCommand({ Bucket: 'multi', Key: 'big', UploadId }));
    expect(parts.Parts!.map((part) => part.PartNumber)).toEqual([1, 2, 3, 4, 5, 6]);
    expect((await s3.send(new ListMultipartUploadsCommand({ Bucket: 'multi' }))).Uploads!.map((upload) => upload.UploadId)).toContain(UploadId);
    expect((await failure(s3.send(new CompleteMultipartUploadCommand({ Bucket: 'multi', Key: 'big', UploadId, MultipartUpload: { Parts: [{ PartNumber: 2, ETag: etags[1] }, { PartNumber: 1, ETag: etags[0] }] } })))).name).toBe('InvalidPartOrder');
    expect((await failure(s3.send(new CompleteMultipartUploadCommand({ Bucket: 'multi', Key: 'big', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: '"0000"' }] } })))).name).toBe('InvalidPart');
    const done = await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'multi', Key: 'big', UploadId, MultipartUpload: { Parts: etags.map((ETag, index) => ({ PartNumber: index + 1, ETag })) } }));
    const expectedEtag = createHash('md5').update(Buffer.concat(etags.map((etag) => Buffer.from(etag.replace(/"/g, ''), 'hex')))).digest('hex');
    expect(done.ETag).toBe(`"${expectedEtag}-${etags.length}"`);
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'multi', Key: 'big' }));
    expect([head.ContentLength, head.StorageClass, head.Metadata?.m]).toEqual([data.length, 'REDUCED_REDUNDANCY', 'v']);
    const whole = Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket: 'multi', Key: 'big' }))).Body!.transformToByteArray());
    expect(whole.equals(data)).toBe(true);
    const across = await s3.send(new GetObjectCommand({ Bucket: 'multi', Key: 'big', Range: `bytes=${partSize - 5}-${partSize + 4}` }));
    expect(Buffer.from(await across.Body!.transformToByteArray()).equals(data.subarray(partSize - 5, partSize + 5))).toBe(true);

    const small = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'multi', Key: 'small' }));
    const p1 = await s3.send(new UploadPartCommand({ Bucket: 'multi', Key: 'small', UploadId: small.UploadId, PartNumber: 1, Body: 'tiny' }));
    const p2 = await s3.send(new UploadPartCopyCommand({ Bucket: 'multi', Key: 'small', UploadId: small.UploadId, PartNumber: 2, CopySource: 'multi/big', CopySourceRange: 'bytes=0-99' }));
    expect((await failure(s3.send(new CompleteMultipartUploadCommand({ Bucket: 'multi', Key: 'small', UploadId: small.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: p1.ETag }, { PartNumber: 2, ETag: p2.CopyPartResult!.ETag }] } })))).name).toBe('EntityTooSmall');
    await s3.send(new AbortMultipartUploadCommand({ Bucket: 'multi', Key: 'small', UploadId: small.UploadId }));
    expect((await failure(s3.send(new UploadPartCommand({ Bucket: 'multi', Key: 'small', UploadId: small.UploadId, PartNumber: 3, Body: 'x' })))).name).toBe('NoSuchUpload');
    expect((await failure(s3.send(new ListPartsCommand({ Bucket: 'multi', Key: 'small', UploadId: 'bm90LWFuLXVwbG9hZA' })))).name).toBe('NoSuchUpload');
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'multi', Key: 'small' })))).status).toBe(404);
  });

  it('authentication: wrong secret, unknown key, presigned GET and PUT, expiry', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'auth' }));
    const wrongSecret = s3ClientFor(server.url, { credentials: { accessKeyId: testCredentials.accessKeyId, secretAccessKey: 'wrong-secret-value' } });
    expect((await failure(wrongSecret.send(new PutObjectCommand({ Bucket: 'auth', Key: 'forged', Body: 'x' })))).name).toBe('SignatureDoesNotMatch');
    const unknown = s3ClientFor(server.url, { credentials: { accessKeyId: 'nobody', secretAccessKey: 'whatever-secret' } });
    expect((await failure(unknown.send(new ListBucketsCommand({})))).name).toBe('InvalidAccessKeyId');
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'auth', Key: 'forged' })))).status).toBe(404);
    const signer = new SignatureV4({ service: 's3', region: 'us-east-1', credentials: testCredentials, sha256: Sha256, uriEscapePath: false });
    const url = new URL(server.url);
    const presign = (method: string, key: string, expiresIn: number, signingDate?: Date) =>
      signer.presign({ method, protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: `/auth/${key}`, headers: { host: url.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' }, query: {} }, { expiresIn, ...(signingDate ? { signingDate } : {}) });
    const toUrl = (request: { path: string; query?: Record<string, string | string[] | null> }) =>
      `${server.url}${request.path}?${new URLSearchParams(Object.entries(request.query ?? {}).map(([name, value]): [string, string] => [name, String(value)])).toString()}`;
    const putUrl = toUrl(await presign('PUT', 'presigned.txt', 300));
    expect((await fetch(putUrl, { method: 'PUT', body: 'by presigned url' })).status).toBe(200);
    const getResponse = await fetch(toUrl(await presign('GET', 'presigned.txt', 300)));
    expect([getResponse.status, await getResponse.text()]).toEqual([200, 'by presigned url']);
    const expired = await fetch(toUrl(await presign('GET', 'presigned.txt', 60, new Date(Date.now() - 3_600_000))));
    expect(expired.status).toBe(403);
    expect(await expired.text()).toContain('Request has expired');
  });

  it('virtual-host-style requests address the bucket through the Host header', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'vhost' }));
    await s3.send(new PutObjectCommand({ Bucket: 'vhost', Key: 'dir/file.txt', Body: 'virtual host' }));
    const url = new URL(server.url);
    const host = `vhost.s3.test:${url.port}`;
    const signer = new SignatureV4({ service: 's3', region: 'us-east-1', credentials: testCredentials, sha256: Sha256, uriEscapePath: false });
    const signed = await signer.sign({ method: 'GET', protocol: 'http:', hostname: 'vhost.s3.test', port: Number(url.port), path: '/dir/file.txt', query: {}, headers: { host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } });
    const body = await new Promise<string>((resolve, reject) => {
      const request = httpRequest({ host: url.hostname, port: Number(url.port), path: '/dir/file.txt', method: 'GET', headers: signed.headers as Record<string, string> }, (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve(`${response.statusCode} ${text}`));
      });
      request.on('error', reject);
      request.end();
    });
    expect(body).toBe('200 virtual host');
  });

  it('malformed request bodies are refused with MalformedXML', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'xml' }));
    const signer = new SignatureV4({ service: 's3', region: 'us-east-1', credentials: testCredentials, sha256: Sha256, uriEscapePath: false });
    const url = new URL(server.url);
    for (const body of ['<Delete><Object><Key>a</Key></Object>', '<!DOCTYPE x [<!ENTITY e "x">]><Delete><Object><Key>&e;</Key></Object></Delete>', '<Delete></Delete>']) {
      const hash = createHash('sha256').update(body).digest('hex');
      const signed = await signer.sign({ method: 'POST', protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: '/xml', query: { delete: '' }, headers: { host: url.host, 'x-amz-content-sha256': hash, 'content-md5': createHash('md5').update(body).digest('base64') }, body });
      const response = await fetch(`${server.url}/xml?delete=`, { method: 'POST', headers: signed.headers as Record<string, string>, body });
      expect(response.status, body).toBe(400);
      expect(await response.text()).toContain('<Code>MalformedXML</Code>');
    }
  });
});
