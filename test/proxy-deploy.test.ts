/**
 * deploy/Caddyfile for real: Caddy gets certificates for both host names from a local ACME CA
 * (pebble) through HTTP-01 on port 80, keeps the key files at mode 600, redirects plain HTTP, and
 * proxies S3 over HTTPS to two nodes of a four-node cluster for the AWS SDK and the AWS CLI (put,
 * get, list, multipart, presigned URLs). A path-rewriting proxy breaks signatures
 * (SignatureDoesNotMatch). A killed node leaves the rotation within 15 s while S3 traffic keeps
 * succeeding, and serves again once restarted. Through the console host, SSO sign-in works with
 * the sticky cookie; with stickiness off and the callback on the other node, the page names the
 * cause; an account outside the admin group is refused (in Chromium).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request as httpRequest } from 'node:http';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { CompleteMultipartUploadCommand, CreateBucketCommand, CreateMultipartUploadCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3';
import { presignGet } from '../src/console/presign.js';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { freePort, repoRoot, startSvc, testCredentials, waitReady, type SvcProcess } from './helpers/server-process.js';
import { missingTool } from './helpers/external-tools.js';
import { startTestIdp, type TestIdp } from './helpers/oidc-idp.js';
import { httpsGet, proxyConformanceSelection, proxyToolsMissing, resolvingAgent, startAcmeCa, startCaddy, startConnectProxy, storedCertificate, waitFor, type AcmeCa, type Caddy } from './helpers/proxy-stack.js';

const run = promisify(execFile);
const skipReason = proxyToolsMissing();
const chromiumPath = '/usr/bin/chromium';
if (skipReason) console.warn(`skipping the reverse-proxy deployment test: ${skipReason}`);

/** Caddy's address: ports 80 and 443 of a loopback address no other test uses. */
const proxyIp = '127.0.0.80';
const s3Host = 's3.svc.test';
const consoleHost = 'console.svc.test';
const rewriteHost = 'rewrite.svc.test';
const noStickyHost = 'console-nosticky.svc.test';
const names = [s3Host, consoleHost, rewriteHost, noStickyHost];
const nodeHosts = ['127.0.0.81', '127.0.0.82', '127.0.0.83', '127.0.0.84'];

let dir: string;
let ca: AcmeCa;
let caddy: Caddy;
let idp: TestIdp;
let rootPem: string;
let s3: S3Client;
let agent: ReturnType<typeof resolvingAgent>;
const nodes: (SvcProcess | undefined)[] = [];
let s3Port: number;
let consolePort: number;
let clusterArgs: string[];
let nodeEnv: Record<string, string>;

async function startNode(index: number): Promise<SvcProcess> {
  const node = await startSvc({ args: clusterArgs, host: nodeHosts[index]!, port: s3Port, waitReady: false, env: { ...nodeEnv, SVC_DRIVE_ROOT: join(dir, `node${index + 1}`), SVC_CONSOLE_ADDRESS: `${nodeHosts[index]}:${consolePort}` } });
  nodes[index] = node;
  return node;
}

function clientFor(endpoint: string): S3Client {
  return new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: testCredentials, maxAttempts: 1, requestHandler: new NodeHttpHandler({ httpsAgent: agent }) });
}

