/**
 * The key-namespace property (conformance/checkers/key-namespace.ts) against a real four-drive
 * server whose inline limit is 64 bytes per shard, so that small bodies get data directories and
 * generated keys reuse their real names. KEY_NAMESPACE_RUNS raises the number of runs (default
 * 25); KEY_NAMESPACE_SEED replays a failure (its seed is in the failure message).
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { checkKeyNamespace } from '../conformance/checkers/key-namespace.js';
import { objectDir, isUuid } from '../src/object/paths.js';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';

let root: string;
let server: SvcProcess;
let s3: S3Client;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-keyspace-'));
  server = await startSvc({ args: [join(root, 'd{1...4}')], env: { SVC_STORAGE_CLASS_INLINE_BLOCK: '64', SVC_CONSOLE_ENABLE: 'false' } });
  s3 = s3ClientFor(server.url);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

/** The data directories an object has on the first drive. */
async function dataDirsOf(bucket: string, key: string): Promise<string[]> {
  const names = await readdir(join(root, 'd1', objectDir(bucket, key))).catch(() => [] as string[]);
  return names.filter(isUuid);
}

describe('key namespace', () => {
  it('every key is stored, listed, read and deleted on its own, whatever its segments (property)', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'keys' }));
    const seed = Number(process.env.KEY_NAMESPACE_SEED ?? Date.now() % 2 ** 31);
    await checkKeyNamespace({ s3, bucket: 'keys', seed, numRuns: Number(process.env.KEY_NAMESPACE_RUNS ?? 25), largeBodyBytes: 200, dataDirsOf });
  }, 300_000);
});
