import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { s3ClientFor } from './helpers/server-process.js';
import { startProcessCluster, type ProcessCluster } from './helpers/process-cluster.js';

let cluster: ProcessCluster;

beforeAll(async () => {
  cluster = await startProcessCluster({ nodes: 4, drivesPerNode: 4 });
}, 120_000);
afterAll(async () => {
  await cluster?.destroy();
});

async function failure(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'no error';
  } catch (error) {
    return (error as { name: string }).name;
  }
}

async function read(url: string, key: string): Promise<string> {
  const object = await s3ClientFor(url).send(new GetObjectCommand({ Bucket: 'shared', Key: key }));
  return object.Body!.transformToString();
}

describe('process cluster: 4 nodes x 4 drives, one set of 16 (EC:4)', () => {
  it('writes through one node read identically from every other', async () => {
    try {
      const first = s3ClientFor(cluster.urls[0]!);
      await first.send(new CreateBucketCommand({ Bucket: 'shared' }));
      const body = 'x'.repeat(3 * 1024 * 1024 + 7);
      await first.send(new PutObjectCommand({ Bucket: 'shared', Key: 'everywhere', Body: body }));
      for (const url of cluster.urls.slice(1)) expect(await read(url, 'everywhere')).toBe(body);
    } catch (error) {
      console.error(cluster.logs());
      throw error;
    }
  });

  it('with one node killed reads and writes succeed; with two, both fail closed; returning nodes rejoin', async () => {
    try {
      await cluster.kill(3);
      const second = s3ClientFor(cluster.urls[1]!);
      await second.send(new PutObjectCommand({ Bucket: 'shared', Key: 'degraded', Body: 'written with a node down' }));
      expect(await read(cluster.urls[0]!, 'everywhere')).toHaveLength(3 * 1024 * 1024 + 7);
      await cluster.kill(2);
      expect(await failure(second.send(new PutObjectCommand({ Bucket: 'shared', Key: 'too-few', Body: 'x'.repeat(300_000) })))).toBe('ErasureWriteQuorum');
      expect(await failure(second.send(new GetObjectCommand({ Bucket: 'shared', Key: 'everywhere' })))).toBe('ErasureReadQuorum');
      await cluster.start(2);
      await cluster.start(3);
      expect(await read(cluster.urls[3]!, 'degraded')).toBe('written with a node down');
      expect(await failure(s3ClientFor(cluster.urls[2]!).send(new GetObjectCommand({ Bucket: 'shared', Key: 'too-few' })))).toBe('NoSuchKey');
    } catch (error) {
      console.error(cluster.logs());
      throw error;
    }
  });
});

describe('launch arguments are verified between nodes', () => {
  it('a node started with different settings is refused by its peers with a clear error', async () => {
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { freePort, startSvc } = await import('./helpers/server-process.js');
    const root = await mkdtemp(join(tmpdir(), 'svc-mismatch-'));
    const port = await freePort('127.0.0.2');
    const args = [`http://127.0.0.{2...3}:${port}/data{1...2}`];
    const first = await startSvc({ args, host: '127.0.0.2', port, waitReady: false, env: { SVC_DRIVE_ROOT: join(root, 'n1'), SVC_CONSOLE_ENABLE: 'false' } });
    const second = await startSvc({ args, host: '127.0.0.3', port, waitReady: false, env: { SVC_DRIVE_ROOT: join(root, 'n2'), SVC_CONSOLE_ENABLE: 'false', SVC_STORAGE_CLASS_STANDARD: 'EC:1' } });
    try {
      const code = await Promise.race([second.exited, new Promise((resolve) => setTimeout(() => resolve('timeout'), 60_000))]);
      expect(code, `${second.logs()}\n--- first\n${first.logs()}`).not.toBe('timeout');
      expect(code).not.toBe(0);
      expect(second.logs()).toContain('launch arguments');
      expect(first.logs()).toContain('waiting for format quorum');
    } finally {
      await first.kill();
      await second.kill();
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('process cluster: concurrent writers', () => {
  it('two clients writing one key through different nodes leave one whole write, never a mix', async () => {
    try {
      const a = Buffer.alloc(2 * 1024 * 1024 + 3, 'a');
      const b = Buffer.alloc(2 * 1024 * 1024 + 3, 'b');
      for (let round = 0; round < 3; round += 1) {
        await Promise.all([
          s3ClientFor(cluster.urls[0]!).send(new PutObjectCommand({ Bucket: 'shared', Key: 'contended', Body: a })),
          s3ClientFor(cluster.urls[1]!).send(new PutObjectCommand({ Bucket: 'shared', Key: 'contended', Body: b })),
        ]);
        const results = await Promise.all(cluster.urls.map((url) => read(url, 'contended')));
        expect(new Set(results).size).toBe(1);
        expect([a.toString(), b.toString()]).toContain(results[0]);
      }
    } catch (error) {
      console.error(cluster.logs());
      throw error;
    }
  });
});
