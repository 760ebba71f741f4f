/**
 * Lifecycle transitions to a remote tier, end to end on real processes: a second svc deployment
 * is the tier. Through the admin API, `rc` and the AWS SDK:
 *
 * - `rc admin tier add` checks the tier first (named errors for a wrong secret, a missing bucket,
 *   an endpoint nobody answers, a bad name, a taken name), needs admin:SetTier, never shows the
 *   secret; rm is refused while a rule or an object uses the tier;
 * - a Transition rule (StorageClass = the tier's name; an unknown one is InvalidStorageClass)
 *   moves objects' data to the tier: HEAD and listings show the tier's name, GET reads through
 *   (whole and ranged), the local shard files are gone;
 * - with the tier's server down, GET fails with TierUnreachable, a due transition waits (its
 *   object stays local and readable), and once the tier is back both work: nothing is lost;
 * - RestoreObject brings a copy back (readable with the tier down), with `x-amz-restore`; the
 *   scanner ends it at its expiry; a restore of an object never moved is
 *   ObjectAlreadyInActiveTierError; deleting a transitioned version deletes the tier's object.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  CreateBucketCommand, DeleteBucketLifecycleCommand, DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutBucketLifecycleConfigurationCommand,
  GetBucketLifecycleConfigurationCommand, PutBucketVersioningCommand, PutObjectCommand, RestoreObjectCommand, type LifecycleRule, type S3Client,
} from '@aws-sdk/client-s3';
import { parseExposition, sampleValue } from './helpers/metrics.js';
import { freePort, s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { rcIn } from './helpers/rc-process.js';
import { waitFor } from './helpers/poll.js';

let root: string;
let home: string;
let main: SvcProcess;
let tier: SvcProcess;
let tierPort: number;
let mainPort: number;
let s3: S3Client;
let remote: S3Client;
const env = { SVC_CONSOLE_ENABLE: 'false' };
// Versions over 1 MiB go to a tier in parts (5 MiB each at least), so a 6 MiB one takes two.
const mainEnv = { ...env, SVC_LIFECYCLE_CLOCK_OFFSET: '2d', SVC_TIER_MULTIPART_THRESHOLD: '1MiB', SVC_PROMETHEUS_AUTH_TYPE: 'public' };
const tierUser = { accessKeyId: 'tier-writer', secretAccessKey: 'tier-writer-secret' };
const big = randomBytes(3 * 1024 * 1024 + 12_345);
const small = Buffer.from('a small object, kept inline before it moved');

const startTier = async (): Promise<SvcProcess> => startSvc({ args: [join(root, 'tier', 'd{1...4}')], env, port: tierPort });
const startMain = async (): Promise<SvcProcess> => startSvc({ args: [join(root, 'main', 'd{1...4}')], env: mainEnv, port: mainPort });

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-tier-'));
  home = await mkdtemp(join(tmpdir(), 'svc-tier-home-'));
  tierPort = await freePort();
  mainPort = await freePort();
  tier = await startTier();
  main = await startMain();
  s3 = s3ClientFor(main.url);
  remote = s3ClientFor(tier.url);
  await remote.send(new CreateBucketCommand({ Bucket: 'warm' }));
  expect((await admin(tier.url, 'POST', '/svc/admin/v4/iam/user/add', '', { body: JSON.stringify({ accessKey: tierUser.accessKeyId, secretKey: tierUser.secretAccessKey, policies: ['readwrite'] }) })).status).toBe(200);
}, 90_000);

afterAll(async () => {
  await main?.kill();
  await tier?.kill();
  await rm(root, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
});

const tierBody = (fields: Record<string, string> = {}) => JSON.stringify({ name: 'warm', endpoint: tier.url, bucket: 'warm', prefix: 'from-main/', accessKey: tierUser.accessKeyId, secretKey: tierUser.secretAccessKey, ...fields });
const addTier = (fields: Record<string, string> = {}, credentials?: { accessKeyId: string; secretAccessKey: string }) =>
  admin(main.url, 'POST', '/svc/admin/v4/tier/add', '', { body: tierBody(fields), ...(credentials ? { credentials } : {}) });

async function failure(promise: Promise<unknown>): Promise<{ name: string; status: number | undefined }> {
  try {
    await promise;
  } catch (error) {
    const caught = error as { name: string; $metadata?: { httpStatusCode?: number } };
    return { name: caught.name, status: caught.$metadata?.httpStatusCode };
  }
  throw new Error('expected a failure');
}

async function runLifecycle(): Promise<Record<string, any>> {
  const started = await admin(main.url, 'POST', '/svc/admin/v4/lifecycle/run');
  expect(started.status).toBe(200);
  return waitFor('the lifecycle cycle to end', async () => {
    const status = (await admin(main.url, 'GET', '/svc/admin/v4/lifecycle/status')).body;
    return !status.running && status.last?.startedAt === started.body.started.startedAt ? status.last : undefined;
  }, { timeoutMs: 30_000 });
}

const read = async (key: string, range?: string): Promise<Buffer> => Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: key, ...(range ? { Range: range } : {}) }))).Body!.transformToByteArray());
const storageClass = async (key: string): Promise<string | undefined> => (await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: key }))).StorageClass;

/** Files under the object's directory on the first drive of the main deployment. */
const localFiles = async (key: string): Promise<string[]> => (await readdir(join(root, 'main', 'd1', 'photos', key), { recursive: true })).map(String).sort();

