/**
 * Server-side encryption through a real server and the AWS SDK: SSE-S3, SSE-KMS with a named key
 * of the built-in KMS (created with `rc admin kms key create`), SSE-C; ranges and HEAD; what the
 * drives hold (no plaintext); refusals with AWS's status and code that store nothing and return no
 * byte; a restart with another root key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { CopyObjectCommand, CreateBucketCommand, CreateMultipartUploadCommand, DeleteBucketEncryptionCommand, GetBucketEncryptionCommand, PutBucketEncryptionCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { rcIn } from './helpers/rc-process.js';
import { admin } from './helpers/admin-client.js';
import { codeOf, sdkErrorOf } from './helpers/codes.js';
import { customerKeyOf, writeEncryptionOf } from '../src/api/s3/sse-headers.js';
import { readKmsSettings } from '../src/cluster/kms-config.js';

const rootKey = (name: string) => `${name}:${randomBytes(32).toString('base64')}`;
const MiB = 1024 * 1024;

let root: string;
let server: SvcProcess;
let s3: S3Client;
let home: string;
const { ok, rc } = rcIn(() => home);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-sse-'));
  home = join(root, 'home');
  server = await startSvc({ args: [join(root, 'd{1...4}')], env: { SVC_KMS_SECRET_KEY: rootKey('svc-root'), SVC_KMS_ALLOW_INSECURE_SSEC: 'on' } });
  s3 = s3ClientFor(server.url);
  await s3.send(new CreateBucketCommand({ Bucket: 'sealed' }));
  await ok('alias', 'set', 'local', server.url, testCredentials.accessKeyId, testCredentials.secretAccessKey);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

async function failure(promise: Promise<unknown>): Promise<{ name: string; status?: number }> {
  const error = await sdkErrorOf(promise);
  return { name: error.name ?? 'no error', ...(error.status !== undefined ? { status: error.status } : {}) };
}

/** A body with a marker repeated through it, so a drive holding any of its plaintext is found. */
function markedBody(size: number, marker: string): Buffer {
  const body = Buffer.alloc(size);
  const unit = Buffer.from(`${marker}|`);
  for (let offset = 0; offset < size; offset += unit.length) unit.copy(body, offset, 0, Math.min(unit.length, size - offset));
  return body;
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(entries.map((entry) => (entry.isDirectory() ? filesUnder(join(dir, entry.name)) : Promise.resolve([join(dir, entry.name)]))));
  return nested.flat();
}

async function drivesContain(marker: string): Promise<string[]> {
  const found: string[] = [];
  for (const file of await filesUnder(root)) {
    if (file.startsWith(home)) continue;
    if ((await stat(file)).size > 64 * MiB) continue;
    if ((await readFile(file)).includes(Buffer.from(marker))) found.push(file);
  }
  return found;
}

const md5 = (bytes: Uint8Array) => createHash('md5').update(bytes).digest('hex');

