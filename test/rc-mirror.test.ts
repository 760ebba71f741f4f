/**
 * `rc mirror` between real servers: s3rver into svc and back, and a local directory both ways
 * (compared object by object: bytes, content type, metadata); two svc deployments with versioned
 * buckets (every version in order, delete markers, tags, legal hold); a run killed mid-way and
 * run again (resumed from its checkpoint: no version copied twice, nothing missing); a source key
 * that lists but cannot be read (a listed failure, a non-zero exit, every other key copied and
 * the source unchanged); --dry-run and --remove; --watch following svc's live events and, from
 * s3rver, a listing on a timer; an object above the multipart threshold (lowered by
 * RC_MIRROR_MULTIPART_THRESHOLD_BYTES) written in parts. The number of objects of the interrupted run is
 * SVC_TEST_MIRROR_OBJECTS (default 60).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand, DeleteObjectCommand, GetObjectCommand, GetObjectLegalHoldCommand, GetObjectTaggingCommand, HeadObjectCommand, ListObjectsV2Command,
  ListObjectVersionsCommand, PutBucketVersioningCommand, PutObjectCommand, S3Client,
} from '@aws-sdk/client-s3';
import { programArgs } from '../conformance/harness/entry.js';
import { startS3rver, s3rverCredentials, type S3rverProcess } from '../conformance/harness/s3rver-process.js';
import { repoRoot, s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { runRc } from './helpers/rc-process.js';
import { admin } from './helpers/admin-client.js';
import { waitFor } from './helpers/poll.js';

const interruptedObjects = Number(process.env.SVC_TEST_MIRROR_OBJECTS ?? '60');

let root: string;
let home: string;
let one: SvcProcess;
let two: SvcProcess;
let s3rver: S3rverProcess;
let a: S3Client;
let b: S3Client;
let s: S3Client;

const rc = (...args: string[]) => runRc(home, args);
async function ok(...args: string[]): Promise<string> {
  const run = await rc(...args);
  expect(run.code, `rc ${args.join(' ')}\n${run.stdout}\n${run.stderr}`).toBe(0);
  return run.stdout;
}

async function body(client: S3Client, bucket: string, key: string, versionId?: string): Promise<string> {
  const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key, ...(versionId ? { VersionId: versionId } : {}) }));
  return answer.Body!.transformToString();
}

async function keys(client: S3Client, bucket: string): Promise<string[]> {
  const answer = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
  return (answer.Contents ?? []).map((object) => object.Key!).sort();
}

/** Every version of every key, oldest first: [key, body or 'DELETE'] pairs. */
async function history(client: S3Client, bucket: string): Promise<[string, string][]> {
  const answer = await client.send(new ListObjectVersionsCommand({ Bucket: bucket }));
  const entries = [
    ...(answer.Versions ?? []).map((version) => ({ key: version.Key!, id: version.VersionId!, at: version.LastModified!.getTime(), marker: false })),
    ...(answer.DeleteMarkers ?? []).map((marker) => ({ key: marker.Key!, id: marker.VersionId!, at: marker.LastModified!.getTime(), marker: true })),
  ].sort((first, second) => (first.key < second.key ? -1 : first.key > second.key ? 1 : first.at - second.at));
  return Promise.all(entries.map(async (entry): Promise<[string, string]> => [entry.key, entry.marker ? 'DELETE' : await body(client, bucket, entry.key, entry.id)]));
}

async function versionedBucket(client: S3Client, bucket: string, lock = false): Promise<void> {
  await client.send(new CreateBucketCommand({ Bucket: bucket, ...(lock ? { ObjectLockEnabledForBucket: true } : {}) }));
  await client.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-mirror-'));
  home = join(root, 'home');
  [one, two, s3rver] = await Promise.all([startSvc({ args: [join(root, 'one', 'd{1...4}')] }), startSvc({ args: [join(root, 'two', 'd{1...4}')] }), startS3rver(join(root, 's3rver'))]);
  a = s3ClientFor(one.url);
  b = s3ClientFor(two.url);
  s = new S3Client({ endpoint: s3rver.url, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3rverCredentials.accessKey, secretAccessKey: s3rverCredentials.secretKey } });
  await ok('alias', 'set', 'one', one.url, testCredentials.accessKeyId, testCredentials.secretAccessKey);
  await ok('alias', 'set', 'two', two.url, testCredentials.accessKeyId, testCredentials.secretAccessKey);
  await ok('alias', 'set', 's3r', s3rver.url, s3rverCredentials.accessKey, s3rverCredentials.secretKey);
}, 120_000);

