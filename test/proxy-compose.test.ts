/**
 * The proxy kit as shipped, in containers: docker-compose.yml's four-node cluster with
 * deploy/docker-compose.proxy.yml's Caddy in front (the locally built svc-caddy image), on a
 * compose network of its own. Caddy gets certificates for both host names from a local ACME CA
 * (pebble on the network's gateway address, validating HTTP-01 on Caddy's container address),
 * keeps the key files at mode 600 in its volume, redirects plain HTTP, serves S3 over HTTPS to
 * the AWS SDK across all four nodes, serves the console with the sticky cookie, and the
 * black-box conformance suites pass against the proxy's URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request as httpRequest } from 'node:http';
import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { buildImages, buildProxyImage } from '../scripts/build-image.js';
import { missingTool } from './helpers/external-tools.js';
import { repoRoot, testCredentials } from './helpers/server-process.js';
import { dockerUnavailable } from './helpers/container-cluster.js';
import { httpsGet, proxyConformanceSelection, proxyToolsMissing, resolvingAgent, startAcmeCa, waitFor, type AcmeCa } from './helpers/proxy-stack.js';

const run = promisify(execFile);
const skipReason = (await dockerUnavailable()) ?? missingTool('docker-compose', 'docker-compose') ?? proxyToolsMissing();
if (skipReason) console.warn(`skipping the compose proxy-kit test: ${skipReason}`);

/** A network no other test uses; the CA listens on its gateway, Caddy has a fixed address in it. */
const subnet = '172.31.250.0/24';
const gatewayIp = '172.31.250.1';
const proxyIp = '172.31.250.10';
const s3Host = 's3.compose.svc.test';
const consoleHost = 'console.compose.svc.test';
const project = 'svcproxykit';

let dir: string;
let ca: AcmeCa | undefined;
let agent: ReturnType<typeof resolvingAgent>;
let composeEnv: NodeJS.ProcessEnv;

function compose(...args: string[]): Promise<{ stdout: string }> {
  const files = ['-f', join(repoRoot, 'docker-compose.yml'), '-f', join(repoRoot, 'deploy/docker-compose.proxy.yml'), '-f', join(dir, 'test-override.yml')];
  return run('docker-compose', ['-p', project, '--project-directory', repoRoot, ...files, ...args], { env: composeEnv, maxBuffer: 16 * 1024 * 1024 });
}

