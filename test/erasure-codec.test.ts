import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { freshReference, ReedSolomonErasure } from './helpers/reference-rs.js';
import { createReedSolomonCodec } from '../src/erasure/rs-codec.js';
import { codecFor, defaultCodecId } from '../src/erasure/codecs.js';
import { wasmKernel } from '../src/erasure/wasm-kernel.js';
import { splitBlock, joinShards } from '../src/erasure/layout.js';
import { isSvcError } from '../src/errors/index.js';
import type { ErasureCodec } from '../src/erasure/codec.js';

const MiB = 1024 * 1024;
const kernels = (['typescript', ...(wasmKernel ? ['wasm'] : [])] as const).map((kernel) => kernel as 'typescript' | 'wasm');

function encodeBlock(codec: ErasureCodec, block: Uint8Array): Uint8Array[] {
  const shards = splitBlock(block, codec.dataShards).map((shard) => new Uint8Array(shard));
  for (let index = 0; index < codec.parityShards; index += 1) shards.push(new Uint8Array(shards[0]!.length));
  codec.encode(shards);
  return shards;
}

const geometry = fc.integer({ min: 1, max: 16 }).chain((n) => fc.record({ n: fc.constant(n), m: fc.integer({ min: 0, max: Math.floor(n / 2) }) }));
const blockSize = fc.oneof(fc.constantFrom(0, 1, 2, 15, 16, 17, MiB - 1, MiB, MiB + 1), fc.integer({ min: 1, max: 70_000 }));

describe.each(kernels)('Reed-Solomon codec (%s kernel)', (kernel) => {
  // One instance per geometry, reused across every case and loss pattern: a codec that keeps
  // state between calls (the failure measured in a reused WebAssembly instance) breaks here.
  const instances = new Map<string, ErasureCodec>();
  const reused = (k: number, m: number): ErasureCodec => {
    const key = `${k}+${m}`;
    if (!instances.has(key)) instances.set(key, createReedSolomonCodec(k, m, { kernel }));
    return instances.get(key)!;
  };

  it('rebuilds the block byte-identical from any K of N shards, for every geometry', () => {
    fc.assert(
      fc.property(geometry, blockSize, fc.integer(), fc.array(fc.nat(), { minLength: 3, maxLength: 6 }), ({ n, m }, size, seed, patterns) => {
        const k = n - m;
        const codec = reused(k, m);
        const block = new Uint8Array(size).map((_, index) => (index * 31 + seed) & 0xff);
        if (size === 0) return; // an empty object has no block to code
        const shards = encodeBlock(codec, block);
        for (const pattern of patterns) {
          const lost = chooseLost(n, m, pattern);
          const damaged = shards.map((shard, index) => (lost.includes(index) ? null : new Uint8Array(shard)));
          const rebuilt = codec.reconstruct(damaged);
          rebuilt.forEach((shard, index) => expect(Buffer.from(shard).equals(Buffer.from(shards[index]!))).toBe(true));
          expect(Buffer.from(joinShards(rebuilt.slice(0, k), size)).equals(Buffer.from(block))).toBe(true);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('fails closed with ErasureReadQuorum when fewer than K shards remain', () => {
    fc.assert(
      fc.property(geometry, fc.nat(), ({ n, m }, pattern) => {
        const k = n - m;
        const codec = reused(k, m);
        const shards = encodeBlock(codec, new Uint8Array(1000).fill(7));
        const lost = chooseLost(n, m + 1, pattern);
        let thrown: unknown;
        try {
          codec.reconstruct(shards.map((shard, index) => (lost.includes(index) ? null : shard)));
        } catch (error) {
          thrown = error;
        }
        expect(isSvcError(thrown, 'ErasureReadQuorum')).toBe(true);
      }),
      { numRuns: 100 },
    );
  });

  it('survives thousands of reconstructs on one reused 12+4 instance (every 4-loss pattern)', () => {
    const codec = reused(12, 4);
    const shards = encodeBlock(codec, new Uint8Array(12 * 256).map((_, index) => (index * 7) & 0xff));
    let patterns = 0;
    for (let a = 0; a < 16; a += 1)
      for (let b = a + 1; b < 16; b += 1)
        for (let c = b + 1; c < 16; c += 1)
          for (let d = c + 1; d < 16; d += 1) {
            const damaged = shards.map((shard, index) => ([a, b, c, d].includes(index) ? null : shard));
            const rebuilt = codec.reconstruct(damaged, { dataOnly: true });
            for (let index = 0; index < 12; index += 1) if (!Buffer.from(rebuilt[index]!).equals(Buffer.from(shards[index]!))) throw new Error(`pattern ${[a, b, c, d]} shard ${index} differs`);
            patterns += 1;
          }
    expect(patterns).toBe(1820);
  });
});

describe('Reed-Solomon codec identity', () => {
  it('produces the same parity bytes as the reference Vandermonde implementation', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 16 }).chain((n) => fc.record({ n: fc.constant(n), m: fc.integer({ min: 1, max: Math.floor(n / 2) }) })), fc.integer({ min: 1, max: 4096 }), fc.integer(), ({ n, m }, shardSize, seed) => {
        const k = n - m;
        const all = new Uint8Array(shardSize * n);
        for (let index = 0; index < shardSize * k; index += 1) all[index] = (index * 131 + seed) & 0xff;
        // A fresh reference instance per call: reused instances are known to corrupt state.
        const reference = freshReference();
        expect(reference.encode(all, k, m)).toBe(ReedSolomonErasure.RESULT_OK);
        const ours = Array.from({ length: n }, (_, index) => all.slice(index * shardSize, (index + 1) * shardSize));
        for (let index = k; index < n; index += 1) ours[index]!.fill(0);
        createReedSolomonCodec(k, m).encode(ours);
        for (let index = k; index < n; index += 1) expect(Buffer.from(ours[index]!).equals(Buffer.from(all.subarray(index * shardSize, (index + 1) * shardSize)))).toBe(true);
      }),
      { numRuns: 40 },
    );
  });

  it('records a stable id and refuses unknown codec ids and invalid geometry', () => {
    expect(defaultCodecId).toBe('rs-vandermonde-gf8');
    expect(codecFor(defaultCodecId, 4, 2).id).toBe('rs-vandermonde-gf8');
    const codes: string[] = [];
    for (const attempt of [() => codecFor('rs-cauchy-gf8', 4, 2), () => createReedSolomonCodec(0, 1), () => createReedSolomonCodec(200, 100), () => createReedSolomonCodec(2, -1)]) {
      try {
        attempt();
      } catch (error) {
        codes.push(isSvcError(error) ? error.code : String(error));
      }
    }
    expect(codes).toEqual(['UnknownCodec', 'InvalidArgument', 'InvalidArgument', 'InvalidArgument']);
  });

  it('encodes nothing with zero parity and needs every shard to reconstruct', () => {
    const codec = createReedSolomonCodec(3, 0);
    const shards = encodeBlock(codec, new Uint8Array([1, 2, 3, 4, 5]));
    expect(shards.length).toBe(3);
    expect(() => codec.reconstruct([shards[0]!, null, shards[2]!])).toThrow();
  });
});

/** A deterministic choice of `count` distinct shard indexes out of n. */
function chooseLost(n: number, count: number, pattern: number): number[] {
  const indexes = Array.from({ length: n }, (_, index) => index);
  let state = pattern + 1;
  for (let index = n - 1; index > 0; index -= 1) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    const other = state % (index + 1);
    [indexes[index], indexes[other]] = [indexes[other]!, indexes[index]!];
  }
  return indexes.slice(0, Math.min(count, n));
}
