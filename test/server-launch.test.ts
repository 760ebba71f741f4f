import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cp, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { freePort, repoRoot, s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';
import { limits } from '../src/util/limits.js';
import { decodeFormatJson } from '../src/format/format-json.js';

let root: string;
const running: SvcProcess[] = [];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-launch-'));
});
afterEach(async (context) => {
  for (const server of running.splice(0)) {
    if (context.task.result?.state === 'fail') console.error(server.logs());
    await server.kill();
  }
  await rm(root, { recursive: true, force: true });
});

async function start(args: string[], env: Record<string, string> = {}): Promise<SvcProcess> {
  const server = await startSvc({ args, env });
  running.push(server);
  return server;
}

/** Runs a server that is expected to refuse to start; returns its exit code and output. */
async function refused(args: string[], env: Record<string, string> = {}, port?: number): Promise<{ code: number | null; logs: string }> {
  const server = await startSvc({ args, env, waitReady: false, ...(port !== undefined ? { port } : {}) });
  running.push(server);
  const code = await Promise.race([server.exited, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 20_000))]);
  expect(code, server.logs()).not.toBe('timeout');
  return { code: code as number | null, logs: server.logs() };
}

async function formatBytes(drives: string[]): Promise<string[]> {
  return Promise.all(drives.map((drive) => readFile(join(drive, '.svc.sys/format.json'), 'utf8')));
}

async function putSome(url: string, bucket: string, keys: string[]): Promise<void> {
  const s3 = s3ClientFor(url);
  await s3.send(new CreateBucketCommand({ Bucket: bucket })).catch((error: { name?: string }) => {
    if (error.name !== 'BucketAlreadyOwnedByYou') throw error;
  });
  for (const key of keys) await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: `content of ${key}`.repeat(key.length * 1000) }));
}

async function readBack(url: string, bucket: string, keys: string[]): Promise<void> {
  const s3 = s3ClientFor(url);
  for (const key of keys) {
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    expect(await object.Body!.transformToString()).toBe(`content of ${key}`.repeat(key.length * 1000));
  }
}

/** How many libuv pool threads process `pid` runs (Linux names them libuv-worker). */
async function libuvThreads(pid: number): Promise<number> {
  const tasks = await readdir(`/proc/${pid}/task`);
  const names = await Promise.all(tasks.map((task) => readFile(`/proc/${pid}/task/${task}/comm`, 'utf8').catch(() => '')));
  return names.filter((name) => name.trim() === 'libuv-worker').length;
}

