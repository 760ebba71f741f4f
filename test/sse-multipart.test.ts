/**
 * Encrypted multipart uploads and POST form uploads through a real server and the AWS SDK:
 * SSE-S3, SSE-KMS with a key id and context, SSE-C and the bucket's default; every part sealed,
 * ListParts and GET in the client's sizes, ranges across parts and `partNumber`, AWS's response
 * headers, opaque ETags for SSE-KMS and SSE-C; UploadPartCopy between encryptions; refusals that
 * store nothing; the drives never hold plaintext.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import {
  CompleteMultipartUploadCommand, CreateBucketCommand, CreateMultipartUploadCommand, GetObjectCommand, HeadObjectCommand, ListPartsCommand, PutBucketEncryptionCommand,
  PutObjectCommand, UploadPartCommand, UploadPartCopyCommand, type CreateMultipartUploadCommandInput, type S3Client,
} from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { sdkErrorOf } from './helpers/codes.js';

const MiB = 1024 * 1024;
let root: string;
let server: SvcProcess;
let s3: S3Client;

const customer = (fill: number) => {
  const key = Buffer.alloc(32, fill);
  return { SSECustomerAlgorithm: 'AES256', SSECustomerKey: key.toString('base64'), SSECustomerKeyMD5: createHash('md5').update(key).digest('base64') };
};
const copySourceCustomer = (fill: number) => {
  const key = customer(fill);
  return { CopySourceSSECustomerAlgorithm: key.SSECustomerAlgorithm, CopySourceSSECustomerKey: key.SSECustomerKey, CopySourceSSECustomerKeyMD5: key.SSECustomerKeyMD5 };
};
const md5 = (bytes: Uint8Array) => createHash('md5').update(bytes).digest('hex');
const marker = `mp-marker-${randomBytes(6).toString('hex')}`;

function markedBody(size: number, tag: string): Buffer {
  const body = Buffer.alloc(size);
  const unit = Buffer.from(`${marker}|${tag}|`);
  for (let offset = 0; offset < size; offset += unit.length) unit.copy(body, offset, 0, Math.min(unit.length, size - offset));
  return body;
}

async function failure(promise: Promise<unknown>): Promise<{ name: string; status?: number }> {
  const error = await sdkErrorOf(promise);
  return { name: error.name ?? 'no error', ...(error.status !== undefined ? { status: error.status } : {}) };
}

async function filesWithMarker(): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    if ((await readFile(path)).includes(Buffer.from(marker))) found.push(path);
  }
  return found;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-sse-mp-'));
  server = await startSvc({ args: [join(root, 'd{1...4}')], env: { SVC_KMS_SECRET_KEY: `svc-root:${randomBytes(32).toString('base64')}`, SVC_KMS_ALLOW_INSECURE_SSEC: 'on', SVC_CONSOLE_ENABLE: 'false' } });
  s3 = s3ClientFor(server.url);
  await s3.send(new CreateBucketCommand({ Bucket: 'mp-sse' }));
  expect((await admin(server.url, 'POST', '/svc/admin/v4/kms/key/create', 'key-id=parts')).status).toBe(200);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

type Read = Partial<ReturnType<typeof customer>>;

/** Uploads `sizes` as parts of a new upload of `key` (its encryption in `create`, part keys in `read`) and completes it. */
async function uploadInParts(key: string, sizes: number[], create: Partial<CreateMultipartUploadCommandInput>, read: Read, bucket = 'mp-sse') {
  const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ...create }));
  const bodies = sizes.map((size, index) => markedBody(size, `${key}-${index}`));
  const parts: { PartNumber: number; ETag: string }[] = [];
  const answers = [];
  for (const [index, body] of bodies.entries()) {
    const answer = await s3.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: created.UploadId, PartNumber: index + 1, Body: body, ...read }));
    answers.push(answer);
    parts.push({ PartNumber: index + 1, ETag: answer.ETag! });
  }
  const listed = await s3.send(new ListPartsCommand({ Bucket: bucket, Key: key, UploadId: created.UploadId }));
  const completed = await s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: created.UploadId, MultipartUpload: { Parts: parts }, ...read }));
  return { created, answers, listed, completed, bodies, body: Buffer.concat(bodies) };
}