describe('SSE-S3', () => {
  it('PUT, GET, ranges and HEAD answer the client\'s bytes, sizes and ETag; the drives hold no plaintext', async () => {
    for (const [key, size] of [['small', 1000], ['empty', 0], ['large', 3 * MiB + 12_345]] as const) {
      const marker = `plaintext-marker-${key}-${randomBytes(6).toString('hex')}`;
      const body = markedBody(size, marker);
      const put = await s3.send(new PutObjectCommand({ Bucket: 'sealed', Key: key, Body: body, ServerSideEncryption: 'AES256' }));
      expect(put.ServerSideEncryption).toBe('AES256');
      expect(put.ETag).toBe(`"${md5(body)}"`);
      const got = await s3.send(new GetObjectCommand({ Bucket: 'sealed', Key: key }));
      expect([got.ServerSideEncryption, got.ContentLength, got.ETag]).toEqual(['AES256', size, `"${md5(body)}"`]);
      expect(Buffer.from(await got.Body!.transformToByteArray()).equals(body)).toBe(true);
      const head = await s3.send(new HeadObjectCommand({ Bucket: 'sealed', Key: key }));
      expect([head.ServerSideEncryption, head.ContentLength]).toEqual(['AES256', size]);
      if (size > 0) {
        for (const [from, to] of [[0, 0], [size - 1, size - 1], [Math.floor(size / 3), Math.min(size - 1, Math.floor(size / 3) + 70_000)]] as const) {
          const ranged = await s3.send(new GetObjectCommand({ Bucket: 'sealed', Key: key, Range: `bytes=${from}-${to}` }));
          expect(ranged.ContentRange).toBe(`bytes ${from}-${to}/${size}`);
          expect(Buffer.from(await ranged.Body!.transformToByteArray()).equals(body.subarray(from, to + 1))).toBe(true);
        }
        expect(await drivesContain(marker)).toEqual([]);
        const part = await s3.send(new GetObjectCommand({ Bucket: 'sealed', Key: key, PartNumber: 1 }));
        expect(part.ContentLength).toBe(size);
        expect(Buffer.from(await part.Body!.transformToByteArray()).equals(body)).toBe(true);
      }
    }
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'sealed' }));
    expect(Object.fromEntries((listed.Contents ?? []).map((entry) => [entry.Key, entry.Size]))).toMatchObject({ small: 1000, empty: 0, large: 3 * MiB + 12_345 });
  });

  it('inlines by the stored size: an encrypted object inlines only when its sealed packages fit the budget', async () => {
    // Four drives, EC:2: K = 2 and 128 KiB a shard, so at most 256 KiB stored inline; sealing adds 16 bytes a 64 KiB package.
    const cases: [string, number, boolean, boolean][] = [['plain-at-budget', 262_144, false, true], ['sealed-at-budget', 262_144 - 64, true, true], ['sealed-over-budget', 262_144, true, false]];
    for (const [key, size, encrypted, inline] of cases) {
      await s3.send(new PutObjectCommand({ Bucket: 'sealed', Key: key, Body: Buffer.alloc(size, 7), ...(encrypted ? { ServerSideEncryption: 'AES256' as const } : {}) }));
      const entries = await readdir(join(root, 'd1', 'sealed', key));
      expect(entries.length === 1 && entries[0] === 'xl.meta', `${key}: ${entries.join(', ')}`).toBe(inline);
      expect((await (await s3.send(new GetObjectCommand({ Bucket: 'sealed', Key: key }))).Body!.transformToByteArray()).length).toBe(size);
    }
  });

  it('refuses unknown algorithms and SSE headers on operations that do not take them, storing nothing', async () => {
    const bad = await failure(s3.send(new PutObjectCommand({ Bucket: 'sealed', Key: 'bad-algorithm', Body: 'x', ServerSideEncryption: 'AES512' as 'AES256' })));
    expect(bad).toEqual({ name: 'InvalidArgument', status: 400 });
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'sealed', Key: 'bad-algorithm' })))).status).toBe(404);
    const onGet = await failure(s3.send(new GetObjectCommand({ Bucket: 'sealed', Key: 'small', ...({ ServerSideEncryption: 'AES256' } as object) })));
    expect(onGet.name === 'no error' || onGet.status === 400).toBe(true);
  });
});

describe('the built-in KMS and SSE-KMS', () => {
  it('creates, lists and describes keys with rc; SSE-KMS with a key id stores under it; an unknown key id is KMS.NotFoundException', async () => {
    expect(await ok('admin', 'kms', 'key', 'create', 'local', 'backups')).toContain('backups');
    expect((await rc('admin', 'kms', 'key', 'create', 'local', 'backups')).code).not.toBe(0);
    const listed = JSON.parse(await ok('admin', 'kms', 'key', 'ls', 'local', '--json')) as { keys: { keyId: string; origin: string; decryptionOk: boolean }[] };
    expect(listed.keys.map((key) => [key.keyId, key.origin, key.decryptionOk])).toEqual([['svc-root', 'root', true], ['backups', 'named', true]]);
    expect(await ok('admin', 'kms', 'key', 'status', 'local', 'backups')).toMatch(/backups\s+named/);
    const unknownStatus = await admin(server.url, 'GET', '/svc/admin/v4/kms/key/status', 'key-id=nope');
    expect([unknownStatus.status, unknownStatus.body.Code]).toEqual([400, 'KMS.NotFoundException']);

    const body = markedBody(200_000, `kms-marker-${randomBytes(4).toString('hex')}`);
    const put = await s3.send(new PutObjectCommand({ Bucket: 'sealed', Key: 'kms', Body: body, ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'backups' }));
    expect([put.ServerSideEncryption, put.SSEKMSKeyId]).toEqual(['aws:kms', 'backups']);
    // SSE-KMS ETags are opaque (AWS's rule): not the plaintext's MD5, and the same on every read.
    expect(put.ETag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(put.ETag).not.toBe(`"${md5(body)}"`);
    const got = await s3.send(new GetObjectCommand({ Bucket: 'sealed', Key: 'kms', Range: 'bytes=65530-131080' }));
    expect(got.ETag).toBe(put.ETag);
    expect([got.ServerSideEncryption, got.SSEKMSKeyId]).toEqual(['aws:kms', 'backups']);
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(body.subarray(65_530, 131_081))).toBe(true);
    const unknown = await failure(s3.send(new PutObjectCommand({ Bucket: 'sealed', Key: 'kms-unknown', Body: body, ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'no-such-key' })));
    expect(unknown).toEqual({ name: 'KMS.NotFoundException', status: 400 });
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'sealed', Key: 'kms-unknown' })))).status).toBe(404);
  });
});

