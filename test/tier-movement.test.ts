/**
 * Heal and decommission respect tier ownership (SPEC, decommission removal: "tier ownership must
 * converge"): on real processes, with a second svc deployment as the tier.
 *
 * - A deep heal finds a transitioned version healthy (it has no local shards to check), and a
 *   drive that lost its xl.meta gets the metadata back, never shard files: the data stays the tier's.
 * - Decommissioning the pool that holds transitioned versions moves their metadata only: on the
 *   new pool they are still the tier's (storage class, no shard files, read through), the tier
 *   holds the same objects as before (none pulled back, none deleted, none written again), and
 *   the deployment started without the old pool reads everything. A restored copy moves with
 *   its version (its shard files and its `x-amz-restore`).
 * - State files saved while the old pool was the only one (users in iam.bin, a KMS key in
 *   kms.bin, the tiers) are spread to the new pool at its first start, and outlive the old one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { access, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  CreateBucketCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutBucketLifecycleConfigurationCommand, PutBucketVersioningCommand, PutObjectCommand, RestoreObjectCommand, type S3Client,
} from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { waitFor } from './helpers/poll.js';

let root: string;
let tier: SvcProcess;
let server: SvcProcess | undefined;
let remote: S3Client;
let pool0: string;
let pool1: string;
const env = { SVC_CONSOLE_ENABLE: 'false', SVC_LIFECYCLE_CLOCK_OFFSET: '2d', SVC_KMS_SECRET_KEY: `svc-root:${randomBytes(32).toString('base64')}` };
const sealedBody = Buffer.from('sealed under a named KMS key kept in kms.bin');
const bodies = new Map<string, Buffer>([
  ['old/large.bin', randomBytes(2 * 1024 * 1024 + 77)],
  ['old/small.txt', Buffer.from('small, inline before it moved')],
  ['new/local.txt', Buffer.from('never moved')],
]);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-tier-movement-'));
  pool0 = join(root, 'p0/d{1...4}');
  pool1 = join(root, 'p1/d{1...4}');
  tier = await startSvc({ args: [join(root, 'tier/d{1...4}')], env: { SVC_CONSOLE_ENABLE: 'false' } });
  remote = s3ClientFor(tier.url);
  await remote.send(new CreateBucketCommand({ Bucket: 'cold' }));
}, 60_000);

afterAll(async () => {
  await server?.kill();
  await tier?.kill();
  await rm(root, { recursive: true, force: true });
});

async function restart(args: string[]): Promise<S3Client> {
  await server?.stop();
  server = await startSvc({ args, env });
  return s3ClientFor(server.url);
}

const read = async (s3: S3Client, key: string): Promise<Buffer> => Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket: 'docs', Key: key }))).Body!.transformToByteArray());
const tierObjects = async (): Promise<string[]> => ((await remote.send(new ListObjectsV2Command({ Bucket: 'cold' }))).Contents ?? []).map((item) => `${item.Key} ${item.Size}`).sort();

/** Every file under one key's directory on one drive (`p0/d1`), relative to it. */
const filesOf = async (drive: string, key: string): Promise<string[]> => (await readdir(join(root, drive, 'docs', key), { recursive: true }).catch(() => [] as string[])).map(String).sort();

async function expectEverythingReads(s3: S3Client): Promise<void> {
  for (const [key, body] of bodies) expect((await read(s3, key)).equals(body), key).toBe(true);
  expect((await s3.send(new HeadObjectCommand({ Bucket: 'docs', Key: 'old/large.bin' }))).StorageClass).toBe('COLD');
  expect((await s3.send(new HeadObjectCommand({ Bucket: 'docs', Key: 'new/local.txt' }))).StorageClass).toBe('STANDARD');
}

const healCall = (path: string, body: unknown, query = '') => admin(server!.url, 'POST', `/svc/admin/v3/heal/${path}`, query, { body: body === undefined ? undefined : JSON.stringify(body) });

async function healed(body: Record<string, unknown>): Promise<Record<string, any>> {
  const started = await healCall('docs', body);
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  return waitFor('the heal to finish', async () => {
    const answer = await healCall('docs', undefined, `clientToken=${started.body.clientToken}`);
    return answer.body.status === 'running' ? undefined : answer.body;
  }, { timeoutMs: 60_000 });
}

let onTier: string[] = [];

