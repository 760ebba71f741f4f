/**
 * Server-side encryption through the clients people use: boto3 (SSE-C, SSE-KMS with a key id,
 * bucket encryption, each success and refusal; upload_file in parts), the AWS CLI (`--sse AES256`,
 * `--sse-c`, in one piece and above its multipart threshold) and rclone (SSE-S3 round trip). A tool
 * that is not installed is skipped with the reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { missingPythonModule, missingTool, rcloneEnv as rcloneEnvFor, runTool } from './helpers/external-tools.js';
import { admin } from './helpers/admin-client.js';

const missing = { aws: missingTool('aws', 'awscli'), rclone: missingTool('rclone'), boto3: missingPythonModule('boto3', 'python3-boto3') };
for (const [tool, reason] of Object.entries(missing)) if (reason) console.warn(`skipping ${tool} tests: ${reason}`);

let root: string;
let server: SvcProcess;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-sse-clients-'));
  server = await startSvc({ args: [join(root, 'drives/d{1...4}')], env: { SVC_KMS_SECRET_KEY: `svc-root:${randomBytes(32).toString('base64')}`, SVC_KMS_ALLOW_INSECURE_SSEC: 'on' } });
  expect((await admin(server.url, 'POST', '/svc/admin/v4/kms/key/create', 'key-id=clients')).status).toBe(200);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

function run(command: string, args: string[], env: Record<string, string> = {}): string {
  return runTool(command, args, env, () => server.logs());
}

const credentialsEnv = () => ({ AWS_ACCESS_KEY_ID: testCredentials.accessKeyId, AWS_SECRET_ACCESS_KEY: testCredentials.secretAccessKey, AWS_DEFAULT_REGION: 'us-east-1', AWS_CONFIG_FILE: join(root, 'no-aws-config') });

describe.skipIf(missing.boto3 !== undefined)('boto3', () => {
  it('SSE-C, SSE-KMS with a key id and bucket encryption: successes, and refusals with AWS\'s status and code', () => {
    const script = join(import.meta.dirname, 'clients', 'boto3_sse.py');
    const seen = JSON.parse(run('python3', [script, server.url, testCredentials.accessKeyId, testCredentials.secretAccessKey, 'boto3-sse', 'clients']));
    expect(seen).toEqual({
      ssec_put: ['AES256', true],
      ssec_range: true,
      ssec_no_key: { status: 400, code: 'InvalidRequest' },
      ssec_wrong_key: { status: 403, code: 'AccessDenied' },
      ssec_head_no_key: { status: 400, code: '400' },
      ssec_presigned_has_no_key: true,
      ssec_presigned_get: true,
      // boto3 signs the SSE-C headers into the URL: without them the signature does not match.
      ssec_presigned_without_key: 403,
      kms_put: ['aws:kms', 'clients'],
      kms_head: ['aws:kms', 'clients', 8],
      kms_unknown: { status: 400, code: 'KMS.NotFoundException' },
      kms_unknown_stored: { status: 404, code: '404' },
      bucket_none: { status: 404, code: 'ServerSideEncryptionConfigurationNotFoundError' },
      bucket_rule: 'AES256',
      bucket_default_put: 'AES256',
      bucket_unknown_key: { status: 400, code: 'KMS.NotFoundException' },
      bucket_deleted: { status: 404, code: 'ServerSideEncryptionConfigurationNotFoundError' },
    });
  });
});

describe.skipIf(missing.boto3 !== undefined)('boto3 multipart', () => {
  it('upload_file in parts with SSE-KMS (a key id) and SSE-C, download_file back; parts refused without the upload\'s key', async () => {
    const file = join(root, 'boto3-parts.bin');
    const body = randomBytes(12 * 1024 * 1024 + 3);
    await writeFile(file, body);
    const script = join(import.meta.dirname, 'clients', 'boto3_sse_multipart.py');
    const seen = JSON.parse(run('python3', [script, server.url, testCredentials.accessKeyId, testCredentials.secretAccessKey, 'boto3-sse-parts', 'clients', file]));
    expect(seen).toEqual({
      kms_head: ['aws:kms', 'clients', '3'],
      kms_same: true,
      kms_part_2: [5 * 1024 * 1024, 3],
      ssec_head: ['AES256', '3'],
      ssec_same: true,
      ssec_no_key: { status: 400, code: 'InvalidRequest' },
      ssec_wrong_key: { status: 403, code: 'AccessDenied' },
      ssec_part_no_key: { status: 400, code: 'InvalidRequest' },
      ssec_part_wrong_key: { status: 400, code: 'InvalidRequest' },
      ssec_parts_stored: 0,
    });
  });
});

describe.skipIf(missing.aws !== undefined)('AWS CLI', () => {
  it('aws s3 cp --sse AES256 and --sse-c round trips; without the key the download is refused', async () => {
    const aws = (...args: string[]): string => run('aws', ['--endpoint-url', server.url, ...args], credentialsEnv());
    const dir = join(root, 'aws');
    await mkdir(dir, { recursive: true });
    const body = randomBytes(3 * 1024 * 1024 + 5);
    await writeFile(join(dir, 'up.bin'), body);
    const keyFile = join(dir, 'key.bin');
    await writeFile(keyFile, randomBytes(32));
    aws('s3', 'mb', 's3://aws-sse');
    aws('s3', 'cp', join(dir, 'up.bin'), 's3://aws-sse/s3.bin', '--sse', 'AES256');
    expect((await s3ClientFor(server.url).send(new HeadObjectCommand({ Bucket: 'aws-sse', Key: 's3.bin' }))).ServerSideEncryption).toBe('AES256');
    aws('s3', 'cp', 's3://aws-sse/s3.bin', join(dir, 'down-s3.bin'));
    expect((await readFile(join(dir, 'down-s3.bin'))).equals(body)).toBe(true);
    aws('s3', 'cp', join(dir, 'up.bin'), 's3://aws-sse/c.bin', '--sse-c', 'AES256', '--sse-c-key', `fileb://${keyFile}`);
    aws('s3', 'cp', 's3://aws-sse/c.bin', join(dir, 'down-c.bin'), '--sse-c', 'AES256', '--sse-c-key', `fileb://${keyFile}`);
    expect((await readFile(join(dir, 'down-c.bin'))).equals(body)).toBe(true);
    expect(() => aws('s3', 'cp', 's3://aws-sse/c.bin', join(dir, 'refused.bin'))).toThrow(/400|Bad Request/);
  });

  it('aws s3 cp above the multipart threshold (5 MB parts) with --sse AES256 and --sse-c: parts, round trips and the refusal', async () => {
    const dir = join(root, 'aws-parts');
    await mkdir(dir, { recursive: true });
    const config = join(dir, 'config');
    await writeFile(config, '[default]\ns3 =\n  multipart_threshold = 8MB\n  multipart_chunksize = 5MB\n');
    const aws = (...args: string[]): string => run('aws', ['--endpoint-url', server.url, ...args], { ...credentialsEnv(), AWS_CONFIG_FILE: config });
    const body = randomBytes(20 * 1024 * 1024);
    await writeFile(join(dir, 'up.bin'), body);
    const keyFile = join(dir, 'key.bin');
    await writeFile(keyFile, randomBytes(32));
    const s3 = s3ClientFor(server.url);
    aws('s3', 'mb', 's3://aws-sse-parts');
    aws('s3', 'cp', join(dir, 'up.bin'), 's3://aws-sse-parts/s3.bin', '--sse', 'AES256');
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'aws-sse-parts', Key: 's3.bin' }));
    expect([head.ServerSideEncryption, head.ETag?.endsWith('-4"'), head.ContentLength]).toEqual(['AES256', true, body.length]);
    aws('s3', 'cp', 's3://aws-sse-parts/s3.bin', join(dir, 'down-s3.bin'));
    expect((await readFile(join(dir, 'down-s3.bin'))).equals(body)).toBe(true);
    const ssec = ['--sse-c', 'AES256', '--sse-c-key', `fileb://${keyFile}`];
    aws('s3', 'cp', join(dir, 'up.bin'), 's3://aws-sse-parts/c.bin', ...ssec);
    aws('s3', 'cp', 's3://aws-sse-parts/c.bin', join(dir, 'down-c.bin'), ...ssec);
    expect((await readFile(join(dir, 'down-c.bin'))).equals(body)).toBe(true);
    expect(() => aws('s3', 'cp', 's3://aws-sse-parts/c.bin', join(dir, 'refused.bin'))).toThrow(/400|Bad Request/);
    const otherKey = join(dir, 'other.bin');
    await writeFile(otherKey, randomBytes(32));
    expect(() => aws('s3', 'cp', 's3://aws-sse-parts/c.bin', join(dir, 'refused.bin'), '--sse-c', 'AES256', '--sse-c-key', `fileb://${otherKey}`)).toThrow(/403|Forbidden/);
  });
});

describe.skipIf(missing.rclone !== undefined)('rclone', () => {
  const rcloneEnv = () => rcloneEnvFor(server.url, testCredentials, join(root, 'rclone.conf'), { SERVER_SIDE_ENCRYPTION: 'AES256' });
  it('copies a tree up with SSE-S3, checks it and copies it back', async () => {
    const source = join(root, 'rclone-src');
    const target = join(root, 'rclone-dst');
    const files: Record<string, Buffer> = { 'a.txt': Buffer.from('first file'), 'sub/b.bin': randomBytes(2 * 1024 * 1024 + 11) };
    for (const [name, content] of Object.entries(files)) {
      await mkdir(join(source, name, '..'), { recursive: true });
      await writeFile(join(source, name), content);
    }
    const env = rcloneEnv();
    run('rclone', ['mkdir', 'svc:rclone-sse'], env);
    run('rclone', ['copy', source, 'svc:rclone-sse/tree'], env);
    run('rclone', ['check', source, 'svc:rclone-sse/tree'], env);
    run('rclone', ['copy', 'svc:rclone-sse/tree', target], env);
    for (const [name, content] of Object.entries(files)) expect((await readFile(join(target, name))).equals(content), name).toBe(true);
    expect((await s3ClientFor(server.url).send(new HeadObjectCommand({ Bucket: 'rclone-sse', Key: 'tree/sub/b.bin' }))).ServerSideEncryption).toBe('AES256');
  });

  it('uploads with SSE-S3 in parallel 5 MiB parts, checks and reads back', async () => {
    const dir = join(root, 'rclone-sse-parts');
    await mkdir(dir, { recursive: true });
    const body = randomBytes(11 * 1024 * 1024);
    await writeFile(join(dir, 'big.bin'), body);
    const env = rcloneEnv();
    run('rclone', ['mkdir', 'svc:rclone-sse-parts'], env);
    run('rclone', ['copy', '--s3-upload-cutoff', '5M', '--s3-chunk-size', '5M', '--s3-upload-concurrency', '4', dir, 'svc:rclone-sse-parts'], env);
    const head = await s3ClientFor(server.url).send(new HeadObjectCommand({ Bucket: 'rclone-sse-parts', Key: 'big.bin' }));
    expect([head.ServerSideEncryption, head.ETag?.endsWith('-3"'), head.ContentLength]).toEqual(['AES256', true, body.length]);
    run('rclone', ['check', dir, 'svc:rclone-sse-parts'], env);
    run('rclone', ['copyto', 'svc:rclone-sse-parts/big.bin', join(root, 'rclone-sse-back.bin')], env);
    expect((await readFile(join(root, 'rclone-sse-back.bin'))).equals(body)).toBe(true);
  });
});