describe('SSE-C', () => {
  const keyOf = (fill: number) => {
    const key = Buffer.alloc(32, fill);
    return { SSECustomerAlgorithm: 'AES256', SSECustomerKey: key.toString('base64'), SSECustomerKeyMD5: createHash('md5').update(key).digest('base64') };
  };

  it('reads only with the key it was written with: no key 400, a wrong key 403, a bad MD5 400, never a byte of the object', async () => {
    const body = markedBody(150_000, `ssec-marker-${randomBytes(4).toString('hex')}`);
    const put = await s3.send(new PutObjectCommand({ Bucket: 'sealed', Key: 'customer', Body: body, ...keyOf(1) }));
    expect([put.SSECustomerAlgorithm, put.SSECustomerKeyMD5]).toEqual(['AES256', keyOf(1).SSECustomerKeyMD5]);
    expect(put.ETag).not.toBe(`"${md5(body)}"`);
    const got = await s3.send(new GetObjectCommand({ Bucket: 'sealed', Key: 'customer', ...keyOf(1) }));
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(body)).toBe(true);
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'sealed', Key: 'customer', ...keyOf(1) }))).ContentLength).toBe(body.length);
    expect(await failure(s3.send(new GetObjectCommand({ Bucket: 'sealed', Key: 'customer' })))).toEqual({ name: 'InvalidRequest', status: 400 });
    expect(await failure(s3.send(new GetObjectCommand({ Bucket: 'sealed', Key: 'customer', ...keyOf(2) })))).toEqual({ name: 'AccessDenied', status: 403 });
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'sealed', Key: 'customer' })))).status).toBe(400);
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'sealed', Key: 'customer', ...keyOf(2) })))).status).toBe(403);
    // The SDK computes the key's MD5 itself: a short key is what it lets through (a wrong MD5 is checked below, without it).
    const shortKey = await failure(s3.send(new PutObjectCommand({ Bucket: 'sealed', Key: 'customer-bad', Body: body, SSECustomerAlgorithm: 'AES256', SSECustomerKey: Buffer.alloc(16, 3).toString('base64') })));
    expect(shortKey).toEqual({ name: 'InvalidArgument', status: 400 });
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'sealed', Key: 'customer-bad', ...keyOf(3) })))).status).toBe(404);
    // A key sent for an object that is not SSE-C is refused too.
    expect((await failure(s3.send(new GetObjectCommand({ Bucket: 'sealed', Key: 'small', ...keyOf(1) })))).status).toBe(400);
  });

  it('CopyObject: source and target encryption differ; an SSE-C source needs its copy-source key', async () => {
    const text = async (key: string, extra: object = {}) => Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket: 'sealed', Key: key, ...extra }))).Body!.transformToByteArray());
    const small = await text('small');
    const plainCopy = await s3.send(new CopyObjectCommand({ Bucket: 'sealed', Key: 'copy-plain', CopySource: 'sealed/small' }));
    expect(plainCopy.ServerSideEncryption).toBeUndefined();
    expect((await text('copy-plain')).equals(small)).toBe(true);
    const toCustomer = await s3.send(new CopyObjectCommand({ Bucket: 'sealed', Key: 'copy-ssec', CopySource: 'sealed/small', ...keyOf(7) }));
    expect(toCustomer.SSECustomerKeyMD5).toBe(keyOf(7).SSECustomerKeyMD5);
    expect((await text('copy-ssec', keyOf(7))).equals(small)).toBe(true);
    const copySourceKey = { CopySourceSSECustomerAlgorithm: 'AES256', CopySourceSSECustomerKey: keyOf(1).SSECustomerKey, CopySourceSSECustomerKeyMD5: keyOf(1).SSECustomerKeyMD5 };
    const toKms = await s3.send(new CopyObjectCommand({ Bucket: 'sealed', Key: 'copy-kms', CopySource: 'sealed/customer', ...copySourceKey, ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'backups' }));
    expect([toKms.ServerSideEncryption, toKms.SSEKMSKeyId]).toEqual(['aws:kms', 'backups']);
    expect((await text('copy-kms')).equals(await text('customer', keyOf(1)))).toBe(true);
    expect(await failure(s3.send(new CopyObjectCommand({ Bucket: 'sealed', Key: 'copy-refused', CopySource: 'sealed/customer' })))).toEqual({ name: 'InvalidRequest', status: 400 });
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'sealed', Key: 'copy-refused' })))).status).toBe(404);
    // Re-encrypting an object in place is a copy onto itself that changes its encryption.
    const inPlace = await s3.send(new CopyObjectCommand({ Bucket: 'sealed', Key: 'copy-plain', CopySource: 'sealed/copy-plain', ServerSideEncryption: 'AES256' }));
    expect(inPlace.ServerSideEncryption).toBe('AES256');
    expect((await text('copy-plain')).equals(small)).toBe(true);
  });
});

