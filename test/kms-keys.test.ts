/**
 * The built-in KMS's keys beyond creating them: root keys from a key directory (strict, refused by
 * file name), disabling and enabling a key (AWS's KMS.DisabledException through the AWS SDK, nothing
 * stored changes), rotation with the background re-wrap of older data keys (only xl.meta changes;
 * reads after it return the bytes put), resumed after a restart, deleting a key (refused while a
 * bucket default names it and without force; afterwards its objects answer KMS.NotFoundException),
 * and the refusals of the admin routes (unknown key, no permission).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  AbortMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketEncryptionCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutBucketEncryptionCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { rcIn } from './helpers/rc-process.js';
import { admin } from './helpers/admin-client.js';
import { sdkErrorOf } from './helpers/codes.js';
import { waitFor } from './helpers/poll.js';
import { readKmsSettings } from '../src/cluster/kms-config.js';
import { decodeXlMeta } from '../src/format/xl-meta.js';
import { createMemfsDrive } from '../backends/memfs/memfs-drive.js';
import { StateFileQuarantine } from '../src/cluster/state-quarantine.js';
import { StateStore } from '../src/ops/state-store.js';
import { BuiltinKms, decodeKmsBlob, validateKmsDocument, type KmsDocument } from '../src/ops/kms/builtin-kms.js';
import { validateRewrap } from '../src/ops/kms/rewrap.js';
import { codeOf } from './helpers/codes.js';
import { startProcessCluster } from './helpers/process-cluster.js';
import { withClusterLogs } from './helpers/cluster.js';

const key32 = () => randomBytes(32).toString('base64');

let root: string;
let home: string;
const { ok, rc } = rcIn(() => home);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-kms-keys-'));
  home = join(root, 'home');
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function failure(promise: Promise<unknown>): Promise<{ name: string; status?: number }> {
  const error = await sdkErrorOf(promise);
  return { name: error.name ?? 'no error', ...(error.status !== undefined ? { status: error.status } : {}) };
}

async function text(client: S3Client, bucket: string, key: string, versionId?: string): Promise<string> {
  const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key, ...(versionId ? { VersionId: versionId } : {}) }));
  return answer.Body!.transformToString();
}

/** The refusal's message as a start-up or settings error shows it. */
function refusal(values: Record<string, string>): string {
  try {
    readKmsSettings(values);
  } catch (error) {
    return `${(error as { code?: string }).code}: ${(error as Error).message}`;
  }
  return 'accepted';
}

const quietLog = { warn: () => undefined, info: () => undefined, error: () => undefined, debug: () => undefined };

/** Two KMS instances (two nodes) over the same kms.bin on memfs drives. */
function twoNodes(): [BuiltinKms, BuiltinKms] {
  const drives = Array.from({ length: 4 }, (_, index) => createMemfsDrive({ endpoint: `/kms${index}` }));
  const root = { name: 'svc-root', key: randomBytes(32) };
  const make = () => new BuiltinKms({ root, store: new StateStore<KmsDocument>({ name: 'kms.bin', magic: 'SVKM', drives: () => drives, validate: validateKmsDocument, quarantine: new StateFileQuarantine(quietLog as never) }), nowMs: () => Date.parse('2026-11-29T06:00:00Z') });
  return [make(), make()];
}

