/**
 * The key namespace: keys whose segments look like a store's own entries (a data directory's
 * UUID, `xl.meta`, `part.N`, the `__XLDIR__` suffix) are keys of their own, and names that can
 * never be keys are refused with a 400 before any drive is touched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AbortMultipartUploadCommand, CopyObjectCommand, CreateBucketCommand, CreateMultipartUploadCommand, DeleteObjectCommand, DeleteObjectsCommand,
  GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, UploadPartCommand, type S3Client,
} from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from '@aws-crypto/sha256-js';
import fc from 'fast-check';
import { decodeName, encodeSegment, isUuid, legacyObjectDir, objectDir } from '../src/object/paths.js';
import { ObjectLayer } from '../src/object/index.js';
import type { Drive } from '../src/drive/index.js';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { makeTestSet } from './helpers/erasure-set.js';
import { admin } from './helpers/admin-client.js';

let root: string;
let server: SvcProcess;
let s3: S3Client;
const bucket = 'names';
/** Bodies over 2 x 64 bytes get a data directory (inline limit 64 bytes per shard, K = 2). */
const large = (label: string) => Buffer.from(`${label}:`.padEnd(400, label.slice(0, 1)));

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-names-'));
  server = await startSvc({ args: [join(root, 'd{1...4}')], env: { SVC_STORAGE_CLASS_INLINE_BLOCK: '64', SVC_CONSOLE_ENABLE: 'false' } });
  s3 = s3ClientFor(server.url);
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

const put = (key: string, body: Buffer | string) => s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
const read = async (key: string) => Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToByteArray()).toString();
const failure = (promise: Promise<unknown>) => promise.then(() => ({ name: 'ok', status: 200 }), (error: { name: string; $metadata?: { httpStatusCode?: number } }) => ({ name: error.name, status: error.$metadata?.httpStatusCode }));
async function listed(prefix = '', delimiter?: string): Promise<string[]> {
  const answer = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, Delimiter: delimiter }));
  return [...(answer.Contents ?? []).map((item) => item.Key!), ...(answer.CommonPrefixes ?? []).map((item) => `prefix:${item.Prefix}`)];
}
async function dataDirOf(key: string): Promise<string> {
  const names = (await readdir(join(root, 'd1', objectDir(bucket, key)))).filter(isUuid);
  expect(names).toHaveLength(1);
  return names[0]!;
}

describe('the key encoding (paths.ts)', () => {
  const segment = fc.oneof(
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).filter((text) => !text.includes('/')),
    fc.uuid().map((uuid) => uuid.toLowerCase()),
    fc.constantFrom('xl.meta', 'part.1', '__XLDIR__', 'a__XLDIR__', '__XLKEY__', 'b__XLKEY__', 'b__XLKEY____XLKEY__', 'c__XLDIR____XLKEY__'),
  );

  it('property: every segment decodes back from its on-disk name, which is never a UUID or xl.meta, and distinct keys get distinct directories', () => {
    fc.assert(
      fc.property(segment, segment, fc.boolean(), fc.boolean(), (a, b, aFolder, bFolder) => {
        for (const [text, folder] of [[a, aFolder], [b, bFolder]] as const) {
          const name = encodeSegment(text, folder);
          expect(decodeName(name)).toEqual({ kind: 'segment', segment: folder ? `${text}/` : text, directoryObject: folder });
          expect(isUuid(name) || name === 'xl.meta').toBe(false);
        }
        const keyA = `p/${a}${aFolder ? '/' : ''}`;
        const keyB = `p/${b}${bFolder ? '/' : ''}`;
        if (keyA !== keyB) expect(objectDir('k', keyA)).not.toBe(objectDir('k', keyB));
        const legacy = legacyObjectDir('k', keyA);
        if (legacy !== undefined) expect(legacy).not.toBe(objectDir('k', keyB));
      }),
      { numRuns: 2000 },
    );
  });

  it('leaves ordinary keys as they were, and escapes only what could be mistaken', () => {
    expect(objectDir('b', 'photos/2026/p5.jpg')).toBe('b/photos/2026/p5.jpg');
    expect(objectDir('b', 'logs/part.1')).toBe('b/logs/part.1');
    expect(objectDir('b', 'dir/')).toBe('b/dir__XLDIR__');
    expect(objectDir('b', 'users/6f1c1a3e-2b7d-4c55-9a10-3d2e8f0b7a11/a')).toBe('b/users/6f1c1a3e-2b7d-4c55-9a10-3d2e8f0b7a11__XLKEY__/a');
    expect(objectDir('b', 'a/xl.meta')).toBe('b/a/xl.meta__XLKEY__');
    expect(objectDir('b', 'dir__XLDIR__')).toBe('b/dir__XLDIR____XLKEY__');
    expect(legacyObjectDir('b', 'photos/2026/p5.jpg')).toBeUndefined();
    expect(legacyObjectDir('b', 'users/6f1c1a3e-2b7d-4c55-9a10-3d2e8f0b7a11/a')).toBe('b/users/6f1c1a3e-2b7d-4c55-9a10-3d2e8f0b7a11/a');
    expect(legacyObjectDir('b', 'dir__XLDIR__')).toBeUndefined(); // the older layout refused it: never an alias of dir/
    expect(legacyObjectDir('b', 'a/xl.meta')).toBeUndefined();
  });
});