describe('tier ownership', () => {
  it('transitions objects of pool 0 to the tier', async () => {
    const s3 = await restart([pool0]);
    const added = await admin(server!.url, 'POST', '/svc/admin/v4/tier/add', '', { body: JSON.stringify({ name: 'cold', endpoint: tier.url, bucket: 'cold', accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey }) });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    await s3.send(new CreateBucketCommand({ Bucket: 'docs' }));
    await s3.send(new PutBucketVersioningCommand({ Bucket: 'docs', VersioningConfiguration: { Status: 'Enabled' } }));
    await s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: 'docs', LifecycleConfiguration: { Rules: [{ ID: 'cold', Status: 'Enabled', Filter: { Prefix: 'old/' }, Transitions: [{ Days: 1, StorageClass: 'COLD' as never }] }] } }));
    for (const [key, body] of bodies) await s3.send(new PutObjectCommand({ Bucket: 'docs', Key: key, Body: body }));
    const started = await admin(server!.url, 'POST', '/svc/admin/v4/lifecycle/run');
    const cycle = await waitFor('the lifecycle cycle', async () => {
      const status = (await admin(server!.url, 'GET', '/svc/admin/v4/lifecycle/status')).body;
      return !status.running && status.last?.startedAt === started.body.started.startedAt ? status.last : undefined;
    }, { timeoutMs: 30_000 });
    expect(cycle.transitioned).toBe(2);
    // State files saved while pool 0 is the only one: a user (iam.bin) and a KMS key (kms.bin).
    expect((await admin(server!.url, 'POST', '/svc/admin/v4/iam/user/add', '', { body: JSON.stringify({ accessKey: 'keeper', secretKey: 'keeper-secret-1', policies: ['readonly'] }) })).status).toBe(200);
    expect((await admin(server!.url, 'POST', '/svc/admin/v4/kms/key/create', 'key-id=keep-key')).status).toBe(200);
    await s3.send(new PutObjectCommand({ Bucket: 'docs', Key: 'sealed/kms.txt', Body: sealedBody, ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'keep-key' }));
    onTier = await tierObjects();
    expect(onTier).toHaveLength(2);
    expect(await filesOf('p0/d1', 'old/large.bin')).toEqual(['xl.meta']);
    await expectEverythingReads(s3);
  }, 120_000);

  it('heal: a transitioned version is healthy without local shards, and a lost xl.meta comes back alone', async () => {
    const s3 = s3ClientFor(server!.url);
    const deep = await healed({ scanMode: 'deep', dryRun: true });
    expect(deep.counts).toMatchObject({ objectsHealed: 0, objectsUnrecoverable: 0, failures: 0 });
    await rm(join(root, 'p0/d2/docs/old'), { recursive: true, force: true });
    const done = await healed({ scanMode: 'normal' });
    expect(done.counts).toMatchObject({ objectsUnrecoverable: 0, failures: 0 });
    const item = done.items.find((candidate: any) => candidate.object === 'old/large.bin');
    expect(item.after.map((slot: any) => slot.state)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(await filesOf('p0/d2', 'old/large.bin')).toEqual(['xl.meta']);
    expect(await tierObjects()).toEqual(onTier);
    await expectEverythingReads(s3);
  }, 120_000);

  it('decommission moves a transitioned version as metadata, and a restored copy with it; the tier keeps its objects', async () => {
    const added = await restart([pool0, pool1]);
    // Every state file is spread at start to the drives that lack it: the appended pool's too.
    for (const file of ['iam.bin', 'kms.bin', 'tiers.bin']) await waitFor(`${file} on pool 1`, async () => access(join(root, 'p1/d1/.svc.sys', file)).then(() => true, () => undefined));
    const restored = await added.send(new RestoreObjectCommand({ Bucket: 'docs', Key: 'old/small.txt', RestoreRequest: { Days: 5 } }));
    expect(restored.$metadata.httpStatusCode).toBe(202);
    const started = await admin(server!.url, 'POST', '/svc/admin/v3/pools/decommission', new URLSearchParams({ pool: pool0 }).toString());
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    await waitFor('the decommission to complete', async () => {
      const entry = (await admin(server!.url, 'GET', '/svc/admin/v3/decommission/status', new URLSearchParams({ pool: pool0 }).toString())).body.entries?.[0];
      expect(entry?.state).not.toBe('failed');
      return entry?.state === 'completed' ? entry : undefined;
    }, { timeoutMs: 60_000 });
    expect(await filesOf('p0/d1', 'old/large.bin')).toEqual([]);
    expect(await filesOf('p1/d1', 'old/large.bin')).toEqual(['xl.meta']);
    expect((await filesOf('p1/d1', 'old/small.txt')).some((name) => name.endsWith('part.1'))).toBe(true);
    expect(await tierObjects()).toEqual(onTier);
    const s3 = await restart([pool1]);
    await expectEverythingReads(s3);
    expect(await tierObjects()).toEqual(onTier);
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'docs', Key: 'old/small.txt' }));
    expect([head.StorageClass, head.Restore]).toEqual(['COLD', expect.stringMatching(/^ongoing-request="false", expiry-date="[^"]+ GMT"$/)]);

    // The state files saved when pool 0 was the only pool outlived it.
    expect((await admin(server!.url, 'GET', '/svc/admin/v4/iam/user/info', 'accessKey=keeper')).body.user).toMatchObject({ accessKey: 'keeper' });
    expect((await admin(server!.url, 'GET', '/svc/admin/v4/kms/key/list')).body.keys.map((key: { keyId: string }) => key.keyId)).toContain('keep-key');
    expect(Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket: 'docs', Key: 'sealed/kms.txt' }))).Body!.transformToByteArray()).equals(sealedBody)).toBe(true);
    expect((await admin(server!.url, 'GET', '/svc/admin/v4/tier/list')).body.tiers.map((tier: { name: string }) => tier.name)).toEqual(['COLD']);
  }, 180_000);
});