describe('the built-in KMS', () => {
  it('rotation: new seals name the newest version, older ones unseal and re-wrap; another node learns versions it has not seen', async () => {
    const [one, two] = twoNodes();
    await one.createKey('k');
    const dataKey = randomBytes(44);
    const v1 = await one.sealDataKey('k', dataKey, 'ctx');
    expect(decodeKmsBlob(v1).version).toBe(1);
    expect(v1[0]).toBe(1); // unrotated keys seal as before rotation existed
    expect(await one.rewrapDataKey('k', v1, 'ctx')).toBeUndefined();
    expect((await one.rotateKey('k')).version).toBe(2);
    const v2 = await one.sealDataKey('k', dataKey, 'ctx');
    expect([...v2.subarray(0, 5)]).toEqual([2, 0, 0, 0, 2]);
    // The second node has not reread kms.bin: a version-2 seal makes it reread once.
    expect((await two.unsealDataKey('k', v2, 'ctx')).equals(dataKey)).toBe(true);
    expect((await two.unsealDataKey('k', v1, 'ctx')).equals(dataKey)).toBe(true);
    const rewrapped = (await one.rewrapDataKey('k', v1, 'ctx'))!;
    expect(decodeKmsBlob(rewrapped).version).toBe(2);
    expect((await one.unsealDataKey('k', rewrapped, 'ctx')).equals(dataKey)).toBe(true);
    expect(codeOf(() => decodeKmsBlob(Buffer.from([3, 0, 0, 0, 2, 1])))).toBe('CorruptFormat');
    await expect(one.unsealDataKey('k', Buffer.concat([Buffer.from([2, 0, 0, 0, 9]), v1]), 'ctx')).rejects.toMatchObject({ code: 'KMSKeyUnsealFailed' });
    await expect(one.unsealDataKey('k', v2, 'other context')).rejects.toMatchObject({ code: 'KMSKeyUnsealFailed' });
    // The root key rotates too; its version 1 stays derived from it.
    expect((await one.rotateKey('svc-root')).version).toBe(2);
    await expect(one.rotateKey('nope')).rejects.toMatchObject({ code: 'KMS.NotFoundException' });
  });

  it('a disabled key neither seals nor unseals until enabled; the default key cannot be disabled', async () => {
    const [one, two] = twoNodes();
    await one.createKey('k');
    const sealed = await one.sealDataKey('k', randomBytes(44), 'ctx');
    expect((await one.setKeyEnabled('k', false)).enabled).toBe(false);
    await expect(one.sealDataKey('k', randomBytes(44), 'ctx')).rejects.toMatchObject({ code: 'KMS.DisabledException' });
    await expect(one.unsealDataKey('k', sealed, 'ctx')).rejects.toMatchObject({ code: 'KMS.DisabledException' });
    await expect(one.rotateKey('k')).rejects.toMatchObject({ code: 'KMS.DisabledException' });
    await two.reload();
    await expect(two.unsealDataKey('k', sealed, 'ctx')).rejects.toMatchObject({ code: 'KMS.DisabledException' });
    await expect(one.setKeyEnabled('svc-root', false)).rejects.toMatchObject({ code: 'InvalidArgument' });
    await one.setKeyEnabled('k', true);
    await two.reload();
    expect((await two.unsealDataKey('k', sealed, 'ctx')).length).toBe(44);
    expect((await two.listKeys()).map((key) => `${key.keyId}:${key.enabled}:${key.version}`)).toEqual(['svc-root:true:1', 'k:true:1']);
  });

  it('a deleted key unseals nothing on any node, its name is not given again, and root keys cannot be deleted', async () => {
    const [one, two] = twoNodes();
    await one.createKey('gone');
    await one.rotateKey('gone');
    await one.setKeyEnabled('gone', false);
    await one.setKeyEnabled('gone', true);
    const sealed = await one.sealDataKey('gone', randomBytes(44), 'ctx');
    await two.reload();
    await one.deleteKey('gone');
    const deleted = { code: 'KMS.NotFoundException', message: expect.stringMatching(/was deleted/) };
    await expect(one.unsealDataKey('gone', sealed, 'ctx')).rejects.toMatchObject(deleted);
    await expect(one.sealDataKey('gone', randomBytes(44), 'ctx')).rejects.toMatchObject(deleted);
    await expect(one.keyStatus('gone')).rejects.toMatchObject(deleted);
    await expect(one.deleteKey('gone')).rejects.toMatchObject(deleted);
    await two.reload();
    await expect(two.unsealDataKey('gone', sealed, 'ctx')).rejects.toMatchObject(deleted);
    await expect(one.createKey('gone')).rejects.toMatchObject({ code: 'KMSKeyExists', message: expect.stringMatching(/deleted key/) });
    await expect(one.deleteKey('svc-root')).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(one.deleteKey('nope')).rejects.toMatchObject({ code: 'KMS.NotFoundException' });
    expect((await two.listKeys()).map((key) => key.keyId)).toEqual(['svc-root']);
  });

  it('kms.bin and kms-rewrap.bin are decoded strictly', () => {
    const base = { generation: 1, rootKeyId: 'r', rootCheck: 'AAAA', keys: [] };
    const version = (keyId: string, number: number) => ({ keyId, version: number, createdAt: '2026-11-29T06:00:00Z', sealed: 'AAAA' });
    expect(validateKmsDocument({ ...base, versions: [version('a', 2), version('b', 2), version('a', 3)], disabled: ['a'] }).versions).toHaveLength(3);
    expect(validateKmsDocument({ ...base, deleted: ['a', 'b'] }).deleted).toEqual(['a', 'b']);
    const named = { keyId: 'a', createdAt: '2026-11-29T06:00:00Z', sealed: 'AAAA' };
    for (const bad of [{ versions: [version('a', 3)] }, { versions: [version('a', 2), version('a', 2)] }, { disabled: ['a', 'a'] }, { disabled: [7] }, { rotations: [] }, { deleted: ['a', 'a'] }, { deleted: 'a' }, { keys: [named], deleted: ['a'] }]) {
      expect(codeOf(() => validateKmsDocument({ ...base, ...bad })), JSON.stringify(bad)).toBe('CorruptFormat');
    }
    const run = { version: 1, generation: 3, id: 'w', state: 'running', keyIds: ['a'], startedMs: 1, cursor: { bucket: 'b', afterKey: null }, again: false, versionsScanned: 0, rewrapped: 0, failed: 0, bucketsDone: 0, bucketsTotal: 1, resumed: 0 };
    expect(validateRewrap(run).cursor).toEqual({ bucket: 'b', afterKey: null });
    expect(codeOf(() => validateRewrap({ ...run, version: 2 }))).toBe('UnsupportedFormat');
    for (const bad of [{ state: 'paused' }, { cursor: { bucket: 'b' , afterKey: 1 } }, { extra: 1 }, { rewrapped: -1 }, { keyIds: ['bad name'] }]) {
      expect(codeOf(() => validateRewrap({ ...run, ...bad })), JSON.stringify(bad)).toBe('CorruptFormat');
    }
  });
});

