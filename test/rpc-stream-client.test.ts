import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { answerFrame, callLayout, FrameReader, RpcStreamClient, RpcStreamFailure, streamTimeoutMessage, type AnswerSink } from '../src/transport/rpc-stream.js';
import { rpcKeyFor } from '../src/transport/rpc-token.js';

/**
 * A peer that speaks the stream's frames and nothing else: it answers each call with the call's
 * body repeated to `answerBytes`, after the tens of milliseconds the body's first byte names;
 * with a third byte, it sends the answer's first half and the rest that many tens of milliseconds later,
 * or, with a fourth byte of 1, closes the connection instead of sending the rest.
 */
let server: Server;
let port: number;
const answerBytes = 200_000;

function serve(socket: Socket): void {
  let request = Buffer.alloc(0);
  const reader = new FrameReader(callLayout, (head, body) => {
    const id = head.readUInt32BE(1);
    const answer = Buffer.alloc(answerBytes, body);
    const whole = Buffer.concat(answerFrame(id, true, [answer]));
    const half = body.length > 2 ? whole.length >> 1 : whole.length;
    setTimeout(() => {
      if (!socket.destroyed) socket.write(whole.subarray(0, half));
      setTimeout(() => {
        if (body[3] === 1) socket.destroy();
        else if (!socket.destroyed) socket.write(whole.subarray(half));
      }, (body[2] ?? 0) * 10);
    }, body[0]! * 10);
  }, 1 << 20);
  const onData = (chunk: Buffer): void => {
    request = Buffer.concat([request, chunk]);
    const end = request.indexOf('\r\n\r\n');
    if (end < 0) return;
    socket.off('data', onData);
    socket.write('HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: svc-rpc\r\n\r\n');
    socket.on('data', (frames: Buffer) => reader.push(frames));
    if (request.length > end + 4) reader.push(request.subarray(end + 4));
  };
  socket.on('data', onData);
  socket.on('error', () => socket.destroy());
}

