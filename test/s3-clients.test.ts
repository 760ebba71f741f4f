/**
 * The server driven by real S3 clients from Debian packages: the AWS CLI, rclone and s3cmd.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtemp, mkdir, readFile, rm, writeFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { missingTool } from './helpers/external-tools.js';

const missing = { aws: missingTool('aws', 'awscli'), rclone: missingTool('rclone'), s3cmd: missingTool('s3cmd') };
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
  // A CA bundle from the environment is irrelevant over plain HTTP and trips rclone's S3 client.
  const { AWS_CA_BUNDLE: _bundle, ...inherited } = process.env;
  try {
    return execFileSync(command, args, { env: { ...inherited, ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const failed = error as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed: ${failed.message}\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}\n${server.logs().slice(-3000)}`);
  }
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
    expect(JSON.parse(aws('s3api', 'list-objects-v2', '--bucket', 'aws-bucket', '--prefix', 'tree/')).KeyCount ?? 0).toBe(0);
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
  it('copies a tree up and down and checks it', async () => {
    const source = join(root, 'rclone-src');
    const target = join(root, 'rclone-dst');
    const files = await makeTree(source);
    const env = {
      RCLONE_CONFIG_SVC_TYPE: 's3', RCLONE_CONFIG_SVC_PROVIDER: 'Other', RCLONE_CONFIG_SVC_ENDPOINT: server.url,
      RCLONE_CONFIG_SVC_ACCESS_KEY_ID: testCredentials.accessKeyId, RCLONE_CONFIG_SVC_SECRET_ACCESS_KEY: testCredentials.secretAccessKey,
      RCLONE_CONFIG_SVC_REGION: 'us-east-1', RCLONE_CONFIG_SVC_FORCE_PATH_STYLE: 'true', RCLONE_CONFIG: join(root, 'rclone.conf'),
    };
    run('rclone', ['mkdir', 'svc:rclone-bucket'], env);
    run('rclone', ['copy', source, 'svc:rclone-bucket/tree'], env);
    run('rclone', ['check', source, 'svc:rclone-bucket/tree'], env);
    run('rclone', ['copy', 'svc:rclone-bucket/tree', target], env);
    await expectTree(target, files);
    expect(run('rclone', ['lsf', '-R', 'svc:rclone-bucket/tree'], env)).toContain('sub/deeper/c.txt');
    run('rclone', ['purge', 'svc:rclone-bucket/tree'], env);
    expect(run('rclone', ['lsf', '-R', 'svc:rclone-bucket'], env).trim()).toBe('');
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
    s3cmd('del', '--recursive', '--force', 's3://s3cmd-bucket/tree/');
    expect(s3cmd('ls', '--recursive', 's3://s3cmd-bucket/').trim()).toBe('');
    expect((await readdir(target)).length).toBeGreaterThan(0);
  });
});
