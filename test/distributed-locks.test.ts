import { describe, expect, it } from 'vitest';
import { LockTable, lockUid } from '../src/cluster/lock-table.js';
import { DistributedNamespaceLocker, type LockServer } from '../src/cluster/distributed-locker.js';
import { isSvcError } from '../src/errors/index.js';

function servers(tables: LockTable[], down: Set<number> = new Set(), own?: number, asked?: number[]): LockServer[] {
  return tables.map((table, index) => ({
    ...(own !== undefined && index !== own ? { remote: true } : {}),
    acquire: async (resource, mode, uid, ttlMs) => {
      asked?.push(index);
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

  it('asks only a quorum (its own server, then the peers after it), the rest when short; nodes with different own servers still exclude each other', async () => {
    const tables = Array.from({ length: 4 }, () => new LockTable({ nowMs: () => Date.now() }));
    const asked: number[] = [];
    const down = new Set<number>();
    const nodeTwo = new DistributedNamespaceLocker({ servers: servers(tables, down, 2, asked) });
    const release = await nodeTwo.acquire('b/one', 'write');
    expect(asked).toEqual([2, 3, 0]);
    release();
    asked.length = 0;
    down.add(3);
    (await nodeTwo.acquire('b/two', 'write'))();
    expect(asked).toEqual([2, 3, 0, 1]); // server 3 down: the rest asked in the same attempt
    down.clear();
    asked.length = 0;
    (await nodeTwo.acquire('b/three', 'read'))();
    expect(asked).toEqual([2, 3]);
  });

  it.each([3, 4, 5])('keeps a writer alone among %i nodes, each leaning on different servers, writers and readers mixed', async (nodes) => {
    const tables = Array.from({ length: nodes }, () => new LockTable({ nowMs: () => Date.now() }));
    const lockers = tables.map((_, own) => new DistributedNamespaceLocker({ servers: servers(tables, new Set(), own), refreshIntervalMs: 50 }));
    let writers = 0;
    let readers = 0;
    let violations = 0;
    await Promise.all(lockers.flatMap((locker, node) => [0, 1].map(async (task) => {
      const mode = (node + task) % 3 === 0 ? 'write' : 'read';
      for (let round = 0; round < 6; round += 1) {
        const done = await locker.acquire('b/shared', mode, 10_000);
        if (mode === 'write') writers += 1;
        else readers += 1;
        if (writers > 1 || (writers === 1 && readers > 0)) violations += 1;
        await new Promise((resolve) => setTimeout(resolve, 2));
        if (mode === 'write') writers -= 1;
        else readers -= 1;
        done();
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    })));
    expect(violations).toBe(0);
    for (const table of tables) expect(table.held()).toEqual([]);
  });
});

/**
 * A lock server behind a link that can be cut: while cut, calls get no answer (the caller's call
 * fails, as one timed out does) and wait in order, as bytes in a connection's send buffer do;
 * when the link heals they arrive, in the order they were sent.
 */
function cutLink(table: LockTable): { server: LockServer; cut(): void; heal(): void } {
  let cut = false;
  const waiting: (() => void)[] = [];
  const call = <T>(apply: () => T): Promise<T> => {
    if (!cut) return Promise.resolve(apply());
    waiting.push(() => void apply());
    return Promise.reject(new Error('no answer: the link is cut'));
  };
  return {
    server: {
      remote: true,
      acquire: (resource, mode, uid, ttlMs) => call(() => table.acquire(resource, mode, uid, ttlMs)),
      refresh: (resource, uid, ttlMs) => call(() => table.refresh(resource, uid, ttlMs)),
      release: (resource, uid) => call(() => table.release(resource, uid)),
    },
    cut: () => (cut = true),
    heal: () => {
      cut = false;
      for (const deliver of waiting.splice(0)) deliver();
    },
  };
}

describe('a lock server behind a cut link', () => {
  it('frees what the lost calls of a failed attempt grant when they arrive after the cut heals', async () => {
    const tables = Array.from({ length: 4 }, () => new LockTable({ nowMs: () => Date.now() }));
    const link = cutLink(tables[1]!);
    const [own, , third, fourth] = servers(tables, new Set(), 0);
    const locker = new DistributedNamespaceLocker({ servers: [own!, link.server, third!, fourth!] });
    // Another writer holds server 2: no attempt of this node reaches a quorum of three.
    expect(tables[2]!.acquire('b/k', 'write', 'another-writer', 60_000)).toBe(true);
    link.cut();
    await expect(locker.acquire('b/k', 'write', 100)).rejects.toThrow(/timed out/);
    expect(tables[1]!.held()).toEqual([]);
    // The link heals: the acquires sent across it arrive (and are granted), then the releases sent after them.
    link.heal();
    expect(tables[1]!.held()).toEqual([]);
    tables[2]!.release('b/k', 'another-writer');
    const other = new DistributedNamespaceLocker({ servers: servers(tables, new Set(), 1) });
    (await other.acquire('b/k', 'write', 100))();
  });

  it('frees the grant of a held lock whose answer was lost, once the holder releases and the link heals', async () => {
    const tables = Array.from({ length: 4 }, () => new LockTable({ nowMs: () => Date.now() }));
    const link = cutLink(tables[1]!);
    const [own, , third, fourth] = servers(tables, new Set(), 0);
    const locker = new DistributedNamespaceLocker({ servers: [own!, link.server, third!, fourth!] });
    link.cut();
    const release = await locker.acquire('b/k', 'write', 1_000);
    release();
    link.heal();
    for (const table of tables) expect(table.held()).toEqual([]);
  });
});

describe('a restarted node', () => {
  const run = (node: string, startedAtMs: number, id: string) => ({ node, startedAtMs, id });

  it('frees the locks of its earlier run at its first lock call, and a call from that run is refused from then on', async () => {
    const tables = Array.from({ length: 4 }, () => new LockTable({ nowMs: () => Date.now() }));
    // Node 0's first run takes a write lock on a quorum and dies holding it (its refreshes go on, as a process that hangs would).
    const first = new DistributedNamespaceLocker({ servers: servers(tables, new Set(), 0), holder: run('n0:9000', 1_000, 'a'), refreshIntervalMs: 20 });
    await first.acquire('b/k', 'write');
    const other = new DistributedNamespaceLocker({ servers: servers(tables, new Set(), 1), holder: run('n1:9000', 1_000, 'c') });
    await expect(other.acquire('b/k', 'write', 100)).rejects.toThrow(/timed out/);
    // Node 0 starts again: its first lock call (any resource) reaches the servers it asks.
    const second = new DistributedNamespaceLocker({ servers: servers(tables, new Set(), 0), holder: run('n0:9000', 2_000, 'b') });
    (await second.acquire('b/other', 'write'))();
    const release = await other.acquire('b/k', 'write', 100);
    // The earlier run can take nothing more where the later one was seen (the servers it asked: its own, then the next two).
    expect(tables.map((table) => table.acquire('b/new', 'read', lockUid(run('n0:9000', 1_000, 'a'), 'x'), 1_000))).toEqual([false, false, false, true]);
    release();
  });

  it('orders runs by start time: an unseen older run (a clock gone back) takes locks and drops nothing; a replaced run gets nothing', () => {
    const table = new LockTable({ nowMs: () => 0 });
    expect(table.acquire('b/k', 'write', lockUid(run('n0:9000', 2_000, 'b'), '1'), 1_000)).toBe(true);
    // A restart whose clock went back: its start is older than the newest run's, and it was never seen.
    expect(table.acquire('b/j', 'write', lockUid(run('n0:9000', 1_000, 'a'), '2'), 1_000)).toBe(true);
    expect(table.held().sort()).toEqual(['b/j', 'b/k']);
    expect(table.acquire('b/h', 'write', 'an-opaque-uid', 1_000)).toBe(true);
    // A newer run drops both earlier runs' locks; the run it replaced is refused from then on.
    expect(table.acquire('b/i', 'write', lockUid(run('n0:9000', 3_000, 'c'), '3'), 1_000)).toBe(true);
    expect(table.held().sort()).toEqual(['b/h', 'b/i']);
    expect(table.acquire('b/g', 'read', lockUid(run('n0:9000', 2_000, 'b'), '4'), 1_000)).toBe(false);
    expect(table.held().sort()).toEqual(['b/h', 'b/i']);
  });
});