describe('tiers', () => {
  it('are checked before they are kept, with named errors', async () => {
    expect((await addTier({ secretKey: 'not-the-secret' })).body.Code).toBe('TierInvalidCredentials');
    expect((await addTier({ bucket: 'no-such-bucket' })).body.Code).toBe('TierBucketNotFound');
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const unreachable = await addTier({ endpoint: nobody });
    expect([unreachable.status, unreachable.body.Code]).toEqual([503, 'TierUnreachable']);
    expect((await addTier({ name: 'STANDARD' })).body.Code).toBe('InvalidArgument');
    expect((await addTier({ name: 'no spaces' })).body.Code).toBe('InvalidArgument');
    expect((await admin(main.url, 'GET', '/svc/admin/v4/tier/list')).body).toEqual({ tiers: [] });
  });

  it('need admin:SetTier to be added; the secret is never shown', async () => {
    expect((await admin(main.url, 'POST', '/svc/admin/v4/iam/user/add', '', { body: JSON.stringify({ accessKey: 'reader', secretKey: 'reader-secret-1', policies: ['readonly'] }) })).status).toBe(200);
    const refused = await addTier({}, { accessKeyId: 'reader', secretAccessKey: 'reader-secret-1' });
    expect([refused.status, refused.body.Code]).toEqual([403, 'AccessDenied']);
    const { ok, rc } = rcIn(() => home);
    await ok('alias', 'set', 'main', main.url, testCredentials.accessKeyId, testCredentials.secretAccessKey);
    const added = await ok('admin', 'tier', 'add', 'main', 'warm', '--endpoint', tier.url, '--bucket', 'warm', '--prefix', 'from-main/', '--access-key', tierUser.accessKeyId, '--secret-key', tierUser.secretAccessKey);
    expect(added).toContain("added tier 'WARM'");
    expect((await addTier()).body.Code).toBe('TierAlreadyExists');
    const listed = await ok('admin', 'tier', 'ls', 'main');
    expect(listed).toContain('WARM');
    const info = JSON.parse(await ok('admin', 'tier', 'info', 'main', 'warm', '--json'));
    expect(info.tier).toMatchObject({ name: 'WARM', endpoint: tier.url, bucket: 'warm', prefix: 'from-main/', accessKey: tierUser.accessKeyId });
    expect(JSON.stringify(info)).not.toContain(tierUser.secretAccessKey);
    expect(JSON.stringify((await admin(main.url, 'GET', '/svc/admin/v4/tier/list')).body)).not.toContain(tierUser.secretAccessKey);
    const missing = await rc('admin', 'tier', 'info', 'main', 'cold');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('TierNotFound');
  });

  it('are named by transition rules (an unknown one is InvalidStorageClass)', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'photos' }));
    await s3.send(new PutBucketVersioningCommand({ Bucket: 'photos', VersioningConfiguration: { Status: 'Enabled' } }));
    const unknown = await failure(s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: 'photos', LifecycleConfiguration: { Rules: [{ ID: 'cold', Status: 'Enabled', Filter: {}, Transitions: [{ Days: 0, StorageClass: 'COLD' as never }] }] } })));
    expect(unknown).toEqual({ name: 'InvalidStorageClass', status: 400 });
    await s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: 'photos', LifecycleConfiguration: { Rules: [{ ID: 'warm', Status: 'Enabled', Filter: { Prefix: 'move/' }, Transitions: [{ Days: 1, StorageClass: 'WARM' as never }] }] } }));
    const stored = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'photos' }));
    expect(stored.Rules?.[0]?.Transitions).toEqual([{ Days: 1, StorageClass: 'WARM' }]);
  });

  it('take a transitioned object: HEAD shows the tier, GET reads through, local shards are gone', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'move/big.bin', Body: big }));
    await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'move/small.txt', Body: small }));
    await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'stay/here.txt', Body: small }));
    expect((await localFiles('move/big.bin')).some((name) => name.endsWith('part.1'))).toBe(true);
    const cycle = await runLifecycle();
    expect(cycle.transitioned).toBe(2);
    expect(await storageClass('move/big.bin')).toBe('WARM');
    expect(await storageClass('move/small.txt')).toBe('WARM');
    expect(await storageClass('stay/here.txt')).toBe('STANDARD');
    expect((await read('move/big.bin')).equals(big)).toBe(true);
    expect((await read('move/big.bin', 'bytes=1048570-2097200')).equals(big.subarray(1048570, 2097201))).toBe(true);
    expect((await read('move/small.txt')).equals(small)).toBe(true);
    expect(await localFiles('move/big.bin')).toEqual(['xl.meta']);
    const listing = await s3.send(new ListObjectsV2Command({ Bucket: 'photos', Prefix: 'move/' }));
    expect(listing.Contents?.map((item) => item.StorageClass)).toEqual(['WARM', 'WARM']);
    const onTier = await remote.send(new ListObjectsV2Command({ Bucket: 'warm', Prefix: 'from-main/' }));
    expect(onTier.Contents?.map((item) => item.Size).sort((a, b) => a! - b!)).toEqual([small.length, big.length]);
    const inUse = await admin(main.url, 'POST', '/svc/admin/v4/tier/remove', 'tier=WARM');
    expect([inUse.status, inUse.body.Code]).toEqual([409, 'TierInUse']);
  });

  it('with the tier down: GET is TierUnreachable, a due transition waits, nothing is lost', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'move/later.bin', Body: big.subarray(0, 500_000) }));
    await tier.kill();
    expect(await failure(read('move/big.bin'))).toEqual({ name: 'TierUnreachable', status: 503 });
    const cycle = await runLifecycle();
    expect(cycle.transitioned).toBe(0);
    expect(cycle.errors).toBeGreaterThan(0);
    expect(await storageClass('move/later.bin')).toBe('STANDARD');
    expect((await read('move/later.bin')).equals(big.subarray(0, 500_000))).toBe(true);
    tier = await startTier();
    expect((await read('move/big.bin')).equals(big)).toBe(true);
    expect((await runLifecycle()).transitioned).toBe(1);
    expect(await storageClass('move/later.bin')).toBe('WARM');
    expect((await read('move/later.bin')).equals(big.subarray(0, 500_000))).toBe(true);
  }, 60_000);

  it('RestoreObject brings a copy back for a while; delete frees the tier object', async () => {
    const notMoved = await failure(s3.send(new RestoreObjectCommand({ Bucket: 'photos', Key: 'stay/here.txt', RestoreRequest: { Days: 1 } })));
    expect(notMoved).toEqual({ name: 'ObjectAlreadyInActiveTierError', status: 403 });
    await s3.send(new RestoreObjectCommand({ Bucket: 'photos', Key: 'move/big.bin', RestoreRequest: { Days: 1 } }));
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'move/big.bin' }));
    expect(head.StorageClass).toBe('WARM');
    expect(head.Restore).toMatch(/^ongoing-request="false", expiry-date="[^"]+ GMT"$/);
    await tier.kill();
    expect((await read('move/big.bin', 'bytes=5-100004')).equals(big.subarray(5, 100_005))).toBe(true);
    tier = await startTier();
    // The lifecycle clock runs two days ahead: the one-day restore has expired for it.
    await runLifecycle();
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'move/big.bin' }))).Restore).toBeUndefined();
    expect(await localFiles('move/big.bin')).toEqual(['xl.meta']);
    expect((await read('move/big.bin')).equals(big)).toBe(true);

    const version = (await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'move/small.txt' }))).VersionId;
    await s3.send(new DeleteObjectCommand({ Bucket: 'photos', Key: 'move/small.txt', VersionId: version }));
    await waitFor('the tier object of the deleted version to go', async () => {
      const left = await remote.send(new ListObjectsV2Command({ Bucket: 'warm', Prefix: 'from-main/' }));
      return left.Contents?.every((item) => item.Size !== small.length) ? true : undefined;
    });
  }, 60_000);
});

