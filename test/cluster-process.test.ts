import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Readable } from 'node:stream';
import { CreateBucketCommand, GetObjectCommand, PutBucketVersioningCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { s3ClientFor } from './helpers/server-process.js';
import { startProcessCluster, type ProcessCluster } from './helpers/process-cluster.js';
import { withClusterLogs } from './helpers/cluster.js';
import { errorName, killNodesAndRejoin, readText, scenarioBucket, writeThroughOneReadFromEvery } from './scenarios/node-failure.js';
import { limits } from '../src/util/limits.js';

let cluster: ProcessCluster;

beforeAll(async () => {
  cluster = await startProcessCluster({ nodes: 4, drivesPerNode: 4 });
}, 120_000);
afterAll(async () => {
  await cluster?.destroy();
});

describe('process cluster: 4 nodes x 4 drives, one set of 16 (EC:4)', () => {
  it('writes through one node read identically from every other', () => writeThroughOneReadFromEvery(cluster));
  it('with one node killed reads and writes succeed; with two, both fail closed; returning nodes rejoin', () => killNodesAndRejoin(cluster));
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
      // The node holding the first endpoint stays up and says why it waits.
      const deadline = Date.now() + 15_000;
      while (!first.logs().includes('waiting for format quorum') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(first.logs()).toContain('waiting for format quorum');
      expect(first.child.exitCode).toBeNull();
    } finally {
      await first.kill();
      await second.kill();
      await rm(root, { recursive: true, force: true });
    }
  }, 90_000);
});

describe('process cluster: concurrent writers', () => {
  it('two clients writing one key through different nodes leave one whole write, never a mix', () =>
    withClusterLogs(cluster, async () => {
      const a = Buffer.alloc(2 * 1024 * 1024 + 3, 'a');
      const b = Buffer.alloc(2 * 1024 * 1024 + 3, 'b');
      for (let round = 0; round < 3; round += 1) {
        await Promise.all([
          s3ClientFor(cluster.urls[0]!).send(new PutObjectCommand({ Bucket: scenarioBucket, Key: 'contended', Body: a })),
          s3ClientFor(cluster.urls[1]!).send(new PutObjectCommand({ Bucket: scenarioBucket, Key: 'contended', Body: b })),
        ]);
        const results = await Promise.all(cluster.urls.map((url) => readText(url, 'contended')));
        expect(new Set(results).size).toBe(1);
        expect([a.toString(), b.toString()]).toContain(results[0]);
      }
    }));

  it('a bucket change made through one node is seen at once by the others', () =>
    withClusterLogs(cluster, async () => {
      const first = s3ClientFor(cluster.urls[0]!);
      const second = s3ClientFor(cluster.urls[1]!);
      await first.send(new CreateBucketCommand({ Bucket: 'flip' }));
      await second.send(new PutObjectCommand({ Bucket: 'flip', Key: 'k', Body: 'unversioned' })); // node 2 caches the record
      await first.send(new PutBucketVersioningCommand({ Bucket: 'flip', VersioningConfiguration: { Status: 'Enabled' } }));
      const written = await second.send(new PutObjectCommand({ Bucket: 'flip', Key: 'k', Body: 'versioned' }));
      expect(written.VersionId).toMatch(/^[0-9a-f-]{36}$/);
    }));

  it('a lock holder killed mid-operation releases its lock after expiry', () =>
    withClusterLogs(cluster, async () => {
      // A GET through node 4 holds the object's read lock while its body streams; the client stops
      // reading, so the stream (and the lock) stays open until node 4 is killed.
      const size = 24 * 1024 * 1024;
      await s3ClientFor(cluster.urls[0]!).send(new PutObjectCommand({ Bucket: scenarioBucket, Key: 'held', Body: Buffer.alloc(size, 'h') }));
      const reading = await s3ClientFor(cluster.urls[3]!).send(new GetObjectCommand({ Bucket: scenarioBucket, Key: 'held' }));
      const body = reading.Body as Readable;
      body.on('error', () => undefined);
      await new Promise((resolve) => body.once('data', resolve));
      body.pause();
      await cluster.kill(3);
      const started = Date.now();
      const overwrite = () => s3ClientFor(cluster.urls[0]!).send(new PutObjectCommand({ Bucket: scenarioBucket, Key: 'held', Body: 'after the holder died' }));
      // The dead holder's grants still stand on the live lock servers: the writer cannot get a majority.
      expect(await errorName(overwrite())).toBe('SlowDown');
      let outcome = 'SlowDown';
      while (outcome === 'SlowDown' && Date.now() - started < limits.lockExpiryMs + 30_000) outcome = await errorName(overwrite());
      expect(outcome).toBe('no error');
      expect(Date.now() - started).toBeLessThan(limits.lockExpiryMs + 30_000);
      expect(await readText(cluster.urls[1]!, 'held')).toBe('after the holder died');
      await cluster.start(3);
    }), 120_000);
});