afterAll(async () => {
  await Promise.all([one?.stop(), two?.stop(), s3rver?.stop()]);
  if (root) await rm(root, { recursive: true, force: true });
});

describe('rc mirror', () => {
  it('copies s3rver into svc and back, object by object, and skips what is already there', async () => {
    await s.send(new CreateBucketCommand({ Bucket: 'src' }));
    const objects = [['a.txt', 'text/plain', 'alpha'], ['photos/cat 1.jpg', 'image/jpeg', 'meow'], ['deep/er/data.bin', 'application/octet-stream', 'x'.repeat(70_000)]] as const;
    for (const [key, type, text] of objects) await s.send(new PutObjectCommand({ Bucket: 'src', Key: key, Body: text, ContentType: type, Metadata: { origin: 's3rver' } }));
    await a.send(new CreateBucketCommand({ Bucket: 'dst' }));
    const first = await ok('mirror', 's3r/src', 'one/dst');
    expect(first).toContain('3 copied');
    for (const [key, type, text] of objects) {
      expect(await body(a, 'dst', key)).toBe(text);
      const head = await a.send(new HeadObjectCommand({ Bucket: 'dst', Key: key }));
      expect([head.ContentType, head.Metadata]).toEqual([type, { origin: 's3rver' }]);
    }
    expect(await ok('mirror', 's3r/src', 'one/dst')).toContain('0 copied (0 B) in');
    await s.send(new CreateBucketCommand({ Bucket: 'back' }));
    await ok('mirror', 'one/dst', 's3r/back');
    for (const [key, type, text] of objects) {
      expect(await body(s, 'back', key)).toBe(text);
      expect((await s.send(new HeadObjectCommand({ Bucket: 'back', Key: key }))).ContentType).toBe(type);
    }
  }, 60_000);

  it('copies to and from a local directory, with --dry-run changing nothing and --remove removing what the source lacks', async () => {
    const directory = join(root, 'local');
    await ok('mirror', 'one/dst', directory);
    expect(await readFile(join(directory, 'photos', 'cat 1.jpg'), 'utf8')).toBe('meow');
    await writeFile(join(directory, 'new.txt'), 'fresh');
    await a.send(new CreateBucketCommand({ Bucket: 'fromdisk' }));
    await a.send(new PutObjectCommand({ Bucket: 'fromdisk', Key: 'stale.txt', Body: 'old' }));
    const dry = await ok('mirror', directory, 'one/fromdisk', '--remove', '--dry-run');
    expect(dry).toContain('copy new.txt 5 B');
    expect(dry).toContain('remove stale.txt');
    expect(await keys(a, 'fromdisk')).toEqual(['stale.txt']);
    await ok('mirror', directory, 'one/fromdisk', '--remove');
    expect(await keys(a, 'fromdisk')).toEqual(['a.txt', 'deep/er/data.bin', 'new.txt', 'photos/cat 1.jpg']);
    expect((await a.send(new HeadObjectCommand({ Bucket: 'fromdisk', Key: 'new.txt' }))).ContentType).toBe('text/plain');
    expect((await readdir(directory)).sort()).toEqual(['a.txt', 'deep', 'new.txt', 'photos']);
  }, 60_000);

  it('copies every version of a versioned bucket in order, with delete markers, tags and legal hold', async () => {
    await versionedBucket(a, 'hist', true);
    await versionedBucket(b, 'hist', true);
    for (const text of ['v1', 'v2 longer', 'v3']) await a.send(new PutObjectCommand({ Bucket: 'hist', Key: 'doc.txt', Body: text, ContentType: 'text/plain' }));
    await a.send(new PutObjectCommand({ Bucket: 'hist', Key: 'gone.txt', Body: 'here once' }));
    await a.send(new DeleteObjectCommand({ Bucket: 'hist', Key: 'gone.txt' }));
    await a.send(new PutObjectCommand({ Bucket: 'hist', Key: 'tagged.txt', Body: 'tags', Tagging: 'team=blue&year=2026' }));
    await a.send(new PutObjectCommand({ Bucket: 'hist', Key: 'held.txt', Body: 'hold', ObjectLockLegalHoldStatus: 'ON' }));
    await ok('mirror', 'one/hist', 'two/hist');
    expect(await history(b, 'hist')).toEqual(await history(a, 'hist'));
    expect((await b.send(new GetObjectTaggingCommand({ Bucket: 'hist', Key: 'tagged.txt' }))).TagSet).toEqual([{ Key: 'team', Value: 'blue' }, { Key: 'year', Value: '2026' }]);
    expect((await b.send(new GetObjectLegalHoldCommand({ Bucket: 'hist', Key: 'held.txt' }))).LegalHold?.Status).toBe('ON');
    await a.send(new PutObjectCommand({ Bucket: 'hist', Key: 'doc.txt', Body: 'v4' }));
    expect(await ok('mirror', 'one/hist', 'two/hist')).toContain('1 copied');
    expect(await history(b, 'hist')).toEqual(await history(a, 'hist'));
  }, 60_000);

  it('writes an object above the multipart threshold in parts: same bytes and metadata, a multipart ETag', async () => {
    await a.send(new CreateBucketCommand({ Bucket: 'large' }));
    await b.send(new CreateBucketCommand({ Bucket: 'large' }));
    const bytes = randomBytes(12 * 1024 * 1024);
    await a.send(new PutObjectCommand({ Bucket: 'large', Key: 'big.bin', Body: bytes, ContentType: 'application/x-big', Metadata: { origin: 'camera' }, CacheControl: 'no-cache', Tagging: 'size=large' }));
    await a.send(new PutObjectCommand({ Bucket: 'large', Key: 'small.txt', Body: 'small' }));
    const run = await runRc(home, ['mirror', 'one/large', 'two/large'], { RC_MIRROR_MULTIPART_THRESHOLD_BYTES: String(10 * 1024 * 1024) });
    expect(run.code, run.stderr).toBe(0);
    const copied = await b.send(new GetObjectCommand({ Bucket: 'large', Key: 'big.bin' }));
    expect(copied).toMatchObject({ ContentType: 'application/x-big', Metadata: { origin: 'camera' }, CacheControl: 'no-cache', ContentLength: bytes.length });
    // 12 MiB in 8 MiB parts: two of them.
    expect(copied.ETag).toMatch(/^"[0-9a-f]{32}-2"$/);
    expect(Buffer.from(await copied.Body!.transformToByteArray()).equals(bytes)).toBe(true);
    expect((await b.send(new GetObjectTaggingCommand({ Bucket: 'large', Key: 'big.bin' }))).TagSet).toEqual([{ Key: 'size', Value: 'large' }]);
    expect((await b.send(new HeadObjectCommand({ Bucket: 'large', Key: 'small.txt' }))).ETag).toMatch(/^"[0-9a-f]{32}"$/);
    // The multipart copy counts as already there on the next run.
    const again = await runRc(home, ['mirror', 'one/large', 'two/large'], { RC_MIRROR_MULTIPART_THRESHOLD_BYTES: String(10 * 1024 * 1024) });
    expect(again.stdout).toContain('0 copied');
    const refused = await runRc(home, ['mirror', 'one/large', 'two/large'], { RC_MIRROR_MULTIPART_THRESHOLD_BYTES: 'ten' });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('RC_MIRROR_MULTIPART_THRESHOLD_BYTES');
  }, 60_000);

  it('resumes after being killed mid-way: nothing copied twice, nothing missing', async () => {
    await versionedBucket(a, 'many');
    await versionedBucket(b, 'many');
    const blob = 'y'.repeat(256 * 1024);
    for (let index = 0; index < interruptedObjects; index += 1) {
      await a.send(new PutObjectCommand({ Bucket: 'many', Key: `k${String(index).padStart(3, '0')}`, Body: `${index}:${blob}` }));
      if (index % 3 === 0) await a.send(new PutObjectCommand({ Bucket: 'many', Key: `k${String(index).padStart(3, '0')}`, Body: `${index} again` }));
    }
    const child = spawn(process.execPath, [...programArgs('rc'), 'mirror', 'one/many', 'two/many'], { cwd: repoRoot, env: { PATH: process.env.PATH ?? '', HOME: home, RC_CONFIG_DIR: join(home, 'rc') } });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await waitFor('some versions copied', async () => ((await b.send(new ListObjectVersionsCommand({ Bucket: 'many' }))).Versions ?? []).length >= 5 || child.exitCode !== null, { timeoutMs: 60_000 });
    child.kill('SIGKILL');
    await exited;
    const resumed = await ok('mirror', 'one/many', 'two/many');
    expect(resumed).toMatch(/[1-9]\d* already there/);
    expect(await history(b, 'many')).toEqual(await history(a, 'many'));
    expect(await readdir(join(home, 'rc', 'mirror')).catch(() => [])).toEqual([]);
  }, 120_000);

  it('--watch keeps copying: on svc\'s live events, and on a timer from another server', async () => {
    await a.send(new CreateBucketCommand({ Bucket: 'live' }));
    await b.send(new CreateBucketCommand({ Bucket: 'live' }));
    await s.send(new CreateBucketCommand({ Bucket: 'livesrc' }));
    await a.send(new CreateBucketCommand({ Bucket: 'froms3' }));
    const watchers = [['one/live', 'two/live'], ['s3r/livesrc', 'one/froms3']].map(([from, to]) => {
      const child = spawn(process.execPath, [...programArgs('rc'), 'mirror', from!, to!, '--watch'], { cwd: repoRoot, env: { PATH: process.env.PATH ?? '', HOME: home, RC_CONFIG_DIR: join(home, 'rc'), RC_WATCH_INTERVAL_MS: '200' } });
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      return { child, stdout: () => stdout, exited: new Promise((resolve) => child.on('close', resolve)) };
    });
    try {
      for (const watcher of watchers) await waitFor('the first run', () => watcher.stdout().includes('mirrored'), { timeoutMs: 30_000 });
      await a.send(new PutObjectCommand({ Bucket: 'live', Key: 'later.txt', Body: 'after the first run' }));
      await s.send(new PutObjectCommand({ Bucket: 'livesrc', Key: 'later.txt', Body: 'from s3rver' }));
      await waitFor('later.txt copied from svc', async () => (await keys(b, 'live')).includes('later.txt'), { timeoutMs: 30_000 });
      await waitFor('later.txt copied from s3rver', async () => (await keys(a, 'froms3')).includes('later.txt'), { timeoutMs: 30_000 });
      expect(await body(b, 'live', 'later.txt')).toBe('after the first run');
      expect(await body(a, 'froms3', 'later.txt')).toBe('from s3rver');
    } finally {
      for (const watcher of watchers) watcher.child.kill('SIGINT');
      await Promise.all(watchers.map((watcher) => watcher.exited));
    }
  }, 90_000);

  it('lists a key it could not read, exits non-zero, and copies everything else', async () => {
    await a.send(new CreateBucketCommand({ Bucket: 'partial' }));
    for (const key of ['open/1.txt', 'secret/x.txt', 'open/2.txt']) await a.send(new PutObjectCommand({ Bucket: 'partial', Key: key, Body: key }));
    const policy = {
      Version: '2012-10-17',
      Statement: [
        { Effect: 'Allow', Action: ['s3:ListBucket', 's3:ListBucketVersions', 's3:GetBucketVersioning', 's3:GetObject', 's3:GetObjectVersion', 's3:GetObjectTagging', 's3:GetObjectVersionTagging'], Resource: ['arn:aws:s3:::partial', 'arn:aws:s3:::partial/*'] },
        { Effect: 'Deny', Action: ['s3:GetObject', 's3:GetObjectVersion'], Resource: ['arn:aws:s3:::partial/secret/*'] },
      ],
    };
    expect((await admin(one.url, 'POST', '/svc/admin/v4/iam/policy/create', 'name=partial-read', { body: JSON.stringify(policy) })).status).toBe(200);
    expect((await admin(one.url, 'POST', '/svc/admin/v4/iam/user/add', '', { body: JSON.stringify({ accessKey: 'partial', secretKey: 'partial-secret', policies: ['partial-read'] }) })).status).toBe(200);
    await ok('alias', 'set', 'lister', one.url, 'partial', 'partial-secret');
    await b.send(new CreateBucketCommand({ Bucket: 'partial' }));
    const run = await rc('mirror', 'lister/partial', 'two/partial');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/rc: 1 could not be copied:\n {2}secret\/x\.txt.*AccessDenied/);
    expect(await keys(b, 'partial')).toEqual(['open/1.txt', 'open/2.txt']);
    expect(await keys(a, 'partial')).toEqual(['open/1.txt', 'open/2.txt', 'secret/x.txt']);
    expect(await body(a, 'partial', 'secret/x.txt')).toBe('secret/x.txt');
  }, 60_000);
});