const archive = async (key: string): Promise<Buffer> => Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket: 'archive', Key: key }))).Body!.transformToByteArray());
const putRules = (rules: LifecycleRule[]) => s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: 'archive', LifecycleConfiguration: { Rules: rules } }));
const tierKeys = async (bucket: string): Promise<string[]> => ((await remote.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).map((item) => item.Key!).sort();
const huge = randomBytes(6 * 1024 * 1024 + 4_321);

describe('several transitions per rule', () => {
  it('are refused as AWS refuses them: one tier twice, one day twice, Days and Date mixed, not before the expiration', async () => {
    await remote.send(new CreateBucketCommand({ Bucket: 'cold' }));
    expect((await addTier({ name: 'cold', bucket: 'cold', prefix: '' })).status).toBe(200);
    await s3.send(new CreateBucketCommand({ Bucket: 'archive' }));
    const rule = (extra: Partial<LifecycleRule>): LifecycleRule => ({ ID: 'steps', Status: 'Enabled', Filter: { Prefix: 'a/' }, ...extra });
    const refusals: [Partial<LifecycleRule>, string][] = [
      [{ Transitions: [{ Days: 1, StorageClass: 'WARM' as never }, { Days: 5, StorageClass: 'WARM' as never }] }, 'InvalidArgument'],
      [{ Transitions: [{ Days: 3, StorageClass: 'WARM' as never }, { Days: 3, StorageClass: 'COLD' as never }] }, 'InvalidArgument'],
      [{ Transitions: [{ Days: 3, StorageClass: 'WARM' as never }, { Date: new Date('2031-01-01T00:00:00Z'), StorageClass: 'COLD' as never }] }, 'InvalidRequest'],
      [{ Transitions: [{ Days: 3, StorageClass: 'WARM' as never }], Expiration: { Date: new Date('2031-01-01T00:00:00Z') } }, 'InvalidRequest'],
      [{ Transitions: [{ Days: 1, StorageClass: 'WARM' as never }, { Days: 10, StorageClass: 'COLD' as never }], Expiration: { Days: 10 } }, 'InvalidArgument'],
      [{ NoncurrentVersionTransitions: [{ NoncurrentDays: 1, StorageClass: 'WARM' as never }, { NoncurrentDays: 2, StorageClass: 'WARM' as never }] }, 'InvalidArgument'],
      [{ NoncurrentVersionTransitions: [{ NoncurrentDays: 4, StorageClass: 'WARM' as never }], NoncurrentVersionExpiration: { NoncurrentDays: 4 } }, 'InvalidArgument'],
    ];
    for (const [extra, code] of refusals) expect(await failure(putRules([rule(extra)])), JSON.stringify(extra)).toEqual({ name: code, status: 400 });
    await expect(s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'archive' }))).rejects.toMatchObject({ name: 'NoSuchLifecycleConfiguration' });
    await putRules([rule({ Transitions: [{ Days: 1, StorageClass: 'WARM' as never }, { Days: 30, StorageClass: 'COLD' as never }], NoncurrentVersionTransitions: [{ NoncurrentDays: 7, StorageClass: 'WARM' as never }, { NoncurrentDays: 3, StorageClass: 'COLD' as never }] })]);
    const stored = (await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'archive' }))).Rules![0]!;
    expect(stored.Transitions).toEqual([{ Days: 1, StorageClass: 'WARM' }, { Days: 30, StorageClass: 'COLD' }]);
    expect(stored.NoncurrentVersionTransitions).toEqual([{ NoncurrentDays: 7, StorageClass: 'WARM' }, { NoncurrentDays: 3, StorageClass: 'COLD' }]);
  });

  it('move a version to the latest tier it has reached, in parts when it is large, and on from one tier to the next', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'archive', Key: 'a/huge.bin', Body: huge }));
    const coldBefore = await tierKeys('cold');
    await runLifecycle();
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'archive', Key: 'a/huge.bin' }))).StorageClass).toBe('WARM');
    const onWarm = (await remote.send(new ListObjectsV2Command({ Bucket: 'warm', Prefix: 'from-main/' }))).Contents!.filter((item) => item.Size === huge.length);
    expect(onWarm).toHaveLength(1);
    // Two parts: the tier's ETag is a multipart one.
    expect(onWarm[0]!.ETag).toMatch(/-2"$/);
    expect((await archive('a/huge.bin')).equals(huge)).toBe(true);

    // Both transitions reached now: the version moves on from WARM to COLD, and WARM's object goes.
    await putRules([{ ID: 'steps', Status: 'Enabled', Filter: { Prefix: 'a/' }, Transitions: [{ Days: 0, StorageClass: 'WARM' as never }, { Days: 1, StorageClass: 'COLD' as never }] }]);
    expect((await runLifecycle()).transitioned).toBe(1);
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'archive', Key: 'a/huge.bin' }))).StorageClass).toBe('COLD');
    expect((await tierKeys('cold')).filter((key) => !coldBefore.includes(key))).toHaveLength(1);
    expect((await archive('a/huge.bin')).equals(huge)).toBe(true);
    await waitFor('the WARM object of the version moved on to go', async () => {
      const left = await remote.send(new ListObjectsV2Command({ Bucket: 'warm', Prefix: 'from-main/' }));
      return (left.Contents ?? []).every((item) => item.Key !== onWarm[0]!.Key) ? true : undefined;
    });
    expect((await runLifecycle()).transitioned).toBe(0);
  }, 60_000);

  it('a restored copy expires in a bucket without lifecycle rules', async () => {
    await s3.send(new DeleteBucketLifecycleCommand({ Bucket: 'archive' }));
    await s3.send(new RestoreObjectCommand({ Bucket: 'archive', Key: 'a/huge.bin', RestoreRequest: { Days: 1 } }));
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'archive', Key: 'a/huge.bin' }))).Restore).toMatch(/^ongoing-request="false"/);
    expect((await readdir(join(root, 'main', 'd1', 'archive', 'a/huge.bin'), { recursive: true })).some((name) => String(name).endsWith('part.1'))).toBe(true);
    // The lifecycle clock runs two days ahead: the one-day restore is over for it.
    await runLifecycle();
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'archive', Key: 'a/huge.bin' }))).Restore).toBeUndefined();
    expect((await readdir(join(root, 'main', 'd1', 'archive', 'a/huge.bin'), { recursive: true })).map(String)).toEqual(['xl.meta']);
    expect((await archive('a/huge.bin')).equals(huge)).toBe(true);
  }, 60_000);
});

