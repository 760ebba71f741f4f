/**
 * The client matrix: each client's everyday operations (create bucket, put, get, list with
 * prefixes and paging, multipart, copy, delete, presign where it has it) against one server:
 * the AWS SDK for JavaScript v3, the AWS CLI, boto3, rclone, s3cmd and the minio JavaScript
 * client. A client missing on the machine skips with the reason; under CI (CI=true) a missing
 * client fails, and `.ci/run` installs them all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, mkdir, readFile, rm, writeFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import {
  CompleteMultipartUploadCommand, CopyObjectCommand, CreateBucketCommand, CreateMultipartUploadCommand, DeleteBucketCommand, DeleteObjectsCommand,
  GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, UploadPartCommand, paginateListObjectsV2,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { missingNpmPackage, missingPythonModule, missingTool, rcloneEnv as rcloneEnvFor, runTool } from './helpers/external-tools.js';

const missing = {
  aws: missingTool('aws', 'awscli'), rclone: missingTool('rclone'), s3cmd: missingTool('s3cmd'),
  boto3: missingPythonModule('boto3', 'python3-boto3'), minio: await missingNpmPackage('minio'),
};
for (const [tool, reason] of Object.entries(missing)) if (reason) console.warn(`skipping ${tool} tests: ${reason}`);

let root: string;
let server: SvcProcess;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-clients-'));
  server = await startSvc({ args: [join(root, 'drives/d{1...4}')] });
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

function run(command: string, args: string[], env: Record<string, string> = {}): string {
  return runTool(command, args, env, () => server.logs().slice(-3000));
}

async function makeTree(dir: string): Promise<Record<string, Buffer>> {
  const files: Record<string, Buffer> = {
    'a.txt': Buffer.from('first file'),
    'sub/b.bin': Buffer.alloc(2 * 1024 * 1024 + 11, 'b'),
    'sub/deeper/c.txt': Buffer.from('third'),
    'big.bin': Buffer.alloc(20 * 1024 * 1024 + 5, 'z'),
  };
  for (const [name, content] of Object.entries(files)) {
    await mkdir(join(dir, name, '..'), { recursive: true });
    await writeFile(join(dir, name), content);
  }
  return files;
}

async function expectTree(dir: string, files: Record<string, Buffer>): Promise<void> {
  for (const [name, content] of Object.entries(files)) expect((await readFile(join(dir, name))).equals(content), name).toBe(true);
}

describe('AWS SDK for JavaScript v3', () => {
  it('bucket, put, get, paged listing with prefixes, multipart, copy, presigned GET, delete', async () => {
    const s3 = s3ClientFor(server.url);
    const Bucket = 'sdk-bucket';
    await s3.send(new CreateBucketCommand({ Bucket }));
    for (let index = 0; index < 5; index += 1) await s3.send(new PutObjectCommand({ Bucket, Key: `dir/file-${index}.txt`, Body: `body ${index}` }));
    await s3.send(new PutObjectCommand({ Bucket, Key: 'top.txt', Body: 'top' }));
    expect(await (await s3.send(new GetObjectCommand({ Bucket, Key: 'dir/file-3.txt' }))).Body!.transformToString()).toBe('body 3');
    const pages: string[][] = [];
    for await (const page of paginateListObjectsV2({ client: s3, pageSize: 2 }, { Bucket, Prefix: 'dir/' })) pages.push((page.Contents ?? []).map((item) => item.Key!));
    expect(pages).toEqual([['dir/file-0.txt', 'dir/file-1.txt'], ['dir/file-2.txt', 'dir/file-3.txt'], ['dir/file-4.txt']]);
    expect((await s3.send(new ListObjectsV2Command({ Bucket, Delimiter: '/' }))).CommonPrefixes?.map((item) => item.Prefix)).toEqual(['dir/']);
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key: 'big.bin' }));
    const parts = [];
    for (const [index, body] of [Buffer.alloc(5 * 1024 * 1024, 1), Buffer.alloc(100, 2)].entries()) {
      parts.push({ PartNumber: index + 1, ETag: (await s3.send(new UploadPartCommand({ Bucket, Key: 'big.bin', UploadId, PartNumber: index + 1, Body: body }))).ETag! });
    }
    await s3.send(new CompleteMultipartUploadCommand({ Bucket, Key: 'big.bin', UploadId, MultipartUpload: { Parts: parts } }));
    expect((await s3.send(new HeadObjectCommand({ Bucket, Key: 'big.bin' }))).ContentLength).toBe(5 * 1024 * 1024 + 100);
    await s3.send(new CopyObjectCommand({ Bucket, Key: 'copy.txt', CopySource: `${Bucket}/top.txt` }));
    const presigned = await getSignedUrl(s3, new GetObjectCommand({ Bucket, Key: 'copy.txt' }), { expiresIn: 300 });
    expect(await (await fetch(presigned)).text()).toBe('top');
    const keys = ['top.txt', 'copy.txt', 'big.bin', ...Array.from({ length: 5 }, (_, index) => `dir/file-${index}.txt`)];
    const deleted = await s3.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: keys.map((Key) => ({ Key })) } }));
    expect(deleted.Deleted).toHaveLength(keys.length);
    await s3.send(new DeleteBucketCommand({ Bucket }));
  });
});

describe.skipIf(missing.aws !== undefined)('AWS CLI', () => {
  const env = { AWS_ACCESS_KEY_ID: testCredentials.accessKeyId, AWS_SECRET_ACCESS_KEY: testCredentials.secretAccessKey, AWS_DEFAULT_REGION: 'us-east-1', AWS_EC2_METADATA_DISABLED: 'true' };
  const aws = (...args: string[]): string => run('aws', ['--endpoint-url', server.url, ...args], env);

  it('s3 mb, cp (multipart), sync, ls, rm round-trip a tree', async () => {
    const source = join(root, 'aws-src');
    const target = join(root, 'aws-dst');
    const files = await makeTree(source);
    aws('s3', 'mb', 's3://aws-bucket');
    aws('s3', 'cp', join(source, 'big.bin'), 's3://aws-bucket/single/big.bin');
    aws('s3', 'sync', source, 's3://aws-bucket/tree');
    expect(aws('s3', 'ls', 's3://aws-bucket/tree/', '--recursive')).toContain('tree/sub/deeper/c.txt');
    aws('s3', 'sync', 's3://aws-bucket/tree', target);
    await expectTree(target, files);
    aws('s3', 'cp', 's3://aws-bucket/single/big.bin', join(root, 'big-copy.bin'));
    expect((await readFile(join(root, 'big-copy.bin'))).equals(files['big.bin']!)).toBe(true);
    aws('s3', 'rm', 's3://aws-bucket/tree', '--recursive');
    // AWS CLI v2 prints nothing for an empty listing, v1 prints KeyCount 0.
    const left = aws('s3api', 'list-objects-v2', '--bucket', 'aws-bucket', '--prefix', 'tree/').trim();
    expect(left === '' ? 0 : (JSON.parse(left).KeyCount ?? 0)).toBe(0);
  });

  it('s3 cp of 16 MiB in 5 MB parts, four at a time, and back', async () => {
    const config = join(root, 'aws-parts-config');
    await writeFile(config, '[default]\ns3 =\n  multipart_threshold = 5MB\n  multipart_chunksize = 5MB\n  max_concurrent_requests = 4\n');
    const body = randomBytes(16 * 1024 * 1024);
    await writeFile(join(root, 'aws-parts.bin'), body);
    const cli = (...args: string[]): string => run('aws', ['--endpoint-url', server.url, ...args], { ...env, AWS_CONFIG_FILE: config });
    cli('s3', 'mb', 's3://aws-parts');
    cli('s3', 'cp', join(root, 'aws-parts.bin'), 's3://aws-parts/big.bin');
    expect(JSON.parse(cli('s3api', 'head-object', '--bucket', 'aws-parts', '--key', 'big.bin')).ETag).toMatch(/-4"$/);
    cli('s3', 'cp', 's3://aws-parts/big.bin', join(root, 'aws-parts-back.bin'));
    expect((await readFile(join(root, 'aws-parts-back.bin'))).equals(body)).toBe(true);
  });

  it('copy, paged listing with prefixes, presign', async () => {
    aws('s3', 'mb', 's3://aws-everyday');
    const tree = join(root, 'aws-everyday');
    for (const key of ['p/a', 'p/b', 'p/c', 'q/d']) {
      await mkdir(join(tree, key, '..'), { recursive: true });
      await writeFile(join(tree, key), 'one');
    }
    aws('s3', 'cp', '--recursive', tree, 's3://aws-everyday/');
    aws('s3', 'cp', 's3://aws-everyday/p/a', 's3://aws-everyday/copied');
    const pages = aws('s3api', 'list-objects-v2', '--bucket', 'aws-everyday', '--prefix', 'p/', '--page-size', '1', '--output', 'json');
    expect(JSON.parse(pages).Contents.map((item: { Key: string }) => item.Key)).toEqual(['p/a', 'p/b', 'p/c']);
    const prefixes = JSON.parse(aws('s3api', 'list-objects-v2', '--bucket', 'aws-everyday', '--delimiter', '/'));
    expect(prefixes.CommonPrefixes.map((item: { Prefix: string }) => item.Prefix)).toEqual(['p/', 'q/']);
    // The CLI presigns with signature version 2 unless told otherwise; svc accepts version 4 only.
    const config = join(root, 'aws-config');
    await writeFile(config, '[default]\ns3 =\n  signature_version = s3v4\n');
    const url = run('aws', ['--endpoint-url', server.url, 's3', 'presign', 's3://aws-everyday/copied', '--expires-in', '300'], { ...env, AWS_CONFIG_FILE: config }).trim();
    expect(await (await fetch(url)).text()).toBe('one');
    aws('s3', 'rb', 's3://aws-everyday', '--force');
  });

  it('s3api: versioning and a hand-driven multipart upload', async () => {
    aws('s3api', 'create-bucket', '--bucket', 'aws-api');
    aws('s3api', 'put-bucket-versioning', '--bucket', 'aws-api', '--versioning-configuration', 'Status=Enabled');
    expect(JSON.parse(aws('s3api', 'get-bucket-versioning', '--bucket', 'aws-api')).Status).toBe('Enabled');
    await writeFile(join(root, 'v.txt'), 'version one');
    const first = JSON.parse(aws('s3api', 'put-object', '--bucket', 'aws-api', '--key', 'v.txt', '--body', join(root, 'v.txt')));
    await writeFile(join(root, 'v.txt'), 'version two');
    aws('s3api', 'put-object', '--bucket', 'aws-api', '--key', 'v.txt', '--body', join(root, 'v.txt'));
    const versions = JSON.parse(aws('s3api', 'list-object-versions', '--bucket', 'aws-api'));
    expect(versions.Versions.length).toBe(2);
    aws('s3api', 'get-object', '--bucket', 'aws-api', '--key', 'v.txt', '--version-id', first.VersionId, join(root, 'v-old.txt'));
    expect(await readFile(join(root, 'v-old.txt'), 'utf8')).toBe('version one');
    const upload = JSON.parse(aws('s3api', 'create-multipart-upload', '--bucket', 'aws-api', '--key', 'mp.bin'));
    await writeFile(join(root, 'part1'), Buffer.alloc(5 * 1024 * 1024, 1));
    await writeFile(join(root, 'part2'), Buffer.alloc(1000, 2));
    const parts = [1, 2].map((number) => ({ PartNumber: number, ETag: JSON.parse(aws('s3api', 'upload-part', '--bucket', 'aws-api', '--key', 'mp.bin', '--upload-id', upload.UploadId, '--part-number', String(number), '--body', join(root, `part${number}`))).ETag }));
    await writeFile(join(root, 'parts.json'), JSON.stringify({ Parts: parts }));
    aws('s3api', 'complete-multipart-upload', '--bucket', 'aws-api', '--key', 'mp.bin', '--upload-id', upload.UploadId, '--multipart-upload', `file://${join(root, 'parts.json')}`);
    expect(JSON.parse(aws('s3api', 'head-object', '--bucket', 'aws-api', '--key', 'mp.bin')).ContentLength).toBe(5 * 1024 * 1024 + 1000);
  });
});

describe.skipIf(missing.rclone !== undefined)('rclone', () => {
  const rcloneEnv = () => rcloneEnvFor(server.url, testCredentials, join(root, 'rclone.conf'));
  it('copies a tree up and down and checks it', async () => {
    const source = join(root, 'rclone-src');
    const target = join(root, 'rclone-dst');
    const files = await makeTree(source);
    const env = rcloneEnv();
    run('rclone', ['mkdir', 'svc:rclone-bucket'], env);
    run('rclone', ['copy', source, 'svc:rclone-bucket/tree'], env);
    run('rclone', ['check', source, 'svc:rclone-bucket/tree'], env);
    run('rclone', ['copy', 'svc:rclone-bucket/tree', target], env);
    await expectTree(target, files);
    expect(run('rclone', ['lsf', '-R', 'svc:rclone-bucket/tree'], env)).toContain('sub/deeper/c.txt');
    // Listing in pages of two, a server-side copy, a presigned link.
    expect(run('rclone', ['lsf', '--s3-list-chunk', '2', 'svc:rclone-bucket/tree'], env).split('\n').filter(Boolean).sort()).toEqual(['a.txt', 'big.bin', 'sub/']);
    run('rclone', ['copyto', 'svc:rclone-bucket/tree/a.txt', 'svc:rclone-bucket/copied.txt'], env);
    const link = run('rclone', ['link', '--expire', '5m', 'svc:rclone-bucket/copied.txt'], env).trim();
    expect(await (await fetch(link)).text()).toBe('first file');
    run('rclone', ['purge', 'svc:rclone-bucket/tree'], env);
    run('rclone', ['deletefile', 'svc:rclone-bucket/copied.txt'], env);
    expect(run('rclone', ['lsf', '-R', 'svc:rclone-bucket'], env).trim()).toBe('');
  });

  it('uploads in parallel 5 MiB parts (its CompleteMultipartUpload writes ETag quotes as &#34;), checks and reads back', async () => {
    const dir = join(root, 'rclone-parts');
    await mkdir(dir, { recursive: true });
    const file = join(dir, 'big.bin');
    const body = randomBytes(11 * 1024 * 1024);
    await writeFile(file, body);
    const env = rcloneEnv();
    run('rclone', ['mkdir', 'svc:rclone-parts'], env);
    run('rclone', ['copyto', '--s3-upload-cutoff', '5M', '--s3-chunk-size', '5M', '--s3-upload-concurrency', '4', file, 'svc:rclone-parts/big.bin'], env);
    expect((await s3ClientFor(server.url).send(new HeadObjectCommand({ Bucket: 'rclone-parts', Key: 'big.bin' }))).ETag).toMatch(/-3"$/);
    run('rclone', ['check', dir, 'svc:rclone-parts'], env);
    run('rclone', ['copyto', 'svc:rclone-parts/big.bin', join(root, 'rclone-parts-back.bin')], env);
    expect((await readFile(join(root, 'rclone-parts-back.bin'))).equals(body)).toBe(true);
  });
});

describe.skipIf(missing.s3cmd !== undefined)('s3cmd', () => {
  it('makes a bucket, puts, lists, gets and deletes', async () => {
    const url = new URL(server.url);
    const config = join(root, 's3cmd.cfg');
    await writeFile(config, [
      '[default]', `access_key = ${testCredentials.accessKeyId}`, `secret_key = ${testCredentials.secretAccessKey}`, `host_base = ${url.host}`,
      `host_bucket = ${url.host}`, 'use_https = False', 'signature_v2 = False', 'bucket_location = us-east-1', '',
    ].join('\n'));
    const s3cmd = (...args: string[]): string => run('s3cmd', ['-c', config, ...args]);
    const source = join(root, 's3cmd-src');
    const files = await makeTree(source);
    s3cmd('mb', 's3://s3cmd-bucket');
    s3cmd('put', '--recursive', `${source}/`, 's3://s3cmd-bucket/tree/');
    expect(s3cmd('ls', '--recursive', 's3://s3cmd-bucket/')).toContain('tree/sub/b.bin');
    const target = join(root, 's3cmd-dst');
    await mkdir(target);
    s3cmd('get', '--recursive', 's3://s3cmd-bucket/tree/', `${target}/`);
    await expectTree(target, files);
    // A server-side copy; s3cmd signs presigned URLs (signurl) with signature version 2 only, which svc does not accept.
    s3cmd('cp', 's3://s3cmd-bucket/tree/a.txt', 's3://s3cmd-bucket/copied.txt');
    expect(s3cmd('ls', 's3://s3cmd-bucket/')).toContain('s3://s3cmd-bucket/copied.txt');
    expect(s3cmd('ls', 's3://s3cmd-bucket/tree/')).toContain('DIR');
    s3cmd('del', 's3://s3cmd-bucket/copied.txt');
    s3cmd('del', '--recursive', '--force', 's3://s3cmd-bucket/tree/');
    expect(s3cmd('ls', '--recursive', 's3://s3cmd-bucket/').trim()).toBe('');
    expect((await readdir(target)).length).toBeGreaterThan(0);
  });
});

describe.skipIf(missing.boto3 !== undefined)('boto3', () => {
  it('bucket, put, get, paged listing with prefixes, multipart, copy, presigned GET and POST, delete', () => {
    const script = join(import.meta.dirname, 'clients', 'boto3_everyday.py');
    const seen = JSON.parse(run('python3', [script, server.url, testCredentials.accessKeyId, testCredentials.secretAccessKey, 'boto3-bucket']));
    expect(seen).toEqual({
      get: 'body 3',
      pages: [['dir/file-0.txt', 'dir/file-1.txt'], ['dir/file-2.txt', 'dir/file-3.txt'], ['dir/file-4.txt']],
      prefixes: ['dir/'],
      multipart: { size: 256 * (24 * 1024 + 7), etag_parts: '2' },
      big_ok: true,
      copy: 'top',
      presigned_get: 'top',
      presigned_post_status: 204,
      posted: 'posted by boto3',
      deleted: 5,
      left: 0,
    });
  });
});

describe.skipIf(missing.minio !== undefined)('minio JavaScript client', () => {
  it('bucket, put, get, listing with prefixes, multipart, copy, presigned GET and POST, delete', async () => {
    const { Client } = await import('minio');
    const url = new URL(server.url);
    const client = new Client({ endPoint: url.hostname, port: Number(url.port), useSSL: false, accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey, region: 'us-east-1', pathStyle: true, partSize: 5 * 1024 * 1024 });
    const bucket = 'minio-bucket';
    await client.makeBucket(bucket, 'us-east-1');
    for (const key of ['dir/a.txt', 'dir/b.txt', 'top.txt']) await client.putObject(bucket, key, Buffer.from(`body of ${key}`));
    const read = async (key: string): Promise<string> => {
      const chunks: Buffer[] = [];
      for await (const chunk of await client.getObject(bucket, key)) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString();
    };
    expect(await read('dir/b.txt')).toBe('body of dir/b.txt');
    const list = async (prefix: string, recursive: boolean): Promise<string[]> => {
      const names: string[] = [];
      for await (const item of client.listObjectsV2(bucket, prefix, recursive)) names.push((item as { name?: string; prefix?: string }).name ?? (item as { prefix: string }).prefix);
      return names;
    };
    expect((await list('', false)).sort()).toEqual(['dir/', 'top.txt']);
    expect(await list('dir/', true)).toEqual(['dir/a.txt', 'dir/b.txt']);
    const big = Buffer.alloc(6 * 1024 * 1024 + 3, 7);
    // A stream longer than the part size goes up as a multipart upload (a Buffer would go in one PUT).
    await client.putObject(bucket, 'big.bin', Readable.from([big.subarray(0, 3 * 1024 * 1024), big.subarray(3 * 1024 * 1024)]), big.length);
    const stat = await client.statObject(bucket, 'big.bin');
    expect(stat.size).toBe(big.length);
    expect(stat.etag).toMatch(/-\d+$/);
    await client.copyObject(bucket, 'copy.txt', `/${bucket}/top.txt`);
    expect(await read('copy.txt')).toBe('body of top.txt');
    expect(await (await fetch(await client.presignedGetObject(bucket, 'copy.txt', 300))).text()).toBe('body of top.txt');
    const policy = client.newPostPolicy();
    policy.setBucket(bucket);
    policy.setKey('posted.txt');
    policy.setExpires(new Date(Date.now() + 300_000));
    policy.setContentLengthRange(1, 1000);
    const { postURL, formData } = await client.presignedPostPolicy(policy);
    const form = new FormData();
    for (const [name, value] of Object.entries(formData)) form.append(name, String(value));
    form.append('file', new Blob(['posted by minio']), 'posted.txt');
    expect((await fetch(postURL, { method: 'POST', body: form })).status).toBe(204);
    expect(await read('posted.txt')).toBe('posted by minio');
    await client.removeObjects(bucket, ['dir/a.txt', 'dir/b.txt', 'top.txt', 'big.bin', 'copy.txt', 'posted.txt']);
    expect(await list('', true)).toEqual([]);
    await client.removeBucket(bucket);
  });
});
