/**
 * What one internode exchange and one remote drive operation cost, both ends summed, measured
 * between two processes over loopback (a peer process serving the internode stream, this process
 * calling it). Prints one JSON line: rate, and CPU µs per call (or per read) of each end.
 *
 *   node --import tsx bench/internode.ts frames [calls] [concurrency]   lock frames with a trivial grant and release each
 *   node --import tsx bench/internode.ts bare [calls]                   the same sizes over a bare socket, one at a time
 *   node --import tsx bench/internode.ts reads [objects]                a 600-byte file from each of the peer's 4 fs drives
 *   node --import tsx bench/internode.ts local-reads [objects]          the same reads from drives in this process
 *   node --import tsx bench/internode.ts ranges [calls] [concurrency]   1 MiB ranges of a shard file on each of the 4 drives, into reused buffers
 *   node --import tsx bench/internode.ts local-ranges [calls]           the same ranges from drives in this process
 *
 * `reads` reads 16 objects at a time (so batches carry several reads), half of the files missing;
 * `local-reads` gives what the internode path adds to each operation. `ranges` reads as a GET
 * reads its shards (`readRange` into a buffer of the caller's, one range per drive in one batch),
 * 4 calls at a time, and gives CPU µs per MB; `local-ranges` what the same reads cost in one process.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { rpcStreamPlugin } from '../src/api/rpc/rpc-stream-plugin.js';
import { LockTable } from '../src/cluster/lock-table.js';
import { systemClock } from '../src/util/clock.js';
import { RpcStreamClient } from '../src/transport/rpc-stream.js';
import { Transport } from '../src/transport/transport.js';
import type { Drive } from '../src/drive/index.js';
import { createFsDrive } from '../backends/fs/fs-drive.js';
import { createRemoteDrive } from '../backends/remote/remote-drive.js';

const rpcKey = Buffer.alloc(32, 7);
/** The calling side's streams and batchers (the peer processes have their own). */
const clientTransport = new Transport();
const host = '127.0.0.2';
const drivesPerPeer = 4;
const objects = 64;
const rangeBytes = 1024 * 1024;
const shardFileBytes = 16 * rangeBytes;
const cpuMs = (): number => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};

/** The peer: serves the internode stream (or echoes bare bytes), and answers its CPU time since a mark. */
async function servePeer(kind: string, root: string): Promise<void> {
  let port: number;
  if (kind === 'bare') {
    const server = createServer((socket) => {
      socket.setNoDelay(true);
      socket.on('data', (chunk: Buffer) => socket.write(Buffer.from(chunk.subarray(0, 60))));
    });
    server.listen(0, host);
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  } else {
    const drives = new Map<string, Drive>();
    for (let index = 0; index < drivesPerPeer; index += 1) drives.set(`/d${index}`, await createFsDrive(join(root, `d${index}`)));
    const app = Fastify();
    await app.register(rpcStreamPlugin, { rpcKey, table: new LockTable(systemClock), driveFor: (path) => drives.get(path), buffers: new Transport().buffers, nowMs: () => Date.now() });
    await app.listen({ host, port: 0 });
    port = (app.server.address() as AddressInfo).port;
  }
  let markMs = 0;
  process.on('message', (message: string) => {
    if (message === 'mark') markMs = cpuMs();
    process.send!({ port, cpuMs: cpuMs() - markMs });
  });
  process.send!({ port, cpuMs: 0 });
}

/** Runs `count` calls of `one`, `concurrency` at a time. */
async function run(one: () => Promise<unknown>, count: number, concurrency: number): Promise<void> {
  let left = count;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (left-- > 0) await one();
  }));
}

/** The peer's four drives as this process reaches them: in this process for the `local-` kinds, over internode RPC for the others. */
async function drivesFor(kind: string, root: string, port: number): Promise<Drive[]> {
  const indexes = Array.from({ length: drivesPerPeer }, (_, index) => index);
  if (kind.startsWith('local-')) return Promise.all(indexes.map((index) => createFsDrive(join(root, `d${index}`))));
  return indexes.map((index) => createRemoteDrive({ endpoint: `http://${host}:${port}/d${index}`, path: `/d${index}`, host, port, rpcKey, transport: clientTransport }));
}

