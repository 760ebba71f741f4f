/**
 * xxHash64 (xxhash-wasm), initialised once at module load. Used for placement (object -> set)
 * and, through src/erasure/bitrot.ts, for shard chunk hashes.
 */
import xxhash from 'xxhash-wasm';

const api = await xxhash();

export function xxh64(input: Uint8Array | string, seed = 0n): bigint {
  return typeof input === 'string' ? api.h64(input, seed) : api.h64Raw(input, seed);
}

/** A 64-bit seed derived from a deployment id, so placement differs per deployment. */
export function seedFromId(id: string): bigint {
  return api.h64(id, 0n);
}

/** Index of the erasure set that holds `key`: xxh64 keyed by the deployment id, mod the set count. */
export function placeKey(key: string, deploymentSeed: bigint, setCount: number): number {
  return Number(api.h64(key, deploymentSeed) % BigInt(setCount));
}