describe('key directory', () => {
  it('reads one key per file; refuses a wrong file, several keys without a default, and both settings, naming the file and never the value', async () => {
    const dir = join(root, 'keys-unit');
    await mkdir(dir);
    const first = key32();
    await writeFile(join(dir, 'first'), `${first}\n`);
    await writeFile(join(dir, '.editor-swap'), 'ignored');
    const one = readKmsSettings({ SVC_KMS_KEY_DIR: dir });
    expect([one.root?.name, one.root?.key.toString('base64'), one.otherRoots]).toEqual(['first', first, []]);
    await writeFile(join(dir, 'second'), key32());
    expect(refusal({ SVC_KMS_KEY_DIR: dir })).toMatch(/^InvalidConfiguration: SVC_KMS_KEY_DIR: .* holds several keys \(first, second\): set SVC_KMS_DEFAULT_KEY/);
    const two = readKmsSettings({ SVC_KMS_KEY_DIR: dir, SVC_KMS_DEFAULT_KEY: 'second' });
    expect([two.root?.name, two.otherRoots?.map((key) => key.name)]).toEqual(['second', ['first']]);
    expect(refusal({ SVC_KMS_KEY_DIR: dir, SVC_KMS_DEFAULT_KEY: 'third' })).toMatch(/^InvalidConfiguration: SVC_KMS_DEFAULT_KEY="third" names no key file/);
    expect(refusal({ SVC_KMS_KEY_DIR: dir, SVC_KMS_SECRET_KEY: `x:${key32()}` })).toMatch(/^InvalidConfiguration: SVC_KMS_SECRET_KEY and SVC_KMS_KEY_DIR are both set/);
    expect(refusal({ SVC_KMS_DEFAULT_KEY: 'first' })).toMatch(/^InvalidConfiguration: SVC_KMS_DEFAULT_KEY names a key of SVC_KMS_KEY_DIR, which is not set/);
    const short = randomBytes(16).toString('base64');
    for (const [name, content] of [['short', short], ['garbled', 'not base64 at all!']] as const) {
      await writeFile(join(dir, name), content);
      const message = refusal({ SVC_KMS_KEY_DIR: dir, SVC_KMS_DEFAULT_KEY: 'first' });
      expect(message).toContain(`SVC_KMS_KEY_DIR: ${join(dir, name)} must hold the base64 of exactly 32 bytes`);
      expect(message).not.toContain(content);
      await rm(join(dir, name));
    }
    await mkdir(join(dir, 'nested'));
    expect(refusal({ SVC_KMS_KEY_DIR: dir, SVC_KMS_DEFAULT_KEY: 'first' })).toContain(`${join(dir, 'nested')} is not a regular file`);
    await rm(join(dir, 'nested'), { recursive: true });
    await writeFile(join(dir, 'bad name'), key32());
    expect(refusal({ SVC_KMS_KEY_DIR: dir, SVC_KMS_DEFAULT_KEY: 'first' })).toContain(`${join(dir, 'bad name')}: a key file's name is the key's name`);
    await rm(join(dir, 'bad name'));
    expect(refusal({ SVC_KMS_KEY_DIR: join(root, 'no-such-dir') })).toMatch(/^InvalidConfiguration: SVC_KMS_KEY_DIR: .*no-such-dir cannot be read as a directory \(ENOENT\)/);
    const empty = join(root, 'keys-empty');
    await mkdir(empty);
    expect(refusal({ SVC_KMS_KEY_DIR: empty })).toContain('holds no key file');
    if (process.getuid?.() !== 0) {
      await chmod(join(dir, 'first'), 0o000);
      expect(refusal({ SVC_KMS_KEY_DIR: dir, SVC_KMS_DEFAULT_KEY: 'second' })).toContain(`${join(dir, 'first')} cannot be read (EACCES)`);
      await chmod(join(dir, 'first'), 0o600);
    }
  });

  it('a server takes its root keys from the directory: the default seals SSE-S3, another file is an SSE-KMS key; a bad file stops start-up with the file named and no stack trace', async () => {
    const dir = join(root, 'keys-server');
    await mkdir(dir);
    await writeFile(join(dir, 'main'), `${key32()}\n`);
    await writeFile(join(dir, 'archive'), key32());
    const server = await startSvc({ args: [join(root, 'dir-drives/d{1...4}')], env: { SVC_KMS_KEY_DIR: dir, SVC_KMS_DEFAULT_KEY: 'main' } });
    try {
      const s3 = s3ClientFor(server.url);
      await s3.send(new CreateBucketCommand({ Bucket: 'dir' }));
      expect((await s3.send(new PutObjectCommand({ Bucket: 'dir', Key: 'a', Body: 'under main', ServerSideEncryption: 'AES256' }))).ServerSideEncryption).toBe('AES256');
      expect((await s3.send(new PutObjectCommand({ Bucket: 'dir', Key: 'b', Body: 'under archive', ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'archive' }))).SSEKMSKeyId).toBe('archive');
      expect([await text(s3, 'dir', 'a'), await text(s3, 'dir', 'b')]).toEqual(['under main', 'under archive']);
      const listed = await admin(server.url, 'GET', '/svc/admin/v4/kms/key/list');
      expect(listed.body.keys.map((key: { keyId: string; origin: string }) => `${key.keyId}:${key.origin}`)).toEqual(['main:root', 'archive:root']);
    } finally {
      await server.stop();
    }
    await writeFile(join(dir, 'archive'), 'c2hvcnQ=');
    const refused = await startSvc({ args: [join(root, 'dir-drives/d{1...4}')], env: { SVC_KMS_KEY_DIR: dir, SVC_KMS_DEFAULT_KEY: 'main' }, waitReady: false });
    expect(await refused.exited).not.toBe(0);
    expect(refused.logs()).toContain(`${join(dir, 'archive')} must hold the base64 of exactly 32 bytes`);
    expect(refused.logs()).not.toMatch(/\n\s+at /);
  });
});