describe('a key is never destroyed or hidden by another key\'s storage', () => {
  it('r1/<its data dir>/child, r1/<its data dir> and r1/<its data dir>/part.1 are objects of their own, and survive overwriting r1', async () => {
    await put('r1', large('first r1'));
    const dataDir = await dataDirOf('r1');
    const children = { [`r1/${dataDir}/child`]: large('child'), [`r1/${dataDir}`]: large('uuid key'), [`r1/${dataDir}/part.1`]: large('part key'), [`r1/${dataDir}/xl.meta`]: 'meta key' };
    for (const [key, body] of Object.entries(children)) expect((await put(key, body)).$metadata.httpStatusCode).toBe(200);
    const all = ['r1', ...Object.keys(children)].sort();
    expect(await listed('r1')).toEqual(all);
    await put('r1', large('second r1'));
    expect(await read('r1')).toBe(large('second r1').toString());
    for (const [key, body] of Object.entries(children)) expect(await read(key), key).toBe(body.toString());
    expect(await listed('r1')).toEqual(all);
    expect(await listed('r1/', '/')).toEqual([`r1/${dataDir}`, `prefix:r1/${dataDir}/`]);
    expect((await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: `r1/${dataDir}/part.1` }))).$metadata.httpStatusCode).toBe(204);
    expect(await read('r1')).toBe(large('second r1').toString());
    expect(await read(`r1/${dataDir}`)).toBe(large('uuid key').toString());
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'r1' }));
    for (const key of [`r1/${dataDir}/child`, `r1/${dataDir}`, `r1/${dataDir}/xl.meta`]) expect(await read(key), key).toBe(children[key]!.toString());
  });

  it('heal finds and rebuilds keys by their encoded names', async () => {
    await put('h', large('h'));
    const key = `h/${await dataDirOf('h')}/xl.meta`;
    await put(key, large('encoded'));
    const onD2 = join(root, 'd2', objectDir(bucket, key));
    await rm(onD2, { recursive: true });
    const started = await admin(server.url, 'POST', `/svc/admin/v3/heal/${bucket}/h`, '', { body: JSON.stringify({ recursive: true }) });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    for (let waited = 0; (await admin(server.url, 'POST', `/svc/admin/v3/heal/${bucket}/h`, `clientToken=${started.body.clientToken}`)).body.status === 'running' && waited < 300; waited += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect((await readdir(onD2)).sort()).toEqual([await dataDirOf(key), 'xl.meta'].sort());
    expect([await read('h'), await read(key)]).toEqual([large('h').toString(), large('encoded').toString()]);
  });

  it('X/<uuid> is listed while X exists and stays when X is overwritten', async () => {
    const user = 'users/5d1e7a3c-0f0b-4a57-b1a2-93a1b2c3d4e5';
    await put('users', large('users object'));
    await put(user, large('profile'));
    await put(`${user}/avatar`, 'avatar');
    expect(await listed('users')).toEqual(['users', user, `${user}/avatar`]);
    expect(await listed('users/', '/')).toEqual([user, `prefix:${user}/`]);
    await put('users', large('users again'));
    await put(user, large('profile again'));
    expect(await listed('users')).toEqual(['users', user, `${user}/avatar`]);
    expect([await read(user), await read(`${user}/avatar`)]).toEqual([large('profile again').toString(), 'avatar']);
  });

  it('dir__XLDIR__ is its own key, not an alias of dir/', async () => {
    await put('dir/', '');
    expect((await failure(s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'dir__XLDIR__' })))).name).toBe('NoSuchKey');
    await put('dir__XLDIR__', 'suffix key');
    await put('dir__XLDIR__/', 'suffix folder');
    await put('dir', 'plain');
    expect([await read('dir/'), await read('dir__XLDIR__'), await read('dir__XLDIR__/'), await read('dir')]).toEqual(['', 'suffix key', 'suffix folder', 'plain']);
    expect(await listed('dir')).toEqual(['dir', 'dir/', 'dir__XLDIR__', 'dir__XLDIR__/']);
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'dir/' }));
    expect([await read('dir__XLDIR__'), await read('dir__XLDIR__/')]).toEqual(['suffix key', 'suffix folder']);
  });
});

