/**
 * Drives written by the layout before key-segment escaping (test/fixtures/legacy-layout, made by
 * test/fixtures/make-legacy-layout.ts with that build) still read, list, overwrite, delete and heal:
 * objects stay where that layout put them (`users/<uuid>/xl.meta` raw), found by the read's
 * fallback and by the walk's look inside UUID-named directories.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cp, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { legacyBodies, legacyChildBody } from './fixtures/make-legacy-layout.js';
import { admin } from './helpers/admin-client.js';
import { repoRoot, s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';

let root: string;
let server: SvcProcess;
let s3: S3Client;
const bucket = 'legacy';
const user = 'users/6f1c1a3e-2b7d-4c55-9a10-3d2e8f0b7a11';
const gone = 'users/0b9d5c2e-8e44-4f0f-8b3c-5a7a9d1e2f33';

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-legacy-'));
  await cp(join(repoRoot, 'test/fixtures/legacy-layout'), root, { recursive: true });
  server = await startSvc({ args: [join(root, 'd{1...4}')], env: { SVC_CONSOLE_ENABLE: 'false' } });
  s3 = s3ClientFor(server.url);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

const read = async (key: string) => Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToByteArray()).toString();
const listed = async (prefix = '') => ((await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }))).Contents ?? []).map((item) => item.Key!);
const exists = (path: string) => stat(path).then(() => true, () => false);
const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

async function childKey(): Promise<string> {
  const dataDir = (await readdir(join(root, 'd1', bucket, 'r1'))).find((name) => name !== 'xl.meta')!;
  return `r1/${dataDir}/child`;
}

describe('objects written by the older layout', () => {
  it('read back byte for byte, the child stored inside r1\'s data directory included', async () => {
    for (const [key, body] of Object.entries(legacyBodies)) expect(await read(key), key).toBe(body);
    expect(await read(await childKey())).toBe(legacyChildBody);
  });

  it('are listed, users/<uuid> beside its data directory and its child included', async () => {
    // The key stored inside r1's live data directory is readable but not listed until r1 stops using that directory.
    expect(await listed()).toEqual(Object.keys(legacyBodies).sort(byteOrder));
    expect(await listed('users/')).toEqual([gone, user, `${user}/avatar.png`]);
  });

  it('heal rebuilds a legacy object where it lives when a drive lost it', async () => {
    const onD2 = join(root, 'd2', bucket, ...user.split('/'));
    await rm(join(onD2, 'xl.meta'));
    for (const name of await readdir(onD2)) if (/^[0-9a-f-]{36}$/.test(name)) await rm(join(onD2, name), { recursive: true });
    const started = await admin(server.url, 'POST', `/svc/admin/v3/heal/${bucket}`, '', { body: JSON.stringify({ recursive: true }) });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const deadline = Date.now() + 30_000;
    let status = started.body;
    while (status.status === 'running' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await admin(server.url, 'POST', `/svc/admin/v3/heal/${bucket}`, `clientToken=${started.body.clientToken}`)).body;
    }
    expect(status.status).not.toBe('running');
    expect(await exists(join(onD2, 'xl.meta'))).toBe(true);
    expect((await readdir(onD2)).some((name) => /^[0-9a-f-]{36}$/.test(name))).toBe(true);
    expect(await read(user)).toBe(legacyBodies[user]);
  });

  it('are overwritten and deleted in place, and overwriting r1 neither loses nor keeps hiding the child in its old data directory', async () => {
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: user, Body: 'new profile' }));
    expect(await read(user)).toBe('new profile');
    expect(await exists(join(root, 'd1', bucket, 'users', `${user.split('/')[1]}__XLKEY__`))).toBe(false);
    expect(await read(`${user}/avatar.png`)).toBe(legacyBodies[`${user}/avatar.png`]);
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: gone }));
    expect(await s3.send(new GetObjectCommand({ Bucket: bucket, Key: gone })).then(() => 'found', (error: { name: string }) => error.name)).toBe('NoSuchKey');
    const child = await childKey();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'r1', Body: 'r1 rewritten with a data directory of its own'.repeat(8) }));
    expect(await read(child)).toBe(legacyChildBody);
    expect(await listed('r1')).toEqual(['r1', child]);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${user}/new-child`, Body: 'new child' }));
    expect(await listed('users/')).toEqual([user, `${user}/avatar.png`, `${user}/new-child`]);
  });
});
