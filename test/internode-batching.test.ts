/**
 * Internode round trips of the object layer on a set of 16 drives over four nodes (this node's 4
 * local, 12 on three peers reached over the real drive and lock RPC, in-process HTTP servers),
 * counted as the peers receive them; and what a peer dying in the middle of a batch does.
 */
import { afterEach, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { driveRpcPlugin } from '../src/api/rpc/drive-rpc-plugin.js';
import { lockRpcPlugin, runLockBatch } from '../src/api/rpc/lock-rpc-plugin.js';
import { rpcStreamPlugin } from '../src/api/rpc/rpc-stream-plugin.js';
import type { Socket } from 'node:net';
import { LockTable } from '../src/cluster/lock-table.js';
import { DistributedNamespaceLocker, type LockServer } from '../src/cluster/distributed-locker.js';
import { remoteLockServer } from '../src/cluster/remote-lock-server.js';
import { createRemoteDrive } from '../backends/remote/remote-drive.js';
import { createMemfsDrive } from '../backends/memfs/memfs-drive.js';
import { createRpcToken, rpcKeyFor, RpcTokenSource, RpcTokenVerifier } from '../src/transport/rpc-token.js';
import { Transport } from '../src/transport/transport.js';
import { isSvcError } from '../src/errors/index.js';
import { systemClock } from '../src/util/clock.js';
import type { Drive } from '../src/drive/index.js';
import { collect, chunked, makeTestSet, patternBytes, type TestSet } from './helpers/erasure-set.js';
import { freePort } from './helpers/server-process.js';
import { KiB, MiB } from '../src/util/limits.js';
import { waitFor } from './helpers/poll.js';

const rpcKey = rpcKeyFor('batchadmin', 'batchadmin-secret');
// This side's streams, tokens and per-peer batchers, shared by every remote drive and lock server the tests make.
const transport = new Transport();

/** One peer: an HTTP server with the drive and lock services and the internode stream, counting the round trips it answers. */
interface Peer {
  app: FastifyInstance;
  port: number;
  served: Map<string, Drive>;
  table: LockTable;
  received: { drive: number; lock: number };
  /** Dies at once: stops listening and drops every connection, answers in flight included. */
  die(): void;
}

async function startPeer(): Promise<Peer> {
  const served = new Map<string, Drive>();
  const table = new LockTable(systemClock);
  const received = { drive: 0, lock: 0 };
  const app = Fastify();
  // Requests of their own (disk-info, streamed shard data) and the frames of the internode stream.
  app.addHook('onRequest', async (request) => {
    if (request.url.startsWith('/svc/rpc/v1/drive/')) received.drive += 1;
    if (request.url.startsWith('/svc/rpc/v1/lock/')) received.lock += 1;
  });
  const streams = new Set<Socket>();
  app.server.prependListener('upgrade', (_request, socket: Socket) => streams.add(socket));
  await app.register(driveRpcPlugin, { rpcKey, driveFor: (path) => served.get(path), nowMs: () => Date.now() });
  await app.register(lockRpcPlugin, { rpcKey, table, nowMs: () => Date.now() });
  await app.register(rpcStreamPlugin, { rpcKey, table, driveFor: (path) => served.get(path), buffers: new Transport().buffers, nowMs: () => Date.now(), observe: (service) => (received[service] += 1) });
  const port = await freePort();
  await app.listen({ host: '127.0.0.1', port });
  const die = (): void => {
    app.server.close();
    app.server.closeAllConnections();
    for (const socket of streams) socket.destroy();
  };
  return { app, port, served, table, received, die };
}

/** A drive that, asked to write a file whose path contains `trigger`, makes its node die mid-answer. */
function dyingOn(drive: Drive, trigger: string, peer: () => Peer): Drive {
  return new Proxy(drive, {
    get(target, property) {
      const value = Reflect.get(target, property) as unknown;
      if (property === 'writeFileAtomic') {
        return async (path: string, data: Uint8Array) => {
          if (path.includes(trigger)) {
            peer().die();
            return new Promise(() => undefined); // never answers: the node is gone
          }
          return target.writeFileAtomic(path, data);
        };
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

interface Cluster {
  test: TestSet;
  peers: Peer[];
  total(): { drive: number; lock: number };
  close(): Promise<void>;
}

/**
 * A set of 16 drives (EC:4): slots 0-3 local, slots 4-15 on peers 1-3 (four each), with
 * distributed locks over this node's table and the three peers'. `trigger`: peer 3's drives die
 * on a write to a path containing it, peer 2's on one containing `${trigger}-2`.
 */
async function startCluster(trigger = 'never-written'): Promise<Cluster> {
  const peers = [await startPeer(), await startPeer(), await startPeer()];
  const local = new LockTable(systemClock);
  const servers: LockServer[] = [
    { acquire: async (...args) => local.acquire(...args), refresh: async (...args) => local.refresh(...args), release: async (...args) => local.release(...args) },
    ...peers.map((peer) => remoteLockServer({ host: '127.0.0.1', port: peer.port, rpcKey, transport })),
  ];
  const test = await makeTestSet({
    drives: 16,
    parity: 4,
    locker: new DistributedNamespaceLocker({ servers }),
    wrap: (base, slot) => {
      if (slot < 4) return base;
      const index = Math.floor(slot / 4) - 1;
      const peer = peers[index]!;
      const path = `/d${slot}`;
      const dieOn = index === 2 ? trigger : index === 1 ? `${trigger}-2` : undefined;
      peer.served.set(path, dieOn ? dyingOn(base, dieOn, () => peer) : base);
      return createRemoteDrive({ endpoint: `http://127.0.0.1:${peer.port}${path}`, host: '127.0.0.1', port: peer.port, path, rpcKey, transport });
    },
  });
  const total = () => ({ drive: peers.reduce((sum, peer) => sum + peer.received.drive, 0), lock: peers.reduce((sum, peer) => sum + peer.received.lock, 0) });
  return {
    test,
    peers,
    total,
    close: async () => {
      await test.cleanup();
      await Promise.all(peers.map((peer) => peer.app.close().catch(() => undefined)));
    },
  };
}

/** Every peer has applied every release sent to it (releases go out after an answer). */
function released(cluster: Cluster): Promise<true> {
  return waitFor('every peer to hold no lock', () => cluster.peers.every((peer) => peer.table.held().length === 0));
}

/** Round trips the peers received while `work` ran (lock releases, sent after an answer, included). */
async function counted(cluster: Cluster, work: () => Promise<unknown>): Promise<{ drive: number; lock: number }> {
  const before = cluster.total();
  await work();
  await released(cluster);
  const after = cluster.total();
  return { drive: after.drive - before.drive, lock: after.lock - before.lock };
}

let cluster: Cluster | undefined;
afterEach(async () => {
  await cluster?.close();
  cluster = undefined;
});

const put = (test: TestSet, key: string, bytes: Uint8Array) => test.set.putObject('bucket', key, chunked(bytes), { storageClass: 'STANDARD', versioning: 'unversioned' });
const get = async (test: TestSet, key: string) => Buffer.from(await collect((await test.set.getObject('bucket', key)).body));
const codeOf = (promise: Promise<unknown>) => promise.then(() => 'ok', (error: unknown) => (isSvcError(error) ? error.code : String(error)));

describe('internode round trips per S3 operation (16 drives, 4 nodes)', () => {
  it('a 4 KiB PUT makes one exchange per peer per phase, a GET one, and concurrent requests share them', async () => {
    cluster = await startCluster();
    const { test } = cluster;
    const small = patternBytes(4 * KiB, 1);
    // Three peers: xl.meta read, then the object's directory made and xl.meta written in one
    // exchange. The write lock's quorum (3 of 4 lock servers): this node's and the next two peers',
    // a grant and a release each.
    expect(await counted(cluster, () => put(test, 'one', small))).toEqual({ drive: 6, lock: 4 });
    // Overwritten: the directory is there, xl.meta read and written.
    expect(await counted(cluster, () => put(test, 'one', small))).toEqual({ drive: 6, lock: 4 });
    // Back to back: releases go at once, batched with whatever else goes to the peer in that turn.
    expect(await counted(cluster, async () => {
      await put(test, 'one', small);
      await put(test, 'two', small);
    })).toEqual({ drive: 12, lock: 6 });
    // An inline object every drive agrees on: the xl.meta read alone, no lock.
    const read = await counted(cluster, async () => expect((await get(test, 'one')).equals(Buffer.from(small))).toBe(true));
    expect(read).toEqual({ drive: 3, lock: 0 });
    // 16 PUTs at once share their exchanges: far fewer than 16 times one PUT's.
    const many = await counted(cluster, () => Promise.all(Array.from({ length: 16 }, (_, index) => put(test, `many-${index}`, small))));
    expect(many.drive).toBeLessThan((16 * 6) / 4);
    expect(many.lock).toBeLessThan((16 * 6) / 4);
    const reads = await counted(cluster, () => Promise.all(Array.from({ length: 16 }, (_, index) => get(test, `many-${index}`))));
    expect(reads.drive).toBeLessThanOrEqual(6);
    // A streamed object: shard files written on requests of their own (one per remote drive); xl.meta
    // read; data renamed into place with its directory made; xl.meta written; the tmp area cleared.
    const large = patternBytes(2 * MiB + 3, 4);
    const streamed = await counted(cluster, () => put(test, 'large', large));
    expect(streamed).toEqual({ drive: 12 + 3 + 3 + 3 + 3, lock: 4 });
  });
});

describe('internode tokens', () => {
  it('are signed once every few seconds by a sender, and every frame\'s is checked: expiry against the clock, signature remembered once right', () => {
    let nowMs = 1_000_000;
    const source = new RpcTokenSource(rpcKey);
    const first = source.tokenAt(nowMs);
    expect(source.tokenAt(nowMs + 4_000)).toBe(first);
    expect(source.tokenAt(nowMs + 5_000)).not.toBe(first);
    const verifier = new RpcTokenVerifier(rpcKey);
    const refused = (token: string) => {
      try {
        verifier.verify(token, nowMs);
        return 'accepted';
      } catch (error) {
        return isSvcError(error, 'AccessDenied') ? 'AccessDenied' : String(error);
      }
    };
    expect(refused(first)).toBe('accepted');
    expect(refused(first)).toBe('accepted'); // remembered
    expect(refused(createRpcToken(rpcKeyFor('batchadmin', 'another-secret'), nowMs))).toBe('AccessDenied');
    expect(refused(`${first.split('.')[0]}.${'0'.repeat(64)}`)).toBe('AccessDenied');
    expect(refused('garbage')).toBe('AccessDenied');
    nowMs += 16 * 60 * 1000; // past the token's lifetime: refused though its signature is remembered
    expect(refused(first)).toBe('AccessDenied');
  });
});

/** A drive whose every operation answers `ms` late. */
function late(drive: Drive, ms: number): Drive {
  return new Proxy(drive, {
    get(target, property) {
      const value = Reflect.get(target, property) as unknown;
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        await new Promise((resolve) => setTimeout(resolve, ms));
        return (value as (...args: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

describe('the window per peer', () => {
  it('operations that come while a batch to the peer is unanswered wait for its answer and go together', async () => {
    cluster = await startCluster();
    const { test, peers } = cluster;
    const small = patternBytes(4 * KiB, 7);
    const keys = Array.from({ length: 8 }, (_, index) => `window-${index}`);
    for (const key of keys) await put(test, key, small);
    await released(cluster); // the last PUT's releases
    for (const peer of peers) for (const [path, drive] of peer.served) peer.served.set(path, late(drive, 40));
    // Eight GETs, each started in a turn of the event loop of its own: without the window each
    // would send a batch to each peer (24 exchanges). The first GET's batches go at once, the
    // other seven's wait for their answers and travel together.
    const reads = await counted(cluster, async () => {
      const bodies: Array<Promise<Buffer>> = [];
      for (const key of keys) {
        bodies.push(get(test, key));
        await new Promise((resolve) => setImmediate(resolve));
      }
      for (const body of await Promise.all(bodies)) expect(body.equals(Buffer.from(small))).toBe(true);
    });
    expect(reads.lock).toBe(0);
    expect(reads.drive).toBeGreaterThanOrEqual(6);
    expect(reads.drive).toBeLessThanOrEqual(9);
  });
});

describe('internode call deadlines', () => {
  it('a call the peer never answers fails as an offline drive at its deadline; calls with other deadlines on the same stream are answered or fail at theirs', async () => {
    const peer = await startPeer();
    try {
      const hung = createMemfsDrive({ endpoint: 'hung' });
      const answering = createMemfsDrive({ endpoint: 'answering' });
      await answering.writeFile('file', new Uint8Array([9]));
      peer.served.set('/hung', new Proxy(hung, { get: (target, property) => (property === 'readFile' ? () => new Promise(() => undefined) : (Reflect.get(target, property) as () => unknown).bind(target)) }));
      peer.served.set('/answering', answering);
      const remote = (path: string, timeoutMs: number) => createRemoteDrive({ endpoint: `http://127.0.0.1:${peer.port}${path}`, host: '127.0.0.1', port: peer.port, path, rpcKey, transport, timeoutMs });
      const started = Date.now();
      const late = codeOf(remote('/hung', 600).readFile('file')).then((code) => ({ code, afterMs: Date.now() - started }));
      const soon = codeOf(remote('/hung', 200).readFile('file')).then((code) => ({ code, afterMs: Date.now() - started }));
      await new Promise((resolve) => setTimeout(resolve, 20)); // a frame of its own (a frame is answered whole)
      // The same peer and deadline as the hung call's batch, which is never answered: this call
      // waits for that answer for limits.rpcBatchMaxWaitMs at most, then goes on its own.
      expect(Buffer.from(await remote('/answering', 200).readFile('file'))).toEqual(Buffer.from([9]));
      expect(Date.now() - started).toBeLessThan(150);
      const [first, second] = await Promise.all([soon, late]);
      expect(first.code).toBe('DriveOffline');
      expect(first.afterMs).toBeGreaterThanOrEqual(190);
      expect(first.afterMs).toBeLessThan(550);
      expect(second.code).toBe('DriveOffline');
      expect(second.afterMs).toBeGreaterThanOrEqual(590);
    } finally {
      await peer.app.close().catch(() => undefined);
    }
  });
});

describe('lock releases', () => {
  it('reach every peer, sent at once without waiting for their answers', async () => {
    cluster = await startCluster();
    const { test, peers } = cluster;
    const small = patternBytes(4 * KiB, 5);
    await Promise.all(Array.from({ length: 8 }, (_, index) => put(test, `held-${index}`, small)));
    await released(cluster);
    for (const peer of peers) expect(peer.table.held()).toEqual([]);
    // A release and a new grant of the same resource in one frame: released first, then granted.
    await put(test, 'again', small);
    await put(test, 'again', small);
    await released(cluster);
    for (const peer of peers) expect(peer.table.held()).toEqual([]);
  });

  it('go first in a frame: a grant that waited for an answer and a release of the same resource in one frame, the release is applied first', () => {
    const table = new LockTable(systemClock);
    expect(table.acquire('bucket/key', 'write', 'old', 30_000)).toBe(true);
    const { answers } = runLockBatch(table, {
      calls: [
        { op: 'acquire', resource: 'bucket/key', mode: 'write', uid: 'new', ttlMs: 30_000 },
        { op: 'bogus', resource: 'bucket/key', uid: 'x' },
        { op: 'release', resource: 'bucket/key', uid: 'old' },
      ],
    });
    expect(answers).toEqual([{ granted: true }, { code: 'InvalidArgument', message: 'unknown lock operation' }, { released: true }]);
    expect(table.refresh('bucket/key', 'new', 30_000)).toBe(true);
    expect(table.refresh('bucket/key', 'old', 30_000)).toBe(false);
  });

  it('a peer gone before its releases are sent holds up no other peer and no later request', async () => {
    cluster = await startCluster();
    const { test, peers } = cluster;
    const small = patternBytes(4 * KiB, 6);
    await put(test, 'first', small);
    peers[0]!.die(); // its releases of 'first', if not yet answered, go nowhere
    // The grant from peer 1 is missing: peer 3's is asked for in the same attempt, a quorum.
    await put(test, 'second', small);
    await waitFor('the live peers to hold no lock', () => peers.slice(1).every((peer) => peer.table.held().length === 0));
    expect((await get(test, 'second')).equals(Buffer.from(small))).toBe(true);
  });
});

describe('a peer dying in the middle of a batch', () => {
  it('fails the operations of that batch with DriveOffline, as an unreachable peer does, and no other; a write is not sent again', async () => {
    const dying = await startPeer();
    const other = await startPeer();
    try {
      const inner = createMemfsDrive({ endpoint: 'inner' });
      let writes = 0;
      const counting = new Proxy(inner, {
        get: (target, property) => (property === 'writeFileAtomic' ? (path: string, data: Uint8Array) => ((writes += 1), target.writeFileAtomic(path, data)) : (Reflect.get(target, property) as () => unknown).bind(target)),
      });
      dying.served.set('/a', createMemfsDrive({ endpoint: 'a' }));
      dying.served.set('/b', dyingOn(counting, 'die', () => dying));
      other.served.set('/c', createMemfsDrive({ endpoint: 'c' }));
      const remote = (peer: Peer, path: string) => createRemoteDrive({ endpoint: `http://127.0.0.1:${peer.port}${path}`, host: '127.0.0.1', port: peer.port, path, rpcKey, transport });
      const [a, b, c] = [remote(dying, '/a'), remote(dying, '/b'), remote(other, '/c')];
      await a.writeFile('file', new Uint8Array([1]));
      await c.writeFile('file', new Uint8Array([3]));
      // One turn: a read on /a and the fatal write on /b travel in one batch to the dying peer, a read on /c to the other.
      const outcomes = await Promise.all([codeOf(a.readFile('file')), codeOf(b.writeFileAtomic('die', new Uint8Array([2]))), codeOf(c.readFile('file'))]);
      expect(outcomes).toEqual(['DriveOffline', 'DriveOffline', 'ok']);
      expect(writes).toBe(0); // the wrapper died before writing; and the batch was not sent again
      expect(dying.received.drive).toBe(2);
      // The same error as any call to a peer that is gone.
      expect(await codeOf(remote(dying, '/a').readFile('file'))).toBe('DriveOffline');
    } finally {
      await Promise.all([dying.app.close().catch(() => undefined), other.app.close()]);
    }
  });

  it('a PUT survives one peer dying mid-commit (its four drives are within parity); with a second gone writes and reads fail closed as before', async () => {
    cluster = await startCluster('victim');
    const { test } = cluster;
    const small = patternBytes(4 * KiB, 2);
    const large = patternBytes(2 * MiB + 5, 3);
    await put(test, 'before', large);
    // Peer 3 dies while it writes victim's xl.meta: the PUT commits on the other 12 drives.
    await put(test, 'victim', small);
    expect((await get(test, 'victim')).equals(Buffer.from(small))).toBe(true);
    expect((await get(test, 'before')).equals(Buffer.from(large))).toBe(true);
    // Peer 2 dies the same way: 8 drives left, below write and read quorum (12).
    expect(await codeOf(put(test, 'victim-2', small))).toBe('ErasureWriteQuorum');
    expect(await codeOf(test.set.headObject('bucket', 'victim-2'))).toBe('NoSuchKey');
    expect(await codeOf(get(test, 'before'))).toBe('ErasureReadQuorum');
  });
});
