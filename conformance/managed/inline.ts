/**
 * Inline thresholds (SPEC "Erasure set and object geometry", "Limits"): for a drawn set width,
 * STANDARD parity (so K) and `SVC_STORAGE_CLASS_INLINE_BLOCK` (unset or a drawn size), objects at
 * the threshold, one byte over it and at drawn sizes either side are written to a plain and to a
 * versioned bucket, and every drive is looked at: an object is inline (its key directory holds
 * only xl.meta) exactly when ceil(size / K) fits the per-shard budget, which is 256 KiB / K capped
 * at 128 KiB, or the inline-block setting, and divided by 8 on a versioned bucket.
 */
import fc from 'fast-check';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { CreateBucketCommand, PutBucketVersioningCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { CheckFailure, expectThat } from '../runner/check.js';
import { testCredentials } from '../harness/server-process.js';
import { withDeployment } from './deployment.js';
import type { PropertySuite } from './property.js';

const KiB = 1024;
/** Sizes stay within one 1 MiB erasure block, where a shard is exactly ceil(size / K) bytes. */
const blockBytes = 1024 * KiB;

/** SPEC: the per-shard budget for K data shards. */
export function inlineBudgetBytes(dataShards: number, versioned: boolean, inlineBlockBytes?: number): number {
  const base = inlineBlockBytes ?? Math.min(Math.floor((256 * KiB) / dataShards), 128 * KiB);
  return Math.floor(base / (versioned ? 8 : 1));
}

export interface InlineCase {
  width: number;
  parity: number;
  inlineBlockBytes: number | undefined;
  /** Drawn sizes around each bucket's threshold: a percentage of it above or below, plus a few bytes. */
  offsets: { percent: number; bytes: number }[];
}

export const inlineCases: fc.Arbitrary<InlineCase> = fc
  .integer({ min: 2, max: 16 })
  .chain((width) =>
    fc.record({
      width: fc.constant(width),
      parity: fc.integer({ min: 0, max: Math.floor(width / 2) }),
      inlineBlockBytes: fc.oneof(fc.constant(undefined), fc.integer({ min: 1, max: 256 * KiB }), fc.constantFrom(4 * KiB, 64 * KiB, 128 * KiB, 256 * KiB)),
      offsets: fc.array(fc.record({ percent: fc.integer({ min: -100, max: 100 }), bytes: fc.integer({ min: -16, max: 16 }) }), { minLength: 1, maxLength: 3 }),
    }),
  );

/** Whether every drive holds the object inline (only xl.meta), or none does; mixed is a failure. */
async function storedInline(driveRoots: string[], bucket: string, key: string): Promise<boolean> {
  const kinds = new Set<boolean>();
  for (const drive of driveRoots) {
    const entries = await readdir(join(drive, bucket, key)).catch(() => [] as string[]);
    if (!entries.includes('xl.meta')) continue;
    kinds.add(entries.length === 1);
  }
  expectThat(kinds.size === 1, kinds.size === 0 ? `${bucket}/${key} has no xl.meta on any drive` : `${bucket}/${key} is inline on some drives and not on others`);
  return [...kinds][0]!;
}

async function checkInline(url: string, driveRoots: string[], drawn: InlineCase): Promise<void> {
  const s3 = new S3Client({ endpoint: url, region: 'us-east-1', forcePathStyle: true, credentials: testCredentials, maxAttempts: 1 });
  const dataShards = drawn.width - drawn.parity;
  for (const versioned of [false, true]) {
    const bucket = versioned ? 'versioned' : 'plain';
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    if (versioned) await s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
    const budget = inlineBudgetBytes(dataShards, versioned, drawn.inlineBlockBytes);
    const threshold = budget * dataShards;
    const sizes = [threshold, threshold + 1, ...drawn.offsets.map((offset) => threshold + Math.round((threshold * offset.percent) / 100) + offset.bytes)].filter((size) => size >= 0 && size <= blockBytes);
    for (const [index, size] of sizes.entries()) {
      const key = `object-${index}`;
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: Buffer.alloc(size, 5) }));
      const expected = Math.ceil(size / dataShards) <= budget;
      const observed = await storedInline(driveRoots, bucket, key);
      if (observed !== expected) throw new CheckFailure(`${bucket}/${key}: ${size} bytes with K=${dataShards} (shard ${Math.ceil(size / dataShards)} bytes, budget ${budget}) is ${observed ? '' : 'not '}stored inline`);
    }
  }
}

export const inlineSuite: PropertySuite<InlineCase> = {
  id: 'managed.inline-thresholds',
  spec: 'Erasure set and object geometry',
  title: 'objects are stored inline (only xl.meta on disk) exactly when every shard fits 256 KiB / K (at most 128 KiB) or SVC_STORAGE_CLASS_INLINE_BLOCK, ÷8 when versioned',
  defaultRuns: 4,
  cases: inlineCases,
  describe: (drawn) => `width ${drawn.width}, EC:${drawn.parity}, inline block ${drawn.inlineBlockBytes ?? 'default'}, sizes at threshold ${drawn.offsets.map((offset) => `${offset.percent >= 0 ? '+' : ''}${offset.percent}%${offset.bytes >= 0 ? '+' : ''}${offset.bytes}`).join(', ')}`,
  run: (drawn, launcher) =>
    withDeployment(
      launcher,
      { nodes: 1, poolPaths: [`/d{1...${drawn.width}}`], env: { SVC_STORAGE_CLASS_STANDARD: `EC:${drawn.parity}`, ...(drawn.inlineBlockBytes !== undefined ? { SVC_STORAGE_CLASS_INLINE_BLOCK: String(drawn.inlineBlockBytes) } : {}) } },
      (deployment) => checkInline(deployment.urls[0]!, Array.from({ length: drawn.width }, (_, index) => join(deployment.nodeRoot(0), `d${index + 1}`)), drawn),
    ),
};