async function measure(kind: string, count: number, concurrency: number): Promise<void> {
  const ranges = kind.endsWith('ranges');
  const root = mkdtempSync(join(tmpdir(), 'svc-internode-'));
  for (let drive = 0; drive < drivesPerPeer; drive += 1) {
    for (let object = 0; object < objects; object += 2) {
      mkdirSync(join(root, `d${drive}`, 'b', `o${object}`), { recursive: true });
      writeFileSync(join(root, `d${drive}`, 'b', `o${object}`, 'xl.meta'), Buffer.alloc(600, object));
    }
    if (ranges) writeFileSync(join(root, `d${drive}`, 'b', 'shard'), Buffer.alloc(shardFileBytes, drive + 1));
  }
  const peer = fork(fileURLToPath(import.meta.url), ['--peer', kind, root], { execArgv: ['--import', 'tsx'] });
  const ask = async (message?: string): Promise<{ port: number; cpuMs: number }> => {
    if (message) peer.send(message);
    return ((await once(peer, 'message')) as [{ port: number; cpuMs: number }])[0];
  };
  try {
    const { port } = await ask();
    let one: () => Promise<unknown>;
    let perCall = 1;
    let next = 0;
    if (kind === 'frames') {
      const client = new RpcStreamClient({ host, port, rpcKey });
      one = () => {
        next += 1;
        const calls = [{ op: 'acquire', resource: `r${next % 64}`, mode: 'read', uid: `u${next}`, ttlMs: 30_000 }, { op: 'release', resource: `r${next % 64}`, uid: `u${next}` }];
        return client.call('lock', [Buffer.from(JSON.stringify({ calls }))], 30_000);
      };
    } else if (kind === 'bare') {
      const socket = createConnection({ host, port });
      socket.setNoDelay(true);
      await once(socket, 'connect');
      const waiting: (() => void)[] = [];
      socket.on('data', () => waiting.shift()?.());
      const body = Buffer.alloc(150, 1);
      one = () => new Promise<void>((resolve) => {
        waiting.push(resolve);
        socket.write(body);
      });
      concurrency = 1; // one at a time: replies to calls in flight together would arrive joined
    } else if (ranges) {
      const drives = await drivesFor(kind, root, port);
      const idle: Uint8Array[][] = [];
      perCall = (drivesPerPeer * rangeBytes) / 1e6;
      one = async () => {
        const into = idle.pop() ?? drives.map(() => new Uint8Array(rangeBytes));
        const offset = (next++ % (shardFileBytes / rangeBytes)) * rangeBytes;
        await Promise.all(drives.map((drive, index) => drive.readRange('b/shard', offset, rangeBytes, into[index])));
        idle.push(into);
      };
    } else {
      const drives = await drivesFor(kind, root, port);
      perCall = drivesPerPeer;
      one = () => {
        const object = next++ % objects;
        return Promise.all(drives.map((drive) => drive.readFile(`b/o${object}/xl.meta`).catch(() => undefined)));
      };
    }
    await run(one, Math.min(count, 3000), concurrency);
    await ask('mark');
    const startedMs = performance.now();
    const startedCpuMs = cpuMs();
    await run(one, count, concurrency);
    const callerCpuMs = cpuMs() - startedCpuMs;
    const seconds = (performance.now() - startedMs) / 1000;
    const { cpuMs: peerCpuMs } = await ask('read');
    const units = count * perCall;
    const unit = ranges ? 'MB' : perCall === 1 ? 'Call' : 'Read';
    const rate = ranges ? 'mbPerSecond' : `${unit.toLowerCase()}sPerSecond`;
    console.log(JSON.stringify({ kind, concurrency, [rate]: Math.round(units / seconds), [`callerUsPer${unit}`]: +((callerCpuMs / units) * 1000).toFixed(1), [`peerUsPer${unit}`]: +((peerCpuMs / units) * 1000).toFixed(1) }));
  } finally {
    peer.kill();
    rmSync(root, { recursive: true, force: true });
  }
}

const [first, second, third] = process.argv.slice(2);
const kinds = ['frames', 'bare', 'reads', 'local-reads', 'ranges', 'local-ranges'];
if (first === '--peer') await servePeer(second!, third!);
else {
  const kind = first ?? 'reads';
  if (!kinds.includes(kind)) throw new Error(`${kind}: one of ${kinds.join(', ')}`);
  const count = Number(second ?? (kind.endsWith('ranges') ? 500 : kind.endsWith('reads') ? 10_000 : 20_000));
  const concurrency = Number(third ?? (kind.endsWith('ranges') ? 4 : kind.endsWith('reads') ? 16 : 8));
  if (!Number.isInteger(count) || count < 1 || count > 1_000_000) throw new Error(`calls ${second}: a whole number from 1 to 1000000`);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 256) throw new Error(`concurrency ${third}: a whole number from 1 to 256`);
  await measure(kind, count, concurrency);
  process.exit(0);
}