describe('bucket default encryption', () => {
  it('Put/Get/DeleteBucketEncryption; a PUT without headers takes the default; bad configurations are refused by name', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'defaulted' }));
    expect(await failure(s3.send(new GetBucketEncryptionCommand({ Bucket: 'defaulted' })))).toEqual({ name: 'ServerSideEncryptionConfigurationNotFoundError', status: 404 });
    const byKms = { Bucket: 'defaulted', ServerSideEncryptionConfiguration: { Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms' as const, KMSMasterKeyID: 'backups' } }] } };
    await s3.send(new PutBucketEncryptionCommand(byKms));
    const config = await s3.send(new GetBucketEncryptionCommand({ Bucket: 'defaulted' }));
    expect(config.ServerSideEncryptionConfiguration?.Rules?.[0]?.ApplyServerSideEncryptionByDefault).toEqual({ SSEAlgorithm: 'aws:kms', KMSMasterKeyID: 'backups' });
    const put = await s3.send(new PutObjectCommand({ Bucket: 'defaulted', Key: 'k', Body: 'by default' }));
    expect([put.ServerSideEncryption, put.SSEKMSKeyId]).toEqual(['aws:kms', 'backups']);
    const explicit = await s3.send(new PutObjectCommand({ Bucket: 'defaulted', Key: 'explicit', Body: 'x', ServerSideEncryption: 'AES256' }));
    expect(explicit.ServerSideEncryption).toBe('AES256');
    expect(await (await s3.send(new GetObjectCommand({ Bucket: 'defaulted', Key: 'k' }))).Body!.transformToString()).toBe('by default');
    const unknownKey = { ...byKms, ServerSideEncryptionConfiguration: { Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms' as const, KMSMasterKeyID: 'nope' } }] } };
    expect(await failure(s3.send(new PutBucketEncryptionCommand(unknownKey)))).toEqual({ name: 'KMS.NotFoundException', status: 400 });
    const badAlgorithm = { ...byKms, ServerSideEncryptionConfiguration: { Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'DES' as 'AES256' } }] } };
    expect(await failure(s3.send(new PutBucketEncryptionCommand(badAlgorithm)))).toEqual({ name: 'MalformedXML', status: 400 });
    expect((await s3.send(new GetBucketEncryptionCommand({ Bucket: 'defaulted' }))).ServerSideEncryptionConfiguration?.Rules?.[0]?.ApplyServerSideEncryptionByDefault?.KMSMasterKeyID).toBe('backups');
    // A multipart upload takes the default too.
    const multi = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'defaulted', Key: 'multi' }));
    expect([multi.ServerSideEncryption, multi.SSEKMSKeyId]).toEqual(['aws:kms', 'backups']);
    await s3.send(new DeleteBucketEncryptionCommand({ Bucket: 'defaulted' }));
    expect((await s3.send(new PutObjectCommand({ Bucket: 'defaulted', Key: 'plain', Body: 'x' }))).ServerSideEncryption).toBeUndefined();
  });
});