describe('svc server launch and restart', () => {
  // What `npm start` and the container image run: the build (npm install makes it). Run from
  // sources through tsx, the loader starts the pool first, so the harness passes the size itself.
  const built = existsSync(join(repoRoot, 'dist/src/cli/svc.js'));
  it.runIf(process.platform === 'linux' && built)('sizes the file-system thread pool to limits.ioThreadsDefault, unless UV_THREADPOOL_SIZE is given', async () => {
    const sized = await startSvc({ args: [join(root, 'a{1...4}')], entry: 'build' });
    running.push(sized);
    await putSome(sized.url, 'pool', ['k']);
    expect(await libuvThreads(sized.child.pid!)).toBe(limits.ioThreadsDefault);
    const given = await startSvc({ args: [join(root, 'b{1...4}')], entry: 'build', env: { UV_THREADPOOL_SIZE: '6' } });
    running.push(given);
    await putSome(given.url, 'pool', ['k']);
    expect(await libuvThreads(given.child.pid!)).toBe(6);
  });

  it('restarts with the same arguments and reads every object back', async () => {
    const pattern = join(root, 'd{1...8}');
    const first = await start([pattern]);
    const keys = ['a', 'b/c', 'big-object-key-name'];
    await putSome(first.url, 'bucket', keys);
    expect(await first.stop()).toBe(0);
    expect(first.logs()).toContain('stopped cleanly');
    const drives = Array.from({ length: 8 }, (_, index) => join(root, `d${index + 1}`));
    for (const drive of drives) expect(existsSync(join(drive, '.svc.sys/unclean-shutdown'))).toBe(false);
    const second = await start([pattern]);
    await readBack(second.url, 'bucket', keys);
    expect(second.logs()).not.toContain('last shutdown was unclean');
  });

  it('refuses a different drive count or set width with PoolTopologyMismatch and leaves format.json untouched', async () => {
    const drives = Array.from({ length: 8 }, (_, index) => join(root, `d${index + 1}`));
    const first = await start([join(root, 'd{1...8}')]);
    await first.stop();
    const before = await formatBytes(drives);
    const narrower = await refused([join(root, 'd{1...8}')], { SVC_ERASURE_SET_DRIVE_COUNT: '4' });
    expect(narrower.code).not.toBe(0);
    expect(narrower.logs).toContain('PoolTopologyMismatch');
    const fewer = await refused([join(root, 'd{1...6}')]);
    expect(fewer.code).not.toBe(0);
    expect(fewer.logs).toContain('PoolTopologyMismatch');
    expect(await formatBytes(drives)).toEqual(before);
    expect(decodeFormatJson(Buffer.from(before[0]!)).sets[0]!.length).toBe(8);
  });

  it('refuses to turn a single-drive deployment into a pool with UnsupportedSnsdExpansion', async () => {
    const single = await start([join(root, 'd1')]);
    await putSome(single.url, 'bucket', ['k']);
    await single.stop();
    const before = await formatBytes([join(root, 'd1')]);
    const widened = await refused([join(root, 'd{1...4}')]);
    expect(widened.code).not.toBe(0);
    expect(widened.logs).toContain('UnsupportedSnsdExpansion');
    expect(await formatBytes([join(root, 'd1')])).toEqual(before);
  });

  it('an invalid storage class stops startup before any disk is touched', async () => {
    for (const env of [{ SVC_STORAGE_CLASS_STANDARD: 'EC:3' } as Record<string, string>, { SVC_STORAGE_CLASS_STANDARD: 'EC:1', SVC_STORAGE_CLASS_RRS: 'EC:2' }, { SVC_STORAGE_CLASS_RRS: 'EC2' }]) {
      const result = await refused([join(root, 'fresh{1...4}')], env);
      expect(result.code).not.toBe(0);
      expect(result.logs).toContain('InvalidConfiguration');
      expect((await readdir(root)).filter((name) => name.startsWith('fresh'))).toEqual([]);
    }
  });

  it('rejects invalid layouts naming the rule, before touching a disk', async () => {
    const cases: [string[], string][] = [
      [[join(root, 'a{1...4}'), join(root, 'b')], 'multi-pool-needs-ellipsis'],
      [[join(root, 'a{3...3}')], 'min-two-drives'],
      [[join(root, 'a{1...17}')], 'no-valid-set-width'],
      [[join(root, 'a{1...4}'), join(root, 'a{4...7}')], 'duplicate-endpoint'],
    ];
    for (const [args, rule] of cases) {
      const result = await refused(args);
      expect(result.code).not.toBe(0);
      expect(result.logs).toContain(rule);
      expect(await readdir(root)).toEqual([]);
    }
  });

  it('refuses a single remote endpoint: a single local path is the only single-drive layout', async () => {
    const port = await freePort();
    const result = await refused([`http://127.0.0.1:${port}${join(root, 'remote')}`], {}, port);
    expect(result.code).not.toBe(0);
    expect(result.logs).toContain('InvalidLayout');
    expect(result.logs).toContain('single-drive-needs-local-path');
    expect(await readdir(root)).toEqual([]);
  });

  it('logs an unclean last shutdown after SIGKILL, and a clean one after SIGTERM', async () => {
    const pattern = join(root, 'd{1...4}');
    const first = await start([pattern]);
    // Logged in the turn that makes the node ready; its output comes through a pipe.
    await vi.waitFor(() => expect(first.logs()).toContain('host_failure_data_unavailable'), { timeout: 10_000, interval: 50 });
    await putSome(first.url, 'bucket', ['survivor']);
    await first.kill();
    const second = await start([pattern]);
    expect(second.logs()).toContain('last shutdown was unclean');
    await readBack(second.url, 'bucket', ['survivor']);
    await second.stop();
    const third = await start([pattern], { SVC_OBS_LOG_DIRECTORY: join(root, 'logs') });
    await third.stop();
    expect(third.logs()).not.toContain('last shutdown was unclean');
    expect(await readFile(join(root, 'logs', 'svc.log'), 'utf8')).toContain('stopped cleanly');
  });

  it('refuses a drive whose format.json claims another slot (a copied directory) and serves from the rest', async () => {
    const pattern = join(root, 'd{1...4}');
    const first = await start([pattern]);
    await putSome(first.url, 'bucket', ['kept']);
    await first.stop();
    await rm(join(root, 'd2'), { recursive: true });
    await cp(join(root, 'd1'), join(root, 'd2'), { recursive: true });
    const second = await start([pattern]);
    expect(second.logs()).toContain('claims an identity this slot does not expect');
    await readBack(second.url, 'bucket', ['kept']);
  });

  it('a second server on the same paths is refused', async () => {
    await start([join(root, 'd{1...4}')]);
    const second = await refused([join(root, 'd{1...4}')]);
    expect(second.code).not.toBe(0);
    expect(second.logs).toContain('already owned by process');
  });

  it('appending a pool keeps old objects in pool 0 and spreads new ones by free space', async () => {
    const pool0 = join(root, 'p0d{1...4}');
    const pool1 = join(root, 'p1d{1...4}');
    const first = await start([pool0]);
    const oldKeys = Array.from({ length: 5 }, (_, index) => `old-${index}`);
    await putSome(first.url, 'bucket', oldKeys);
    await first.stop();
    const expanded = await start([pool0, pool1]);
    await readBack(expanded.url, 'bucket', oldKeys);
    const newKeys = Array.from({ length: 24 }, (_, index) => `new-${index}`);
    await putSome(expanded.url, 'bucket', newKeys);
    const inPool = async (pool: string, key: string): Promise<boolean> => existsSync(join(root, `${pool}d1`, 'bucket', key, 'xl.meta'));
    for (const key of oldKeys) expect(await inPool('p0', key)).toBe(true);
    const placed = await Promise.all(newKeys.map((key) => inPool('p1', key)));
    expect(placed.filter(Boolean).length).toBeGreaterThan(0);
    expect(placed.filter((inPool1) => !inPool1).length).toBeGreaterThan(0);
    const listed = await s3ClientFor(expanded.url).send(new ListObjectsV2Command({ Bucket: 'bucket' }));
    expect(listed.KeyCount).toBe(oldKeys.length + newKeys.length);
  });
});
