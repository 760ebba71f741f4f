/**
 * Model-based property: random puts, overwrites, deletes and version deletes against a real
 * server, on a versioned and an unversioned bucket, compared after every step with an in-memory
 * model (GET bytes, HEAD, ListObjectsV2, ListObjectVersions).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand, DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, ListObjectVersionsCommand,
  PutBucketVersioningCommand, PutObjectCommand, type S3Client,
} from '@aws-sdk/client-s3';
import { s3ClientFor, startSvc, type SvcProcess } from './helpers/server-process.js';

let root: string;
let server: SvcProcess;
let s3: S3Client;
let bucketCounter = 0;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-model-'));
  server = await startSvc({ args: [join(root, 'd{1...6}')] });
  s3 = s3ClientFor(server.url);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

type Operation = { kind: 'put'; key: string; sizeBytes: number; seed: number } | { kind: 'delete'; key: string } | { kind: 'deleteVersion'; key: string; pick: number };
interface ModelVersion {
  versionId: string;
  data?: Buffer; // undefined: a delete marker
}

const keys = ['a', 'b/c', 'b/d'];
const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ kind: fc.constant('put' as const), key: fc.constantFrom(...keys), sizeBytes: fc.constantFrom(0, 10, 40_000, 300_000, 1_048_577), seed: fc.nat(255) }),
  fc.record({ kind: fc.constant('delete' as const), key: fc.constantFrom(...keys) }),
  fc.record({ kind: fc.constant('deleteVersion' as const), key: fc.constantFrom(...keys), pick: fc.nat() }),
);

const payload = (sizeBytes: number, seed: number): Buffer => Buffer.alloc(sizeBytes, seed);

async function apply(bucket: string, versioned: boolean, model: Map<string, ModelVersion[]>, op: Operation): Promise<void> {
  const history = model.get(op.key) ?? [];
  if (op.kind === 'put') {
    const data = payload(op.sizeBytes, op.seed);
    const result = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: op.key, Body: data }));
    model.set(op.key, versioned ? [{ versionId: result.VersionId!, data }, ...history] : [{ versionId: 'null', data }]);
  } else if (op.kind === 'delete') {
    const result = await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: op.key }));
    model.set(op.key, versioned ? [{ versionId: result.VersionId! }, ...history] : []);
  } else if (versioned && history.length > 0) {
    const victim = history[op.pick % history.length]!;
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: op.key, VersionId: victim.versionId }));
    model.set(op.key, history.filter((version) => version !== victim));
  }
}

async function check(bucket: string, versioned: boolean, model: Map<string, ModelVersion[]>): Promise<void> {
  for (const key of keys) {
    const latest = model.get(key)?.[0];
    if (latest?.data) {
      const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      expect(Buffer.from(await object.Body!.transformToByteArray()).equals(latest.data), key).toBe(true);
      expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).ContentLength).toBe(latest.data.length);
    } else {
      const error = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key })).then(() => 'found', (failure: { name: string }) => failure.name);
      expect(error, key).toBe('NoSuchKey');
    }
  }
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
  expect((listed.Contents ?? []).map((item) => [item.Key, item.Size])).toEqual(
    keys.filter((key) => model.get(key)?.[0]?.data).map((key) => [key, model.get(key)![0]!.data!.length]),
  );
  if (!versioned) return;
  const versions = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket }));
  const actual = [...(versions.Versions ?? []).map((v) => `${v.Key}:${v.VersionId}:${v.IsLatest}:v`), ...(versions.DeleteMarkers ?? []).map((v) => `${v.Key}:${v.VersionId}:${v.IsLatest}:dm`)].sort();
  const expected = keys.flatMap((key) => (model.get(key) ?? []).map((version, index) => `${key}:${version.versionId}:${index === 0}:${version.data ? 'v' : 'dm'}`)).sort();
  expect(actual).toEqual(expected);
}

describe('S3 semantics against an in-memory model', () => {
  for (const versioned of [false, true]) {
    it(`${versioned ? 'versioned' : 'unversioned'} bucket`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 10 }), async (operations) => {
          const bucket = `model-${versioned ? 'v' : 'u'}-${(bucketCounter += 1)}`;
          await s3.send(new CreateBucketCommand({ Bucket: bucket }));
          if (versioned) await s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
          const model = new Map<string, ModelVersion[]>();
          for (const op of operations) {
            await apply(bucket, versioned, model, op);
            await check(bucket, versioned, model);
          }
        }),
        { numRuns: 12 },
      );
    });
  }
});
