/**
 * The node transport (src/transport/transport.ts) against a real peer listener: one stream per
 * peer shared by its callers, nothing shared between two transports, streams whose connection
 * closed or that sat idle are dropped (idleness judged by the transport's clock, a test clock
 * working as the real one), and close() ends them all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import { rpcStreamPlugin } from '../src/api/rpc/rpc-stream-plugin.js';
import { LockTable } from '../src/cluster/lock-table.js';
import { rpcKeyFor } from '../src/transport/rpc-token.js';
import { Transport } from '../src/transport/transport.js';
import { systemClock } from '../src/util/clock.js';
import { limits } from '../src/util/limits.js';
import { waitFor } from './helpers/poll.js';

const rpcKey = rpcKeyFor('transportadmin', 'transportadmin-secret');
let app: FastifyInstance;
let port = 0;
const sockets = new Set<Socket>();
let upgrades = 0;

beforeAll(async () => {
  app = Fastify();
  app.server.prependListener('upgrade', (_request, socket: Socket) => {
    upgrades += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await app.register(rpcStreamPlugin, { rpcKey, table: new LockTable(systemClock), driveFor: () => undefined, buffers: new Transport().buffers, nowMs: () => Date.now() });
  await app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await app.close();
});

const target = () => ({ host: '127.0.0.1', port, rpcKey });

/** One lock call through the transport's stream to the peer; resolves with the peer's answer. */
async function release(transport: Transport): Promise<unknown> {
  const body = Buffer.from(JSON.stringify({ calls: [{ op: 'release', resource: 'b/k', uid: 'u1' }] }));
  return JSON.parse(Buffer.from(await transport.streamTo(target()).call('lock', [body], 5_000)).toString('utf8'));
}



describe('the node transport', () => {
  it('shares one stream per peer between callers, and none between two transports', async () => {
    const [one, two] = [new Transport(), new Transport()];
    try {
      expect(one.streamTo(target())).toBe(one.streamTo(target()));
      expect(one.streamTo(target())).not.toBe(two.streamTo(target()));
      const before = upgrades;
      await Promise.all([release(one), release(one), release(two)]);
      expect(await release(one)).toEqual({ answers: [{ released: true }] });
      expect(upgrades - before).toBe(2);
      expect(one.pooledStreams).toBe(1);
    } finally {
      one.close();
      two.close();
    }
  });

  it('drops a stream whose connection closed, and the next call opens a new one', async () => {
    const transport = new Transport();
    try {
      await release(transport);
      const first = transport.streamTo(target());
      for (const socket of sockets) socket.destroy();
      await waitFor('the first stream to close', () => first.closed, { intervalMs: 10 });
      const second = transport.streamTo(target());
      expect(second).not.toBe(first);
      await release(transport);
      expect(second.connected).toBe(true);
      expect(transport.pooledStreams).toBe(1);
    } finally {
      transport.close();
    }
  });

  it('drops a stream idle for idleStreamMs on its own clock, and signs tokens on that clock', async () => {
    let nowMs = Date.now();
    const transport = new Transport({ clock: { nowMs: () => nowMs }, idleStreamMs: 60_000 });
    try {
      await release(transport);
      const first = transport.streamTo(target());
      nowMs += 59_999;
      expect(transport.streamTo(target())).toBe(first);
      nowMs += 60_000;
      const before = upgrades;
      const second = transport.streamTo(target());
      expect(second).not.toBe(first);
      expect(first.closed).toBe(true);
      await release(transport);
      expect(upgrades - before).toBe(1);
      // the moved clock is the one tokens are signed against
      expect(Number(transport.tokenFor(rpcKey).split('.')[0])).toBe(nowMs + limits.rpcTokenTtlMs);
    } finally {
      transport.close();
    }
  });

  it('keeps one object per peer and kind, and close() ends every stream', async () => {
    const transport = new Transport();
    const made: string[] = [];
    const make = (name: string) => () => (made.push(name), { name });
    expect(transport.perPeer('batcher', 'p1', make('a'))).toBe(transport.perPeer('batcher', 'p1', make('b')));
    expect(transport.perPeer('batcher', 'p2', make('c'))).not.toBe(transport.perPeer('other', 'p2', make('d')));
    expect(made).toEqual(['a', 'c', 'd']);
    await release(transport);
    const stream = transport.streamTo(target());
    transport.close();
    expect(stream.closed).toBe(true);
    expect(transport.pooledStreams).toBe(0);
  });
});
