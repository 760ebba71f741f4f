/**
 * What moving bytes between two processes over loopback TCP costs this machine, both ends summed:
 * the floor under any cluster of processes on one machine that ships shard data between nodes.
 * One process sends `megabytes` in 1 MiB writes (a shard stream's pieces); the other receives
 * them into one reused buffer (`net.Socket`'s `onread`, the cheapest receive Node has) and keeps
 * nothing. Prints one JSON line: MB/s and each end's CPU ms per MB (user + system, all threads).
 *
 *   node --import tsx bench/loopback.ts [megabytes]
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { createConnection, createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

const MiB = 1024 * 1024;
const maxMegabytes = 64 * 1024;

const cpuMs = (): number => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};

/** The receiving end, in a process of its own: connects, counts the bytes, answers its CPU time once all arrived. */
async function receive(port: number, totalBytes: number): Promise<void> {
  let received = 0;
  let startedMs = 0;
  const socket = createConnection({
    host: '127.0.0.2',
    port,
    onread: {
      buffer: Buffer.allocUnsafe(256 * 1024),
      callback: (bytes: number): boolean => {
        if (received === 0) startedMs = cpuMs();
        received += bytes;
        if (received >= totalBytes) process.send!({ cpuMs: cpuMs() - startedMs });
        return true;
      },
    },
  });
  socket.on('error', () => process.exit(1));
  await once(socket, 'connect');
}

async function send(megabytes: number): Promise<void> {
  const totalBytes = megabytes * MiB;
  const server = createServer();
  server.listen(0, '127.0.0.2');
  await once(server, 'listening');
  const child = fork(fileURLToPath(import.meta.url), ['--receive', String((server.address() as AddressInfo).port), String(totalBytes)]);
  const [connection] = (await once(server, 'connection')) as [import('node:net').Socket];
  const receiverDone = once(child, 'message') as Promise<[{ cpuMs: number }]>;
  const chunk = Buffer.alloc(MiB, 0x5a);
  const startedCpuMs = cpuMs();
  const startedMs = performance.now();
  for (let sent = 0; sent < megabytes; sent += 1) {
    if (!connection.write(chunk)) await once(connection, 'drain');
  }
  const [{ cpuMs: receiverCpuMs }] = await receiverDone;
  const senderCpuMs = cpuMs() - startedCpuMs;
  const seconds = (performance.now() - startedMs) / 1000;
  connection.destroy();
  child.kill();
  server.close();
  const megabytesSent = totalBytes / 1e6;
  console.log(JSON.stringify({ mbPerSecond: megabytesSent / seconds, senderMsPerMb: senderCpuMs / megabytesSent, receiverMsPerMb: receiverCpuMs / megabytesSent }));
}

const [first, port, total] = process.argv.slice(2);
if (first === '--receive') await receive(Number(port), Number(total));
else {
  const megabytes = Number(first ?? 2048);
  if (!Number.isInteger(megabytes) || megabytes < 1 || megabytes > maxMegabytes) throw new Error(`megabytes ${first}: a whole number from 1 to ${maxMegabytes}`);
  await send(megabytes);
}
