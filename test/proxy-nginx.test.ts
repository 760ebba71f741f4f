/**
 * deploy/nginx-s3.conf for real, with Debian's nginx: the shipped file with only its names,
 * addresses and certificate paths replaced (each replacement must match, so a change to the file
 * shows here). Plain HTTP redirects to HTTPS; the AWS SDK puts, gets, lists, uploads in parts and
 * uses a presigned URL over HTTPS; a header with an underscore in its name reaches the node; the
 * conformance suite passes against the proxy's URL; a killed node is passed over (passive checks)
 * while traffic keeps succeeding.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request as httpRequest } from 'node:http';
import { randomBytes } from 'node:crypto';
import { CompleteMultipartUploadCommand, CreateBucketCommand, CreateMultipartUploadCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { presignGet } from '../src/console/presign.js';
import { freePort, repoRoot, startSvc, testCredentials, waitReady, type SvcProcess } from './helpers/server-process.js';
import { httpsGet, proxyConformanceSelection, resolvingAgent, startProgram, waitFor, type Program } from './helpers/proxy-stack.js';

const run = promisify(execFile);
const nginxBinary = '/usr/sbin/nginx';

function nginxMissing(): string | undefined {
  if (existsSync(nginxBinary)) return undefined;
  const reason = 'nginx is not installed (Debian package nginx-light; .ci/run installs it)';
  if (process.env.CI === 'true') throw new Error(`CI requires ${reason}`);
  return reason;
}

const skipReason = nginxMissing();
if (skipReason) console.warn(`skipping the nginx proxy test: ${skipReason}`);

const proxyIp = '127.0.0.90';
const s3Host = 's3.nginx.svc.test';
const nodeHosts = ['127.0.0.91', '127.0.0.92'];

let dir: string;
let nginx: Program;
let agent: ReturnType<typeof resolvingAgent>;
let s3: S3Client;
let certificatePem: string;
const nodes: SvcProcess[] = [];

/** Replaces `from` by `to` in `text`, insisting that `from` occurs (the shipped file moved otherwise). */
function replaceAll(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`deploy/nginx-s3.conf no longer contains ${JSON.stringify(from)}: update this test`);
  return text.split(from).join(to);
}

