/**
 * Locked versions moved between pools keep their locks: a decommission through a real server
 * (two pools, the SDK) and a rebalance of an object layer over two pools of in-memory drives that
 * differ in size (pools on one filesystem are equally full, so a process server would move
 * nothing). Moving removes the source copy, which object lock must not refuse; a user's delete of
 * the moved version is still refused, at the object layer as through S3.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  GetObjectLegalHoldCommand,
  GetObjectRetentionCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { makeTestSet, type TestSet } from './helpers/erasure-set.js';
import { ObjectLayer, isVersionLocked, legalHoldKey, lockModeKey, lockRetainUntilKey } from '../src/object/index.js';
import { RebalanceManager, validateRebalance, type RebalanceDocument } from '../src/ops/rebalance.js';
import { StateStore } from '../src/ops/state-store.js';
import { StateFileQuarantine } from '../src/cluster/state-quarantine.js';
import { MiB } from '../src/util/limits.js';

const dayMs = 24 * 60 * 60 * 1000;
const q = (pairs: Record<string, string>) => new URLSearchParams(pairs).toString();

async function xlMetaCount(directory: string, bucket: string): Promise<number> {
  let count = 0;
  for (const entry of await readdir(directory, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name === 'xl.meta' && entry.parentPath.includes(`/${bucket}/`)) count += 1;
  }
  return count;
}

async function failure(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    return (error as { name?: string; code?: string }).code ?? (error as { name: string }).name;
  }
}

describe('a decommission moves locked versions with their locks', () => {
  let root: string;
  let server: SvcProcess | undefined;
  const env = { SVC_CONSOLE_ENABLE: 'false' };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-lock-decommission-'));
  });
  afterAll(async () => {
    await server?.kill();
    await rm(root, { recursive: true, force: true });
  });

  it('retention and legal hold read back the same from pool 1, and the versions still refuse deletion', async () => {
    const pool0 = join(root, 'p0/d{1...4}');
    const pool1 = join(root, 'p1/d{1...4}');
    server = await startSvc({ args: [pool0], env });
    let s3: S3Client = s3ClientFor(server.url);
    await s3.send(new CreateBucketCommand({ Bucket: 'vault', ObjectLockEnabledForBucket: true }));
    const until = new Date(Date.now() + dayMs);
    const versions = {
      governed: (await s3.send(new PutObjectCommand({ Bucket: 'vault', Key: 'governed', Body: 'governed', ObjectLockMode: 'GOVERNANCE', ObjectLockRetainUntilDate: until }))).VersionId!,
      complied: (await s3.send(new PutObjectCommand({ Bucket: 'vault', Key: 'complied', Body: 'complied', ObjectLockMode: 'COMPLIANCE', ObjectLockRetainUntilDate: until }))).VersionId!,
      held: (await s3.send(new PutObjectCommand({ Bucket: 'vault', Key: 'held', Body: 'held', ObjectLockLegalHoldStatus: 'ON' }))).VersionId!,
    };
    await s3.send(new PutObjectCommand({ Bucket: 'vault', Key: 'governed', Body: 'newer, unlocked' }));

    await server.stop();
    server = await startSvc({ args: [pool0, pool1], env });
    s3 = s3ClientFor(server.url);
    const started = await admin(server.url, 'POST', '/svc/admin/v3/pools/decommission', q({ pool: pool0 }));
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const deadline = Date.now() + 60_000;
    let entry: Record<string, any> | undefined;
    while (!['completed', 'failed'].includes(entry?.state)) {
      if (Date.now() > deadline) throw new Error(`decommission did not finish: ${JSON.stringify(entry)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      entry = (await admin(server.url, 'GET', '/svc/admin/v3/decommission/status', q({ pool: pool0 }))).body.entries?.[0];
    }
    expect(entry!.state, JSON.stringify(entry)).toBe('completed');
    expect(await xlMetaCount(join(root, 'p0'), 'vault')).toBe(0);
    expect(await xlMetaCount(join(root, 'p1'), 'vault')).toBe(3 * 4);

    for (const [key, VersionId] of [['governed', versions.governed], ['complied', versions.complied]] as const) {
      const retention = (await s3.send(new GetObjectRetentionCommand({ Bucket: 'vault', Key: key, VersionId }))).Retention;
      expect([key, retention?.Mode, retention?.RetainUntilDate?.getTime()]).toEqual([key, key === 'governed' ? 'GOVERNANCE' : 'COMPLIANCE', until.getTime()]);
    }
    expect((await s3.send(new GetObjectLegalHoldCommand({ Bucket: 'vault', Key: 'held', VersionId: versions.held }))).LegalHold?.Status).toBe('ON');
    for (const [key, VersionId] of Object.entries(versions)) {
      expect([key, await failure(s3.send(new DeleteObjectCommand({ Bucket: 'vault', Key: key, VersionId })))]).toEqual([key, 'AccessDenied']);
      const body = await (await s3.send(new GetObjectCommand({ Bucket: 'vault', Key: key, VersionId }))).Body!.transformToString();
      expect(body).toBe(key);
    }
  }, 120_000);
});

describe('a rebalance moves locked versions with their locks', () => {
  let small: TestSet;
  let large: TestSet;

  afterAll(async () => {
    await small?.cleanup();
    await large?.cleanup();
  });

  it('the full pool sheds its locked versions to the empty one, locks intact, and the object layer still refuses to delete them', async () => {
    small = await makeTestSet({ drives: 4, parity: 2, capacityBytes: 4 * MiB });
    large = await makeTestSet({ drives: 4, parity: 2, capacityBytes: 1024 * MiB });
    let toPool = 0;
    const objects = new ObjectLayer({
      deploymentId: '00000000-0000-4000-8000-000000000000',
      pools: [{ index: 0, sets: [small.set] }, { index: 1, sets: [large.set] }],
      clock: { nowMs: () => Date.now() },
      // Everything written before the rebalance goes to pool 0.
      random: () => (toPool === 0 ? 0 : 0.999),
    });
    await objects.makeBucket('vault', { objectLock: true });
    const until = new Date(Date.now() + dayMs).toISOString();
    const body = (text: string) => (async function* () { yield Buffer.from(text); })();
    const written = new Map<string, { versionId: string; systemMetadata: Record<string, string> }>();
    for (let index = 0; index < 12; index += 1) {
      const key = `locked-${index}`;
      const lock: Record<string, string> = index % 3 === 0 ? { [legalHoldKey]: 'ON' } : { [lockModeKey]: index % 3 === 1 ? 'GOVERNANCE' : 'COMPLIANCE', [lockRetainUntilKey]: until };
      const info = await objects.putObject('vault', key, body(`${key} `.repeat(12_000)), { storageClass: 'STANDARD', systemMetadata: lock });
      written.set(key, { versionId: info.versionId, systemMetadata: info.systemMetadata });
    }
    let keysInPool0 = 0;
    for await (const _entry of objects.listPool(0, 'vault')) keysInPool0 += 1;
    expect(keysInPool0).toBe(12);

    toPool = 1;
    const logger = { info: () => undefined, warn: () => undefined };
    const manager = new RebalanceManager({
      objects,
      poolCount: 2,
      legacy: false,
      store: new StateStore<RebalanceDocument>({ name: 'rebalance.bin', magic: 'SVRB', drives: () => objects.allSets().flatMap((set) => set.drives), validate: validateRebalance, quarantine: new StateFileQuarantine({ warn: () => undefined }) }),
      leader: true,
      maxAttempts: 1,
      nowMs: () => Date.now(),
      logger,
      peers: { announce: async () => [] },
      decommissionUnfinished: () => false,
    });
    await manager.start();
    const deadline = Date.now() + 30_000;
    while (manager.isRunning()) {
      if (Date.now() > deadline) throw new Error(`rebalance did not finish: ${JSON.stringify(manager.status())}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const pools = manager.status().pools;
    expect(pools.map((pool) => [pool.status, pool.lastError, pool.cleanupWarnings])).toEqual([['completed', '', []], ['completed', '', []]]);
    expect(pools[0]!.progress.versions).toBeGreaterThan(0);

    let moved = 0;
    for await (const { key, versions } of objects.listPool(1, 'vault')) {
      moved += 1;
      const expected = written.get(key)!;
      expect([key, versions.map((version) => [version.versionId, version.systemMetadata])]).toEqual([key, [[expected.versionId, expected.systemMetadata]]]);
      expect(isVersionLocked(versions[0]!, Date.now())).toBe(true);
      expect([key, await failure(objects.deleteObject('vault', key, expected.versionId))]).toEqual([key, 'AccessDenied']);
    }
    expect(moved).toBe(pools[0]!.progress.objects);
    // What stayed behind is just as locked.
    for await (const { key } of objects.listPool(0, 'vault')) {
      const governed = written.get(key)!.systemMetadata[lockModeKey] === 'GOVERNANCE';
      expect([key, await failure(objects.deleteObject('vault', key, written.get(key)!.versionId, { bypassGovernance: true }))]).toEqual([key, governed ? 'ok' : 'AccessDenied']);
    }
  }, 60_000);
});
