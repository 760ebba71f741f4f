/** `rc admin object placement` and `rc admin simulate`, run as real processes against a real server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { rcIn } from './helpers/rc-process.js';

let root: string;
let server: SvcProcess;

const { rc, ok } = rcIn(() => root);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-rc-explorer-'));
  server = await startSvc({ args: [join(root, 'd{1...4}')], env: { SVC_CONSOLE_ENABLE: 'false' } });
  const s3 = s3ClientFor(server.url);
  await s3.send(new CreateBucketCommand({ Bucket: 'photos' }));
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: '2024/cat.jpg', Body: Buffer.alloc(300_000, 7) }));
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'tiny.txt', Body: 'hello', StorageClass: 'REDUCED_REDUNDANCY' }));
  await ok('alias', 'set', 'local', server.url, testCredentials.accessKeyId, testCredentials.secretAccessKey);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

describe('rc admin object placement', () => {
  it('prints the geometry, the quorums and a table of shards; --json gives the admin answer; --verify names a deleted shard', async () => {
    const text = await ok('admin', 'object', 'placement', 'local/photos/2024/cat.jpg');
    expect(text).toContain('pool 0, set 0: EC 2+2 on 4 drives');
    expect(text).toContain('quorums: read 2 (K), write 3 (K, or K + 1 when K = M), delete 3 (floor(N/2) + 1 (majority))');
    expect(text).toMatch(/SHARD\s+ROLE\s+SLOT\s+NODE\s+DRIVE/);
    const placed = JSON.parse(await ok('admin', 'object', 'placement', 'local/photos/2024/cat.jpg', '--json'));
    expect(placed.shards.map((shard: any) => shard.role)).toEqual(['data', 'data', 'parity', 'parity']);
    const parity = placed.shards[3];
    await unlink(parity.files[0].file);
    const verified = await ok('admin', 'object', 'placement', 'local/photos/2024/cat.jpg', '--verify');
    expect(verified).toContain('VERIFY');
    const row = verified.split('\n').find((line) => line.startsWith('4 '))!;
    expect(row).toContain('missing');
    expect(verified.split('\n').filter((line) => / ok$/.test(line))).toHaveLength(3);
    expect(await ok('admin', 'object', 'placement', 'local/photos/tiny.txt')).toContain('EC 3+1 on 4 drives');
  }, 60_000);

  it('refuses a target without a key, and reports a missing object by its code', async () => {
    const noKey = await rc('admin', 'object', 'placement', 'local/photos');
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('names no object');
    const absent = await rc('admin', 'object', 'placement', 'local/photos/absent');
    expect(absent.code).not.toBe(0);
    expect(absent.stderr).toContain('NoSuchKey');
  }, 30_000);
});

describe('rc admin simulate', () => {
  it('prints each set\'s verdicts and the objects of a bucket that would become unreadable, failing nothing', async () => {
    const drives = [join(root, 'd1'), join(root, 'd2')];
    const text = await ok('admin', 'simulate', 'local', '--fail-drive', drives[0]!, '--fail-drive', drives[1]!, '--bucket', 'photos');
    expect(text).toContain(`failing drive ${drives[0]}, drive ${drives[1]}`);
    expect(text).toMatch(/0\s+0\s+2\/4\s+STANDARD EC:2\s+yes \(\+0\)\s+NO\s+NO/);
    expect(text).toMatch(/REDUCED_REDUNDANCY EC:1\s+NO\s+NO\s+NO/);
    expect(text).toContain('photos/: 1 of 2 object(s) would be unreadable');
    expect(text).toContain('  tiny.txt');
    const json = JSON.parse(await ok('admin', 'simulate', 'local', '--fail-node', 'local', '--json'));
    expect(json.sets[0].failedSlots).toEqual([0, 1, 2, 3]);
    expect(json.summary).toEqual({ readable: false, writable: false, deletable: false });
    // Nothing failed for real.
    expect(JSON.parse(await ok('admin', 'object', 'placement', 'local/photos/tiny.txt', '--json')).now.readable).toBe(true);
  }, 60_000);

  it('refuses --prefix without --bucket and an unknown drive, by name', async () => {
    expect((await rc('admin', 'simulate', 'local', '--prefix', 'x')).code).toBe(2);
    const unknown = await rc('admin', 'simulate', 'local', '--fail-drive', '/not/a/drive');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('/not/a/drive');
  }, 30_000);
});