describe('a running server', () => {
  let server: SvcProcess;
  let s3: S3Client;
  const drives = () => join(root, 'drives');

  beforeAll(async () => {
    server = await startSvc({ args: [join(drives(), 'd{1...4}')], env: { SVC_KMS_SECRET_KEY: `svc-root:${key32()}` } });
    s3 = s3ClientFor(server.url);
    await ok('alias', 'set', 'local', server.url, testCredentials.accessKeyId, testCredentials.secretAccessKey);
    await ok('admin', 'kms', 'key', 'create', 'local', 'vault');
    await s3.send(new CreateBucketCommand({ Bucket: 'keys' }));
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('a disabled key refuses PUT, copy and GET with KMS.DisabledException and changes nothing; enabled again, reads work', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'keys', Key: 'held', Body: 'kept under vault', ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'vault' }));
    await s3.send(new PutObjectCommand({ Bucket: 'keys', Key: 'plain', Body: 'plain text' }));
    expect(await ok('admin', 'kms', 'key', 'disable', 'local', 'vault')).toContain("disabled KMS key 'vault'");
    const disabled = { name: 'KMS.DisabledException', status: 400 };
    expect(await failure(s3.send(new GetObjectCommand({ Bucket: 'keys', Key: 'held' })))).toEqual(disabled);
    expect(await failure(s3.send(new PutObjectCommand({ Bucket: 'keys', Key: 'held', Body: 'overwrite', ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'vault' })))).toEqual(disabled);
    expect(await failure(s3.send(new PutObjectCommand({ Bucket: 'keys', Key: 'new', Body: 'x', ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'vault' })))).toEqual(disabled);
    expect(await failure(s3.send(new CopyObjectCommand({ Bucket: 'keys', Key: 'copied', CopySource: 'keys/plain', ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'vault' })))).toEqual(disabled);
    expect(await failure(s3.send(new CopyObjectCommand({ Bucket: 'keys', Key: 'copied', CopySource: 'keys/held' })))).toEqual(disabled);
    // Nothing stored changed: the object is the one put, the refused keys do not exist.
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'keys', Key: 'held' }))).SSEKMSKeyId).toBe('vault');
    for (const key of ['new', 'copied']) expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'keys', Key: key })))).status).toBe(404);
    const listed = await admin(server.url, 'GET', '/svc/admin/v4/kms/key/list');
    expect(listed.body.keys.map((key: { keyId: string; enabled: boolean }) => `${key.keyId}:${key.enabled}`)).toEqual(['svc-root:true', 'vault:false']);
    expect(await ok('admin', 'kms', 'key', 'ls', 'local')).toMatch(/vault\s+named\s+disabled/);
    const defaultKey = await admin(server.url, 'POST', '/svc/admin/v4/kms/key/disable', 'key-id=svc-root');
    expect([defaultKey.status, defaultKey.body.Code]).toEqual([400, 'InvalidArgument']);
    expect(await ok('admin', 'kms', 'key', 'enable', 'local', 'vault')).toContain("enabled KMS key 'vault'");
    expect(await text(s3, 'keys', 'held')).toBe('kept under vault');
  });

  it('refusals: an unknown key, and a user without the action changes nothing', async () => {
    for (const path of ['rotate', 'disable', 'enable']) {
      const unknown = await admin(server.url, 'POST', `/svc/admin/v4/kms/key/${path}`, 'key-id=nope');
      expect([path, unknown.status, unknown.body.Code]).toEqual([path, 400, 'KMS.NotFoundException']);
    }
    const policy = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['admin:KMSKeyStatus'], Resource: ['arn:aws:s3:::*'] }] };
    expect((await admin(server.url, 'POST', '/svc/admin/v4/iam/policy/create', 'name=kms-reader', { body: JSON.stringify(policy) })).status).toBe(200);
    const reader = { accessKeyId: 'kms-reader', secretAccessKey: 'kms-reader-secret' };
    expect((await admin(server.url, 'POST', '/svc/admin/v4/iam/user/add', '', { body: JSON.stringify({ accessKey: reader.accessKeyId, secretKey: reader.secretAccessKey, policies: ['kms-reader'] }) })).status).toBe(200);
    for (const path of ['rotate', 'disable']) {
      const refused = await admin(server.url, 'POST', `/svc/admin/v4/kms/key/${path}`, 'key-id=vault', { credentials: reader });
      expect([path, refused.status, refused.body.Code]).toEqual([path, 403, 'AccessDenied']);
    }
    const status = await admin(server.url, 'GET', '/svc/admin/v4/kms/key/status', 'key-id=vault', { credentials: reader });
    expect([status.body.enabled, status.body.version]).toEqual([true, 1]);
    expect((await admin(server.url, 'GET', '/svc/admin/v4/kms/rewrap/status', '', { credentials: reader })).body.state).toBe('none');
    const nobody = { accessKeyId: 'nobody', secretAccessKey: 'nobody-secret-key' };
    expect((await admin(server.url, 'POST', '/svc/admin/v4/iam/user/add', '', { body: JSON.stringify({ accessKey: nobody.accessKeyId, secretKey: nobody.secretAccessKey }) })).status).toBe(200);
    expect((await admin(server.url, 'GET', '/svc/admin/v4/kms/rewrap/status', '', { credentials: nobody })).status).toBe(403);
  });

  it('rotation re-wraps every older data key in the background, rewriting only xl.meta; every version reads back', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'rotated' }));
    await s3.send(new PutBucketVersioningCommand({ Bucket: 'rotated', VersioningConfiguration: { Status: 'Enabled' } }));
    const written: { key: string; versionId: string; body: string }[] = [];
    for (let index = 0; index < 6; index += 1) {
      const body = `version ${index} ${randomBytes(8).toString('hex')}`;
      const key = `k${index % 3}`;
      const put = await s3.send(new PutObjectCommand({ Bucket: 'rotated', Key: key, Body: body, ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'vault' }));
      written.push({ key, versionId: put.VersionId!, body });
    }
    const big = randomBytes(1024 * 1024);
    await s3.send(new PutObjectCommand({ Bucket: 'rotated', Key: 'big', Body: big, ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'vault' }));
    await s3.send(new PutObjectCommand({ Bucket: 'rotated', Key: 'under-root', Body: 'root key', ServerSideEncryption: 'AES256' }));
    const dataBefore = await dataFiles(join(drives(), 'd1', 'rotated'));
    expect(Object.keys(dataBefore).length).toBeGreaterThan(0);
    const rotated = JSON.parse(await ok('admin', 'kms', 'key', 'rotate', 'local', 'vault', '--watch', '--json')) as { key: { version: number }; rewrap: Record<string, any> };
    expect(rotated.key.version).toBe(2);
    expect(rotated.rewrap).toMatchObject({ state: 'finished', keyIds: ['vault'], failed: 0 });
    // 7 versions here, and the object of the disabling test (held) in its bucket.
    expect(rotated.rewrap.rewrapped).toBe(8);
    expect(Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket: 'rotated', Key: 'big' }))).Body!.transformToByteArray()).equals(big)).toBe(true);
    for (const { key, versionId, body } of written) expect(await text(s3, 'rotated', key, versionId)).toBe(body);
    expect(await text(s3, 'rotated', 'under-root')).toBe('root key');
    expect(await text(s3, 'keys', 'held')).toBe('kept under vault');
    // Every drive's xl.meta holds data keys sealed by version 2 (formats.md: u8 2 | u32 version); the data files are untouched.
    for (const drive of ['d1', 'd2', 'd3', 'd4']) {
      for (const key of ['k0', 'k1', 'k2', 'big']) {
        const meta = decodeXlMeta(await readFile(join(drives(), drive, 'rotated', key, 'xl.meta')));
        for (const version of meta.versions) expect(Buffer.from(version.encryption!.sealedKey, 'base64').subarray(0, 5)).toEqual(Buffer.from([2, 0, 0, 0, 2]));
      }
    }
    expect(await dataFiles(join(drives(), 'd1', 'rotated'))).toEqual(dataBefore);
    const again = JSON.parse(await ok('admin', 'kms', 'rewrap', 'status', 'local', '--json'));
    expect(again.state).toBe('finished');
    // A second rotation finds the version-2 keys older again; new writes seal under the newest version.
    await s3.send(new PutObjectCommand({ Bucket: 'rotated', Key: 'after', Body: 'after rotation', ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'vault' }));
    const third = await admin(server.url, 'POST', '/svc/admin/v4/kms/key/rotate', 'key-id=vault');
    expect(third.body.key.version).toBe(3);
    const done = await waitFor('the second re-wrap finished', async () => {
      const status = (await admin(server.url, 'GET', '/svc/admin/v4/kms/rewrap/status')).body;
      return status.state === 'finished' && status.id !== rotated.rewrap.id ? status : undefined;
    });
    expect([done.rewrapped, done.failed]).toEqual([9, 0]);
    expect(await text(s3, 'rotated', 'after')).toBe('after rotation');
  });

  it('deleting a key: refused while a bucket default names it, without --force, for a root key and for a user without the action; once deleted its objects answer KMS.NotFoundException, HEAD and DELETE still work, and the name is not given again', async () => {
    await ok('admin', 'kms', 'key', 'create', 'local', 'doomed');
    await s3.send(new CreateBucketCommand({ Bucket: 'doomed-default' }));
    await s3.send(new PutBucketEncryptionCommand({ Bucket: 'doomed-default', ServerSideEncryptionConfiguration: { Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: 'doomed' } }] } }));
    await s3.send(new PutObjectCommand({ Bucket: 'doomed-default', Key: 'by-default', Body: 'sealed by the default' }));
    await s3.send(new PutObjectCommand({ Bucket: 'keys', Key: 'doomed', Body: 'sealed when asked', ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'doomed' }));
    const upload = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'keys', Key: 'doomed-upload', ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'doomed' }));
    const inUse = await rc('admin', 'kms', 'key', 'rm', 'local', 'doomed', '--force');
    expect(inUse.code).not.toBe(0);
    expect(inUse.stderr).toMatch(/KMSKeyInUse.*doomed-default/);
    await s3.send(new DeleteBucketEncryptionCommand({ Bucket: 'doomed-default' }));
    const refusals: [string, { accessKeyId: string; secretAccessKey: string } | undefined, number, string][] = [
      ['key-id=doomed', undefined, 400, 'KMSKeyDeletionNotConfirmed'],
      ['key-id=doomed&force=true', { accessKeyId: 'kms-reader', secretAccessKey: 'kms-reader-secret' }, 403, 'AccessDenied'],
      ['key-id=svc-root&force=true', undefined, 400, 'InvalidArgument'],
      ['key-id=nope&force=true', undefined, 400, 'KMS.NotFoundException'],
      ['key-id=doomed&force=yes', undefined, 400, 'InvalidQueryParameter'],
    ];
    for (const [query, credentials, status, code] of refusals) {
      const refused = await admin(server.url, 'POST', '/svc/admin/v4/kms/key/delete', query, credentials ? { credentials } : {});
      expect([query, refused.status, refused.body.Code]).toEqual([query, status, code]);
    }
    // Every refusal left the key as it was.
    expect(await text(s3, 'keys', 'doomed')).toBe('sealed when asked');
    expect(await ok('admin', 'kms', 'key', 'rm', 'local', 'doomed', '--force')).toContain("deleted KMS key 'doomed'");
    const deleted = { name: 'KMS.NotFoundException', status: 400 };
    expect(await failure(s3.send(new GetObjectCommand({ Bucket: 'keys', Key: 'doomed' })))).toEqual(deleted);
    expect(await failure(s3.send(new GetObjectCommand({ Bucket: 'doomed-default', Key: 'by-default' })))).toEqual(deleted);
    expect(await failure(s3.send(new CopyObjectCommand({ Bucket: 'keys', Key: 'doomed-copy', CopySource: 'keys/doomed' })))).toEqual(deleted);
    expect(await failure(s3.send(new UploadPartCommand({ Bucket: 'keys', Key: 'doomed-upload', UploadId: upload.UploadId, PartNumber: 1, Body: 'part' })))).toEqual(deleted);
    expect(await failure(s3.send(new PutObjectCommand({ Bucket: 'keys', Key: 'doomed-new', Body: 'x', ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'doomed' })))).toEqual(deleted);
    for (const key of ['doomed-copy', 'doomed-new']) expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'keys', Key: key })))).status).toBe(404);
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'keys', Key: 'doomed' }))).SSEKMSKeyId).toBe('doomed');
    expect((await admin(server.url, 'GET', '/svc/admin/v4/kms/key/list')).body.keys.map((key: { keyId: string }) => key.keyId)).toEqual(['svc-root', 'vault']);
    const again = await admin(server.url, 'POST', '/svc/admin/v4/kms/key/create', 'key-id=doomed');
    expect([again.status, again.body.Code]).toEqual([409, 'KMSKeyExists']);
    // A re-wrap passes over the versions under the deleted key: nothing can open them, nothing failed.
    const rotated = await admin(server.url, 'POST', '/svc/admin/v4/kms/key/rotate', 'key-id=vault');
    expect(rotated.status).toBe(200);
    const rewrap = await waitFor('the re-wrap after the deletion finished', async () => {
      const status = (await admin(server.url, 'GET', '/svc/admin/v4/kms/rewrap/status')).body;
      return status.state === 'finished' && status.id === rotated.body.rewrap.id ? status : undefined;
    });
    expect([rewrap.failed, rewrap.lastError]).toEqual([0, undefined]);
    await s3.send(new AbortMultipartUploadCommand({ Bucket: 'keys', Key: 'doomed-upload', UploadId: upload.UploadId }));
    await s3.send(new DeleteObjectCommand({ Bucket: 'keys', Key: 'doomed' }));
    expect((await failure(s3.send(new HeadObjectCommand({ Bucket: 'keys', Key: 'doomed' })))).status).toBe(404);
    // Other keys are untouched.
    expect(await text(s3, 'keys', 'held')).toBe('kept under vault');
  });
});

