/** The admin heal API, read-repair, drive replacement and crash recovery on a real server with four drives. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { admin } from './helpers/admin-client.js';
import { errorName } from './scenarios/node-failure.js';
import { decodeXlMeta } from '../src/format/xl-meta.js';
import { WriteChecker } from '../conformance/chaos/checker.js';
import { createPrng } from '../src/util/prng.js';

let root: string;
let server: SvcProcess | undefined;
const env = { SVC_CONSOLE_ENABLE: 'false' };
const drive = (slot: number) => join(root, `d${slot + 1}`);
const md5 = (bytes: Uint8Array | string) => createHash('md5').update(bytes).digest('hex');
const written = new Map<string, string>();

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-heal-'));
  await restart();
  const s3 = s3ClientFor(server!.url);
  await s3.send(new CreateBucketCommand({ Bucket: 'photos' }));
  for (let index = 0; index < 40; index += 1) {
    const body = index % 5 === 0 ? Buffer.alloc(1024 * 1024 + index, index) : `small photo ${index} `.repeat(20);
    await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: `2026/p${index}`, Body: body }));
    written.set(`2026/p${index}`, md5(body));
  }
}, 120_000);
afterAll(async () => {
  await server?.kill();
  await rm(root, { recursive: true, force: true });
});

async function restart(kill = false): Promise<S3Client> {
  await (kill ? server?.kill() : server?.stop());
  server = await startSvc({ args: [join(root, 'd{1...4}')], env });
  return s3ClientFor(server.url);
}

const healCall = (path: string, body: unknown, query = '') => admin(server!.url, 'POST', `/svc/admin/v3/heal/${path}`, query, { body: body === undefined ? undefined : JSON.stringify(body) });

async function waitForHeal(path: string, token: string): Promise<Record<string, any>> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const answer = await healCall(path, undefined, `clientToken=${token}`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    if (answer.body.status !== 'running') return answer.body;
    if (Date.now() > deadline) throw new Error(`heal ${token} still running`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function xlMetaCount(directory: string): Promise<number> {
  let count = 0;
  for (const entry of await readdir(directory, { withFileTypes: true, recursive: true }).catch(() => [])) if (entry.isFile() && entry.name === 'xl.meta' && !entry.parentPath.includes('.svc.sys')) count += 1;
  return count;
}

async function expectAllReadable(s3: S3Client): Promise<void> {
  for (const [key, digest] of written) {
    const object = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: key }));
    expect(md5(await object.Body!.transformToByteArray()), key).toBe(digest);
  }
}

describe('admin heal', () => {
  it('refuses every request the heal rules reject, and changes nothing', async () => {
    const cases: [string, unknown, string, string][] = [
      ['', {}, '', 'InvalidArgument'], // root heal without recursive or pool+set
      ['', { pool: 0 }, '', 'InvalidArgument'], // pool without set
      ['', { pool: 0, set: 3 }, '', 'InvalidArgument'], // no such set
      ['', { pool: 4, set: 0 }, '', 'NoSuchPool'],
      ['photos', { readRepair: true }, '', 'InvalidArgument'],
      ['photos', { scanMode: 'quick' }, '', 'InvalidArgument'],
      ['photos', { recursive: 'yes' }, '', 'InvalidArgument'],
      ['photos', { surprise: true }, '', 'InvalidArgument'],
      ['photos', {}, 'forceStart=true&forceStop=true', 'InvalidArgument'],
      ['photos', {}, 'forceStop=true', 'InvalidArgument'],
      ['photos', {}, 'clientToken=no-such-token', 'NoSuchHealSequence'],
      ['photos', {}, 'verbose=true', 'InvalidQueryParameter'],
      ['photos', {}, 'forceStart=maybe', 'InvalidArgument'],
      ['no-such-bucket', {}, '', 'NoSuchBucket'],
    ];
    for (const [path, body, query, code] of cases) {
      const answer = await healCall(path, body, query);
      expect([path, JSON.stringify(body), query, answer.body.Code]).toEqual([path, JSON.stringify(body), query, code]);
    }
    const malformed = await admin(server!.url, 'POST', '/svc/admin/v3/heal/photos', '', { body: '{not json' });
    expect(malformed.body.Code).toBe('InvalidArgument');
    // nolock is accepted (and forced off); a token cannot be used for another path.
    const started = await healCall('photos', { nolock: true });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const other = await healCall('photos/2026', {}, `clientToken=${started.body.clientToken}`);
    expect(other.body.Code).toBe('InvalidArgument');
    await waitForHeal('photos', started.body.clientToken);
  });

  it('rebuilds a wiped drive and answers a deep scan clean afterwards', async () => {
    await rm(join(drive(1), 'photos'), { recursive: true, force: true });
    const started = await healCall('photos', { scanMode: 'normal' });
    expect(started.status).toBe(200);
    const done = await waitForHeal('photos', started.body.clientToken);
    expect(done.status).toBe('finished');
    expect(done.counts.objectsHealed).toBe(written.size);
    const item = done.items.find((candidate: any) => candidate.object === '2026/p1');
    expect(item.before.map((slot: any) => slot.state)).toEqual(['ok', 'missing', 'ok', 'ok']);
    expect(item.after.map((slot: any) => slot.state)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(await xlMetaCount(drive(1))).toBe(written.size);

    const deep = await healCall('photos', { scanMode: 'deep', dryRun: true });
    const checked = await waitForHeal('photos', deep.body.clientToken);
    expect(checked.counts).toMatchObject({ objectsScanned: written.size, objectsHealed: 0, objectsUnrecoverable: 0, failures: 0 });
    expect(checked.items.every((entry: any) => entry.outcome === 'healthy')).toBe(true);
  });

  it('read-repair: a read that meets a corrupt shard returns the right bytes and queues the object for repair', async () => {
    const key = '2026/p5'; // 1 MiB: shard files on every drive
    // Corrupt the drive holding data shard 1, which every read of the object uses.
    let slot = 0;
    while (decodeXlMeta(await readFile(join(drive(slot), 'photos', '2026', 'p5', 'xl.meta'))).versions[0]!.erasure!.index !== 1) slot += 1;
    const dir = join(drive(slot), 'photos', '2026', 'p5');
    const dataDir = (await readdir(dir)).find((name) => name !== 'xl.meta')!;
    const part = join(dir, dataDir, 'part.1');
    const bytes = await readFile(part);
    bytes[100] = bytes[100]! ^ 0xff;
    await writeFile(part, bytes);
    const s3 = s3ClientFor(server!.url);
    const object = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key: key }));
    expect(md5(await object.Body!.transformToByteArray())).toBe(written.get(key));
    // The MRF queue repairs it in the background: a deep scan of the object soon finds it healthy.
    const deadline = Date.now() + 20_000;
    let outcome = '';
    while (outcome !== 'healthy' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const check = await healCall('photos/2026/p5', { scanMode: 'deep', dryRun: true });
      outcome = (await waitForHeal('photos/2026/p5', check.body.clientToken)).items[0]?.outcome ?? '';
    }
    expect(outcome).toBe('healthy');
    expect((await readFile(part).catch(() => undefined))?.equals(bytes) ?? false).toBe(false);
    const status = await admin(server!.url, 'POST', '/svc/admin/v3/background-heal/status');
    expect(status.body.mrf.processed).toBeGreaterThanOrEqual(1);
  });

  it('a replaced (empty) drive stays offline until its set is healed, then replacement recovery reports it completed', async () => {
    await server!.stop();
    const format = JSON.parse(await readFile(join(drive(3), '.svc.sys', 'format.json'), 'utf8')) as { driveId: string };
    await rm(drive(3), { recursive: true, force: true });
    await mkdir(drive(3));
    const s3 = await restart();
    expect(server!.logs()).toContain('replaced drive found');
    const deadline = Date.now() + 60_000;
    let report: Record<string, any> = {};
    while (Date.now() < deadline) {
      report = (await admin(server!.url, 'GET', '/svc/admin/v4/heal/replacement-recovery')).body;
      if (report.instances?.[0]?.completed) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(report.instances).toHaveLength(1);
    expect(report.instances[0]).toMatchObject({ pool: 0, set: 0, slot: 3, driveId: format.driveId, completed: true, objectsFailed: 0 });
    const healed = JSON.parse(await readFile(join(drive(3), '.svc.sys', 'format.json'), 'utf8')) as { driveId: string };
    expect(healed.driveId).toBe(format.driveId);
    expect(await xlMetaCount(drive(3))).toBe(written.size);
    await expectAllReadable(s3);
  });

  it('after an unclean shutdown every local set is healed; acknowledged writes read back, others are whole or absent', async () => {
    const s3 = s3ClientFor(server!.url);
    const checker = new WriteChecker('photos');
    const prng = createPrng(17);
    const writes: Promise<void>[] = [];
    for (let index = 0; index < 60; index += 1) {
      writes.push(checker.put(s3, `crash/k${index}`, prng));
      if (index === 30) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await new Promise((resolve) => setTimeout(resolve, 30));
    const reopened = await restart(true); // SIGKILL mid-traffic
    await Promise.all(writes);
    expect(server!.logs()).toContain('the last shutdown was unclean');
    expect(server!.logs()).toMatch(/background erasure-set heal started.*unclean-0-0|unclean-0-0.*background erasure-set heal started/);
    // Acknowledged writes read back identical; unacknowledged ones are whole or absent.
    expect(await checker.verify(reopened)).toEqual([]);
  });

  it('a root heal running at SIGTERM resumes with the same task id; a corrupted record is quarantined', async () => {
    const s3 = s3ClientFor(server!.url);
    await s3.send(new CreateBucketCommand({ Bucket: 'bulk' }));
    for (let start = 0; start < 600; start += 30) {
      await Promise.all(Array.from({ length: 30 }, (_, offset) => s3.send(new PutObjectCommand({ Bucket: 'bulk', Key: `b${start + offset}`, Body: `bulk ${start + offset}` }))));
    }
    const started = await healCall('', { recursive: true, scanMode: 'deep' });
    expect(started.status).toBe(200);
    const token = started.body.clientToken as string;
    await writeFile(join(drive(0), '.svc.sys', 'root-heal-broken.json'), '{"version": 1, "clientToken": 12');
    await restart(); // SIGTERM while the root heal runs
    expect(server!.logs()).toMatch(/state file root-heal-broken\.json refused \(CorruptFormat: .*\) and quarantined/);
    const quarantined = await readdir(join(drive(0), '.svc.sys', 'quarantine'));
    expect(quarantined.filter((name) => /^root-heal-broken\.json\.\d+$/.test(name))).toHaveLength(1);
    expect(server!.logs()).toContain('resuming the root heal saved at the last shutdown');
    const status = await healCall('', undefined, `clientToken=${token}`);
    expect(status.status, JSON.stringify(status.body)).toBe(200);
    expect(status.body.clientToken).toBe(token);
    expect((await waitForHeal('', token)).status).toBe('finished');
    expect(await errorName(s3ClientFor(server!.url).send(new GetObjectCommand({ Bucket: 'photos', Key: '2026/p0' })))).toBe('no error');
  });
});

describe('heal options that rewrite', () => {
  it('recreate rewrites every copy; updateParity rewrites objects with the parity now configured', async () => {
    const recreate = await healCall('photos', { recreate: true });
    const recreated = await waitForHeal('photos', recreate.body.clientToken);
    expect(recreated.status).toBe('finished');
    expect(recreated.counts.shardsHealed).toBeGreaterThanOrEqual(written.size * 4);

    // New writes would use EC:1 now; heal with updateParity brings the old objects to it.
    await server!.stop();
    server = await startSvc({ args: [join(root, 'd{1...4}')], env: { ...env, SVC_STORAGE_CLASS_STANDARD: 'EC:1' } });
    const parityOf = async (key: string) => decodeXlMeta(await readFile(join(drive(0), 'photos', ...key.split('/'), 'xl.meta'))).versions[0]!.erasure!.parityShards;
    expect(await parityOf('2026/p10')).toBe(2);
    const update = await healCall('photos', { updateParity: true });
    expect((await waitForHeal('photos', update.body.clientToken)).status).toBe('finished');
    expect(await parityOf('2026/p10')).toBe(1);
    expect(await parityOf('2026/p0')).toBe(1);
    await expectAllReadable(s3ClientFor(server!.url));
  });
});