describe('who may encrypt', () => {
  it('policy conditions on s3:x-amz-server-side-encryption and the KMS key id decide a user\'s PUT; a user without admin:KMSCreateKey creates no key', async () => {
    const policy = {
      Version: '2012-10-17',
      Statement: [
        { Effect: 'Allow', Action: ['s3:PutObject'], Resource: ['arn:aws:s3:::sealed/*'], Condition: { StringEquals: { 's3:x-amz-server-side-encryption': 'AES256' } } },
        { Effect: 'Allow', Action: ['s3:PutObject'], Resource: ['arn:aws:s3:::sealed/*'], Condition: { StringEquals: { 's3:x-amz-server-side-encryption-aws-kms-key-id': 'backups' } } },
      ],
    };
    expect((await admin(server.url, 'POST', '/svc/admin/v4/iam/policy/create', 'name=sse-only', { body: JSON.stringify(policy) })).status).toBe(200);
    const user = { accessKeyId: 'encryptor', secretAccessKey: 'encryptor-secret' };
    expect((await admin(server.url, 'POST', '/svc/admin/v4/iam/user/add', '', { body: JSON.stringify({ accessKey: user.accessKeyId, secretKey: user.secretAccessKey, policies: ['sse-only'] }) })).status).toBe(200);
    const client = s3ClientFor(server.url, { credentials: user });
    expect(await failure(client.send(new PutObjectCommand({ Bucket: 'sealed', Key: 'by-user/plain', Body: 'x' })))).toEqual({ name: 'AccessDenied', status: 403 });
    expect((await client.send(new PutObjectCommand({ Bucket: 'sealed', Key: 'by-user/s3', Body: 'x', ServerSideEncryption: 'AES256' }))).ServerSideEncryption).toBe('AES256');
    expect((await client.send(new PutObjectCommand({ Bucket: 'sealed', Key: 'by-user/kms', Body: 'x', ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'backups' }))).SSEKMSKeyId).toBe('backups');
    await ok('admin', 'kms', 'key', 'create', 'local', 'other');
    expect(await failure(client.send(new PutObjectCommand({ Bucket: 'sealed', Key: 'by-user/other', Body: 'x', ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'other' })))).toEqual({ name: 'AccessDenied', status: 403 });
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'sealed', Key: 'by-user/other' })))).status).toBe(404);
    const refused = await admin(server.url, 'POST', '/svc/admin/v4/kms/key/create', 'key-id=sneaky', { credentials: user });
    expect([refused.status, refused.body.Code]).toEqual([403, 'AccessDenied']);
    const listed = await admin(server.url, 'GET', '/svc/admin/v4/kms/key/list');
    expect(listed.body.keys.map((key: { keyId: string }) => key.keyId)).toEqual(['svc-root', 'backups', 'other']);
  });
});