describe('names that can never be keys are a 400, never a 503', () => {
  it('a 256-byte segment is KeyTooLongError on PUT, GET, HEAD, DELETE and multipart create; nothing stored changes', async () => {
    await put('kept', large('kept'));
    const key = `a/${'s'.repeat(256)}`;
    expect(await failure(put(key, 'x'))).toEqual({ name: 'KeyTooLongError', status: 400 });
    expect(await failure(s3.send(new GetObjectCommand({ Bucket: bucket, Key: key })))).toEqual({ name: 'KeyTooLongError', status: 400 });
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key })))).status).toBe(400);
    expect(await failure(s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })))).toEqual({ name: 'KeyTooLongError', status: 400 });
    expect(await failure(s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key })))).toEqual({ name: 'KeyTooLongError', status: 400 });
    expect((await put(`a/${'s'.repeat(255)}`, 'longest segment')).$metadata.httpStatusCode).toBe(200);
    expect(await read(`a/${'s'.repeat(255)}`)).toBe('longest segment');
    expect(await read('kept')).toBe(large('kept').toString());
    expect(server.logs()).not.toMatch(/ENAMETOOLONG|metadata change failed on a drive/);
  });

  it('GET ../../x and a/../kept are InvalidObjectName (raw request line), and a copy source with .. too', async () => {
    for (const path of [`/${bucket}/../../x`, `/${bucket}/a/../kept`, `/${bucket}/a//b`]) {
      const answer = await rawRequest('GET', path);
      expect([answer.status, answer.code], path).toEqual([400, 'InvalidObjectName']);
    }
    expect(await failure(s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'copy', CopySource: `${bucket}/a/../kept` })))).toEqual({ name: 'InvalidObjectName', status: 400 });
    expect(await failure(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'copy' })))).toMatchObject({ status: 404 });
    expect(await read('kept')).toBe(large('kept').toString());
  });

  it('bucket/obj/xl.meta is an ordinary absent key (404), and <obj>/<data dir>/part.1 an ordinary key to PUT and DELETE', async () => {
    await put('obj', large('obj'));
    expect(await failure(s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'obj/xl.meta' })))).toEqual({ name: 'NoSuchKey', status: 404 });
    const part = `obj/${await dataDirOf('obj')}/part.1`;
    expect(await failure(s3.send(new GetObjectCommand({ Bucket: bucket, Key: part })))).toEqual({ name: 'NoSuchKey', status: 404 });
    expect((await put(part, 'not a shard')).$metadata.httpStatusCode).toBe(200);
    expect(await read(part)).toBe('not a shard');
    expect((await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: part }))).$metadata.httpStatusCode).toBe(204);
    expect(await read('obj')).toBe(large('obj').toString());
  });

  it('DeleteObjects refuses a bad key by name and deletes the others; multipart with a bad key is refused at every step', async () => {
    await put('doomed', 'x');
    const answer = await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: [{ Key: 'doomed' }, { Key: `${'t'.repeat(300)}` }] } }));
    expect(answer.Deleted?.map((item) => item.Key)).toEqual(['doomed']);
    expect(answer.Errors?.map((item) => item.Code)).toEqual(['KeyTooLongError']);
    const upload = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'mp/ok' }));
    const bad = `mp/${'u'.repeat(256)}`;
    expect((await failure(s3.send(new UploadPartCommand({ Bucket: bucket, Key: bad, UploadId: upload.UploadId!, PartNumber: 1, Body: 'x' })))).status).toBe(400);
    expect((await failure(s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: bad, UploadId: upload.UploadId! })))).status).toBe(400);
    await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: 'mp/ok', UploadId: upload.UploadId! }));
  });

  it('the object layer refuses a bad key before touching any drive', async () => {
    const calls: string[] = [];
    let recording = false;
    const record = (drive: Drive): Drive => new Proxy(drive, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (recording) calls.push(String(name));
          return value.apply(target, args);
        };
      },
    });
    const test = await makeTestSet({ drives: 4, parity: 2, wrap: record });
    try {
      const objects = new ObjectLayer({ deploymentId: '00000000-0000-4000-8000-000000000000', pools: [{ index: 0, sets: [test.set] }], clock: { nowMs: () => Date.now() } });
      await objects.makeBucket('b');
      recording = true;
      const bad = ['../../x', `a/${'s'.repeat(256)}`, 'a//b', '/lead', 'nul\0'];
      for (const key of bad) {
        const codes = await Promise.all([
          objects.headObject('b', key), objects.getObject('b', key), objects.deleteObject('b', key),
          objects.putObject('b', key, (async function* () {})(), { storageClass: 'STANDARD', sizeBytes: 0 }),
          objects.createMultipartUpload('b', key, { storageClass: 'STANDARD' }),
        ].map((promise) => promise.then(() => 'ok', (error: { code?: string }) => error.code)));
        expect(new Set(codes), key).toEqual(new Set([key.length > 255 ? 'KeyTooLongError' : 'InvalidObjectName']));
      }
      expect(calls).toEqual([]);
    } finally {
      await test.cleanup();
    }
  });
});

/** A signed request sent as written: no client normalises its path. */
async function rawRequest(method: string, path: string): Promise<{ status: number; code: string }> {
  const url = new URL(server.url);
  const signer = new SignatureV4({ service: 's3', region: 'us-east-1', credentials: testCredentials, sha256: Sha256, uriEscapePath: false });
  const signed = await signer.sign({ method, protocol: 'http:', hostname: url.hostname, port: Number(url.port), path, headers: { host: url.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } });
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: url.hostname, port: url.port, method, path, headers: signed.headers }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, code: /<Code>([^<]+)<\/Code>/.exec(text)?.[1] ?? '' }));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}
