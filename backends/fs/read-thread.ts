/**
 * A file-read thread (see read-threads.ts): reads each whole file of a batch it is sent with
 * synchronous calls, and posts the batch's answers back in one message: the bytes, or the
 * error's errno code and message.
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

port.on('message', (batch: ReadRequest[]) => {
  const replies: ReadReply[] = [];
  const moved: ArrayBuffer[] = [];
  for (const { id, path } of batch) {
    try {
      const bytes = readFileSync(path);
      // A buffer that owns its whole memory moves to the other thread; a small one shares a pool and is copied.
      if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) moved.push(bytes.buffer as ArrayBuffer);
      replies.push({ id, bytes });
    } catch (error) {
      const failure = error as NodeJS.ErrnoException;
      replies.push({ id, code: failure.code ?? 'EIO', message: failure.message });
    }
  }
  port.postMessage(replies, moved);
});
