/**
 * A broker target's one connection (SharedConnection in src/ops/events/targets.ts): deliveries
 * that start together share one connection attempt, and a connection that is gone is ended and
 * made again by the next delivery.
 */
import { describe, expect, it } from 'vitest';
import { SharedConnection } from '../src/ops/events/targets.js';

interface Fake {
  id: number;
  open: boolean;
}

function fakes() {
  const made: Fake[] = [];
  const ended: number[] = [];
  const shared = new SharedConnection<Fake>(
    async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const connection = { id: made.length + 1, open: true };
      made.push(connection);
      return connection;
    },
    async (connection) => {
      connection.open = false;
      ended.push(connection.id);
    },
    (connection) => connection.open,
  );
  return { shared, made, ended };
}

describe('a target connection shared by its deliveries', () => {
  it('is made once for eight deliveries that start together, and they all get it', async () => {
    const { shared, made } = fakes();
    const got = await Promise.all(Array.from({ length: 8 }, () => shared.get()));
    expect(made).toHaveLength(1);
    expect(new Set(got.map((connection) => connection.id))).toEqual(new Set([1]));
    expect(await shared.get()).toBe(got[0]);
  });

  it('is ended and made again once it is no longer usable, or after a failed delivery drops it', async () => {
    const { shared, made, ended } = fakes();
    const first = await shared.get();
    first.open = false; // the broker closed it
    const second = await shared.get();
    expect(second.id).toBe(2);
    expect(ended).toEqual([1]);
    await shared.drop(); // a delivery failed on it
    expect(ended).toEqual([1, 2]);
    expect((await shared.get()).id).toBe(3);
    shared.forget(made[2]!); // its own close handler said it is gone
    expect((await shared.get()).id).toBe(4);
    expect(made).toHaveLength(4);
  });

  it('tries again after a failed attempt instead of keeping the failure', async () => {
    let attempts = 0;
    const shared = new SharedConnection<number>(async () => {
      attempts += 1;
      if (attempts === 1) throw new Error('ECONNREFUSED');
      return attempts;
    }, async () => undefined);
    const [one, two] = await Promise.allSettled([shared.get(), shared.get()]);
    expect([one.status, two.status]).toEqual(['rejected', 'rejected']);
    expect(attempts).toBe(1);
    expect(await shared.get()).toBe(2);
  });
});