/** Every data file under a bucket directory with its bytes (xl.meta left out). */
async function dataFiles(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || entry.name === 'xl.meta') continue;
    const path = join(entry.parentPath, entry.name);
    out[path] = (await readFile(path)).toString('base64');
  }
  return out;
}

describe('a restart during a re-wrap', () => {
  it('resumes it where it was: every older data key re-wrapped once, each object read back', async () => {
    const drives = join(root, 'resume/d{1...4}');
    const env = { SVC_KMS_SECRET_KEY: `svc-root:${key32()}` };
    const slow = await startSvc({ args: [drives], env: { ...env, SVC_KMS_REWRAP_OBJECTS_PER_SECOND: '4' } });
    const bodies = new Map<string, string>();
    let stopped = false;
    try {
      const s3 = s3ClientFor(slow.url);
      await s3.send(new CreateBucketCommand({ Bucket: 'resume' }));
      for (let index = 0; index < 16; index += 1) {
        const key = `object-${String(index).padStart(2, '0')}`;
        bodies.set(key, `${key} ${randomBytes(6).toString('hex')}`);
        await s3.send(new PutObjectCommand({ Bucket: 'resume', Key: key, Body: bodies.get(key), ServerSideEncryption: 'AES256' }));
      }
      expect((await admin(slow.url, 'POST', '/svc/admin/v4/kms/key/rotate', 'key-id=svc-root')).status).toBe(200);
      await waitFor('the re-wrap saved its position a few keys in', async () => ((await admin(slow.url, 'GET', '/svc/admin/v4/kms/rewrap/status')).body.versionsScanned >= 4 ? true : undefined), { timeoutMs: 20_000 });
      await slow.stop();
      stopped = true;
    } finally {
      if (!stopped) await slow.stop();
    }
    const fast = await startSvc({ args: [drives], env });
    try {
      const status = await waitFor('the resumed re-wrap finished', async () => {
        const answer = (await admin(fast.url, 'GET', '/svc/admin/v4/kms/rewrap/status')).body;
        return answer.state === 'finished' ? answer : undefined;
      }, { timeoutMs: 20_000 });
      expect(status.resumed).toBe(1);
      expect([status.rewrapped, status.failed]).toEqual([16, 0]);
      // Resumed, not started over: the keys walked before the stop are not walked again.
      expect(status.versionsScanned).toBeLessThanOrEqual(17);
      const s3 = s3ClientFor(fast.url);
      for (const [key, body] of bodies) expect(await text(s3, 'resume', key)).toBe(body);
    } finally {
      await fast.stop();
    }
  }, 60_000);
});