describe.skipIf(skipReason !== undefined)('deploy/nginx-s3.conf with nginx in front of two nodes', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-nginx-'));
    // nginx's workers run as nobody: they must be able to read the challenge directory.
    await chmod(dir, 0o755);
    const port = await freePort(nodeHosts[0]);
    const args = [`http://127.0.0.{91...92}:${port}/data{1...2}`];
    for (const [index, host] of nodeHosts.entries()) nodes.push(await startSvc({ args, host, port, waitReady: false, env: { SVC_DRIVE_ROOT: join(dir, `node${index + 1}`) } }));
    await Promise.all(nodes.map((node) => waitReady(node, 60_000)));

    // nginx has no ACME client: a certificate of a throwaway CA stands in for certbot's.
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2', '-subj', `/CN=${s3Host}`, '-addext', `subjectAltName=DNS:${s3Host}`, '-keyout', join(dir, 'privkey.pem'), '-out', join(dir, 'fullchain.pem')], { stdio: 'ignore' });
    certificatePem = await readFile(join(dir, 'fullchain.pem'), 'utf8');
    let site = await readFile(join(repoRoot, 'deploy/nginx-s3.conf'), 'utf8');
    site = replaceAll(site, 's3.example.com', s3Host);
    site = replaceAll(site, `/etc/letsencrypt/live/${s3Host}/`, `${dir}/`);
    site = replaceAll(site, '    server node1:9000 max_fails=1 fail_timeout=10s;\n', `    server ${nodeHosts[0]}:${port} max_fails=1 fail_timeout=10s;\n`);
    site = replaceAll(site, '    server node2:9000 max_fails=1 fail_timeout=10s;\n', `    server ${nodeHosts[1]}:${port} max_fails=1 fail_timeout=10s;\n`);
    site = replaceAll(site, '    server node3:9000 max_fails=1 fail_timeout=10s;\n', '');
    site = replaceAll(site, '    server node4:9000 max_fails=1 fail_timeout=10s;\n', '');
    site = replaceAll(site, '    listen [::]:80;\n', '');
    site = replaceAll(site, '    listen [::]:443 ssl http2;\n', '');
    site = replaceAll(site, '    listen 80;\n', `    listen ${proxyIp}:80;\n`);
    site = replaceAll(site, '    listen 443 ssl http2;\n', `    listen ${proxyIp}:443 ssl http2;\n`);
    site = replaceAll(site, '/var/www/acme', join(dir, 'acme'));
    await mkdir(join(dir, 'acme'));
    await writeFile(join(dir, 'svc-s3.conf'), site);
    // The http {} block the site file is included in, as in a stock nginx.conf, with its paths here.
    await writeFile(
      join(dir, 'nginx.conf'),
      [
        'daemon off;',
        `pid ${join(dir, 'nginx.pid')};`,
        `error_log ${join(dir, 'error.log')} info;`,
        'events { worker_connections 256; }',
        'http {',
        '  access_log off;',
        ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${join(dir, `${kind}-temp`)};`),
        `  include ${join(dir, 'svc-s3.conf')};`,
        '}',
        '',
      ].join('\n'),
    );
    await run(nginxBinary, ['-t', '-c', join(dir, 'nginx.conf'), '-p', dir]);
    nginx = startProgram(nginxBinary, ['-c', join(dir, 'nginx.conf'), '-p', dir]);
    agent = resolvingAgent(proxyIp, certificatePem, [s3Host]);
    await waitFor('S3 through nginx', async () => (await httpsGet(`https://${s3Host}/health/ready`, agent)).status === 200 || undefined, 20_000, () => nginx.logs());
    s3 = new S3Client({ endpoint: `https://${s3Host}`, region: 'us-east-1', forcePathStyle: true, credentials: testCredentials, maxAttempts: 3, requestHandler: new NodeHttpHandler({ httpsAgent: agent }) });
  }, 120_000);

  afterAll(async () => {
    s3?.destroy();
    await nginx?.stop();
    await Promise.all(nodes.map((node) => node.kill()));
    agent?.destroy();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('redirects plain HTTP on port 80 to HTTPS and serves the HTTP-01 challenge directory', async () => {
    await writeFile(join(dir, 'acme', 'token'), 'key-authorization');
    await mkdir(join(dir, 'acme', '.well-known', 'acme-challenge'), { recursive: true });
    await writeFile(join(dir, 'acme', '.well-known', 'acme-challenge', 'token'), 'key-authorization');
    const get = (path: string) =>
      new Promise<{ status: number; location: string | undefined; body: string }>((resolve, reject) => {
        httpRequest({ host: proxyIp, port: 80, path, headers: { host: s3Host } }, (response) => {
          let body = '';
          response.on('data', (chunk: Buffer) => (body += chunk.toString()));
          response.on('end', () => resolve({ status: response.statusCode!, location: response.headers.location, body }));
        })
          .on('error', reject)
          .end();
      });
    expect(await get('/photos/a.jpg?versionId=1')).toMatchObject({ status: 308, location: `https://${s3Host}/photos/a.jpg?versionId=1` });
    expect(await get('/.well-known/acme-challenge/token')).toMatchObject({ status: 200, body: 'key-authorization' });
  });

  it('serves S3 over HTTPS to the AWS SDK: put, get, list, multipart, presigned URL, keys that need encoding', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'nginx' }));
    const body = randomBytes(200_000);
    const keys = ['dir/one', 'a key with spaces+plus', 'ünïcödé/%2F/encoded', 'x?y=z&w'];
    for (const key of keys) await s3.send(new PutObjectCommand({ Bucket: 'nginx', Key: key, Body: body }));
    for (const key of keys) {
      const got = await s3.send(new GetObjectCommand({ Bucket: 'nginx', Key: key }));
      expect(Buffer.from(await got.Body!.transformToByteArray()).equals(body), key).toBe(true);
    }
    const part1 = randomBytes(5 * 1024 * 1024);
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'nginx', Key: 'multi' }));
    const e1 = await s3.send(new UploadPartCommand({ Bucket: 'nginx', Key: 'multi', UploadId, PartNumber: 1, Body: part1 }));
    const e2 = await s3.send(new UploadPartCommand({ Bucket: 'nginx', Key: 'multi', UploadId, PartNumber: 2, Body: body }));
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'nginx', Key: 'multi', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: e1.ETag }, { PartNumber: 2, ETag: e2.ETag }] } }));
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'nginx' }));
    expect(listed.Contents?.map((entry) => entry.Key).sort()).toEqual([...keys, 'multi'].sort());
    const url = await presignGet({ base: `https://${s3Host}`, bucket: 'nginx', key: 'dir/one', expiresSeconds: 300, credentials: { accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey }, nowMs: Date.now() });
    const presigned = await httpsGet(url, agent);
    expect(presigned.status).toBe(200);
    expect(presigned.body.equals(body)).toBe(true);
  }, 60_000);

  it('passes a signed header whose name has an underscore (nginx drops those unless told not to)', async () => {
    // The SDK signs every header it sends: had nginx dropped this one, the node would answer
    // SignatureDoesNotMatch.
    const client = new S3Client({ endpoint: `https://${s3Host}`, region: 'us-east-1', forcePathStyle: true, credentials: testCredentials, maxAttempts: 1, requestHandler: new NodeHttpHandler({ httpsAgent: agent }) });
    client.middlewareStack.add(
      (next) => async (args) => {
        (args.request as { headers: Record<string, string> }).headers['x_svc_underscore'] = 'kept';
        return next(args);
      },
      { step: 'build', name: 'underscoreHeader' },
    );
    const listed = await client.send(new ListObjectsV2Command({ Bucket: 'nginx', MaxKeys: 1 }));
    expect(listed.KeyCount).toBe(1);
    client.destroy();
  });

  it('passes the conformance suite against the proxy URL', async () => {
    await writeFile(join(dir, 'ca.pem'), certificatePem);
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', '--import', './test/fixtures/resolve-names.mjs', 'conformance/cli.ts', '--endpoint', `https://${s3Host}`, '--access-key', testCredentials.accessKeyId, '--secret-key', testCredentials.secretAccessKey, '--suite', 's3', '--seed', '3', ...proxyConformanceSelection()], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', HOME: dir, NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem'), SVC_TEST_RESOLVE: `${s3Host}=${proxyIp}` },
      maxBuffer: 32 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: String(error.stdout ?? error), stderr: String(error.stderr ?? '') }));
    expect(stdout + stderr, (stdout + stderr).slice(-6000)).toMatch(/\b[1-9]\d* passed, 0 failed\b/);
  }, 240_000);

  it('with one node killed, requests keep succeeding: nginx passes over the node that refuses connections', async () => {
    // One set of four drives over two nodes, EC:2: either node alone still reads (K = 2), so
    // reads through the proxy must all succeed while node 2 is down.
    const body = randomBytes(10_000);
    await s3.send(new CreateBucketCommand({ Bucket: 'failover' }));
    await s3.send(new PutObjectCommand({ Bucket: 'failover', Key: 'object', Body: body }));
    await nodes[1]!.kill();
    for (let attempt = 0; attempt < 12; attempt += 1) {
      const got = await s3.send(new GetObjectCommand({ Bucket: 'failover', Key: 'object' }));
      expect(Buffer.from(await got.Body!.transformToByteArray()).equals(body)).toBe(true);
    }
  }, 60_000);
});
