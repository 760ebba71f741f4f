import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { Agent } from 'node:http';
import { driveContractSuite } from '../conformance/drive-contract.js';
import { createRemoteDrive } from '../backends/remote/remote-drive.js';
import { createFsDrive } from '../backends/fs/fs-drive.js';
import { createMemfsDrive } from '../backends/memfs/memfs-drive.js';
import { driveRpcPlugin, driveRpcPrefix } from '../src/api/rpc/drive-rpc-plugin.js';
import { rpcStreamPlugin } from '../src/api/rpc/rpc-stream-plugin.js';
import { LockTable } from '../src/cluster/lock-table.js';
import { systemClock } from '../src/util/clock.js';
import type { Socket } from 'node:net';
import { createRpcToken, rpcKeyFor } from '../src/transport/rpc-token.js';
import { Transport } from '../src/transport/transport.js';
import type { Drive } from '../src/drive/index.js';
import { freePort } from './helpers/server-process.js';
import { waitFor } from './helpers/poll.js';

const rpcKey = rpcKeyFor('rpcadmin', 'rpcadmin-secret');
let app: FastifyInstance;
let port: number;
let root: string;
const served = new Map<string, Drive>();
let counter = 0;
// The peer's transport (its pooled range buffers) and this side's (its streams and batchers).
const peerTransport = new Transport();
const transport = new Transport();
const internodeBuffers = peerTransport.buffers;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-remote-'));
  port = await freePort();
  app = Fastify();
  await app.register(driveRpcPlugin, { rpcKey, driveFor: (path) => served.get(path), nowMs: () => Date.now() });
  await app.register(rpcStreamPlugin, { rpcKey, driveFor: (path) => served.get(path), table: new LockTable(systemClock), buffers: peerTransport.buffers, nowMs: () => Date.now() });
  await app.listen({ host: '127.0.0.1', port });
});
afterAll(async () => {
  await app.close();
  transport.close();
  await rm(root, { recursive: true, force: true });
});

function remoteFor(path: string, key = rpcKey): Drive {
  return createRemoteDrive({ endpoint: `http://127.0.0.1:${port}${path}`, host: '127.0.0.1', port, path, rpcKey: key, transport });
}

driveContractSuite('remote (over internode RPC) to fs', async () => {
  const path = `/fs${(counter += 1)}`;
  served.set(path, await createFsDrive(join(root, path)));
  return { drive: remoteFor(path), cleanup: async () => void served.delete(path) };
});

driveContractSuite('remote (over internode RPC) to memfs', async () => {
  const path = `/mem${(counter += 1)}`;
  served.set(path, createMemfsDrive({ endpoint: path }));
  return { drive: remoteFor(path), cleanup: async () => void served.delete(path) };
});

describe('internode RPC authentication', () => {
  it('refuses requests without a token, with a forged one, or with an expired one, and does nothing', async () => {
    const inner = createMemfsDrive();
    served.set('/auth', inner);
    const url = (op: string) => `http://127.0.0.1:${port}${driveRpcPrefix}/${op}?drive=%2Fauth&path=victim`;
    const attempts: (string | undefined)[] = [
      undefined,
      `SvcRpc ${createRpcToken(rpcKeyFor('rpcadmin', 'another-secret'), Date.now())}`,
      `SvcRpc ${createRpcToken(rpcKey, Date.now() - 3_600_000, 60_000)}`,
      'SvcRpc garbage',
    ];
    for (const authorization of attempts) {
      const response = await fetch(url('write'), { method: 'PUT', body: 'owned', headers: authorization ? { authorization } : {} });
      expect(response.status, authorization).toBe(403);
    }
    expect(await inner.stat('victim').then(() => 'exists', () => 'absent')).toBe('absent');
    const wrongKey = remoteFor('/auth', rpcKeyFor('rpcadmin', 'another-secret'));
    await expect(wrongKey.writeFile('victim', new Uint8Array([1]))).rejects.toMatchObject({ code: 'AccessDenied' });
    await remoteFor('/auth').writeFile('allowed', new Uint8Array([1]));
    expect((await inner.readFile('allowed')).length).toBe(1);
  });

  it('reports an unreachable peer as an offline drive', async () => {
    const closedPort = await freePort();
    const drive = createRemoteDrive({ endpoint: `http://127.0.0.1:${closedPort}/x`, host: '127.0.0.1', port: closedPort, path: '/x', rpcKey, transport });
    await expect(drive.readFile('a')).rejects.toMatchObject({ code: 'DriveOffline' });
    expect((await drive.diskInfo()).online).toBe(false);
  });
});

