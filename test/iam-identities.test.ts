/**
 * Identities beyond users, through real clients: delegated administration with `rc admin` (a
 * user's admin actions are honoured, anything else refused with nothing changed), groups (their
 * policies apply to members while enabled), and service accounts made with `rc admin user
 * svcacct` and used by the AWS CLI and rclone: the secret shown once, the inline policy narrowing
 * the user's rights, the account refused while its user is disabled, after its expiry, and gone
 * with its user.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { rcIn } from './helpers/rc-process.js';
import { missingTool } from './helpers/external-tools.js';

const missing = { aws: missingTool('aws', 'awscli'), rclone: missingTool('rclone') };
let root: string;
let server: SvcProcess;
let s3: S3Client;
const client = rcIn(() => join(root, 'home'));
const rc = client.rc;
/** `ok('admin user add', alias, ...)`: the command's words, then its arguments; expects exit 0 and returns stdout. */
const ok = (command: string, ...args: string[]) => client.ok(...command.split(' '), ...args);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-identities-'));
  server = await startSvc({ args: [join(root, 'd{1...4}')] });
  s3 = s3ClientFor(server.url);
  for (const Bucket of ['shared', 'private']) await s3.send(new CreateBucketCommand({ Bucket }));
  await s3.send(new PutObjectCommand({ Bucket: 'private', Key: 'plan.txt', Body: 'root only' }));
  await ok('alias set', 'local', server.url, testCredentials.accessKeyId, testCredentials.secretAccessKey);
  await writeFile(join(root, 'user-admin.json'), JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['admin:ListUsers', 'admin:CreateUser', 'admin:ListGroups'], Resource: ['*'] }] }));
  await writeFile(join(root, 'shared-only.json'), JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:*'], Resource: ['arn:aws:s3:::shared', 'arn:aws:s3:::shared/*'] }] }));
  await ok('admin policy create', 'local', 'user-admin', join(root, 'user-admin.json'));
  await ok('admin user add', 'local', 'ops', 'ops-secret-key', '--policy', 'user-admin');
  await ok('admin user add', 'local', 'alice', 'alice-secret-key', '--policy', 'readwrite');
  await ok('admin user add', 'local', 'bob', 'bob-secret-key');
}, 120_000);

afterAll(async () => {
  await server?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

function awsCli(credentials: { accessKeyId: string; secretAccessKey: string }, ...args: string[]): { ok: boolean; output: string } {
  const { AWS_CA_BUNDLE: _bundle, ...inherited } = process.env;
  const env = { ...inherited, AWS_ACCESS_KEY_ID: credentials.accessKeyId, AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey, AWS_DEFAULT_REGION: 'us-east-1', AWS_CONFIG_FILE: '/dev/null', AWS_SHARED_CREDENTIALS_FILE: '/dev/null' };
  try {
    return { ok: true, output: execFileSync('aws', ['--endpoint-url', server.url, ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) };
  } catch (error) {
    const failed = error as { stderr?: string; stdout?: string };
    return { ok: false, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

/** Parses `rc admin user svcacct add` output: the keys it shows once. */
function keysOf(output: string): { accessKeyId: string; secretAccessKey: string } {
  // Generated keys: 20 and 40 letters and digits.
  const [, accessKeyId = '', secretAccessKey = ''] = /Access Key: (\S+)\nSecret Key: (\S+)\n/.exec(output) ?? [];
  expect(accessKeyId, output).toMatch(/^[A-Za-z0-9]{20}$/);
  expect(secretAccessKey, output).toMatch(/^[A-Za-z0-9]{40}$/);
  return { accessKeyId, secretAccessKey };
}

describe('delegated administration with rc admin', () => {
  it("a user's admin actions are honoured; others are refused with a message and a non-zero exit, nothing changed", async () => {
    await ok('alias set', 'ops', server.url, 'ops', 'ops-secret-key');
    expect(await ok('admin user list', 'ops')).toMatch(/alice\s+enabled\s+readwrite/);
    expect(await ok('admin user add', 'ops', 'carol', 'carol-secret-key')).toContain('added carol');
    const refused = await rc('admin', 'user', 'add', 'ops', 'mallory', 'mallory-secret', '--policy', 'consoleAdmin');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('admin:AttachUserOrGroupPolicy');
    const pools = await rc('admin', 'pool', 'list', 'ops');
    expect(pools.code).not.toBe(0);
    expect(pools.stderr).toContain('admin:ServerInfo');
    const disable = await rc('admin', 'user', 'disable', 'ops', 'alice');
    expect(disable.code).not.toBe(0);
    const users = await ok('admin user list', 'local');
    expect(users).not.toContain('mallory');
    expect(users).toMatch(/alice\s+enabled/);
  });
});

describe('metrics with a user\'s token', () => {
  it('scrape with admin:Prometheus, refused without it or once the user is disabled', async () => {
    await writeFile(join(root, 'scrape.json'), JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['admin:Prometheus'], Resource: ['*'] }] }));
    await ok('admin policy create', 'local', 'scrape', join(root, 'scrape.json'));
    await ok('admin user add', 'local', 'scraper', 'scraper-secret-key', '--policy', 'scrape');
    await ok('admin user add', 'local', 'nosy', 'nosy-secret-key', '--policy', 'readonly');
    const scrape = async (user: string) => {
      await ok('alias set', user, server.url, user, `${user}-secret-key`);
      const token = /bearer_token: (\S+)/.exec(await ok('admin prometheus generate', user, 'node'))![1]!;
      return fetch(`${server.url}/svc/metrics/node`, { headers: { authorization: `Bearer ${token}` } });
    };
    const allowed = await scrape('scraper');
    expect(allowed.status).toBe(200);
    expect(await allowed.text()).toContain('svc_');
    const refused = await scrape('nosy');
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { Message: string }).Message).toContain('admin:Prometheus');
    await ok('admin user disable', 'local', 'scraper');
    expect((await scrape('scraper')).status).toBe(403);
  });
});

