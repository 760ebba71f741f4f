import { describe, expect, it } from 'vitest';
import { LockTable } from '../src/cluster/lock-table.js';
import { DistributedNamespaceLocker, type LockServer } from '../src/cluster/distributed-locker.js';
import { isSvcError } from '../src/errors/index.js';

function servers(tables: LockTable[], down: Set<number> = new Set()): LockServer[] {
  return tables.map((table, index) => ({
    acquire: async (resource, mode, uid, ttlMs) => {
      if (down.has(index)) throw new Error('down');
      return table.acquire(resource, mode, uid, ttlMs);
    },
    refresh: async (resource, uid, ttlMs) => !down.has(index) && table.refresh(resource, uid, ttlMs),
    release: async (resource, uid) => table.release(resource, uid),
  }));
}

describe('lock table', () => {
  it('shares read locks, excludes writers, and lets a lock lapse when its holder stops refreshing', () => {
    let now = 1_000;
    const table = new LockTable({ nowMs: () => now });
    expect(table.acquire('b/k', 'read', 'r1', 100)).toBe(true);
    expect(table.acquire('b/k', 'read', 'r2', 100)).toBe(true);
    expect(table.acquire('b/k', 'write', 'w1', 100)).toBe(false);
    now += 50;
    expect(table.refresh('b/k', 'r1', 100)).toBe(true);
    now += 60; // r2 lapsed (a dead holder), r1 still live
    expect(table.acquire('b/k', 'write', 'w1', 100)).toBe(false);
    table.release('b/k', 'r1');
    expect(table.acquire('b/k', 'write', 'w1', 100)).toBe(true);
    expect(table.acquire('b/k', 'read', 'r3', 100)).toBe(false);
    now += 101; // the writer died without releasing
    expect(table.refresh('b/k', 'w1', 100)).toBe(false);
    expect(table.acquire('b/k', 'read', 'r3', 100)).toBe(true);
  });
});

describe('distributed locker', () => {
  it('never lets two writers hold one resource, even with a minority of lock servers down', async () => {
    const tables = Array.from({ length: 5 }, () => new LockTable({ nowMs: () => Date.now() }));
    const locker = new DistributedNamespaceLocker({ servers: servers(tables, new Set([4])), refreshIntervalMs: 50 });
    let inside = 0;
    let most = 0;
    await Promise.all(Array.from({ length: 8 }, async () => {
      for (let round = 0; round < 5; round += 1) {
        const release = await locker.acquire('bucket/key', 'write', 10_000);
        inside += 1;
        most = Math.max(most, inside);
        await new Promise((resolve) => setTimeout(resolve, 2));
        inside -= 1;
        release();
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    }));
    expect(most).toBe(1);
  });

  it('times out with SlowDown when a majority cannot be had, and a dead holder releases after expiry', async () => {
    const tables = Array.from({ length: 3 }, () => new LockTable({ nowMs: () => Date.now() }));
    const down = new Set([0, 1]);
    const unreachable = new DistributedNamespaceLocker({ servers: servers(tables, down) });
    let thrown: unknown;
    try {
      await unreachable.acquire('b/k', 'write', 200);
    } catch (error) {
      thrown = error;
    }
    expect(isSvcError(thrown, 'SlowDown')).toBe(true);
    // A holder that dies never refreshes: its grants lapse after the expiry.
    for (const table of tables) table.acquire('b/k', 'write', 'dead-holder', 300);
    const locker = new DistributedNamespaceLocker({ servers: servers(tables) });
    const started = Date.now();
    const release = await locker.acquire('b/k', 'write', 5_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    release();
  });
});
