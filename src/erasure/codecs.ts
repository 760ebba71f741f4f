/** Codec registry: the id recorded in xl.meta selects the math that decodes an object. */
import { SvcError } from '../errors/index.js';
import type { ErasureCodec } from './codec.js';
import { createReedSolomonCodec, reedSolomonCodecId } from './rs-codec.js';

export const defaultCodecId = reedSolomonCodecId;

const instances = new Map<string, ErasureCodec>();

/** A (cached, reusable) codec for an id and geometry; unknown ids fail with UnknownCodec. */
export function codecFor(id: string, dataShards: number, parityShards: number): ErasureCodec {
  if (id !== reedSolomonCodecId) throw new SvcError('UnknownCodec', `unknown erasure codec '${id}'`, { codec: id });
  const cacheKey = `${id}:${dataShards}+${parityShards}`;
  let codec = instances.get(cacheKey);
  if (!codec) {
    codec = createReedSolomonCodec(dataShards, parityShards);
    instances.set(cacheKey, codec);
  }
  return codec;
}
