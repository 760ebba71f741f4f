import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { blockViews, chunkOffsetInShardFile, distributionFor, joinShards, shardFileSizeBytes, shardSizeBytes, splitBlock, blockRangeFor } from '../src/erasure/layout.js';
import { frameChunk, unframeChunk, bitrotHashBytes } from '../src/erasure/bitrot.js';

describe('striping math', () => {
  it('joinShards(splitBlock(b)) is the identity and shards are ceil(len / K) long', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 5000 }), fc.integer({ min: 1, max: 16 }), (block, k) => {
        const shards = splitBlock(block, k);
        expect(shards.length).toBe(k);
        shards.forEach((shard) => expect(shard.length).toBe(shardSizeBytes(block.length, k)));
        expect(Buffer.from(joinShards(shards, block.length)).equals(Buffer.from(block))).toBe(true);
      }),
    );
  });

  it('blockViews gives bytes [from, to) of the block as views into the shards, padding excluded', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 5000 }), fc.integer({ min: 1, max: 16 }), fc.nat(), fc.nat(), (block, k, a, b) => {
        const from = a % (block.length + 1);
        const to = from + (b % (block.length - from + 1));
        const shards = splitBlock(block, k);
        const views = blockViews(shards, block.length, from, to);
        expect(Buffer.concat(views).equals(Buffer.from(block.subarray(from, to)))).toBe(true);
        views.forEach((view) => expect(view.length).toBeGreaterThan(0));
        for (const view of views) expect(shards.some((shard) => shard.buffer === view.buffer)).toBe(true);
      }),
    );
    expect(() => blockViews(splitBlock(new Uint8Array(10), 2), 10, 4, 11)).toThrow();
  });

  it('block chunks tile the shard file exactly', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20_000_000 }), fc.integer({ min: 1, max: 16 }), fc.constantFrom(1024, 65_536, 1 << 20), (size, k, block) => {
        const blocks = Math.ceil(size / block);
        let offset = 0;
        for (let index = 0; index < blocks; index += 1) {
          const chunk = chunkOffsetInShardFile(index, size, k, block);
          expect(chunk.offset).toBe(offset);
          offset += chunk.lengthBytes;
        }
        expect(offset).toBe(shardFileSizeBytes(size, k, block));
        expect(shardFileSizeBytes(0, k, block)).toBe(0);
      }),
    );
  });

  it('blockRangeFor names the first and last block a range touches', () => {
    expect(blockRangeFor(0, 1, 100)).toEqual({ first: 0, last: 0 });
    expect(blockRangeFor(99, 2, 100)).toEqual({ first: 0, last: 1 });
    expect(blockRangeFor(250, 100, 100)).toEqual({ first: 2, last: 3 });
  });

  it('distribution is a deterministic rotation of 1..N', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.integer({ min: 1, max: 16 }), (key, n) => {
        const distribution = distributionFor(key, n);
        expect([...distribution].sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, index) => index + 1));
        expect(distributionFor(key, n)).toEqual(distribution);
        for (let index = 1; index < n; index += 1) expect(distribution[index]).toBe((distribution[index - 1]! % n) + 1);
      }),
    );
  });
});

describe('bitrot framing', () => {
  it('round-trips and detects any single flipped bit', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 4096 }), fc.nat(), (chunk, bitSeed) => {
        const framed = frameChunk(chunk);
        expect(framed.length).toBe(chunk.length + bitrotHashBytes);
        expect(Buffer.from(unframeChunk(framed)!).equals(Buffer.from(chunk))).toBe(true);
        const bit = bitSeed % (framed.length * 8);
        const damaged = new Uint8Array(framed);
        damaged[bit >> 3] = damaged[bit >> 3]! ^ (1 << (bit & 7));
        expect(unframeChunk(damaged)).toBeUndefined();
      }),
    );
  });
});
