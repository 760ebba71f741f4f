/**
 * A file-read thread (see read-threads.ts): reads each whole file it is sent with synchronous
 * calls and posts the bytes back, or the error's errno code and message.
 */
import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';

export interface ReadRequest {
  id: number;
  path: string;
}

export interface ReadReply {
  id: number;
  bytes?: Uint8Array;
  code?: string;
  message?: string;
}

const port = parentPort!;

port.on('message', ({ id, path }: ReadRequest) => {
  let reply: ReadReply;
  try {
    reply = { id, bytes: readFileSync(path) };
  } catch (error) {
    const failure = error as NodeJS.ErrnoException;
    reply = { id, code: failure.code ?? 'EIO', message: failure.message };
  }
  // A buffer that owns its whole memory moves to the other thread; a small one shares a pool and is copied.
  const bytes = reply.bytes;
  const movable = bytes !== undefined && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  port.postMessage(reply, movable ? [bytes.buffer as ArrayBuffer] : []);
});