describe('tier object deletions', () => {
  const pending = async (): Promise<Record<string, any>> => (await admin(main.url, 'GET', '/svc/admin/v4/tier/info', 'tier=COLD')).body.deletions;
  const scrape = async () => parseExposition(await (await fetch(`${main.url}/svc/metrics/node`)).text());

  it('wait in a durable queue while the tier is down, across a restart, until the tier takes them', async () => {
    // The tier holds the transitioned version's object.
    const held = (await tierKeys('cold')).filter((name) => name.length > 40);
    expect(held.length).toBeGreaterThan(0);
    const key = held[0]!;
    await tier.kill();
    const version = (await s3.send(new HeadObjectCommand({ Bucket: 'archive', Key: 'a/huge.bin' }))).VersionId;
    await s3.send(new DeleteObjectCommand({ Bucket: 'archive', Key: 'a/huge.bin', ...(version ? { VersionId: version } : {}) }));
    const waiting = await waitFor('the failed deletion to be counted', async () => {
      const deletions = await pending();
      return deletions.pending === 1 && deletions.failed > 0 ? deletions : undefined;
    });
    expect(waiting.lastError).toContain('COLD');
    const metrics = await scrape();
    expect(sampleValue(metrics, 'svc_tier_deletion_queued_objects', { tier: 'COLD' })).toBe(1);
    expect(sampleValue(metrics, 'svc_tier_deletion_failures_total', { tier: 'COLD' })).toBeGreaterThan(0);
    const { ok } = rcIn(() => home);
    expect(await ok('admin', 'tier', 'info', 'main', 'cold')).toContain('pending deletions on all nodes: 1');

    await main.stop();
    main = await startMain();
    s3 = s3ClientFor(main.url);
    expect((await pending()).pending).toBe(1);
    tier = await startTier();
    await waitFor('the tier object of the deleted version to go', async () => ((await tierKeys('cold')).includes(key!) ? undefined : true), { timeoutMs: 30_000 });
    await waitFor('the queue to be empty', async () => ((await pending()).pending === 0 ? true : undefined));
    expect(sampleValue(await scrape(), 'svc_tier_deleted_objects_total', { tier: 'COLD' })).toBe(1);
  }, 90_000);
});
