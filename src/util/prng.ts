/**
 * A small seeded pseudo-random generator (mulberry32). Randomness that affects behaviour under test
 * (fault plans, chaos schedules) is drawn from one of these so that a printed seed replays it.
 */
export interface Prng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, maxExclusive). */
  int(maxExclusive: number): number;
  readonly seed: number;
}

export function createPrng(seed: number): Prng {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { seed, next, int: (maxExclusive) => Math.floor(next() * maxExclusive) };
}
