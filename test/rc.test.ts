/** The `rc` client run as a real process against a two-node cluster with two pools. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { testCredentials } from './helpers/server-process.js';
import { runRc, type RcRun } from './helpers/rc-process.js';
import { startProcessCluster, type ProcessCluster } from './helpers/process-cluster.js';

let cluster: ProcessCluster;
let home: string;

function rc(...args: string[]): Promise<RcRun> {
  return runRc(home, args, { RC_WATCH_INTERVAL_MS: '200' });
}

async function ok(...args: string[]): Promise<string> {
  const run = await rc(...args);
  expect(run.code, `rc ${args.join(' ')}\n${run.stderr}`).toBe(0);
  return run.stdout;
}

async function okJson(...args: string[]): Promise<any> {
  return JSON.parse(await ok(...args, '--json'));
}

async function fails(expected: RegExp, ...args: string[]): Promise<void> {
  const run = await rc(...args);
  expect(run.code, `rc ${args.join(' ')} should fail\n${run.stdout}`).not.toBe(0);
  expect(run.stderr.trim().split('\n')[0]).toMatch(expected);
}

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'svc-rc-'));
  cluster = await startProcessCluster({ nodes: 2, drivesPerNode: 2, poolPaths: ['/p0/d{1...2}', '/p1/d{1...2}'], env: { SVC_DECOMMISSION_ENTRY_CONCURRENCY: '2' } });
}, 120_000);
afterAll(async () => {
  await cluster?.destroy();
  await rm(home, { recursive: true, force: true });
});

describe('rc', () => {
  it('manages aliases in a private config file and refuses bad ones', async () => {
    expect(await ok('alias', 'set', 'one', cluster.urls[0]!, testCredentials.accessKeyId, testCredentials.secretAccessKey)).toContain('alias one');
    await ok('alias', 'set', 'two', cluster.urls[1]!, testCredentials.accessKeyId, testCredentials.secretAccessKey);
    await ok('alias', 'set', 'wrong', cluster.urls[0]!, testCredentials.accessKeyId, 'not-the-secret-key');
    expect((await stat(join(home, 'rc', 'config.json'))).mode & 0o777).toBe(0o600);
    expect(await ok('alias', 'list')).toMatch(/one\s+http:\/\/127\.0\.0\.2/);
    expect((await okJson('alias', 'list')).map((row: any) => row.alias).sort()).toEqual(['one', 'two', 'wrong']);
    await fails(/not a URL/, 'alias', 'set', 'bad', 'not a url', 'a', 'b');
    await fails(/unknown alias 'nobody'/, 'ping', 'nobody');
    await ok('alias', 'set', 'gone', 'http://127.0.0.1:1', 'a', 'b');
    expect(await ok('alias', 'remove', 'gone')).toContain('removed');
    await fails(/unknown alias 'gone'/, 'alias', 'remove', 'gone');
    await fails(/unknown command/, 'frobnicate');
    expect(await ok('--help')).toContain('rc admin decommission start');
    expect(await ok('cp', '--help')).toContain('usage: rc cp');
  });

  it('ping and ready, with a timeout for a server that does not answer', async () => {
    expect(await ok('ping', 'one')).toMatch(/alive/);
    expect((await okJson('ready', 'two', '--timeout', '5')).ok).toBe(true);
    await ok('alias', 'set', 'dead', 'http://127.0.0.1:9', 'a', 'b');
    const started = Date.now();
    await fails(/is not ready/, 'ready', 'dead', '--timeout', '1');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    await fails(/--timeout is a number/, 'ping', 'one', '--timeout', 'soon');
  });

  it('object commands: mb, cp up/down/server-side (multipart with a large file), ls, cat, stat, rm, rb', async () => {
    expect(await ok('mb', 'one/photos')).toContain('bucket created');
    await fails(/InvalidBucketName/, 'mb', 'one/x');
    await fails(/InvalidAccessKeyId|SignatureDoesNotMatch/, 'ls', 'wrong/photos');
    const big = join(home, 'big.bin');
    const bytes = randomBytes(20 * 1024 * 1024 + 17);
    await writeFile(big, bytes);
    const uploaded = await okJson('cp', big, 'one/photos/2026/big.bin');
    expect(uploaded.etag).toMatch(/-2"$/);
    await writeFile(join(home, 'note.txt'), 'a small note');
    expect(await ok('cp', join(home, 'note.txt'), 'two/photos/notes/')).toContain('two/photos/notes/note.txt');
    expect(await ok('cp', 'one/photos/notes/note.txt', 'one/photos/copy.txt')).toContain('server side');
    await ok('cp', 'two/photos/2026/big.bin', join(home, 'back.bin'));
    expect(createHash('md5').update(await readFile(join(home, 'back.bin'))).digest('hex')).toBe(createHash('md5').update(bytes).digest('hex'));
    expect(await ok('cat', 'one/photos/copy.txt')).toBe('a small note');
    const top = await ok('ls', 'one/photos');
    expect(top).toMatch(/DIR\s+2026\//);
    expect(top).toMatch(/copy\.txt/);
    const all = (await okJson('ls', 'two/photos', '--recursive')).map((row: any) => row.key);
    expect(all).toEqual(['2026/big.bin', 'copy.txt', 'notes/note.txt']);
    expect((await okJson('ls', 'one')).map((bucket: any) => bucket.name)).toContain('photos');
    const info = await okJson('stat', 'one/photos/2026/big.bin');
    expect(info.size).toBe(bytes.length);
    expect(await ok('stat', 'one/photos/copy.txt')).toMatch(/Size\s+: 12 B/);
    await fails(/NotFound/, 'stat', 'one/photos/missing');
    await fails(/names no object/, 'cat', 'one/photos');
    await fails(/neither .* starts with a known alias/, 'cp', join(home, 'note.txt'), 'nowhere-local-path');
    await fails(/BucketNotEmpty/, 'rb', 'one/photos');
    expect(await ok('rm', 'one/photos/copy.txt')).toContain('removed');
    expect((await okJson('rm', 'one/photos', '--recursive')).removed).toBe(2);
    expect(await ok('rb', 'one/photos')).toContain('bucket removed');
  });

  it('versions: ls --versions, rm of one version, rm --recursive --versions, rb --force', async () => {
    await ok('mb', 'one/history');
    const { S3Client, PutBucketVersioningCommand } = await import('@aws-sdk/client-s3');
    await new S3Client({ endpoint: cluster.urls[0], region: 'us-east-1', forcePathStyle: true, credentials: testCredentials }).send(new PutBucketVersioningCommand({ Bucket: 'history', VersioningConfiguration: { Status: 'Enabled' } }));
    await writeFile(join(home, 'v.txt'), 'first');
    await ok('cp', join(home, 'v.txt'), 'one/history/doc');
    await writeFile(join(home, 'v.txt'), 'second');
    await ok('cp', join(home, 'v.txt'), 'one/history/doc');
    expect(await ok('rm', 'one/history/doc')).toContain('delete marker');
    const versions = await okJson('ls', 'one/history', '--versions');
    expect(versions).toHaveLength(3);
    expect(versions.filter((row: any) => row.deleteMarker)).toHaveLength(1);
    expect(await ok('ls', 'one/history', '--versions')).toMatch(/DEL/);
    const oldest = versions.filter((row: any) => !row.deleteMarker).at(-1);
    expect(await ok('cat', 'one/history/doc', '--version-id', oldest.versionId)).toBe('first');
    await ok('rm', 'one/history/doc', '--version-id', oldest.versionId);
    expect(await okJson('ls', 'one/history', '--versions')).toHaveLength(2);
    expect(await ok('rb', 'one/history', '--force')).toContain('bucket removed');
  });

  it('admin pool list and status, with bad pools refused', async () => {
    const human = await ok('admin', 'pool', 'list', 'one');
    expect(human).toMatch(/ID\s+POOL/);
    expect(human).toContain('/p1/d{1...2}');
    const pools = await okJson('admin', 'pool', 'list', 'two');
    expect(pools.pools.map((pool: any) => pool.id)).toEqual([0, 1]);
    const status = await okJson('admin', 'pool', 'status', 'one', '1', '--by-id');
    expect(status.sets[0].drives).toHaveLength(4);
    expect(await ok('admin', 'pool', 'status', 'one', pools.pools[0].cmdline)).toMatch(/pool 0: /);
    await fails(/NoSuchPool/, 'admin', 'pool', 'status', 'one', '7', '--by-id');
    await fails(/NoSuchPool/, 'admin', 'pool', 'status', 'one', '/no/such/pool');
    await fails(/zero-based index, not 'first'/, 'admin', 'pool', 'status', 'one', 'first', '--by-id');
    await fails(/AccessDenied/, 'admin', 'pool', 'list', 'wrong');
  });

  it('admin rebalance (and its expand alias) start, status, stop', async () => {
    const started = await okJson('admin', 'rebalance', 'start', 'one');
    expect(started.id).toMatch(/^[0-9a-f-]{36}$/);
    const status = await okJson('admin', 'expand', 'status', 'two', '--watch');
    expect(status.id).toBe(started.id);
    expect(status.pools.map((pool: any) => pool.status)).not.toContain('active');
    expect(await ok('admin', 'rebalance', 'status', 'one')).toMatch(/POOL\s+STATUS/);
    await fails(/NoRebalanceRunning/, 'admin', 'rebalance', 'stop', 'one');
  });

  it('admin decommission through the node that is not the leader, followed to completion', async () => {
    await ok('mb', 'one/moving');
    await writeFile(join(home, 'm.txt'), 'moving data');
    for (let index = 0; index < 20; index += 1) await ok('cp', join(home, 'm.txt'), `one/moving/k${index}`);
    await fails(/DecommissionNotClearable/, 'admin', 'decommission', 'clear', 'two', '0', '--by-id');
    await fails(/NoActiveDecommission/, 'admin', 'decommission', 'cancel', 'two', '0', '--by-id');
    await fails(/LastPoolCannotBeDecommissioned/, 'admin', 'decommission', 'start', 'two', '0,1', '--by-id');
    await fails(/zero-based index/, 'admin', 'decommission', 'start', 'two', 'zero', '--by-id');
    expect(await ok('admin', 'decommission', 'start', 'two', '0', '--by-id')).toMatch(/pool 0: decommission (queued|active)/);
    const done = await okJson('admin', 'decommission', 'status', 'two', '--watch');
    expect(done.entries[0]).toMatchObject({ pool: 0, state: 'completed' });
    expect(await ok('admin', 'decommission', 'status', 'one')).toMatch(/0\s+completed/);
    expect(await ok('cat', 'two/moving/k7')).toBe('moving data');
  });

  it('admin heal start, status (watched), stop, background status, and its flags', async () => {
    const started = await okJson('admin', 'heal', 'start', 'one', '--bucket', 'moving', '--scan-mode', 'deep', '--dry-run');
    const token = started.clientToken as string;
    const status = await okJson('admin', 'heal', 'status', 'one', '--client-token', token, '--watch');
    expect(status).toMatchObject({ clientToken: token, status: 'finished' });
    expect(status.counts.objectsScanned).toBeGreaterThanOrEqual(20);
    expect(await ok('admin', 'heal', 'status', 'one', '--client-token', token)).toContain(`heal ${token}: finished`);
    expect((await okJson('admin', 'heal', 'stop', 'one', '--client-token', token)).status).toBe('finished');
    expect(await ok('admin', 'heal', 'status', 'one')).toContain('read-repair queue');
    await fails(/NoSuchHealSequence/, 'admin', 'heal', 'status', 'one', '--client-token', 'nope');
    await fails(/--scan-mode is 'normal' or 'deep'/, 'admin', 'heal', 'start', 'one', '--scan-mode', 'fast');
    await fails(/Unknown option '--nolock'/, 'admin', 'heal', 'start', 'one', '--nolock');
    await fails(/NoSuchBucket/, 'admin', 'heal', 'start', 'one', '--bucket', 'absent-bucket');
    const root = await okJson('admin', 'heal', 'start', 'two', '--watch');
    expect(root.status).toBe('finished');
  });

  it('admin info cluster and disk', async () => {
    const snapshot = await okJson('admin', 'info', 'cluster', 'one');
    expect(snapshot.nodes).toHaveLength(2);
    expect(snapshot.pools).toHaveLength(2);
    expect(await ok('admin', 'info', 'cluster', 'two')).toMatch(/NODE\s+STATE/);
    expect((await okJson('admin', 'info', 'disk', 'one')).drives).toHaveLength(8);
    expect(await ok('admin', 'info', 'disk', 'one', '--offline')).toContain('every drive is online');
    await cluster.kill(1);
    try {
      const offline = (await okJson('admin', 'info', 'disk', 'one', '--offline')).drives;
      expect(offline).toHaveLength(4);
      expect(offline.every((drive: any) => drive.endpoint.includes('127.0.0.3'))).toBe(true);
    } finally {
      await cluster.start(1);
    }
  });
});