describe('groups', () => {
  it("members act with the group's policies while it is enabled, and lose them when taken out", async () => {
    await ok('admin group add', 'local', 'writers', 'bob');
    await ok('admin policy attach', 'local', 'readwrite', '--group', 'writers');
    const bob = s3ClientFor(server.url, { credentials: { accessKeyId: 'bob', secretAccessKey: 'bob-secret-key' } });
    await bob.send(new PutObjectCommand({ Bucket: 'shared', Key: 'by-bob.txt', Body: 'bob' }));
    expect(await ok('admin user info', 'local', 'bob')).toContain('groups writers');
    await ok('admin group disable', 'local', 'writers');
    await expect(bob.send(new PutObjectCommand({ Bucket: 'shared', Key: 'by-bob-2.txt', Body: 'bob' }))).rejects.toMatchObject({ name: 'AccessDenied' });
    await ok('admin group enable', 'local', 'writers');
    await bob.send(new PutObjectCommand({ Bucket: 'shared', Key: 'by-bob-3.txt', Body: 'bob' }));
    await ok('admin group remove', 'local', 'writers', 'bob');
    await expect(bob.send(new GetObjectCommand({ Bucket: 'shared', Key: 'by-bob.txt' }))).rejects.toMatchObject({ name: 'AccessDenied' });
    const notEmpty = await rc('admin', 'group', 'remove', 'local', 'writers');
    expect(notEmpty.code).toBe(0);
    expect(await ok('admin group list', 'local')).toBe('no groups\n');
  });
});