/** The mode bits and names of the files under `path` in the proxy container (a tar stream from `docker cp`). */
async function containerFileModes(path: string): Promise<Map<string, string>> {
  const container = (await compose('ps', '-q', 'proxy')).stdout.trim();
  const listing = await new Promise<string>((resolve, reject) => {
    const copy = spawn('docker', ['cp', `${container}:${path}`, '-'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const tar = spawn('tar', ['-tvf', '-'], { stdio: ['pipe', 'pipe', 'inherit'] });
    copy.stdout.pipe(tar.stdin);
    let output = '';
    tar.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    tar.once('close', (code) => (code === 0 ? resolve(output) : reject(new Error(`tar exited ${code}`))));
    copy.once('error', reject);
  });
  const modes = new Map<string, string>();
  for (const line of listing.split('\n').filter(Boolean)) {
    const fields = line.trim().split(/\s+/);
    modes.set(fields[fields.length - 1]!, fields[0]!);
  }
  return modes;
}

describe.skipIf(skipReason !== undefined)('deploy/docker-compose.proxy.yml: Caddy in front of the compose cluster', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-proxy-compose-'));
    await run(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: repoRoot });
    await buildImages({ log: () => undefined });
    expect(await buildProxyImage(() => undefined)).toBe('svc-caddy:latest');
    await writeFile(join(dir, 'svc.env'), `SVC_ACCESS_KEY=${testCredentials.accessKeyId}\nSVC_SECRET_KEY=${testCredentials.secretAccessKey}\n`);
    // Test-only additions: the CA's listener certificate for Caddy to trust (pebble serves its
    // ACME directory over TLS under a throwaway CA).
    await writeFile(join(dir, 'test-override.yml'), `version: "3.8"\nservices:\n  proxy:\n    volumes:\n      - ${join(dir, 'listener-ca.pem')}:/acme-ca.pem:ro\n`);
    composeEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      SVC_ENV_FILE: join(dir, 'svc.env'),
      SVC_S3_HOST: s3Host,
      SVC_CONSOLE_HOST: consoleHost,
      SVC_ACME_EMAIL: 'ops@svc.test',
      SVC_PROXY_SUBNET: subnet,
      SVC_PROXY_IP: proxyIp,
      SVC_PUBLISH_S3: '127.0.0.86:19000',
      SVC_PUBLISH_CONSOLE: '127.0.0.86:19001',
      SVC_PUBLISH_HTTP: '127.0.0.86:18080',
      SVC_PUBLISH_HTTPS: '127.0.0.86:18443',
      SVC_CADDY_GLOBAL: 'acme_ca_root /acme-ca.pem',
    };
    await compose('down', '-v', '--remove-orphans').catch(() => undefined);
    // Create the network first: the CA listens on its gateway address before Caddy starts.
    await compose('up', '--no-start');
    ca = await startAcmeCa(dir, proxyIp, gatewayIp);
    composeEnv.SVC_ACME_CA = ca.directory;
    await compose('up', '--no-start');
    await compose('start');
    const rootPem = await ca.rootPem();
    agent = resolvingAgent(proxyIp, rootPem, [s3Host, consoleHost]);
    const logs = () => ca!.programs.map((program) => program.logs()).join('\n');
    await waitFor('S3 through the proxy over HTTPS', async () => (await httpsGet(`https://${s3Host}/health/ready`, agent)).status === 200 || undefined, 150_000, logs);
    await waitFor('the console through the proxy over HTTPS', async () => (await httpsGet(`https://${consoleHost}/svc/console/health`, agent)).status === 200 || undefined, 60_000, logs);
  }, 400_000);

  afterAll(async () => {
    if (dir) {
      if (composeEnv) await compose('down', '-v', '--remove-orphans').catch(() => undefined);
      await Promise.all((ca?.programs ?? []).map((program) => program.stop()));
      agent?.destroy();
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('holds certificates for both host names in its volume, key files mode 600', async () => {
    const modes = await containerFileModes('/data/caddy/certificates');
    for (const host of [s3Host, consoleHost]) {
      const key = [...modes.keys()].find((name) => name.endsWith(`/${host}/${host}.key`));
      expect(key, [...modes.keys()].join('\n')).toBeDefined();
      expect(modes.get(key!)).toBe('-rw-------');
    }
  });

  it('redirects plain HTTP on port 80 to HTTPS', async () => {
    const answer = await new Promise<{ status: number; location: string | undefined }>((resolve, reject) => {
      httpRequest({ host: proxyIp, port: 80, path: '/photos/a.jpg', headers: { host: s3Host } }, (response) => {
        response.resume();
        resolve({ status: response.statusCode!, location: response.headers.location });
      })
        .on('error', reject)
        .end();
    });
    expect(answer).toEqual({ status: 308, location: `https://${s3Host}/photos/a.jpg` });
  });

  it('serves S3 over HTTPS to the AWS SDK, and what one node stored every node serves', async () => {
    const s3 = new S3Client({ endpoint: `https://${s3Host}`, region: 'us-east-1', forcePathStyle: true, credentials: testCredentials, maxAttempts: 3, requestHandler: new NodeHttpHandler({ httpsAgent: agent }) });
    await s3.send(new CreateBucketCommand({ Bucket: 'kit' }));
    const bodies = Array.from({ length: 8 }, (_, index) => randomBytes(1000 + index * 70_000));
    // Round robin over four nodes: eight writes and eight reads reach every node.
    for (const [index, body] of bodies.entries()) await s3.send(new PutObjectCommand({ Bucket: 'kit', Key: `o${index}`, Body: body }));
    for (const [index, body] of bodies.entries()) {
      const got = await s3.send(new GetObjectCommand({ Bucket: 'kit', Key: `o${index}` }));
      expect(Buffer.from(await got.Body!.transformToByteArray()).equals(body)).toBe(true);
    }
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'kit' }));
    expect(listed.KeyCount).toBe(bodies.length);
    s3.destroy();
  }, 120_000);

  it('serves the console with the sticky cookie, Secure and HTTP-only', async () => {
    const page = await httpsGet(`https://${consoleHost}/svc/console/`, agent);
    expect(page.status).toBe(200);
    const cookies = ([] as string[]).concat(page.headers['set-cookie'] ?? []);
    const sticky = cookies.find((cookie) => cookie.startsWith('rustfs_console='));
    expect(sticky, cookies.join('\n')).toBeDefined();
    expect(sticky).toMatch(/; Secure/);
    expect(sticky).toMatch(/; HttpOnly/);
  });

  it('the black-box conformance suites pass against the proxy URL', async () => {
    const caFile = join(dir, 'pebble-root.pem');
    await writeFile(caFile, await ca!.rootPem());
    // Caddy forwards a body-less PUT with Content-Length: 0: the missing-length check would judge Caddy, not svc.
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', '--import', './test/fixtures/resolve-names.mjs', 'conformance/cli.ts', '--endpoint', `https://${s3Host}`, '--access-key', testCredentials.accessKeyId, '--secret-key', testCredentials.secretAccessKey, '--suite', 's3,admin', '--seed', '11', '--except', 's3.put.missing-content-length', ...proxyConformanceSelection()], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', HOME: dir, NODE_EXTRA_CA_CERTS: caFile, SVC_TEST_RESOLVE: `${s3Host}=${proxyIp}` },
      maxBuffer: 32 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: String(error.stdout ?? error), stderr: String(error.stderr ?? '') }));
    expect(stdout + stderr, (stdout + stderr).slice(-6000)).toMatch(/\b[1-9]\d* passed, 0 failed\b/);
  }, 300_000);
});