async function bytesOf(input: ConstructorParameters<typeof GetObjectCommand>[0]) {
  const got = await s3.send(new GetObjectCommand(input));
  return { got, bytes: Buffer.from(await got.Body!.transformToByteArray()) };
}

const kinds: [string, Partial<CreateMultipartUploadCommandInput>, Read, Record<string, unknown>][] = [
  ['sse-s3', { ServerSideEncryption: 'AES256' }, {}, { ServerSideEncryption: 'AES256' }],
  ['sse-kms', { ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'parts', SSEKMSEncryptionContext: Buffer.from(JSON.stringify({ team: 'data' })).toString('base64') }, {}, { ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'parts' }],
  ['sse-c', customer(3), customer(3), { SSECustomerAlgorithm: 'AES256', SSECustomerKeyMD5: customer(3).SSECustomerKeyMD5 }],
];

describe('encrypted multipart uploads', () => {
  for (const [kind, create, read, headers] of kinds) {
    it(`${kind}: every call answers AWS's headers; ListParts, GET, ranges across parts and partNumber are the client's; the drives hold no plaintext`, async () => {
      const sizes = [5 * MiB + 70_001, 5 * MiB, 12_345];
      const { created, answers, listed, completed, bodies, body } = await uploadInParts(kind, sizes, create, read);
      expect(created).toMatchObject(headers);
      for (const answer of answers) expect(answer).toMatchObject(headers);
      // CompleteMultipartUpload's answer carries no SSE-C fields in the SDK's model: only SSE-S3's and SSE-KMS's.
      expect(completed).toMatchObject(Object.fromEntries(Object.entries(headers).filter(([name]) => !name.startsWith('SSECustomer'))));
      expect(listed.Parts?.map((part) => part.Size)).toEqual(sizes);
      // SSE-S3 parts keep the MD5 ETag; SSE-KMS and SSE-C ETags are opaque. The object's ETag keeps -N either way.
      const partEtags = answers.map((answer) => answer.ETag);
      if (kind === 'sse-s3') expect(partEtags).toEqual(bodies.map((part) => `"${md5(part)}"`));
      else for (const [index, etag] of partEtags.entries()) expect(etag).not.toBe(`"${md5(bodies[index]!)}"`);
      expect(completed.ETag).toMatch(/^"[0-9a-f]{32}-3"$/);
      const head = await s3.send(new HeadObjectCommand({ Bucket: 'mp-sse', Key: kind, ...read }));
      expect([head.ContentLength, head.ETag]).toEqual([body.length, completed.ETag]);
      expect(head).toMatchObject(headers);
      const whole = await bytesOf({ Bucket: 'mp-sse', Key: kind, ...read });
      expect(whole.bytes.equals(body)).toBe(true);
      expect(whole.got).toMatchObject(headers);
      const boundary = sizes[0]!;
      for (const [from, to] of [[boundary - 10, boundary + 10], [0, 0], [boundary - 1, boundary + sizes[1]! + 5], [body.length - 7, body.length - 1], [65_530, 65_540]] as const) {
        const ranged = await bytesOf({ Bucket: 'mp-sse', Key: kind, Range: `bytes=${from}-${to}`, ...read });
        expect(ranged.got.ContentRange).toBe(`bytes ${from}-${to}/${body.length}`);
        expect(ranged.bytes.equals(body.subarray(from, to + 1)), `${from}-${to}`).toBe(true);
      }
      let offset = 0;
      for (const [index, size] of sizes.entries()) {
        const part = await bytesOf({ Bucket: 'mp-sse', Key: kind, PartNumber: index + 1, ...read });
        expect([part.got.ContentLength, part.got.PartsCount]).toEqual([size, 3]);
        expect(part.bytes.equals(body.subarray(offset, offset + size)), `part ${index + 1}`).toBe(true);
        offset += size;
      }
      expect(await filesWithMarker()).toEqual([]);
    });
  }

  it('an empty last part and a part sent again under the same number (a new key each time)', async () => {
    const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'mp-sse', Key: 'again', ServerSideEncryption: 'AES256' }));
    const first = markedBody(5 * MiB, 'first');
    const second = markedBody(5 * MiB, 'second');
    const upload = (PartNumber: number, Body: Buffer) => s3.send(new UploadPartCommand({ Bucket: 'mp-sse', Key: 'again', UploadId: created.UploadId, PartNumber, Body }));
    await upload(1, first);
    const kept = await upload(1, second);
    const empty = await upload(2, Buffer.alloc(0));
    const listed = await s3.send(new ListPartsCommand({ Bucket: 'mp-sse', Key: 'again', UploadId: created.UploadId }));
    expect(listed.Parts?.map((part) => [part.PartNumber, part.Size])).toEqual([[1, 5 * MiB], [2, 0]]);
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'mp-sse', Key: 'again', UploadId: created.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: kept.ETag! }, { PartNumber: 2, ETag: empty.ETag! }] } }));
    expect((await bytesOf({ Bucket: 'mp-sse', Key: 'again' })).bytes.equals(second)).toBe(true);
    const emptyPart = await bytesOf({ Bucket: 'mp-sse', Key: 'again', PartNumber: 2 });
    expect([emptyPart.got.ContentLength, emptyPart.bytes.length]).toEqual([0, 0]);
    expect((await bytesOf({ Bucket: 'mp-sse', Key: 'again', Range: `bytes=${5 * MiB - 3}-` })).bytes.equals(second.subarray(5 * MiB - 3))).toBe(true);
  });

  it('SSE-C: a part without the upload\'s key or with another key is refused (400) and stores nothing; a key on a plain upload is refused', async () => {
    const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'mp-sse', Key: 'refused', ...customer(4) }));
    const body = markedBody(1000, 'refused');
    const part = (extra: Read) => s3.send(new UploadPartCommand({ Bucket: 'mp-sse', Key: 'refused', UploadId: created.UploadId, PartNumber: 1, Body: body, ...extra }));
    expect(await failure(part({}))).toEqual({ name: 'InvalidRequest', status: 400 });
    expect(await failure(part(customer(5)))).toEqual({ name: 'InvalidRequest', status: 400 });
    expect((await s3.send(new ListPartsCommand({ Bucket: 'mp-sse', Key: 'refused', UploadId: created.UploadId }))).Parts ?? []).toEqual([]);
    const kept = await part(customer(4));
    const complete = (extra: Read) => s3.send(new CompleteMultipartUploadCommand({ Bucket: 'mp-sse', Key: 'refused', UploadId: created.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: kept.ETag! }] }, ...extra }));
    expect(await failure(complete(customer(5)))).toEqual({ name: 'InvalidRequest', status: 400 });
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'mp-sse', Key: 'refused', ...customer(4) })))).status).toBe(404);
    await complete({});
    expect((await bytesOf({ Bucket: 'mp-sse', Key: 'refused', ...customer(4) })).bytes.equals(body)).toBe(true);
    expect(await failure(s3.send(new GetObjectCommand({ Bucket: 'mp-sse', Key: 'refused', PartNumber: 1 })))).toEqual({ name: 'InvalidRequest', status: 400 });
    expect(await failure(s3.send(new GetObjectCommand({ Bucket: 'mp-sse', Key: 'refused', ...customer(5) })))).toEqual({ name: 'AccessDenied', status: 403 });
    const plain = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'mp-sse', Key: 'plain-upload' }));
    const clear = Buffer.from('stored in the clear '.repeat(50)); // a plain upload's part: no marker
    expect(plain.ServerSideEncryption).toBeUndefined();
    const keyed = s3.send(new UploadPartCommand({ Bucket: 'mp-sse', Key: 'plain-upload', UploadId: plain.UploadId, PartNumber: 1, Body: clear, ...customer(4) }));
    expect(await failure(keyed)).toEqual({ name: 'InvalidRequest', status: 400 });
    // SSE-S3 headers belong to CreateMultipartUpload, not to a part.
    const misplaced = s3.send(new UploadPartCommand({ Bucket: 'mp-sse', Key: 'plain-upload', UploadId: plain.UploadId, PartNumber: 1, Body: clear, ...({ ServerSideEncryption: 'AES256' } as object) }));
    const refusal = await failure(misplaced);
    expect(refusal.name === 'no error' || refusal.status === 400).toBe(true);
    const unknownKey = s3.send(new CreateMultipartUploadCommand({ Bucket: 'mp-sse', Key: 'unknown-key', ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'no-such-key' }));
    expect(await failure(unknownKey)).toEqual({ name: 'KMS.NotFoundException', status: 400 });
  });

  it('UploadPartCopy: from an SSE-C source (with its copy-source key) and from a plain one, into encrypted uploads', async () => {
    const source = markedBody(6 * MiB + 17, 'copy-source');
    await s3.send(new PutObjectCommand({ Bucket: 'mp-sse', Key: 'source-ssec', Body: source, ...customer(6) }));
    await s3.send(new PutObjectCommand({ Bucket: 'mp-sse', Key: 'source-plain', Body: Buffer.from('plain tail') }));
    const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'mp-sse', Key: 'copied', ...customer(7) }));
    const copyPart = (PartNumber: number, CopySource: string, extra: object) => s3.send(new UploadPartCopyCommand({ Bucket: 'mp-sse', Key: 'copied', UploadId: created.UploadId, PartNumber, CopySource, ...extra }));
    expect(await failure(copyPart(1, 'mp-sse/source-ssec', customer(7)))).toEqual({ name: 'InvalidRequest', status: 400 });
    expect(await failure(copyPart(1, 'mp-sse/source-plain', {}))).toEqual({ name: 'InvalidRequest', status: 400 });
    const first = await copyPart(1, 'mp-sse/source-ssec', { ...customer(7), ...copySourceCustomer(6), CopySourceRange: `bytes=1-${5 * MiB + 100}` });
    expect([first.SSECustomerAlgorithm, first.SSECustomerKeyMD5]).toEqual(['AES256', customer(7).SSECustomerKeyMD5]);
    const second = await copyPart(2, 'mp-sse/source-plain', customer(7));
    const listed = await s3.send(new ListPartsCommand({ Bucket: 'mp-sse', Key: 'copied', UploadId: created.UploadId }));
    expect(listed.Parts?.map((part) => part.Size)).toEqual([5 * MiB + 100, 10]);
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'mp-sse', Key: 'copied', UploadId: created.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: first.CopyPartResult!.ETag! }, { PartNumber: 2, ETag: second.CopyPartResult!.ETag! }] } }));
    const expected = Buffer.concat([source.subarray(1, 5 * MiB + 101), Buffer.from('plain tail')]);
    expect((await bytesOf({ Bucket: 'mp-sse', Key: 'copied', ...customer(7) })).bytes.equals(expected)).toBe(true);
    // An SSE-S3 upload copying from the SSE-C source.
    const s3Upload = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'mp-sse', Key: 'copied-s3', ServerSideEncryption: 'AES256' }));
    const only = await s3.send(new UploadPartCopyCommand({ Bucket: 'mp-sse', Key: 'copied-s3', UploadId: s3Upload.UploadId, PartNumber: 1, CopySource: 'mp-sse/source-ssec', ...copySourceCustomer(6) }));
    expect(only.ServerSideEncryption).toBe('AES256');
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'mp-sse', Key: 'copied-s3', UploadId: s3Upload.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: only.CopyPartResult!.ETag! }] } }));
    expect((await bytesOf({ Bucket: 'mp-sse', Key: 'copied-s3' })).bytes.equals(source)).toBe(true);
    expect(await filesWithMarker()).toEqual([]);
  });

  it('the bucket\'s default encryption applies to a multipart upload that asks for none', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'mp-default' }));
    await s3.send(new PutBucketEncryptionCommand({ Bucket: 'mp-default', ServerSideEncryptionConfiguration: { Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] } }));
    const { created, completed, body } = await uploadInParts('defaulted', [5 * MiB, 3], {}, {}, 'mp-default');
    expect([created.ServerSideEncryption, completed.ServerSideEncryption]).toEqual(['AES256', 'AES256']);
    const got = await bytesOf({ Bucket: 'mp-default', Key: 'defaulted' });
    expect([got.got.ServerSideEncryption, got.bytes.equals(body)]).toEqual(['AES256', true]);
  });
});

