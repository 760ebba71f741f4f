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

/**
 * A number in [0, 1) fixed by `text` and the deployment seed, spread evenly over the interval:
 * a key's own draw for a weighted random choice, so the choice replays.
 */
export function unitDraw(text: string, deploymentSeed: bigint): number {
  return Number(api.h64(text, deploymentSeed ^ 0x9e3779b97f4a7c15n) >> 11n) / 2 ** 53;
}

/** Index of the erasure set that holds `key`: xxh64 keyed by the deployment id, mod the set count. */
export function placeKey(key: string, deploymentSeed: bigint, setCount: number): number {
  return Number(api.h64(key, deploymentSeed) % BigInt(setCount));
}
