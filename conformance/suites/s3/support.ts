/** What the S3 check files share: reading bodies, writing small objects, asserting error answers. */
import { createHash } from 'node:crypto';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, type PutObjectCommandInput } from '@aws-sdk/client-s3';
import { errorOf, expectThat, type Target } from '../../runner/check.js';
import type { RawAnswer } from '../../runner/http.js';

export const md5Hex = (bytes: Uint8Array | string) => createHash('md5').update(bytes).digest('hex');

export async function bodyOf(target: Target, bucket: string, key: string, versionId?: string): Promise<Buffer> {
  const object = await target.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, VersionId: versionId }));
  return Buffer.from(await object.Body!.transformToByteArray());
}

export async function textOf(target: Target, bucket: string, key: string, versionId?: string): Promise<string> {
  return (await bodyOf(target, bucket, key, versionId)).toString('utf8');
}

export async function put(target: Target, bucket: string, key: string, body: string | Buffer, extra: Partial<PutObjectCommandInput> = {}) {
  return target.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ...extra }));
}

/** A bucket of this run holding `key` with `body`. */
export async function bucketWith(target: Target, purpose: string, key: string, body: string | Buffer): Promise<string> {
  const bucket = await target.makeBucket(purpose);
  await put(target, bucket, key, body);
  return bucket;
}

export async function expectAbsent(target: Target, bucket: string, key: string, what: string): Promise<void> {
  const head = await errorOf(target.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key })));
  expectThat(head.status === 404, `${what} left ${JSON.stringify(key)} behind (HEAD answered ${head.name})`);
}

/** An SDK call must fail with this S3 error code (and status, when given). */
export async function expectError(promise: Promise<unknown>, code: string, what: string, status?: number): Promise<void> {
  const answer = await errorOf(promise);
  expectThat(answer.name === code && (status === undefined || answer.status === status), `${what} answered ${answer.name}${answer.status ? ` (${answer.status})` : ''}, expected ${code}${status ? ` (${status})` : ''}`);
}

/** A raw answer must carry this status and S3 error code in its XML body. */
export function expectRawError(answer: RawAnswer, status: number, code: string, what: string): void {
  expectThat(answer.status === status && answer.code === code, `${what} answered ${answer.status} ${answer.code || answer.text.slice(0, 80)}, expected ${status} ${code}`);
}

/** A deterministic body of `size` bytes whose every byte depends on its offset. */
export function patterned(size: number, salt = 0): Buffer {
  const bytes = Buffer.alloc(size);
  for (let index = 0; index < size; index += 1) bytes[index] = (index * 31 + salt) & 0xff;
  return bytes;
}

export const encodeKey = (key: string) => key.split('/').map(encodeURIComponent).join('/');

/** A raw answer in a message: its status and error code. */
export const describeAnswer = (answer: RawAnswer) => `${answer.status}${answer.code ? ` ${answer.code}` : ''}`;

/** A repeatable element of a parsed XML answer as a list (absent: empty). */
export const listOf = (value: unknown): Record<string, any>[] => (value === undefined || value === '' ? [] : Array.isArray(value) ? value : [value as Record<string, any>]);

/** Headers of a configuration body: its type and Content-MD5 (which AWS asks of configuration PUTs). */
export const bodyHeaders = (body: string, type = 'application/xml') => ({ 'content-type': type, 'content-md5': createHash('md5').update(body).digest('base64') });
