/**
 * S3 checksums through the AWS SDK and boto3, as the AWS S3 API reference gives them: every
 * algorithm (CRC32, CRC32C, CRC64NVME, SHA1, SHA256) on PUT and back on GET/HEAD with
 * `x-amz-checksum-mode: ENABLED`; multipart uploads keeping their algorithm, each part's checksum
 * (ListParts, GetObjectAttributes) and the object's, COMPOSITE (`<base64>-<parts>`) or FULL_OBJECT
 * (the CRC of the whole body, which the SDK checks on GET); and each refusal, which stores nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import {
  CompleteMultipartUploadCommand, CopyObjectCommand, CreateBucketCommand, CreateMultipartUploadCommand, GetObjectAttributesCommand, GetObjectCommand, HeadObjectCommand,
  ListPartsCommand, PutObjectCommand, UploadPartCommand, UploadPartCopyCommand, type ChecksumAlgorithm, type ChecksumType, type S3Client,
} from '@aws-sdk/client-s3';
import { Crc64Nvme } from '@aws-sdk/crc64-nvme';
import { Crc32c } from '@aws-crypto/crc32c';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { signedRequest } from './helpers/raw-s3.js';
import { sdkErrorOf } from './helpers/codes.js';

let root: string;
let server: SvcProcess;
let s3: S3Client;
const bucket = 'sums';
const partBytes = 5 * 1024 * 1024;
const first = Buffer.alloc(partBytes, 7);
const second = Buffer.from('the last part, smaller than five mebibytes');

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-checksums-'));
  server = await startSvc({ args: [join(root, 'd{1...4}')] });
  s3 = s3ClientFor(server.url);
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

async function digest(algorithm: ChecksumAlgorithm, bytes: Buffer): Promise<Buffer> {
  if (algorithm === 'CRC64NVME') {
    const crc = new Crc64Nvme();
    crc.update(bytes);
    return Buffer.from(await crc.digest());
  }
  if (algorithm === 'CRC32' || algorithm === 'CRC32C') {
    const out = Buffer.alloc(4);
    out.writeUInt32BE((algorithm === 'CRC32' ? crc32(bytes) : new Crc32c().update(bytes).digest()) >>> 0);
    return out;
  }
  return createHash(algorithm.toLowerCase()).update(bytes).digest();
}

const field = (algorithm: ChecksumAlgorithm): `Checksum${ChecksumAlgorithm}` => `Checksum${algorithm}`;

async function upload(key: string, algorithm: ChecksumAlgorithm, type?: ChecksumType): Promise<{ uploadId: string; parts: { PartNumber: number; ETag: string; [name: string]: unknown }[] }> {
  const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ChecksumAlgorithm: algorithm, ...(type ? { ChecksumType: type } : {}) }));
  expect(created.ChecksumAlgorithm).toBe(algorithm);
  expect(created.ChecksumType).toBe(type ?? (algorithm === 'CRC64NVME' ? 'FULL_OBJECT' : 'COMPOSITE'));
  const parts = [];
  for (const [index, body] of [first, second].entries()) {
    const answer = await s3.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: created.UploadId, PartNumber: index + 1, Body: body, ChecksumAlgorithm: algorithm }));
    const checksum = answer[field(algorithm)];
    expect(checksum).toBe((await digest(algorithm, body)).toString('base64'));
    parts.push({ PartNumber: index + 1, ETag: answer.ETag!, [field(algorithm)]: checksum });
  }
  return { uploadId: created.UploadId!, parts };
}

describe('checksums on PUT, GET and HEAD', () => {
  it.each<ChecksumAlgorithm>(['CRC32', 'CRC32C', 'CRC64NVME', 'SHA1', 'SHA256'])('%s is verified, stored and returned with checksum mode', async (algorithm) => {
    const key = `single-${algorithm}`;
    const put = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'checked body', ChecksumAlgorithm: algorithm }));
    expect(put[field(algorithm)]).toBeTruthy();
    expect(put.ChecksumType).toBe('FULL_OBJECT');
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key, ChecksumMode: 'ENABLED' }));
    expect([head[field(algorithm)], head.ChecksumType]).toEqual([put[field(algorithm)], 'FULL_OBJECT']);
    const plain = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    expect(plain[field(algorithm)]).toBeUndefined();
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, ChecksumMode: 'ENABLED' }));
    expect(await got.Body!.transformToString()).toBe('checked body');
    expect(got[field(algorithm)]).toBe(put[field(algorithm)]);
  });

  it('a CRC64NVME that does not match the body is 400 BadDigest and nothing is stored', async () => {
    const wrong = (await digest('CRC64NVME', Buffer.from('other'))).toString('base64');
    const answer = await signedRequest(server.url, { method: 'PUT', path: `/${bucket}/bad-crc64`, headers: { 'x-amz-checksum-crc64nvme': wrong }, body: 'body' });
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('<Code>BadDigest</Code>');
    expect(await sdkErrorOf(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'bad-crc64' })))).toMatchObject({ status: 404 });
  });

  it('two checksum headers are 400 InvalidRequest', async () => {
    const body = Buffer.from('two');
    const answer = await signedRequest(server.url, {
      method: 'PUT', path: `/${bucket}/two-sums`, body,
      headers: { 'x-amz-checksum-crc32': (await digest('CRC32', body)).toString('base64'), 'x-amz-checksum-sha1': (await digest('SHA1', body)).toString('base64') },
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('<Code>InvalidRequest</Code>');
  });
});

describe('multipart checksums', () => {
  it('COMPOSITE SHA256: parts checked and kept, the object checksum is the digest of the parts\' digests with the count', async () => {
    const { uploadId, parts } = await upload('composite', 'SHA256');
    const listed = await s3.send(new ListPartsCommand({ Bucket: bucket, Key: 'composite', UploadId: uploadId }));
    expect([listed.ChecksumAlgorithm, listed.ChecksumType]).toEqual(['SHA256', 'COMPOSITE']);
    expect(listed.Parts!.map((part) => part.ChecksumSHA256)).toEqual(parts.map((part) => part.ChecksumSHA256));
    const done = await s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'composite', UploadId: uploadId, MultipartUpload: { Parts: parts } }));
    const raw = Buffer.concat(await Promise.all([first, second].map((body) => digest('SHA256', body))));
    const expected = `${createHash('sha256').update(raw).digest('base64')}-2`;
    expect([done.ChecksumSHA256, done.ChecksumType]).toEqual([expected, 'COMPOSITE']);
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'composite', ChecksumMode: 'ENABLED' }));
    expect([head.ChecksumSHA256, head.ChecksumType]).toEqual([expected, 'COMPOSITE']);
    const attributes = await s3.send(new GetObjectAttributesCommand({ Bucket: bucket, Key: 'composite', ObjectAttributes: ['Checksum', 'ObjectParts'] }));
    expect(attributes.Checksum).toEqual({ ChecksumSHA256: expected, ChecksumType: 'COMPOSITE' });
    expect(attributes.ObjectParts!.Parts!.map((part) => [part.PartNumber, part.ChecksumSHA256])).toEqual(parts.map((part) => [part.PartNumber, part.ChecksumSHA256]));
  });

  it.each<[ChecksumAlgorithm, ChecksumType | undefined]>([['CRC64NVME', undefined], ['CRC32', 'FULL_OBJECT']])('FULL_OBJECT %s: the CRC of the whole body, which the SDK checks on GET', async (algorithm, type) => {
    const key = `full-${algorithm}`;
    const { uploadId, parts } = await upload(key, algorithm, type);
    const done = await s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts }, ...(type ? { ChecksumType: type } : {}) }));
    const whole = (await digest(algorithm, Buffer.concat([first, second]))).toString('base64');
    expect([done[field(algorithm)], done.ChecksumType]).toEqual([whole, 'FULL_OBJECT']);
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, ChecksumMode: 'ENABLED' }));
    expect([got[field(algorithm)], got.ChecksumType]).toEqual([whole, 'FULL_OBJECT']);
    expect((await got.Body!.transformToByteArray()).length).toBe(first.length + second.length);
  });

  it.each([
    ['SHA1 as FULL_OBJECT', { 'x-amz-checksum-algorithm': 'SHA1', 'x-amz-checksum-type': 'FULL_OBJECT' }],
    ['CRC64NVME as COMPOSITE', { 'x-amz-checksum-algorithm': 'CRC64NVME', 'x-amz-checksum-type': 'COMPOSITE' }],
    ['a type without an algorithm', { 'x-amz-checksum-type': 'COMPOSITE' }],
    ['an unknown algorithm', { 'x-amz-checksum-algorithm': 'MD4' }],
  ])('CreateMultipartUpload with %s is 400 InvalidRequest', async (_what, headers) => {
    const answer = await signedRequest(server.url, { method: 'POST', path: `/${bucket}/refused-create`, query: { uploads: '' }, headers });
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('<Code>InvalidRequest</Code>');
  });

  it('a part with another algorithm, a part checksum that does not match, another type or size at completion: refused, nothing stored', async () => {
    const { uploadId, parts } = await upload('refusals', 'CRC32C');
    expect(await sdkErrorOf(s3.send(new UploadPartCommand({ Bucket: bucket, Key: 'refusals', UploadId: uploadId, PartNumber: 3, Body: 'x', ChecksumAlgorithm: 'SHA1' })))).toEqual({ name: 'InvalidRequest', status: 400 });
    const badPart = parts.map((part, index) => (index === 0 ? { ...part, ChecksumCRC32C: 'AAAAAA==' } : part));
    expect(await sdkErrorOf(s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'refusals', UploadId: uploadId, MultipartUpload: { Parts: badPart } })))).toEqual({ name: 'InvalidPart', status: 400 });
    expect(await sdkErrorOf(s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'refusals', UploadId: uploadId, MultipartUpload: { Parts: parts }, ChecksumType: 'FULL_OBJECT' })))).toEqual({ name: 'InvalidRequest', status: 400 });
    expect(await sdkErrorOf(s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'refusals', UploadId: uploadId, MultipartUpload: { Parts: parts }, MpuObjectSize: first.length })))).toEqual({ name: 'InvalidRequest', status: 400 });
    expect(await sdkErrorOf(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'refusals' })))).toMatchObject({ status: 404 });
    const listed = await s3.send(new ListPartsCommand({ Bucket: bucket, Key: 'refusals', UploadId: uploadId }));
    expect(listed.Parts!.map((part) => part.PartNumber)).toEqual([1, 2]);
    const done = await s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'refusals', UploadId: uploadId, MultipartUpload: { Parts: parts }, MpuObjectSize: first.length + second.length }));
    expect(done.ChecksumCRC32C).toMatch(/-2$/);
  });

  it('GET and HEAD of one part (partNumber) with checksum mode carry that part\'s checksum, which the SDK checks', async () => {
    const part = (await digest('SHA256', second)).toString('base64');
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'composite', PartNumber: 2, ChecksumMode: 'ENABLED' }));
    expect([head.ChecksumSHA256, head.PartsCount]).toEqual([part, 2]);
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'composite', PartNumber: 2, ChecksumMode: 'ENABLED' }));
    expect(got.ChecksumSHA256).toBe(part);
    expect(await got.Body!.transformToString()).toBe(second.toString());
  });

  it('a part sent without a checksum, or copied, gets one in its upload\'s algorithm, in the answer', async () => {
    const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'unsent', ChecksumAlgorithm: 'CRC32C' }));
    const body = Buffer.from('a part without a checksum header');
    const sent = await signedRequest(server.url, { method: 'PUT', path: `/${bucket}/unsent`, query: { partNumber: '1', uploadId: created.UploadId! }, body });
    expect([sent.status, sent.headers['x-amz-checksum-crc32c']]).toEqual([200, (await digest('CRC32C', body)).toString('base64')]);
    const copied = await s3.send(new UploadPartCopyCommand({ Bucket: bucket, Key: 'unsent', UploadId: created.UploadId, PartNumber: 2, CopySource: `${bucket}/single-SHA1` }));
    expect(copied.CopyPartResult!.ChecksumCRC32C).toBe((await digest('CRC32C', Buffer.from('checked body'))).toString('base64'));
  });

  it('a copy keeps a checksum of its source\'s algorithm (or the one it names) over the whole object', async () => {
    const kept = await s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'copy-crc64', CopySource: `${bucket}/single-CRC64NVME` }));
    const source = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'single-CRC64NVME', ChecksumMode: 'ENABLED' }));
    expect([kept.CopyObjectResult!.ChecksumCRC64NVME, kept.CopyObjectResult!.ChecksumType]).toEqual([source.ChecksumCRC64NVME, 'FULL_OBJECT']);
    const whole = (await digest('SHA256', Buffer.concat([first, second]))).toString('base64');
    const fromComposite = await s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'copy-composite', CopySource: `${bucket}/composite` }));
    expect([fromComposite.CopyObjectResult!.ChecksumSHA256, fromComposite.CopyObjectResult!.ChecksumType]).toEqual([whole, 'FULL_OBJECT']);
    const named = await s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'copy-named', CopySource: `${bucket}/single-CRC32`, ChecksumAlgorithm: 'SHA1' }));
    expect(named.CopyObjectResult!.ChecksumSHA1).toBe((await digest('SHA1', Buffer.from('checked body'))).toString('base64'));
    const refused = await signedRequest(server.url, { method: 'PUT', path: `/${bucket}/copy-refused`, headers: { 'x-amz-copy-source': `/${bucket}/single-CRC32`, 'x-amz-checksum-algorithm': 'MD4' } });
    expect([refused.status, /<Code>InvalidRequest<\/Code>/.test(refused.body)]).toEqual([400, true]);
    expect(await sdkErrorOf(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'copy-refused' })))).toMatchObject({ status: 404 });
  });

  it('boto3 reads the stored checksums of a multipart object (GetObjectAttributes, HEAD)', () => {
    const script = [
      'import boto3, json, sys',
      "s3 = boto3.client('s3', endpoint_url=sys.argv[1], aws_access_key_id=sys.argv[2], aws_secret_access_key=sys.argv[3], region_name='us-east-1')",
      "a = s3.get_object_attributes(Bucket='sums', Key='composite', ObjectAttributes=['Checksum', 'ObjectParts'])",
      "h = s3.head_object(Bucket='sums', Key='full-CRC64NVME', ChecksumMode='ENABLED')",
      "print(json.dumps([a['Checksum']['ChecksumType'], len(a['ObjectParts']['Parts']), h['ChecksumType'], 'ChecksumCRC64NVME' in h]))",
    ].join('\n');
    const output = execFileSync('python3', ['-c', script, server.url, testCredentials.accessKeyId, testCredentials.secretAccessKey], { encoding: 'utf8' });
    expect(JSON.parse(output)).toEqual(['COMPOSITE', 2, 'FULL_OBJECT', true]);
  });
});