describe.skipIf(skipReason !== undefined)('the reverse-proxy deployment (Caddy, ACME HTTP-01, two nodes)', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-proxy-'));
    ca = await startAcmeCa(dir, proxyIp);
    idp = await startTestIdp([`https://${consoleHost}/svc/console/api/sso/callback`, `https://${noStickyHost}/svc/console/api/sso/callback`]);
    s3Port = await freePort(nodeHosts[0]);
    consolePort = await freePort(nodeHosts[0]);
    clusterArgs = [`http://127.0.0.{81...84}:${s3Port}/data`];
    nodeEnv = {
      // Caddy reaches the nodes from a loopback address; the consoles trust nobody unless told.
      SVC_CONSOLE_TRUSTED_PROXIES: '127.0.0.0/8',
      SVC_IDENTITY_OPENID_CONFIG_URL: idp.issuer,
      SVC_IDENTITY_OPENID_CLIENT_ID: idp.clientId,
      SVC_IDENTITY_OPENID_CLIENT_SECRET: idp.clientSecret,
      SVC_IDENTITY_OPENID_CLAIM_NAME: 'groups',
      SVC_IDENTITY_OPENID_CLAIM_VALUES: 'svc-admins',
    };
    await Promise.all(nodeHosts.map((_, index) => startNode(index)));
    await Promise.all(nodes.map((node) => waitReady(node!, 60_000)));
    const upstream = (index: number, port: number) => `${nodeHosts[index]}:${port}`;
    caddy = await startCaddy(dir, proxyIp, ca, {
      s3Host,
      consoleHost,
      s3Upstreams: [upstream(0, s3Port), upstream(1, s3Port)],
      consoleUpstreams: [upstream(0, consolePort), upstream(1, consolePort)],
      // Test-only variants beside the shipped sites: a proxy that strips a path prefix (what
      // breaks SigV4), and a console without stickiness whose callback lands on the other node.
      extraSites: `
${rewriteHost} {
	handle_path /store/* {
		reverse_proxy ${upstream(0, s3Port)}
	}
}
${noStickyHost} {
	handle /svc/console/api/sso/callback {
		reverse_proxy ${upstream(1, consolePort)}
	}
	handle {
		reverse_proxy ${upstream(0, consolePort)}
	}
}
`,
    });
    for (const name of names) await waitFor(`a certificate for ${name}`, () => storedCertificate(caddy.storage, name), 60_000, () => caddy.logs() + ca.programs.map((program) => program.logs()).join('\n'));
    rootPem = await ca.rootPem();
    agent = resolvingAgent(proxyIp, rootPem, names);
    s3 = clientFor(`https://${s3Host}`);
    await waitFor('S3 through the proxy', async () => (await httpsGet(`https://${s3Host}/health/ready`, agent)).status === 200 || undefined, 30_000, () => caddy.logs());
  }, 180_000);

  afterAll(async () => {
    await Promise.all(nodes.map((node) => node?.kill()));
    await caddy?.stop();
    await Promise.all((ca?.programs ?? []).map((program) => program.stop()));
    await idp?.close();
    agent?.destroy();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('holds certificates for both host names from the ACME CA, key files mode 600', async () => {
    for (const name of [s3Host, consoleHost]) {
      const stored = (await storedCertificate(caddy.storage, name))!;
      expect(((await stat(stored.key)).mode & 0o777).toString(8)).toBe('600');
      const { stdout } = await run('openssl', ['x509', '-in', stored.certificate, '-noout', '-subject', '-issuer', '-ext', 'subjectAltName']);
      expect(stdout).toContain(`DNS:${name}`);
      expect(stdout).toMatch(/issuer=.*Pebble/i);
    }
    expect(caddy.logs()).toMatch(/"challenge_type":"http-01"/);
  });

  it('redirects plain HTTP on port 80 to HTTPS', async () => {
    for (const host of [s3Host, consoleHost]) {
      const answer = await new Promise<{ status: number; location: string | undefined }>((resolve, reject) => {
        httpRequest({ host: proxyIp, port: 80, path: '/bucket/key?x=1', headers: { host } }, (response) => {
          response.resume();
          resolve({ status: response.statusCode!, location: response.headers.location });
        })
          .on('error', reject)
          .end();
      });
      expect(answer.status).toBe(308);
      expect(answer.location).toBe(`https://${host}/bucket/key?x=1`);
    }
  });

  it('serves S3 over HTTPS to the AWS SDK: put, get, list, multipart, presigned URL', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'proxied' }));
    const body = randomBytes(300_000);
    await s3.send(new PutObjectCommand({ Bucket: 'proxied', Key: 'dir/one', Body: body }));
    const got = await s3.send(new GetObjectCommand({ Bucket: 'proxied', Key: 'dir/one' }));
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(body)).toBe(true);
    const part1 = randomBytes(5 * 1024 * 1024);
    const part2 = randomBytes(1024);
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'proxied', Key: 'multi' }));
    const e1 = await s3.send(new UploadPartCommand({ Bucket: 'proxied', Key: 'multi', UploadId, PartNumber: 1, Body: part1 }));
    const e2 = await s3.send(new UploadPartCommand({ Bucket: 'proxied', Key: 'multi', UploadId, PartNumber: 2, Body: part2 }));
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'proxied', Key: 'multi', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: e1.ETag }, { PartNumber: 2, ETag: e2.ETag }] } }));
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'proxied' }));
    expect(listed.Contents?.map((entry) => [entry.Key, entry.Size])).toEqual([['dir/one', body.length], ['multi', part1.length + part2.length]]);
    const url = await presignGet({ base: `https://${s3Host}`, bucket: 'proxied', key: 'dir/one', expiresSeconds: 300, credentials: { accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey }, nowMs: Date.now() });
    expect(url.startsWith(`https://${s3Host}/proxied/dir/one?`)).toBe(true);
    const presigned = await httpsGet(url, agent);
    expect(presigned.status).toBe(200);
    expect(presigned.body.equals(body)).toBe(true);
  }, 60_000);

  it('serves S3 over HTTPS to the AWS CLI: put, get, list, multipart copy, presign', async (context) => {
    const reason = missingTool('aws', 'awscli');
    if (reason) return context.skip(reason);
    const tunnel = await startConnectProxy(proxyIp, names);
    try {
      const caFile = join(dir, 'pebble-root.pem');
      await writeFile(caFile, rootPem);
      // SigV4 for presigned URLs too (older CLI versions presign with SigV2, which svc does not accept).
      const configFile = join(dir, 'aws-config');
      await writeFile(configFile, '[default]\ns3 =\n  signature_version = s3v4\n');
      const env = { AWS_CONFIG_FILE: configFile, PATH: process.env.PATH ?? '', HOME: dir, HTTPS_PROXY: tunnel.url, AWS_CA_BUNDLE: caFile, AWS_ACCESS_KEY_ID: testCredentials.accessKeyId, AWS_SECRET_ACCESS_KEY: testCredentials.secretAccessKey, AWS_DEFAULT_REGION: 'us-east-1', AWS_EC2_METADATA_DISABLED: 'true' };
      const aws = (...args: string[]) => run('aws', ['--endpoint-url', `https://${s3Host}`, ...args], { env, maxBuffer: 16 * 1024 * 1024 });
      const big = join(dir, 'big.bin');
      const content = randomBytes(12 * 1024 * 1024);
      await writeFile(big, content);
      await aws('s3api', 'create-bucket', '--bucket', 'cli');
      await aws('s3', 'cp', big, 's3://cli/big.bin');
      const head = JSON.parse((await aws('s3api', 'head-object', '--bucket', 'cli', '--key', 'big.bin')).stdout);
      expect(head.ContentLength).toBe(content.length);
      expect(head.ETag).toMatch(/-2"$/);
      await aws('s3api', 'put-object', '--bucket', 'cli', '--key', 'small.txt', '--body', caFile);
      const back = join(dir, 'back.bin');
      await aws('s3', 'cp', 's3://cli/big.bin', back);
      expect((await stat(back)).size).toBe(content.length);
      expect((await aws('s3', 'ls', 's3://cli/')).stdout).toMatch(/big\.bin[\s\S]*small\.txt/);
      const presigned = (await aws('s3', 'presign', 's3://cli/small.txt', '--expires-in', '300')).stdout.trim();
      expect(presigned.startsWith(`https://${s3Host}/cli/small.txt?`)).toBe(true);
      expect(presigned).toContain('X-Amz-Signature=');
      expect((await httpsGet(presigned, agent)).body.toString()).toBe(rootPem);
    } finally {
      await tunnel.close();
    }
  }, 120_000);

  it('passes the conformance suite against the proxy\'s URL', async () => {
    const caFile = join(dir, 'pebble-root-conformance.pem');
    await writeFile(caFile, rootPem);
    // Caddy forwards a body-less PUT with Content-Length: 0: the missing-length check would judge Caddy, not svc.
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', '--import', './test/fixtures/resolve-names.mjs', 'conformance/cli.ts', '--endpoint', `https://${s3Host}`, '--access-key', testCredentials.accessKeyId, '--secret-key', testCredentials.secretAccessKey, '--suite', 's3', '--seed', '1', '--except', 's3.put.missing-content-length', ...proxyConformanceSelection()], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', HOME: dir, NODE_EXTRA_CA_CERTS: caFile, SVC_TEST_RESOLVE: names.map((name) => `${name}=${proxyIp}`).join(',') },
      maxBuffer: 32 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: String(error.stdout ?? error), stderr: String(error.stderr ?? '') }));
    expect(stdout + stderr, (stdout + stderr).slice(-6000)).toMatch(/\b[1-9]\d* passed, 0 failed\b/);
  }, 180_000);

  it('breaks signed requests when the proxy rewrites the path: SignatureDoesNotMatch', async () => {
    const rewritten = clientFor(`https://${rewriteHost}/store`);
    const failure = await rewritten.send(new ListObjectsV2Command({ Bucket: 'proxied' })).catch((error: Error) => error);
    expect((failure as { name?: string }).name).toBe('SignatureDoesNotMatch');
    // The same request through the host that passes the path through is accepted.
    expect((await s3.send(new ListObjectsV2Command({ Bucket: 'proxied' }))).KeyCount).toBe(2);
  });

  describe.skipIf(!existsSync(chromiumPath))('console sign-in with SSO through the proxy, in Chromium', () => {
    let browser: import('playwright-core').Browser;
    beforeAll(async () => {
      const { chromium } = await import('playwright-core');
      // The test names resolve to Caddy's address inside this browser only. Certificate trust is
      // shown above with pebble's root; Chromium reads trust from an NSS store, so here it is waived.
      browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage', `--host-resolver-rules=MAP *.svc.test ${proxyIp}`] });
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
    });

    /** A fresh browser signs in as `user` from the console at `host`; answers the page it ends on. */
    async function ssoSignIn(host: string, user: string) {
      const context = await browser.newContext({ ignoreHTTPSErrors: true });
      const page = await context.newPage();
      await page.goto(`https://${host}/svc/console/`);
      await page.getByRole('link', { name: 'Sign in with SSO' }).click();
      await page.waitForURL(`${idp.issuer}/interaction/**`);
      await page.getByLabel('User').fill(user);
      await page.getByRole('button', { name: 'Sign in at the IdP' }).click();
      await page.waitForURL(`https://${host}/svc/console/**`);
      await page.waitForLoadState('networkidle');
      return { context, page };
    }

    it('signs in with the sticky cookie rustfs_console (secure, HTTP-only) and the usual session', async () => {
      const { context, page } = await ssoSignIn(consoleHost, 'alice');
      await expect.poll(() => page.locator('.who').textContent(), { timeout: 10_000 }).toMatch(/^sso:alice( · consoleAdmin)?$/);
      const cookies = await context.cookies(`https://${consoleHost}/svc/console/`);
      const sticky = cookies.find((cookie) => cookie.name === 'rustfs_console');
      expect(sticky).toMatchObject({ secure: true, httpOnly: true, path: '/' });
      expect(cookies.find((cookie) => cookie.name === 'svc_console_session')).toMatchObject({ secure: true, httpOnly: true, sameSite: 'Strict' });
      await context.close();
    }, 60_000);

    it('without stickiness, a callback on the other node shows the page naming the cause and signs nothing in', async () => {
      const { context, page } = await ssoSignIn(noStickyHost, 'alice');
      expect(page.url()).toContain('/svc/console/api/sso/callback');
      await expect.poll(() => page.locator('#code').textContent()).toBe('ConsoleSsoWrongNode');
      expect(await page.locator('#reason').textContent()).toContain('sticky sessions');
      const cookies = await context.cookies(`https://${noStickyHost}/svc/console/`);
      expect(cookies.find((cookie) => cookie.name === 'svc_console_session')).toBeUndefined();
      await context.close();
    }, 60_000);

    it('refuses an account outside the admin group, saying so', async () => {
      const { context, page } = await ssoSignIn(consoleHost, 'bob');
      await expect.poll(() => page.locator('#code').textContent()).toBe('ConsoleSsoNotAdmitted');
      expect(await page.locator('#reason').textContent()).toContain("the 'groups' claim does not contain 'svc-admins'");
      const cookies = await context.cookies(`https://${consoleHost}/svc/console/`);
      expect(cookies.find((cookie) => cookie.name === 'svc_console_session')).toBeUndefined();
      await context.close();
    }, 60_000);
  });

  it('takes a killed node out of rotation within 15 s while S3 traffic keeps succeeding, and takes it back', async () => {
    // A client as shipped: the SDK's standard retries (a write in flight on the dying node fails
    // once and is sent again; reads the proxy itself tries on the other node).
    const client = new S3Client({ endpoint: `https://${s3Host}`, region: 'us-east-1', forcePathStyle: true, credentials: testCredentials, requestHandler: new NodeHttpHandler({ httpsAgent: agent }) });
    await client.send(new CreateBucketCommand({ Bucket: 'failover' }));
    const killedAtMs = Date.now();
    await nodes[1]!.kill();
    nodes[1] = undefined;
    let requests = 0;
    let retried = 0;
    while (Date.now() - killedAtMs < 16_000) {
      const key = `during-${requests}`;
      const put = await client.send(new PutObjectCommand({ Bucket: 'failover', Key: key, Body: key })).catch(explain('put', key));
      const got = await client.send(new GetObjectCommand({ Bucket: 'failover', Key: key })).catch(explain('get', key));
      expect(await got.Body!.transformToString()).toBe(key);
      retried += (put.$metadata.attempts ?? 1) - 1 + (got.$metadata.attempts ?? 1) - 1;
      requests += 1;
    }
    expect(retried).toBeLessThanOrEqual(2);
    expect(requests).toBeGreaterThan(5);
    const marked = healthFailureAfter(caddy.logs(), nodeHosts[1]!, killedAtMs);
    expect(marked, caddy.logs().slice(-4000)).toBeDefined();
    expect(marked! - killedAtMs).toBeLessThanOrEqual(15_000);

    // Back: node 2 restarts, passes the health check, and alone carries the traffic once node 1 is gone.
    await startNode(1);
    await waitReady(nodes[1]!, 60_000);
    await new Promise((resolve) => setTimeout(resolve, 11_000));
    await nodes[0]!.kill();
    nodes[0] = undefined;
    for (let index = 0; index < 5; index += 1) {
      const got = await client.send(new GetObjectCommand({ Bucket: 'failover', Key: `during-${index}` }));
      expect(await got.Body!.transformToString()).toBe(`during-${index}`);
    }
    await startNode(0);
    await waitReady(nodes[0]!, 60_000);
  }, 120_000);
});

/** A failed call with what the proxy and the nodes said, for the failure message. */
function explain(operation: string, key: string) {
  return (error: { name?: string; message?: string; $metadata?: { httpStatusCode?: number; attempts?: number }; $response?: { body?: unknown } }): never => {
    throw new Error(`${operation} ${key}: ${error.name} ${error.message} (HTTP ${error.$metadata?.httpStatusCode}, ${error.$metadata?.attempts} attempts)\n--- caddy\n${caddy.logs().slice(-3000)}\n--- node 1\n${nodes[0]?.logs().slice(-3000)}`);
  };
}

/** When Caddy's active health check first logged a failure for `host` after `sinceMs`. */
function healthFailureAfter(logs: string, host: string, sinceMs: number): number | undefined {
  for (const line of logs.split('\n')) {
    if (!line.includes('health_checker') || !line.includes(host)) continue;
    try {
      const entry = JSON.parse(line) as { ts: number };
      if (entry.ts * 1000 >= sinceMs) return entry.ts * 1000;
    } catch {
      // not a JSON log line
    }
  }
  return undefined;
}

