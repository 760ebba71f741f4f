/**
 * A move between pools (rebalance, decommission) copies a key to its target, then removes it from
 * its source; a crash or power cut in between leaves the key in both pools. The copy left behind
 * must never read back once a delete has been acknowledged (the power-cut chaos scenario found
 * this: an unversioned DELETE removed the newer copy only, and the older one read back).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { CreateBucketCommand, DeleteObjectCommand, GetObjectCommand, PutBucketVersioningCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startServer, type RunningServer } from '../src/main.js';
import type { BucketVersioning } from '../src/object/index.js';

let server: RunningServer;
let s3: S3Client;

beforeAll(async () => {
  const env = { SVC_ADDRESS: '127.0.0.1:0', SVC_CONSOLE_ENABLE: 'false', SVC_DRIVE_BACKEND: 'memfs', SVC_ACCESS_KEY: 'leftbehind', SVC_SECRET_KEY: 'leftbehind-secret', SVC_CODING_THREADS: '0' };
  server = await startServer(['/left/p0/d{1...4}', '/left/p1/d{1...4}'], env, pino({ level: 'silent' }));
  const { port } = server.s3.server.address() as AddressInfo;
  s3 = new S3Client({ endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'leftbehind', secretAccessKey: 'leftbehind-secret' }, maxAttempts: 1 });
}, 60_000);
afterAll(async () => {
  s3?.destroy();
  await server?.stop();
});

/** Puts `body` into the pool that does not hold the key, as a move cut short leaves it (same version id, an older time). */
async function leaveCopyBehind(bucket: string, key: string, body: string, versioning: BucketVersioning, versionId: string): Promise<void> {
  const objects = server.storage.objects;
  const holding = (await objects.poolHolding(bucket, key))!;
  const other = objects.pools.find((pool) => pool.index !== holding)!.index;
  const bytes = Buffer.from(body);
  await objects.setFor(other, key).putObject(bucket, key, (async function* () { yield bytes; })(), { storageClass: 'STANDARD', versioning, sizeBytes: bytes.length, modTimeMs: Date.now() - 60_000, versionId });
}

async function read(bucket: string, key: string, versionId?: string): Promise<string> {
  try {
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, ...(versionId ? { VersionId: versionId } : {}) }));
    return await object.Body!.transformToString();
  } catch (error) {
    return (error as Error).name;
  }
}

describe('a key left in two pools by a move cut short', () => {
  it('an unversioned DELETE removes it from both: the older copy does not read back', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'plain' }));
    await s3.send(new PutObjectCommand({ Bucket: 'plain', Key: 'k', Body: 'newer' }));
    await leaveCopyBehind('plain', 'k', 'older', 'unversioned', 'null');
    expect(await read('plain', 'k')).toBe('newer');
    await s3.send(new DeleteObjectCommand({ Bucket: 'plain', Key: 'k' }));
    expect(await read('plain', 'k')).toBe('NoSuchKey');
  });

  it('a DELETE by version id removes that version from both pools', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'versions' }));
    await s3.send(new PutBucketVersioningCommand({ Bucket: 'versions', VersioningConfiguration: { Status: 'Enabled' } }));
    const first = await s3.send(new PutObjectCommand({ Bucket: 'versions', Key: 'k', Body: 'v1' }));
    await leaveCopyBehind('versions', 'k', 'v1', 'enabled', first.VersionId!);
    await s3.send(new DeleteObjectCommand({ Bucket: 'versions', Key: 'k', VersionId: first.VersionId }));
    expect(await read('versions', 'k', first.VersionId)).toBe('NoSuchVersion');
    expect(await read('versions', 'k')).toBe('NoSuchKey');
  });
});