beforeAll(async () => {
  server = createServer(serve);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** A sink that counts what reaches it and answers with the bytes it was given. */
function recordingSink(): AnswerSink<Buffer> & { received: number } {
  const pieces: Buffer[] = [];
  return {
    received: 0,
    write(bytes) {
      this.received += bytes.length;
      pieces.push(Buffer.from(bytes));
    },
    end: () => Buffer.concat(pieces),
  };
}

describe('internode stream client, answers taken as they arrive', () => {
  it('gives a call\'s sink the whole answer, and a call that timed out none of its late answer, while the stream goes on', async () => {
    const client = new RpcStreamClient({ host: '127.0.0.1', port, rpcKey: rpcKeyFor('rpcadmin', 'rpcadmin-secret') });
    try {
      const quick = recordingSink();
      const answer = await client.callInto('drive', [Buffer.from([0, 1, 2])], 5_000, quick);
      expect(answer.equals(Buffer.alloc(answerBytes, Buffer.from([0, 1, 2])))).toBe(true);

      // Answered 250 ms late, after its 30 ms deadline: its caller may reuse the sink's memory by then.
      const late = recordingSink();
      await expect(client.callInto('drive', [Buffer.from([25, 7])], 30, late)).rejects.toThrow(streamTimeoutMessage);
      await new Promise((resolve) => setTimeout(resolve, 400)); // its answer has arrived meanwhile
      expect(late.received).toBe(0);
      // Half answered at once, the rest a second later, after the deadline (this peer writes nothing else meanwhile).
      const halfway = recordingSink();
      await expect(client.callInto('drive', [Buffer.from([0, 8, 100])], 400, halfway)).rejects.toThrow(streamTimeoutMessage);
      const receivedByDeadline = halfway.received;
      expect(receivedByDeadline).toBeGreaterThan(0);
      const after = recordingSink();
      const next = client.callInto('drive', [Buffer.from([90, 9])], 5_000, after); // answered 900 ms later, after the rest
      expect((await next).equals(Buffer.alloc(answerBytes, Buffer.from([90, 9])))).toBe(true);
      expect(halfway.received).toBe(receivedByDeadline);
      expect(after.received).toBe(answerBytes);
    } finally {
      client.close();
    }
  });

  it('rejects a call with what its sink threw, and keeps the stream for the next call', async () => {
    const client = new RpcStreamClient({ host: '127.0.0.1', port, rpcKey: rpcKeyFor('rpcadmin', 'rpcadmin-secret') });
    try {
      let writes = 0;
      const refusing: AnswerSink<never> = {
        write: () => {
          writes += 1;
          throw new Error('malformed answer');
        },
        end: () => {
          throw new Error('unreachable: end after a failed write');
        },
      };
      await expect(client.callInto('drive', [Buffer.from([0])], 5_000, refusing)).rejects.toThrow('malformed answer');
      expect(writes).toBe(1); // nothing more reached it once it had failed
      expect((await client.callInto('drive', [Buffer.from([0, 4])], 5_000, recordingSink())).length).toBe(answerBytes);
    } finally {
      client.close();
    }
  });

  it('fails a call whose peer goes away in the middle of its answer as unreachable, and opens a new stream for the next call', async () => {
    const client = new RpcStreamClient({ host: '127.0.0.1', port, rpcKey: rpcKeyFor('rpcadmin', 'rpcadmin-secret') });
    try {
      const cut = recordingSink();
      const failure = await client.callInto('drive', [Buffer.from([0, 3, 2, 1])], 5_000, cut).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(RpcStreamFailure);
      expect((failure as RpcStreamFailure).kind).toBe('unreachable'); // a remote drive reports it as DriveOffline
      expect(cut.received).toBeGreaterThan(0);
      expect(cut.received).toBeLessThan(answerBytes);
      const next = recordingSink();
      expect((await client.callInto('drive', [Buffer.from([0, 5])], 5_000, next)).equals(Buffer.alloc(answerBytes, Buffer.from([0, 5])))).toBe(true);
    } finally {
      client.close();
    }
  });
});

/** Connections the peer above has accepted so far. */
async function acceptedSoFar(): Promise<number> {
  return new Promise((resolve, reject) => server.getConnections((error, count) => (error ? reject(error) : resolve(count))));
}

describe('internode stream client after a cut', () => {
  it('bounds a call waiting for a connection by its own deadline, gives the opening up, and opens a fresh one for the next call', async () => {
    // A peer that takes connections but does not answer the upgrade until told to, as a peer behind a cut.
    let answering = false;
    const held: Socket[] = [];
    let accepted = 0;
    const silent = createServer((socket) => {
      accepted += 1;
      if (answering) return serve(socket);
      held.push(socket);
      socket.on('error', () => undefined);
      socket.resume();
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const client = new RpcStreamClient({ host: '127.0.0.1', port: (silent.address() as { port: number }).port, rpcKey: rpcKeyFor('rpcadmin', 'rpcadmin-secret') }, { connectTimeoutMs: 300 });
    try {
      const started = performance.now();
      await expect(client.call('drive', [Buffer.from([0, 1])], 150)).rejects.toThrow(streamTimeoutMessage);
      expect(performance.now() - started).toBeLessThan(1_000);
      // The opening is given up at 300 ms: the peer sees its connection closed.
      await vi.waitFor(() => expect(held.some((socket) => socket.destroyed || socket.readableEnded)).toBe(true), { timeout: 2_000 });
      expect(client.connected).toBe(false);
      answering = true; // the cut heals
      const answer = await client.call('drive', [Buffer.from([0, 2])], 2_000);
      expect(answer.length).toBe(answerBytes);
      expect(accepted).toBe(2);
    } finally {
      client.close();
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  }, 10_000);

  it('closes a stream on which a call ran out of time while nothing arrived, and the next call opens a fresh one', async () => {
    const client = new RpcStreamClient({ host: '127.0.0.1', port, rpcKey: rpcKeyFor('rpcadmin', 'rpcadmin-secret') }, { silenceMs: 200 });
    try {
      await client.call('drive', [Buffer.from([0, 1])], 2_000);
      const before = await acceptedSoFar();
      // Answered after 2.5 s: the stream stays silent through the call's 400 ms.
      await expect(client.call('drive', [Buffer.from([250, 1])], 400)).rejects.toThrow(streamTimeoutMessage);
      expect(client.connected).toBe(false);
      expect((await client.call('drive', [Buffer.from([0, 3])], 2_000)).length).toBe(answerBytes);
      await vi.waitFor(async () => expect(await acceptedSoFar()).toBe(before)); // the old connection closed, a new one open
      expect(client.pending).toBe(0);
    } finally {
      client.close();
    }
  }, 10_000);

  it('keeps a stream on which a call ran out of time while other answers arrived', async () => {
    const client = new RpcStreamClient({ host: '127.0.0.1', port, rpcKey: rpcKeyFor('rpcadmin', 'rpcadmin-secret') }, { silenceMs: 200 });
    try {
      await client.call('drive', [Buffer.from([0, 1])], 2_000);
      const slow = client.call('drive', [Buffer.from([250, 1])], 600).then(() => 'answered', (error: Error) => error.message);
      for (let n = 0; n < 8; n += 1) {
        await client.call('drive', [Buffer.from([0, 4])], 2_000);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(await slow).toBe(streamTimeoutMessage);
      expect(client.connected).toBe(true);
      expect(client.closed).toBe(false); // never closed: the same connection all along
    } finally {
      client.close();
    }
  }, 10_000);
});