describe('service accounts', () => {
  it('are made by rc with the secret shown once, narrowed by their inline policy, and used by the AWS CLI', async () => {
    const made = await ok('admin user svcacct add', 'local', 'alice', '--policy', join(root, 'shared-only.json'), '--name', 'backup');
    const keys = keysOf(made);
    const listing = await ok('admin user svcacct ls', 'local', 'alice');
    expect(listing).toContain(keys.accessKeyId);
    expect(listing + (await ok('admin user svcacct info', 'local', keys.accessKeyId)) + (await ok('admin user svcacct ls', 'local', 'alice', '--json'))).not.toContain(keys.secretAccessKey);
    if (missing.aws) return void console.warn(`skipping the AWS CLI part: ${missing.aws}`);
    await writeFile(join(root, 'up.txt'), 'from the service account');
    expect(awsCli(keys, 's3', 'cp', join(root, 'up.txt'), 's3://shared/up.txt').ok).toBe(true);
    // alice may read private/, her service account may not: its policy only narrows.
    const refused = awsCli(keys, 's3', 'cp', 's3://private/plan.txt', join(root, 'plan.txt'));
    expect(refused.ok).toBe(false);
    expect(refused.output).toMatch(/403|AccessDenied|Forbidden/);
    expect(awsCli({ accessKeyId: 'alice', secretAccessKey: 'alice-secret-key' }, 's3', 'cp', 's3://private/plan.txt', join(root, 'plan.txt')).ok).toBe(true);
  });

  it('work with rclone, stop while their user is disabled, and go with their user', async () => {
    const keys = keysOf(await ok('admin user svcacct add', 'local', 'alice'));
    const env = {
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'AWS_CA_BUNDLE')) as Record<string, string>,
      RCLONE_CONFIG_SVC_TYPE: 's3', RCLONE_CONFIG_SVC_PROVIDER: 'Other', RCLONE_CONFIG_SVC_ENDPOINT: server.url, RCLONE_CONFIG_SVC_ACCESS_KEY_ID: keys.accessKeyId,
      RCLONE_CONFIG_SVC_SECRET_ACCESS_KEY: keys.secretAccessKey, RCLONE_CONFIG_SVC_REGION: 'us-east-1', RCLONE_CONFIG_SVC_FORCE_PATH_STYLE: 'true', RCLONE_CONFIG: join(root, 'rclone.conf'),
    };
    const rclone = (...args: string[]) => execFileSync('rclone', args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const account = s3ClientFor(server.url, { credentials: keys });
    if (missing.rclone) console.warn(`skipping the rclone part: ${missing.rclone}`);
    else expect(rclone('cat', 'svc:private/plan.txt')).toBe('root only');
    await ok('admin user disable', 'local', 'alice');
    await expect(account.send(new GetObjectCommand({ Bucket: 'private', Key: 'plan.txt' }))).rejects.toMatchObject({ name: 'InvalidAccessKeyId' });
    if (!missing.rclone) expect(() => rclone('cat', 'svc:private/plan.txt')).toThrow();
    await ok('admin user enable', 'local', 'alice');
    expect(await (await account.send(new GetObjectCommand({ Bucket: 'private', Key: 'plan.txt' }))).Body!.transformToString()).toBe('root only');
    await ok('admin user svcacct edit', 'local', keys.accessKeyId, '--disable');
    await expect(account.send(new GetObjectCommand({ Bucket: 'private', Key: 'plan.txt' }))).rejects.toMatchObject({ name: 'InvalidAccessKeyId' });
    await ok('admin user remove', 'local', 'alice');
    expect(await ok('admin user svcacct ls', 'local', '--json')).not.toContain(keys.accessKeyId);
  });

  it('expire, refuse an expiry in the past, and are free for their own user but not for another', async () => {
    await ok('admin user add', 'local', 'dave', 'dave-secret-key', '--policy', 'readwrite');
    await ok('alias set', 'dave', server.url, 'dave', 'dave-secret-key');
    const past = await rc('admin', 'user', 'svcacct', 'add', 'dave', '--expiry', '2020-01-01T00:00:00Z');
    expect(past.code).not.toBe(0);
    expect(past.stderr).toContain('InvalidArgument');
    const foreign = await rc('admin', 'user', 'svcacct', 'add', 'dave', 'bob');
    expect(foreign.code).not.toBe(0);
    expect(foreign.stderr).toContain('admin:CreateServiceAccount');
    const soon = new Date(Date.now() + 2_000).toISOString();
    const keys = keysOf(await ok('admin user svcacct add', 'dave', '--expiry', soon));
    const account = s3ClientFor(server.url, { credentials: keys });
    await account.send(new PutObjectCommand({ Bucket: 'shared', Key: 'by-dave.txt', Body: 'dave' }));
    const deadline = Date.now() + 10_000;
    let refused = false;
    while (!refused && Date.now() < deadline) {
      refused = await account.send(new PutObjectCommand({ Bucket: 'shared', Key: 'late.txt', Body: 'late' })).then(() => false, (error: { name?: string }) => error.name === 'InvalidAccessKeyId');
      if (!refused) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(refused).toBe(true);
  });
});
