/**
 * Condition keys and policy variables through a real server and the AWS SDK: a read allowed by
 * the object's own tag (s3:ExistingObjectTag), a home prefix per user (${aws:username}), and a
 * write allowed only with a given tag in x-amz-tagging (s3:RequestObjectTag), refused writes
 * storing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CopyObjectCommand, CreateBucketCommand, GetObjectCommand, GetObjectTaggingCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';

let root: string;
let server: SvcProcess;
let s3: S3Client;
const users = {
  reader: { accessKeyId: 'tag-reader', secretAccessKey: 'tag-reader-secret' },
  alice: { accessKeyId: 'alice', secretAccessKey: 'alice-secret-1' },
  bob: { accessKeyId: 'bob', secretAccessKey: 'bob-secret-12' },
  writer: { accessKeyId: 'blue-writer', secretAccessKey: 'blue-writer-secret' },
  careful: { accessKeyId: 'careful-writer', secretAccessKey: 'careful-writer-secret' },
};

const policies: Record<string, unknown> = {
  'public-tag-read': { Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::tagged/*', Condition: { StringEquals: { 's3:ExistingObjectTag/public': 'yes' } } },
  'own-home': { Effect: 'Allow', Action: ['s3:GetObject', 's3:PutObject'], Resource: 'arn:aws:s3:::home/${aws:username}/*' },
  // Writes only as new keys (If-None-Match: *), only in this region, and copies only from 'tagged'.
  'create-only': [
    { Effect: 'Allow', Action: 's3:PutObject', Resource: 'arn:aws:s3:::home/*', Condition: { StringEquals: { 's3:if-none-match': '*', 'aws:RequestedRegion': 'us-east-1' } } },
    { Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::tagged/*' },
    { Effect: 'Deny', Action: 's3:PutObject', Resource: 'arn:aws:s3:::home/*', Condition: { Null: { 's3:x-amz-copy-source': 'false' }, StringNotLike: { 's3:x-amz-copy-source': ['tagged/*', '/tagged/*'] } } },
  ],
  'blue-only': { Effect: 'Allow', Action: 's3:PutObject', Resource: 'arn:aws:s3:::tagged/*', Condition: { StringEquals: { 's3:RequestObjectTag/team': 'blue' } } },
};

async function addUser(user: { accessKeyId: string; secretAccessKey: string }, policy: string): Promise<void> {
  const added = await admin(server.url, 'POST', '/svc/admin/v4/iam/user/add', '', { body: JSON.stringify({ accessKey: user.accessKeyId, secretKey: user.secretAccessKey, policies: [policy] }) });
  expect(added.status, JSON.stringify(added.body)).toBe(200);
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-iam-conditions-'));
  server = await startSvc({ args: [join(root, 'd{1...4}')], env: { SVC_CONSOLE_ENABLE: 'false' } });
  s3 = s3ClientFor(server.url);
  for (const [name, statement] of Object.entries(policies)) {
    const created = await admin(server.url, 'POST', '/svc/admin/v4/iam/policy/create', `name=${name}`, { body: JSON.stringify({ Version: '2012-10-17', Statement: Array.isArray(statement) ? statement : [statement] }) });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
  }
  await addUser(users.reader, 'public-tag-read');
  await addUser(users.alice, 'own-home');
  await addUser(users.bob, 'own-home');
  await addUser(users.writer, 'blue-only');
  await addUser(users.careful, 'create-only');
  for (const Bucket of ['tagged', 'home']) await s3.send(new CreateBucketCommand({ Bucket }));
}, 60_000);

afterAll(async () => {
  await server?.kill();
  await rm(root, { recursive: true, force: true });
});

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    return (error as { Code?: string }).Code ?? (error as Error).name;
  }
}

const read = (client: S3Client, Bucket: string, Key: string) => client.send(new GetObjectCommand({ Bucket, Key })).then((answer) => answer.Body!.transformToString());

describe('condition keys through S3', () => {
  it('s3:ExistingObjectTag: the tagged object reads, the untagged and the otherwise-tagged ones are AccessDenied', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'tagged', Key: 'open.txt', Body: 'open', Tagging: 'public=yes&team=red' }));
    await s3.send(new PutObjectCommand({ Bucket: 'tagged', Key: 'plain.txt', Body: 'plain' }));
    await s3.send(new PutObjectCommand({ Bucket: 'tagged', Key: 'closed.txt', Body: 'closed', Tagging: 'public=no' }));
    const reader = s3ClientFor(server.url, { credentials: users.reader });
    expect(await read(reader, 'tagged', 'open.txt')).toBe('open');
    expect(await codeOf(read(reader, 'tagged', 'plain.txt'))).toBe('AccessDenied');
    expect(await codeOf(read(reader, 'tagged', 'closed.txt'))).toBe('AccessDenied');
    expect(await codeOf(read(reader, 'tagged', 'missing.txt'))).toBe('AccessDenied');
  });

  it('${aws:username} in the resource: each user writes and reads their own home prefix only', async () => {
    const alice = s3ClientFor(server.url, { credentials: users.alice });
    const bob = s3ClientFor(server.url, { credentials: users.bob });
    await alice.send(new PutObjectCommand({ Bucket: 'home', Key: 'alice/notes.txt', Body: 'alice notes' }));
    expect(await read(alice, 'home', 'alice/notes.txt')).toBe('alice notes');
    expect(await codeOf(alice.send(new PutObjectCommand({ Bucket: 'home', Key: 'bob/notes.txt', Body: 'not yours' })))).toBe('AccessDenied');
    expect(await codeOf(read(bob, 'home', 'alice/notes.txt'))).toBe('AccessDenied');
    await bob.send(new PutObjectCommand({ Bucket: 'home', Key: 'bob/notes.txt', Body: 'bob notes' }));
    expect(await read(s3, 'home', 'bob/notes.txt')).toBe('bob notes');
  });

  it('s3:RequestObjectTag: a PUT without the tag, or with another value, is refused and stores nothing', async () => {
    const writer = s3ClientFor(server.url, { credentials: users.writer });
    expect(await codeOf(writer.send(new PutObjectCommand({ Bucket: 'tagged', Key: 'w/none.txt', Body: 'x' })))).toBe('AccessDenied');
    expect(await codeOf(writer.send(new PutObjectCommand({ Bucket: 'tagged', Key: 'w/red.txt', Body: 'x', Tagging: 'team=red' })))).toBe('AccessDenied');
    await writer.send(new PutObjectCommand({ Bucket: 'tagged', Key: 'w/blue.txt', Body: 'blue', Tagging: 'team=blue&env=dev' }));
    expect(await codeOf(s3.send(new HeadObjectCommand({ Bucket: 'tagged', Key: 'w/none.txt' })))).toBe('NotFound');
    expect(await codeOf(s3.send(new HeadObjectCommand({ Bucket: 'tagged', Key: 'w/red.txt' })))).toBe('NotFound');
    expect(await read(s3, 'tagged', 'w/blue.txt')).toBe('blue');
    const tags = await s3.send(new GetObjectTaggingCommand({ Bucket: 'tagged', Key: 'w/blue.txt' }));
    expect(tags.TagSet?.map((tag) => `${tag.Key}=${tag.Value}`).sort()).toEqual(['env=dev', 'team=blue']);
  });

  it('s3:if-none-match, aws:RequestedRegion and s3:x-amz-copy-source: only new keys, copies only from the allowed bucket', async () => {
    const careful = s3ClientFor(server.url, { credentials: users.careful });
    await s3.send(new PutObjectCommand({ Bucket: 'tagged', Key: 'source', Body: 'copy me' }));
    await s3.send(new PutObjectCommand({ Bucket: 'home', Key: 'elsewhere', Body: 'not a source' }));
    expect(await codeOf(careful.send(new PutObjectCommand({ Bucket: 'home', Key: 'careful/plain', Body: 'x' })))).toBe('AccessDenied');
    expect(await codeOf(s3.send(new HeadObjectCommand({ Bucket: 'home', Key: 'careful/plain' })))).toBe('NotFound');
    expect(await codeOf(careful.send(new PutObjectCommand({ Bucket: 'home', Key: 'careful/new', Body: 'x', IfNoneMatch: '*' })))).toBe('ok');
    expect(await codeOf(careful.send(new CopyObjectCommand({ Bucket: 'home', Key: 'careful/copied', CopySource: 'tagged/source', IfNoneMatch: '*' })))).toBe('ok');
    expect(await codeOf(careful.send(new CopyObjectCommand({ Bucket: 'home', Key: 'careful/stolen', CopySource: 'home/elsewhere', IfNoneMatch: '*' })))).toBe('AccessDenied');
    expect(await codeOf(s3.send(new HeadObjectCommand({ Bucket: 'home', Key: 'careful/stolen' })))).toBe('NotFound');
  });
});
