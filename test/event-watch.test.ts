/**
 * `rc watch` against a two-node cluster of real processes: a watch on node 1 prints the events of
 * writes made through either node, filtered by event, prefix and suffix; JSON lines carry AWS's
 * record; a caller without s3:ListenBucketNotification on the bucket is refused (and may watch
 * the bucket its policy names); a missing bucket and an unknown event name are named errors; a
 * watcher that goes away leaves no listener behind on either node.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, DeleteObjectCommand, PutObjectCommand, PutObjectTaggingCommand } from '@aws-sdk/client-s3';
import { programArgs } from '../conformance/harness/entry.js';
import { startProcessCluster, type ProcessCluster } from './helpers/process-cluster.js';
import { s3ClientFor, testCredentials, repoRoot } from './helpers/server-process.js';
import { runRc } from './helpers/rc-process.js';
import { admin } from './helpers/admin-client.js';
import { waitFor } from './helpers/poll.js';

let cluster: ProcessCluster;
let home: string;

interface Watcher {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

function startWatch(...args: string[]): Watcher {
  const child = spawn(process.execPath, [...programArgs('rc'), 'watch', ...args], { cwd: repoRoot, env: { PATH: process.env.PATH ?? '', HOME: home, RC_CONFIG_DIR: join(home, 'rc') } });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

async function watching(watcher: Watcher): Promise<void> {
  await waitFor('the watch follows every node', () => watcher.stderr().includes('on 2 node(s);') || watcher.child.exitCode !== null, { timeoutMs: 30_000 });
  expect(watcher.stderr(), watcher.stderr()).toContain('watching');
}

async function ok(...args: string[]): Promise<string> {
  const run = await runRc(home, args);
  expect(run.code, `rc ${args.join(' ')}\n${run.stderr}`).toBe(0);
  return run.stdout;
}

async function listeners(url: string): Promise<number> {
  const answer = await admin(url, 'GET', '/svc/admin/v4/event/targets');
  expect(answer.status).toBe(200);
  return answer.body.listeners.active as number;
}

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'svc-watch-'));
  cluster = await startProcessCluster({ nodes: 2, drivesPerNode: 2 });
  await s3ClientFor(cluster.urls[0]!).send(new CreateBucketCommand({ Bucket: 'photos' }));
  await s3ClientFor(cluster.urls[0]!).send(new CreateBucketCommand({ Bucket: 'other' }));
  await ok('alias', 'set', 'one', cluster.urls[0]!, testCredentials.accessKeyId, testCredentials.secretAccessKey);
}, 120_000);

afterAll(async () => {
  await cluster?.destroy();
  if (home) await rm(home, { recursive: true, force: true });
});

describe('rc watch', () => {
  it('prints the events of writes through every node, filtered, until stopped; then no listener is left', async () => {
    const puts = startWatch('one/photos', '--events', 'put');
    const logs = startWatch('one/photos', '--prefix', 'logs/', '--suffix', '.log', '--json');
    try {
      await watching(puts);
      await watching(logs);
      const [first, second] = cluster.urls.map((url) => s3ClientFor(url!));
      await second!.send(new PutObjectCommand({ Bucket: 'photos', Key: 'via-two.jpg', Body: 'hello' }));
      await first!.send(new PutObjectCommand({ Bucket: 'photos', Key: 'via one.jpg', Body: 'hi' }));
      await second!.send(new PutObjectCommand({ Bucket: 'photos', Key: 'logs/a.log', Body: 'line\n' }));
      await second!.send(new PutObjectTaggingCommand({ Bucket: 'photos', Key: 'logs/a.log', Tagging: { TagSet: [{ Key: 'k', Value: 'v' }] } }));
      await first!.send(new PutObjectCommand({ Bucket: 'photos', Key: 'logs/b.txt', Body: 'no' }));
      await second!.send(new DeleteObjectCommand({ Bucket: 'photos', Key: 'via-two.jpg' }));
      await second!.send(new PutObjectCommand({ Bucket: 'other', Key: 'elsewhere.jpg', Body: 'x' }));
      await waitFor('four puts printed', () => puts.stdout().split('\n').filter((line) => line.includes('s3:ObjectCreated:Put')).length >= 4, { timeoutMs: 20_000 });
      const lines = puts.stdout().trim().split('\n');
      expect(lines.some((line) => /^\[\d{4}-\d\d-\d\dT[^\]]+\] s3:ObjectCreated:Put via-two\.jpg 5 B$/.test(line)), lines.join('\n')).toBe(true);
      expect(lines.some((line) => line.endsWith('s3:ObjectCreated:Put via one.jpg 2 B')), lines.join('\n')).toBe(true);
      expect(lines.join('\n')).not.toContain('ObjectRemoved');
      expect(lines.join('\n')).not.toContain('ObjectTagging');
      expect(lines.join('\n')).not.toContain('elsewhere');

      await waitFor('the put and the tagging of logs/a.log', () => logs.stdout().trim().split('\n').filter((line) => line !== '').length >= 2, { timeoutMs: 20_000 });
      const records = logs.stdout().trim().split('\n').map((line) => JSON.parse(line) as Record<string, any>);
      expect(records.map((record) => record.EventName)).toEqual(['s3:ObjectCreated:Put', 's3:ObjectTagging:Put']);
      expect(records[0]).toMatchObject({ Key: 'photos/logs/a.log', Records: [{ eventVersion: '2.1', eventSource: 'aws:s3', s3: { bucket: { name: 'photos' }, object: { key: 'logs/a.log', size: 5 } } }] });
      expect(await listeners(cluster.urls[0]!)).toBe(2);
      expect(await listeners(cluster.urls[1]!)).toBe(2);
    } finally {
      puts.child.kill('SIGINT');
      logs.child.kill('SIGINT');
      await Promise.all([puts.exited, logs.exited]);
    }
    for (const url of cluster.urls) await waitFor(`no listener left on ${url}`, async () => (await listeners(url!)) === 0, { timeoutMs: 40_000 });
  }, 90_000);

  it('is refused without s3:ListenBucketNotification on the bucket, and allowed with it', async () => {
    const policy = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:ListenBucketNotification'], Resource: ['arn:aws:s3:::photos'] }] };
    expect((await admin(cluster.urls[0]!, 'POST', '/svc/admin/v4/iam/policy/create', 'name=listen-photos', { body: JSON.stringify(policy) })).status).toBe(200);
    expect((await admin(cluster.urls[0]!, 'POST', '/svc/admin/v4/iam/user/add', '', { body: JSON.stringify({ accessKey: 'listener', secretKey: 'listener-secret', policies: ['listen-photos'] }) })).status).toBe(200);
    expect((await admin(cluster.urls[0]!, 'POST', '/svc/admin/v4/iam/user/add', '', { body: JSON.stringify({ accessKey: 'reader', secretKey: 'reader-secret', policies: ['readonly'] }) })).status).toBe(200);
    await ok('alias', 'set', 'listener', cluster.urls[1]!, 'listener', 'listener-secret');
    await ok('alias', 'set', 'reader', cluster.urls[1]!, 'reader', 'reader-secret');

    const refused = await runRc(home, ['watch', 'reader/photos']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^rc: AccessDenied: .*s3:ListenBucketNotification/);
    const elsewhere = await runRc(home, ['watch', 'listener/other']);
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toContain('AccessDenied');
    expect(await listeners(cluster.urls[1]!)).toBe(0);

    const allowed = startWatch('listener/photos');
    try {
      await watching(allowed);
      await s3ClientFor(cluster.urls[0]!).send(new PutObjectCommand({ Bucket: 'photos', Key: 'seen.jpg', Body: 'abc' }));
      await waitFor('the event of seen.jpg', () => allowed.stdout().includes('s3:ObjectCreated:Put seen.jpg 3 B'), { timeoutMs: 20_000 });
    } finally {
      allowed.child.kill('SIGINT');
      await allowed.exited;
    }
  }, 60_000);

  it('names a missing bucket and an unknown event', async () => {
    const missing = await runRc(home, ['watch', 'one/no-such-bucket']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^rc: NoSuchBucket/);
    const unknown = await runRc(home, ['watch', 'one/photos', '--events', 'put,explode']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("not 'explode'");
    const raw = await admin(cluster.urls[0]!, 'GET', '/svc/admin/v4/event/listen', 'bucket=photos&events=s3:ObjectCreated:Explode');
    expect(raw.status).toBe(400);
    expect(raw.body).toMatchObject({ Code: 'InvalidArgument' });
    expect(raw.body.Message).toContain('s3:ObjectCreated:Explode');
  }, 30_000);
});
