/**
 * Users, policies and bucket policies on a two-node process cluster, through real clients (the
 * AWS SDK, the aws CLI when installed, rc, unsigned fetch): a readonly user cannot write, a
 * disabled user is refused at once on both nodes, a bucket policy opens one prefix to anonymous
 * readers and nothing else, and all of it survives a restart of both nodes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand, DeleteBucketPolicyCommand, DeleteObjectCommand, DeleteObjectsCommand, GetBucketPolicyCommand, GetBucketPolicyStatusCommand,
  GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutBucketPolicyCommand, PutObjectCommand, type S3Client,
} from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { startProcessCluster, type ProcessCluster } from './helpers/process-cluster.js';
import { s3ClientFor, testCredentials } from './helpers/server-process.js';
import { runRc } from './helpers/rc-process.js';
import { admin } from './helpers/admin-client.js';
import { withClusterLogs } from './helpers/cluster.js';
import { missingTool } from './helpers/external-tools.js';

const missingAws = missingTool('aws', 'awscli');
if (missingAws) console.warn(`skipping the aws CLI part of the users test: ${missingAws}`);

let cluster: ProcessCluster;
let home: string;
let root: S3Client;
const alice = { accessKeyId: 'alice', secretAccessKey: 'alice-secret-1' };
const bob = { accessKeyId: 'bob', secretAccessKey: 'bob-secret-12' };

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'svc-iam-'));
  cluster = await startProcessCluster({ nodes: 2, drivesPerNode: 2 });
  root = s3ClientFor(cluster.urls[0]!);
}, 120_000);
afterAll(async () => {
  await cluster?.destroy();
  await rm(home, { recursive: true, force: true });
});

const rc = (...args: string[]) => runRc(home, args);
async function ok(...args: string[]): Promise<string> {
  const run = await rc(...args);
  expect(run.code, `rc ${args.join(' ')}\n${run.stderr}`).toBe(0);
  return run.stdout;
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    return (error as { name?: string; Code?: string }).Code ?? (error as Error).name;
  }
}

const body = async (client: S3Client, Key: string) => (await client.send(new GetObjectCommand({ Bucket: 'shared', Key }))).Body!.transformToString();

describe('users and policies', () => {
  it('rc adds users and policies; a readonly user reads but cannot write, and nothing changes', () =>
    withClusterLogs(cluster, async () => {
      await ok('alias', 'set', 'one', cluster.urls[0]!, testCredentials.accessKeyId, testCredentials.secretAccessKey);
      await root.send(new CreateBucketCommand({ Bucket: 'shared' }));
      await root.send(new PutObjectCommand({ Bucket: 'shared', Key: 'docs/a.txt', Body: 'original' }));
      expect(await ok('admin', 'user', 'add', 'one', alice.accessKeyId, alice.secretAccessKey, '--policy', 'readonly')).toContain('alice: enabled, policies readonly');
      expect((await rc('admin', 'user', 'add', 'one', 'x', 'short')).stderr).toMatch(/InvalidUserCredentials|access key must be/);
      expect((await rc('admin', 'policy', 'attach', 'one', 'no-such-policy', 'alice')).stderr).toMatch(/NoSuchPolicy|does not exist/);

      for (const url of cluster.urls) {
        const client = s3ClientFor(url, { credentials: alice });
        expect(await body(client, 'docs/a.txt')).toBe('original');
        expect((await client.send(new ListObjectsV2Command({ Bucket: 'shared' }))).KeyCount).toBe(1);
        expect(await codeOf(client.send(new PutObjectCommand({ Bucket: 'shared', Key: 'docs/a.txt', Body: 'overwritten' })))).toBe('AccessDenied');
        expect(await codeOf(client.send(new PutObjectCommand({ Bucket: 'shared', Key: 'docs/new.txt', Body: 'new' })))).toBe('AccessDenied');
        expect(await codeOf(client.send(new DeleteObjectCommand({ Bucket: 'shared', Key: 'docs/a.txt' })))).toBe('AccessDenied');
        expect(await codeOf(client.send(new CreateBucketCommand({ Bucket: 'alices' })))).toBe('AccessDenied');
        const batch = await client.send(new DeleteObjectsCommand({ Bucket: 'shared', Delete: { Objects: [{ Key: 'docs/a.txt' }] } }));
        expect(batch.Errors?.map((error) => error.Code)).toEqual(['AccessDenied']);
      }
      // A browser form upload signed by the readonly user is judged the same way.
      const post = await createPresignedPost(s3ClientFor(cluster.urls[0]!, { credentials: alice }), { Bucket: 'shared', Key: 'docs/form.txt', Expires: 300 });
      const form = new FormData();
      for (const [name, value] of Object.entries(post.fields)) form.append(name, value);
      form.append('file', new Blob(['form body']), 'form.txt');
      const posted = await fetch(post.url, { method: 'POST', body: form });
      expect(posted.status).toBe(403);
      expect(await posted.text()).toContain('<Code>AccessDenied</Code>');
      expect(await body(root, 'docs/a.txt')).toBe('original');
      for (const Key of ['docs/new.txt', 'docs/form.txt']) expect(await codeOf(root.send(new HeadObjectCommand({ Bucket: 'shared', Key })))).toBe('NotFound');
    }));

  it.skipIf(missingAws !== undefined)('the aws CLI as the readonly user: ls and cp down work, cp up is AccessDenied', () =>
    withClusterLogs(cluster, async () => {
      const env = { ...process.env, AWS_ACCESS_KEY_ID: alice.accessKeyId, AWS_SECRET_ACCESS_KEY: alice.secretAccessKey, AWS_DEFAULT_REGION: 'us-east-1', AWS_EC2_METADATA_DISABLED: 'true' };
      const aws = (...args: string[]) => spawnSync('aws', ['--endpoint-url', cluster.urls[1]!, ...args], { env, encoding: 'utf8' });
      const listed = aws('s3', 'ls', 's3://shared/docs/');
      expect(listed.status, listed.stderr).toBe(0);
      expect(listed.stdout).toContain('a.txt');
      const local = join(home, 'upload.txt');
      await writeFile(local, 'from the cli');
      const upload = aws('s3', 'cp', local, 's3://shared/docs/cli.txt');
      expect(upload.status).not.toBe(0);
      expect(upload.stderr).toContain('AccessDenied');
      const download = aws('s3', 'cp', 's3://shared/docs/a.txt', join(home, 'down.txt'));
      expect(download.status, download.stderr).toBe(0);
      expect(await readFile(join(home, 'down.txt'), 'utf8')).toBe('original');
    }));

  it('a created policy limits a user to a prefix; explicit Deny wins over readwrite', () =>
    withClusterLogs(cluster, async () => {
      const file = join(home, 'bob.json');
      await writeFile(file, JSON.stringify({
        Version: '2012-10-17',
        Statement: [
          { Effect: 'Allow', Action: ['s3:PutObject', 's3:GetObject'], Resource: ['arn:aws:s3:::shared/bob/*'] },
          { Effect: 'Allow', Action: 's3:ListBucket', Resource: 'arn:aws:s3:::shared', Condition: { StringLike: { 's3:prefix': 'bob/*' } } },
        ],
      }));
      await ok('admin', 'policy', 'create', 'one', 'bob-home', file);
      await writeFile(join(home, 'bad.json'), JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'ec2:*', Resource: '*' }] }));
      expect((await rc('admin', 'policy', 'create', 'one', 'bad', join(home, 'bad.json'))).stderr).toMatch(/MalformedPolicy|not valid/);
      expect((await rc('admin', 'policy', 'create', 'one', 'readonly', file)).stderr).toMatch(/PolicyIsBuiltIn|built-in/);
      await ok('admin', 'user', 'add', 'one', bob.accessKeyId, bob.secretAccessKey);
      await ok('admin', 'policy', 'attach', 'one', 'bob-home', 'bob');
      expect(await ok('admin', 'policy', 'list', 'one')).toMatch(/bob-home\s+created/);
      const client = s3ClientFor(cluster.urls[1]!, { credentials: bob });
      await client.send(new PutObjectCommand({ Bucket: 'shared', Key: 'bob/notes.txt', Body: 'mine' }));
      expect(await body(client, 'bob/notes.txt')).toBe('mine');
      expect(await codeOf(client.send(new PutObjectCommand({ Bucket: 'shared', Key: 'docs/x.txt', Body: 'no' })))).toBe('AccessDenied');
      expect(await codeOf(body(client, 'docs/a.txt'))).toBe('AccessDenied');
      expect((await client.send(new ListObjectsV2Command({ Bucket: 'shared', Prefix: 'bob/' }))).KeyCount).toBe(1);
      expect(await codeOf(client.send(new ListObjectsV2Command({ Bucket: 'shared' })))).toBe('AccessDenied');

      await writeFile(file, JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Deny', Action: 's3:GetObject', Resource: 'arn:aws:s3:::shared/bob/*' }] }));
      await ok('admin', 'policy', 'create', 'one', 'no-bob-reads', file);
      await ok('admin', 'policy', 'attach', 'one', 'readwrite', 'bob');
      await ok('admin', 'policy', 'attach', 'one', 'no-bob-reads', 'bob');
      expect(await body(client, 'docs/a.txt')).toBe('original');
      expect(await codeOf(body(client, 'bob/notes.txt'))).toBe('AccessDenied');
      await ok('admin', 'policy', 'detach', 'one', 'no-bob-reads', 'bob');
      expect(await body(client, 'bob/notes.txt')).toBe('mine');
    }));

  it('a user disabled through one node is refused at once on every node, and enabled again', () =>
    withClusterLogs(cluster, async () => {
      const clients = cluster.urls.map((url) => s3ClientFor(url, { credentials: alice }));
      for (const client of clients) expect(await body(client, 'docs/a.txt')).toBe('original');
      await ok('admin', 'user', 'disable', 'one', 'alice');
      for (const client of clients) expect(await codeOf(body(client, 'docs/a.txt'))).toBe('InvalidAccessKeyId');
      expect(await ok('admin', 'user', 'list', 'one')).toMatch(/alice\s+disabled\s+readonly/);
      await ok('admin', 'user', 'enable', 'one', 'alice');
      for (const client of clients) expect(await body(client, 'docs/a.txt')).toBe('original');
      // A user cannot use the admin API.
      const listed = await fetch(`${cluster.urls[0]}/svc/admin/v4/iam/users`);
      expect(listed.status).toBe(403);
    }));

  it('users added at once through both nodes are all kept (changes take turns under the cluster lock)', () =>
    withClusterLogs(cluster, async () => {
      const names = Array.from({ length: 6 }, (_, index) => `racer${index}`);
      const answers = await Promise.all(names.map((name, index) => admin(cluster.urls[index % 2]!, 'POST', '/svc/admin/v4/iam/user/add', '', { body: JSON.stringify({ accessKey: name, secretKey: `${name}-secret`, policies: ['readonly'] }) })));
      expect(answers.map((answer) => answer.status)).toEqual(names.map(() => 200));
      for (const url of cluster.urls) {
        const listed = await admin(url, 'GET', '/svc/admin/v4/iam/users');
        expect((listed.body.users as { accessKey: string }[]).map((user) => user.accessKey).filter((name) => name.startsWith('racer'))).toEqual(names);
      }
      const refused = await admin(cluster.urls[1]!, 'POST', '/svc/admin/v4/iam/user/remove', 'accessKey=nobody');
      expect([refused.status, refused.body.Code]).toEqual([404, 'NoSuchUser']);
      const malformed = await admin(cluster.urls[0]!, 'POST', '/svc/admin/v4/iam/policy/create', 'name=x', { body: '{"Version":"2012-10-17"' });
      expect([malformed.status, malformed.body.Code]).toEqual([400, 'MalformedPolicy']);
      const asUser = await admin(cluster.urls[0]!, 'GET', '/svc/admin/v4/iam/users', '', { credentials: alice });
      expect([asUser.status, asUser.body.Code]).toEqual([403, 'AccessDenied']);
      for (const name of names) await admin(cluster.urls[0]!, 'POST', '/svc/admin/v4/iam/user/remove', `accessKey=${name}`);
    }));

  it('a bucket policy makes one prefix publicly readable by unsigned requests, and nothing else', () =>
    withClusterLogs(cluster, async () => {
      await root.send(new PutObjectCommand({ Bucket: 'shared', Key: 'public/hello.txt', Body: 'hello world' }));
      const url = (key: string) => `${cluster.urls[1]}/shared/${key}`;
      expect((await fetch(url('public/hello.txt'))).status).toBe(403);
      expect(await codeOf(root.send(new GetBucketPolicyCommand({ Bucket: 'shared' })))).toBe('NoSuchBucketPolicy');
      expect(await codeOf(root.send(new PutBucketPolicyCommand({ Bucket: 'shared', Policy: '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::shared/*"}]}' })))).toBe('MalformedPolicy');
      const policy = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: 'arn:aws:s3:::shared/public/*' }] });
      await root.send(new PutBucketPolicyCommand({ Bucket: 'shared', Policy: policy }));
      expect((await root.send(new GetBucketPolicyCommand({ Bucket: 'shared' }))).Policy).toBe(policy);
      expect((await root.send(new GetBucketPolicyStatusCommand({ Bucket: 'shared' }))).PolicyStatus?.IsPublic).toBe(true);

      const got = await fetch(url('public/hello.txt'));
      expect(got.status).toBe(200);
      expect(await got.text()).toBe('hello world');
      expect((await fetch(url('public/hello.txt'), { method: 'HEAD' })).status).toBe(200);
      expect((await fetch(url('docs/a.txt'))).status).toBe(403);
      expect((await fetch(`${cluster.urls[1]}/shared?list-type=2`)).status).toBe(403);
      expect((await fetch(cluster.urls[1]!)).status).toBe(403);
      const put = await fetch(url('public/new.txt'), { method: 'PUT', body: 'anonymous' });
      expect(put.status).toBe(403);
      expect(await put.text()).toContain('<Code>AccessDenied</Code>');
      expect((await fetch(url('public/hello.txt'), { method: 'DELETE' })).status).toBe(403);
      expect(await codeOf(root.send(new HeadObjectCommand({ Bucket: 'shared', Key: 'public/new.txt' })))).toBe('NotFound');
      expect(await body(root, 'public/hello.txt')).toBe('hello world');
      // Alice (readonly) may not change the policy.
      expect(await codeOf(s3ClientFor(cluster.urls[0]!, { credentials: alice }).send(new DeleteBucketPolicyCommand({ Bucket: 'shared' })))).toBe('AccessDenied');
    }));

  it('users, policies and the bucket policy survive a restart of both nodes; secrets are not stored in clear', () =>
    withClusterLogs(cluster, async () => {
      const stored = await readFile(join(cluster.root, 'node1', 'data1', '.svc.sys', 'iam.bin'));
      expect(stored.includes(Buffer.from(alice.secretAccessKey))).toBe(false);
      expect(stored.subarray(0, 4).toString('latin1')).toBe('SVIA');
      await Promise.all([cluster.stop(0), cluster.stop(1)]);
      await Promise.all([cluster.start(0), cluster.start(1)]);
      const aliceClient = s3ClientFor(cluster.urls[1]!, { credentials: alice });
      expect(await body(aliceClient, 'docs/a.txt')).toBe('original');
      expect(await codeOf(aliceClient.send(new PutObjectCommand({ Bucket: 'shared', Key: 'docs/z.txt', Body: 'z' })))).toBe('AccessDenied');
      const bobClient = s3ClientFor(cluster.urls[0]!, { credentials: bob });
      expect(await codeOf(bobClient.send(new PutObjectCommand({ Bucket: 'shared', Key: 'bob/again.txt', Body: 'again' })))).toBe('ok');
      expect((await fetch(`${cluster.urls[0]}/shared/public/hello.txt`)).status).toBe(200);
      await root.send(new DeleteBucketPolicyCommand({ Bucket: 'shared' }));
      expect((await fetch(`${cluster.urls[1]}/shared/public/hello.txt`)).status).toBe(403);
      await ok('admin', 'user', 'remove', 'one', 'bob');
      expect(await codeOf(bobClient.send(new GetObjectCommand({ Bucket: 'shared', Key: 'bob/again.txt' })))).toBe('InvalidAccessKeyId');
      expect((await readdir(join(cluster.root, 'node2', 'data2', '.svc.sys'))).includes('iam.bin')).toBe(true);
    }));
});
