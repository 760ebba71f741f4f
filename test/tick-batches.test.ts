/**
 * TickBatches: what one turn of the event loop queues goes together, and with a window, what
 * comes while a run is unanswered waits for its answer (or for the longest wait) and then goes
 * together.
 */
import { describe, expect, it } from 'vitest';
import { TickBatches } from '../src/transport/tick-batches.js';

const turn = () => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A batcher whose sends are recorded and settled by hand. */
function recorded(options: { maxItems?: number; maxInFlight?: number; maxWaitMs?: number; settleBySelf?: boolean }) {
  const runs: number[][] = [];
  const settles: Array<{ answer(): void; fail(): void }> = [];
  const batches = new TickBatches<number>({
    maxItems: options.maxItems ?? 64,
    ...(options.maxInFlight !== undefined ? { maxInFlight: options.maxInFlight } : {}),
    ...(options.maxWaitMs !== undefined ? { maxWaitMs: options.maxWaitMs } : {}),
    send: (items) => {
      runs.push(items);
      if (options.settleBySelf) return undefined;
      return new Promise<void>((resolve, reject) => settles.push({ answer: () => resolve(), fail: () => reject(new Error('unreachable')) }));
    },
  });
  return { runs, settles, batches };
}

describe('tick batches', () => {
  it('hand over what one turn queued as one run, in order, in runs of at most maxItems', async () => {
    const { runs, batches } = recorded({ maxItems: 3, settleBySelf: true });
    for (let item = 0; item < 7; item += 1) batches.push(item);
    expect(runs).toEqual([]);
    await turn();
    expect(runs).toEqual([[0, 1, 2], [3, 4, 5], [6]]);
  });

  it('without a window every turn goes at once, answered or not', async () => {
    const { runs, batches } = recorded({});
    batches.push(1);
    await turn();
    batches.push(2);
    await turn();
    expect(runs).toEqual([[1], [2]]);
    expect(batches.unsettled).toBe(2);
  });

  it('with a window, what comes while a run is unanswered waits for its answer, then goes together', async () => {
    const { runs, settles, batches } = recorded({ maxInFlight: 1, maxWaitMs: 10_000 });
    batches.push(1);
    await turn();
    expect(runs).toEqual([[1]]); // nothing was out: no wait
    for (const item of [2, 3]) {
      batches.push(item);
      await turn();
    }
    batches.push(4);
    await sleep(20);
    expect(runs).toEqual([[1]]);
    settles[0]!.answer();
    await sleep(0);
    await turn();
    expect(runs).toEqual([[1], [2, 3, 4]]);
    // A failed run frees its place as an answered one does.
    batches.push(5);
    await turn();
    expect(runs.length).toBe(2);
    settles[1]!.fail();
    await sleep(0);
    await turn();
    expect(runs).toEqual([[1], [2, 3, 4], [5]]);
  });

  it('an urgent item goes in the next turn whatever is out, and takes what waits with it', async () => {
    const { runs, batches } = recorded({ maxInFlight: 1, maxWaitMs: 10_000 });
    batches.push(1);
    await turn();
    batches.push(2);
    await turn();
    expect(runs).toEqual([[1]]);
    batches.push(3, true);
    await turn();
    expect(runs).toEqual([[1], [2, 3]]);
    expect(batches.unsettled).toBe(2);
  });

  it('a run never answered holds the others up for maxWaitMs at most', async () => {
    const { runs, batches } = recorded({ maxInFlight: 1, maxWaitMs: 30 });
    batches.push(1); // never settled
    await turn();
    const queuedAt = performance.now();
    batches.push(2);
    await sleep(5);
    batches.push(3);
    while (runs.length < 2 && performance.now() - queuedAt < 2_000) await sleep(2);
    expect(runs).toEqual([[1], [2, 3]]);
    expect(performance.now() - queuedAt).toBeGreaterThanOrEqual(29);
    expect(performance.now() - queuedAt).toBeLessThan(1_000);
  });
});