describe('internode RPC retries', () => {
  it('retries a read whose connection drops before any answer, a bounded number of times, and never a write', async () => {
    const flaky = Fastify();
    let drops = 0;
    let dropsLeft = 0;
    const streams = new Set<Socket>();
    // Before the stream service sees it: a connection dropped before any answer.
    flaky.server.prependListener('upgrade', (_request, socket: Socket) => {
      if (dropsLeft > 0) {
        dropsLeft -= 1;
        drops += 1;
        socket.destroy();
        return;
      }
      streams.add(socket);
    });
    const dropOpenStreams = async () => {
      for (const socket of streams) socket.destroy();
      streams.clear();
      await new Promise((resolve) => setTimeout(resolve, 50));
    };
    const inner = createMemfsDrive();
    await inner.writeFile('present', new Uint8Array([7, 7]));
    await flaky.register(driveRpcPlugin, { rpcKey, driveFor: () => inner, nowMs: () => Date.now() });
    await flaky.register(rpcStreamPlugin, { rpcKey, driveFor: () => inner, table: new LockTable(systemClock), buffers: peerTransport.buffers, nowMs: () => Date.now() });
    const flakyPort = await freePort();
    await flaky.listen({ host: '127.0.0.1', port: flakyPort });
    try {
      const drive = createRemoteDrive({ endpoint: `http://127.0.0.1:${flakyPort}/f`, host: '127.0.0.1', port: flakyPort, path: '/f', rpcKey, transport, agent: new Agent({ keepAlive: false }) });
      dropsLeft = 2;
      expect(await drive.readFile('present')).toEqual(new Uint8Array([7, 7]));
      expect(drops).toBe(2);

      await dropOpenStreams();
      drops = 0;
      dropsLeft = 5;
      await expect(drive.readFile('present')).rejects.toMatchObject({ code: 'DriveOffline' });
      expect(drops).toBe(3);

      drops = 0;
      dropsLeft = 1;
      await expect(drive.writeFile('written', new Uint8Array([1]))).rejects.toMatchObject({ code: 'DriveOffline' });
      expect(drops).toBe(1);
      expect(await inner.stat('written').then(() => 'written', () => 'absent')).toBe('absent');
      dropsLeft = 0;
    } finally {
      await flaky.close();
    }
  });
});

describe('internode range reads into reused memory', () => {
  it('lands every range read in the caller\'s buffer byte for byte, straight from the stream, and gives back each range the peer read', async () => {
    const path = `/pooled${(counter += 1)}`;
    const inner = await createFsDrive(join(root, path));
    served.set(path, inner);
    const file = Buffer.alloc(3 * 1024 * 1024);
    for (let index = 0; index < file.length; index += 1) file[index] = (index * 7 + (index >> 11)) & 0xff;
    await inner.writeFile('shards/part.1', file, { sync: true });
    const drive = remoteFor(path);
    try {
      const before = { outstanding: internodeBuffers.outstanding, allocated: internodeBuffers.allocated };
      const lengthBytes = 300 * 1024;
      // Rounds of four concurrent reads (several ranges to one frame, as a GET's run of blocks makes).
      for (let round = 0; round < 12; round += 1) {
        await Promise.all(Array.from({ length: 4 }, async (_, index) => {
          const offset = ((round * 4 + index) * 65_537) % (file.length - lengthBytes);
          const into = new Uint8Array(lengthBytes + 5).fill(0xee);
          const placed = await drive.readRange('shards/part.1', offset, lengthBytes, into);
          expect(placed.buffer).toBe(into.buffer);
          expect(Buffer.from(placed).equals(file.subarray(offset, offset + lengthBytes)), `range at ${offset}`).toBe(true);
          expect(into[lengthBytes]).toBe(0xee); // nothing past the range was written
        }));
      }
      // A short range at the end of the file, and a missing file: the answer frame still goes back.
      const tail = await drive.readRange('shards/part.1', file.length - 100_000, lengthBytes, new Uint8Array(lengthBytes));
      expect(Buffer.from(tail).equals(file.subarray(file.length - 100_000))).toBe(true);
      await expect(drive.readRange('shards/absent', 0, lengthBytes, new Uint8Array(lengthBytes))).rejects.toMatchObject({ code: 'FileNotFound' });
      // The peer's range buffers are given back when the socket has taken the answer, a moment after it arrives here.
      await waitFor('every range buffer lent out to be given back', () => internodeBuffers.outstanding === before.outstanding);
      // 50 reads of about 1.2 MB per frame came through a handful of buffers, not one or two each.
      expect(internodeBuffers.allocated - before.allocated).toBeLessThanOrEqual(12);
    } finally {
      served.delete(path);
    }
  });
});