describe('SSE-C headers', () => {
  const secure = { secure: true, allowInsecure: false };
  const key = Buffer.alloc(32, 9);
  const headers = (extra: Record<string, string>) => ({
    'x-amz-server-side-encryption-customer-algorithm': 'AES256',
    'x-amz-server-side-encryption-customer-key': key.toString('base64'),
    'x-amz-server-side-encryption-customer-key-md5': createHash('md5').update(key).digest('base64'),
    ...extra,
  });

  it('are checked: MD5, algorithm, missing parts, plain HTTP (unless allowed), mixing with SSE-S3', () => {
    expect(customerKeyOf(headers({}), secure)?.key.equals(key)).toBe(true);
    expect(codeOf(() => customerKeyOf(headers({ 'x-amz-server-side-encryption-customer-key-md5': createHash('md5').update('other').digest('base64') }), secure))).toBe('InvalidArgument');
    expect(codeOf(() => customerKeyOf(headers({ 'x-amz-server-side-encryption-customer-algorithm': 'AES128' }), secure))).toBe('InvalidEncryptionAlgorithmError');
    expect(codeOf(() => customerKeyOf({ 'x-amz-server-side-encryption-customer-algorithm': 'AES256' }, secure))).toBe('InvalidArgument');
    expect(codeOf(() => customerKeyOf(headers({}), { secure: false, allowInsecure: false }))).toBe('InvalidRequest');
    expect(customerKeyOf(headers({}), { secure: false, allowInsecure: true })?.key.equals(key)).toBe(true);
    expect(codeOf(() => writeEncryptionOf(headers({ 'x-amz-server-side-encryption': 'AES256' }), secure))).toBe('InvalidArgument');
    expect(codeOf(() => writeEncryptionOf({ 'x-amz-server-side-encryption-aws-kms-key-id': 'k' }, secure))).toBe('InvalidArgument');
    expect(writeEncryptionOf({ 'x-amz-server-side-encryption': 'aws:kms', 'x-amz-server-side-encryption-aws-kms-key-id': 'arn:aws:kms:us-east-1:1:key/backups' }, secure)).toEqual({ kind: 'SSE-KMS', keyId: 'backups' });
  });
});

describe('KMS settings', () => {
  it('SVC_KMS_SECRET_KEY must be <name>:<base64 of 32 bytes>; a refusal never shows the value', () => {
    const secret = randomBytes(32).toString('base64');
    expect(readKmsSettings({ SVC_KMS_SECRET_KEY: `main:${secret}` }).root?.name).toBe('main');
    expect(readKmsSettings({}).root).toBeUndefined();
    expect(readKmsSettings({}).allowInsecureSsec).toBe(false);
    expect(readKmsSettings({ SVC_KMS_ALLOW_INSECURE_SSEC: 'on' }).allowInsecureSsec).toBe(true);
    for (const value of [secret, `:${secret}`, `main:${randomBytes(16).toString('base64')}`, 'main:not base64!', `bad name:${secret}`]) {
      let message = '';
      try {
        readKmsSettings({ SVC_KMS_SECRET_KEY: value });
      } catch (error) {
        message = `${(error as { code?: string }).code}: ${(error as Error).message}`;
      }
      expect(message, value).toMatch(/^InvalidConfiguration: SVC_KMS_SECRET_KEY/);
      expect(message).not.toContain(value.slice(value.indexOf(':') + 1));
    }
    expect(codeOf(() => readKmsSettings({ SVC_KMS_ALLOW_INSECURE_SSEC: 'maybe' }))).toBe('InvalidConfiguration');
  });
});

describe('root keys', () => {
  it('a restart with another root key: a named error per request where no KMS key was made, a clear start-up error where one was', async () => {
    const dir = join(root, 'restart');
    const first = await startSvc({ args: [join(dir, 'd{1...4}')], env: { SVC_KMS_SECRET_KEY: rootKey('first') } });
    const client = s3ClientFor(first.url);
    await client.send(new CreateBucketCommand({ Bucket: 'bkt' }));
    await client.send(new PutObjectCommand({ Bucket: 'bkt', Key: 'k', Body: 'secret text', ServerSideEncryption: 'AES256' }));
    await first.stop();
    const second = await startSvc({ args: [join(dir, 'd{1...4}')], env: { SVC_KMS_SECRET_KEY: rootKey('second') } });
    try {
      const refused = await failure(s3ClientFor(second.url).send(new GetObjectCommand({ Bucket: 'bkt', Key: 'k' })));
      expect(refused).toEqual({ name: 'KMSKeyUnsealFailed', status: 503 });
    } finally {
      await second.stop();
    }
    await server.stop();
    const other = await startSvc({ args: [join(root, 'd{1...4}')], env: { SVC_KMS_SECRET_KEY: rootKey('svc-root') }, waitReady: false });
    expect(await other.exited).not.toBe(0);
    expect(other.logs()).toContain('SVC_KMS_SECRET_KEY is not the root key');
  });
});