describe('a two-node cluster', () => {
  it('a rotation asked of the node that is not the leader re-wraps on the leader, its progress visible from both; disabling on one node refuses reads on the other', async () => {
    const cluster = await startProcessCluster({ nodes: 2, drivesPerNode: 2, poolPaths: ['/p0/d{1...2}'], env: { SVC_KMS_SECRET_KEY: `svc-root:${key32()}` } });
    try {
      await withClusterLogs(cluster, async () => {
        const [leader, other] = cluster.urls as [string, string];
        expect((await admin(other, 'POST', '/svc/admin/v4/kms/key/create', 'key-id=shared')).status).toBe(200);
        const s3 = s3ClientFor(other);
        await s3.send(new CreateBucketCommand({ Bucket: 'spread' }));
        for (let index = 0; index < 5; index += 1) await s3.send(new PutObjectCommand({ Bucket: 'spread', Key: `o${index}`, Body: `body ${index}`, ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'shared' }));
        const rotated = await admin(other, 'POST', '/svc/admin/v4/kms/key/rotate', 'key-id=shared');
        expect([rotated.status, rotated.body.key.version]).toEqual([200, 2]);
        const finished = await waitFor('the leader finished the re-wrap', async () => {
          const status = (await admin(other, 'GET', '/svc/admin/v4/kms/rewrap/status')).body;
          return status.state === 'finished' ? status : undefined;
        }, { timeoutMs: 20_000 });
        expect([finished.rewrapped, finished.failed]).toEqual([5, 0]);
        expect((await admin(leader, 'GET', '/svc/admin/v4/kms/rewrap/status')).body).toEqual(finished);
        // The other node learnt the new version: what it seals now is version 2, and everything reads.
        expect((await admin(other, 'GET', '/svc/admin/v4/kms/key/status', 'key-id=shared')).body.version).toBe(2);
        for (let index = 0; index < 5; index += 1) expect(await text(s3ClientFor(leader), 'spread', `o${index}`)).toBe(`body ${index}`);
        expect((await admin(leader, 'POST', '/svc/admin/v4/kms/key/disable', 'key-id=shared')).status).toBe(200);
        expect(await failure(s3.send(new GetObjectCommand({ Bucket: 'spread', Key: 'o1' })))).toEqual({ name: 'KMS.DisabledException', status: 400 });
        expect((await admin(other, 'POST', '/svc/admin/v4/kms/key/enable', 'key-id=shared')).status).toBe(200);
        expect(await text(s3ClientFor(leader), 'spread', 'o1')).toBe('body 1');
      });
    } finally {
      await cluster.destroy();
    }
  }, 120_000);
});
