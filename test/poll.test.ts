import { describe, expect, it } from 'vitest';
import { waitFor, WaitTimeout } from './helpers/poll.js';

describe('waitFor', () => {
  it('returns the first answer that is there, asking again after misses and errors', async () => {
    let asks = 0;
    const answer = await waitFor('the third ask', () => {
      asks += 1;
      if (asks === 1) throw new Error('not yet');
      return asks === 3 ? { asks } : undefined;
    }, { intervalMs: 1 });
    expect(answer).toEqual({ asks: 3 });
  });

  it('fails with what it waited for and the last answer or error', async () => {
    await expect(waitFor('a flag that never rises', () => false, { timeoutMs: 30, intervalMs: 5 })).rejects.toThrow(/^waited 30 ms for a flag that never rises, in vain; last answer: false$/);
    const failing = waitFor('a peer that never answers', () => Promise.reject(new Error('connection refused')), { timeoutMs: 30, intervalMs: 5 });
    await expect(failing).rejects.toBeInstanceOf(WaitTimeout);
    await expect(failing).rejects.toThrow(/last error: connection refused/);
  });
});
