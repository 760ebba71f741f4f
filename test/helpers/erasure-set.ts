/** Builds erasure sets on in-memory (or fs) drives wrapped in fault-injecting drives, for tests. */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemfsDrive } from '../../backends/memfs/memfs-drive.js';
import { createFsDrive } from '../../backends/fs/fs-drive.js';
import { createFaultyDrive, type FaultyDrive } from '../../fault-injection/faulty-drive.js';
import { ErasureSet, LocalNamespaceLocker, type BlockCoding, type NamespaceLocker, type SetConfig } from '../../src/object/index.js';
import type { Drive } from '../../src/drive/index.js';
import { MiB } from '../../src/util/limits.js';

export interface TestSet {
  set: ErasureSet;
  faulty: FaultyDrive[];
  inner: Drive[];
  repairs: SetConfig extends { onRepairNeeded?: (request: infer R) => void } ? R[] : never;
  cleanup(): Promise<void>;
}

export async function makeTestSet(options: {
  drives: number;
  parity: number;
  rrsParity?: number;
  backend?: 'memfs' | 'fs';
  blockSizeBytes?: number;
  inlineBlockOverrideBytes?: number;
  wrap?: (drive: Drive, slot: number) => Drive;
  nowMs?: () => number;
  /** Where blocks are coded; the event loop when unset. */
  coding?: BlockCoding;
  /** Capacity of each memfs drive (4 GiB when unset); writes past it fail with DriveFull. */
  capacityBytes?: number;
  /** The set's namespace locks (a fresh in-process table when unset). */
  locker?: NamespaceLocker;
}): Promise<TestSet> {
  const root = options.backend === 'fs' ? await mkdtemp(join(tmpdir(), 'svc-set-')) : undefined;
  const inner: Drive[] = [];
  for (let slot = 0; slot < options.drives; slot += 1) {
    const base = root ? await createFsDrive(join(root, `d${slot}`)) : createMemfsDrive({ endpoint: `mem${slot}`, capacityBytes: options.capacityBytes ?? 4096 * MiB });
    inner.push(options.wrap ? options.wrap(base, slot) : base);
  }
  const faulty = inner.map((drive, slot) => createFaultyDrive(drive, { seed: slot + 1 }));
  const repairs: TestSet['repairs'] = [];
  const set = new ErasureSet({
    poolIndex: 0,
    setIndex: 0,
    drives: faulty,
    deploymentId: '00000000-0000-4000-8000-000000000000',
    locker: options.locker ?? new LocalNamespaceLocker(),
    clock: { nowMs: options.nowMs ?? (() => Date.now()) },
    newId: randomUUID,
    standardParity: options.parity,
    rrsParity: options.rrsParity ?? Math.min(1, options.parity),
    ...(options.inlineBlockOverrideBytes !== undefined ? { inlineBlockOverrideBytes: options.inlineBlockOverrideBytes } : {}),
    blockSizeBytes: options.blockSizeBytes ?? MiB,
    ...(options.coding ? { coding: options.coding } : {}),
    listQuorum: 'optimal',
    onRepairNeeded: (request) => repairs.push(request),
  });
  await set.makeBucketDir('bucket');
  return {
    set,
    faulty,
    inner,
    repairs,
    cleanup: async () => {
      await Promise.all(inner.map((drive) => drive.close()));
      if (root) await rm(root, { recursive: true, force: true });
    },
  };
}

/** Deterministic pseudo-random bytes (fast to make, distinct per seed). */
export function patternBytes(sizeBytes: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(sizeBytes);
  let state = (seed * 2654435761) >>> 0 || 1;
  for (let index = 0; index < sizeBytes; index += 4) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    bytes[index] = state;
    bytes[index + 1] = state >>> 8;
    bytes[index + 2] = state >>> 16;
    bytes[index + 3] = state >>> 24;
  }
  return bytes;
}

/** Streams bytes in uneven chunks, as a network would. */
export async function* chunked(bytes: Uint8Array, chunkBytes = 100_003): AsyncGenerator<Uint8Array> {
  for (let offset = 0; offset < bytes.length; offset += chunkBytes) yield bytes.subarray(offset, offset + chunkBytes);
}

export async function collect(body: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const part of body) parts.push(part);
  return new Uint8Array(Buffer.concat(parts));
}

/** Every file under a bucket (and the tmp area) on every inner drive. */
export async function filesOn(drives: Drive[], prefix: string): Promise<string[]> {
  const files: string[] = [];
  for (const [slot, drive] of drives.entries()) {
    for await (const path of drive.walk(prefix)) files.push(`${slot}:${path}`);
  }
  return files;
}