describe('POST form uploads', () => {
  async function postForm(url: string, fields: Record<string, string>, file: Buffer): Promise<Response> {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    form.append('file', new Blob([file]), 'upload.bin');
    return fetch(url, { method: 'POST', body: form, redirect: 'manual' });
  }
  const post = (key: string, fields: Record<string, string>, conditions: unknown[] = Object.entries(fields).map(([name, value]) => ({ [name]: value }))) =>
    createPresignedPost(s3, { Bucket: 'mp-sse', Key: key, Fields: fields, Conditions: conditions as never, Expires: 300 });

  it('stores the file encrypted as its fields ask (SSE-S3, SSE-KMS with a key id, SSE-C) and as the policy allows', async () => {
    const body = markedBody(100_000, 'form');
    const s3Form = await post('form/s3', { 'x-amz-server-side-encryption': 'AES256' });
    const s3Answer = await postForm(s3Form.url, s3Form.fields, body);
    expect([s3Answer.status, s3Answer.headers.get('x-amz-server-side-encryption')]).toEqual([204, 'AES256']);
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'mp-sse', Key: 'form/s3' }))).ServerSideEncryption).toBe('AES256');
    const kmsFields = { 'x-amz-server-side-encryption': 'aws:kms', 'x-amz-server-side-encryption-aws-kms-key-id': 'parts' };
    const kmsForm = await post('form/kms', kmsFields);
    const kmsAnswer = await postForm(kmsForm.url, kmsForm.fields, body);
    expect([kmsAnswer.status, kmsAnswer.headers.get('x-amz-server-side-encryption-aws-kms-key-id')]).toEqual([204, 'parts']);
    expect(kmsAnswer.headers.get('etag')).not.toBe(`"${md5(body)}"`);
    const key = customer(8);
    const ssecFields = { 'x-amz-server-side-encryption-customer-algorithm': 'AES256', 'x-amz-server-side-encryption-customer-key': key.SSECustomerKey, 'x-amz-server-side-encryption-customer-key-md5': key.SSECustomerKeyMD5 };
    const ssecForm = await post('form/ssec', ssecFields);
    expect((await postForm(ssecForm.url, ssecForm.fields, body)).status).toBe(204);
    expect((await bytesOf({ Bucket: 'mp-sse', Key: 'form/ssec', ...key })).bytes.equals(body)).toBe(true);
    expect((await failure(s3.send(new GetObjectCommand({ Bucket: 'mp-sse', Key: 'form/ssec' })))).status).toBe(400);
    for (const name of ['form/s3', 'form/kms']) expect((await bytesOf({ Bucket: 'mp-sse', Key: name })).bytes.equals(body)).toBe(true);
    expect(await filesWithMarker()).toEqual([]);
  });

  it('refuses a form whose encryption fields the policy does not allow, storing nothing; the bucket default applies to a plain form', async () => {
    const body = Buffer.from('form body');
    const only = await post('form/refused', { 'x-amz-server-side-encryption': 'AES256' });
    const swapped = await postForm(only.url, { ...only.fields, 'x-amz-server-side-encryption': 'aws:kms' }, body);
    expect(swapped.status).toBe(403);
    const unnamed = await post('form/refused', {}, []);
    expect((await postForm(unnamed.url, { ...unnamed.fields, 'x-amz-server-side-encryption': 'AES256' }, body)).status).toBe(403);
    const badAlgorithm = await post('form/refused', { 'x-amz-server-side-encryption': 'AES512' });
    const bad = await postForm(badAlgorithm.url, badAlgorithm.fields, body);
    expect([bad.status, await bad.text()]).toEqual([400, expect.stringContaining('<Code>InvalidArgument</Code>')]);
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'mp-sse', Key: 'form/refused' })))).status).toBe(404);
    const defaulted = createPresignedPost(s3, { Bucket: 'mp-default', Key: 'form/plain', Expires: 300 });
    const answer = await postForm((await defaulted).url, (await defaulted).fields, body);
    expect([answer.status, answer.headers.get('x-amz-server-side-encryption')]).toEqual([204, 'AES256']);
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'mp-default', Key: 'form/plain' }))).ServerSideEncryption).toBe('AES256');
  });
});
