/**
 * The benchmark's other servers, each run in a process of its own like svc:
 *
 *   node --import tsx bench/peers.ts s3rver <port> <directory>   the s3rver package (no erasure coding, no fsync)
 *   node --import tsx bench/peers.ts bare <port>                 a node:http server that stores nothing: it
 *                                                                discards PUT bodies and answers GETs from memory:
 *                                                                64 MiB (in 1 MiB writes) for keys under large/,
 *                                                                4 KiB for any other
 *
 * Each prints `ready` once it listens on 127.0.0.1 and stops on SIGTERM.
 */
import { createServer } from 'node:http';
import S3rver from 's3rver';

const MiB = 1024 * 1024;

async function bare(port: number): Promise<() => Promise<void>> {
  const block = Buffer.alloc(MiB, 'g');
  const small = Buffer.alloc(4096, 'g');
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      if (request.method !== 'GET') {
        response.writeHead(200, { etag: '"bare"' });
        response.end();
        return;
      }
      if (!request.url?.includes('/large/')) {
        response.writeHead(200, { 'content-length': small.length, 'content-type': 'application/octet-stream', etag: '"bare"' });
        response.end(small);
        return;
      }
      response.writeHead(200, { 'content-length': 64 * MiB, 'content-type': 'application/octet-stream', etag: '"bare"' });
      let sent = 0;
      const more = (): void => {
        while (sent < 64) {
          sent += 1;
          if (!response.write(block)) return void response.once('drain', more);
        }
        response.end();
      };
      more();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return () => new Promise((resolve) => server.close(() => resolve()));
}

async function s3rver(port: number, directory: string): Promise<() => Promise<void>> {
  const instance = new S3rver({ port, address: '127.0.0.1', silent: true, directory });
  await instance.run();
  return () => instance.close();
}

const [kind, portText, directory] = process.argv.slice(2);
const port = Number(portText);
const stop = kind === 's3rver' ? await s3rver(port, directory!) : await bare(port);
process.once('SIGTERM', () => void stop().then(() => process.exit(0)));
console.log('ready');
