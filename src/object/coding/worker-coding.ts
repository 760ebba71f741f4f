/**
 * Coding threads: MD5 and the other body digests, Reed-Solomon parity and bitrot hashes move off
 * the event loop, which keeps receiving the next block and writing the previous one meanwhile.
 * A session sticks to one thread (its digest state lives there); sessions spread over the threads
 * by load. Threads start at the first session and keep the process alive only while sessions are
 * open. A thread that dies fails its sessions' PUTs (nothing is committed) and is replaced.
 */
import type { Worker } from 'node:worker_threads';
import { SvcError } from '../../errors/index.js';
import { startModuleThread } from '../../util/threads.js';
import type { DigestAlgorithm, DigestValues } from './digests.js';
import { BufferPool, type BlockBuffers, type BlockCoding, type CodingSession } from './coding.js';

export type CodingRequest =
  | { kind: 'open'; session: number; dataShards: number; parityShards: number; algorithms: readonly DigestAlgorithm[]; md5: boolean }
  | { kind: 'code' | 'digest'; session: number; id: number; memory: SharedArrayBuffer; blockSizeBytes: number; lengthBytes: number }
  | { kind: 'finish'; session: number; id: number }
  | { kind: 'discard'; session: number };

export type CodingReply = { id: number; error?: string; values?: DigestValues };

interface Pending {
  resolve(reply: CodingReply): void;
  reject(error: unknown): void;
}

interface CodingThread {
  worker: Worker;
  openSessions: number;
  pending: Map<number, Pending>;
  alive: boolean;
}

export interface CodingLogger {
  error(fields: Record<string, unknown>, message: string): void;
}

export class WorkerCoding implements BlockCoding {
  readonly name: string;
  private readonly threads: (CodingThread | undefined)[];
  private readonly pool = new BufferPool(true);
  private nextSession = 1;
  private nextRequest = 1;

  constructor(threadCount: number, private readonly logger?: CodingLogger) {
    if (!Number.isInteger(threadCount) || threadCount < 1) throw new SvcError('InvalidArgument', `coding threads must be a whole number of at least 1, not ${threadCount}`);
    this.threads = new Array<CodingThread | undefined>(threadCount).fill(undefined);
    this.name = `threads:${threadCount}`;
  }

  open(dataShards: number, parityShards: number, algorithms: readonly DigestAlgorithm[], md5 = true): CodingSession {
    const thread = this.leastLoaded();
    const session = this.nextSession++;
    thread.openSessions += 1;
    if (thread.openSessions === 1) thread.worker.ref();
    thread.worker.postMessage({ kind: 'open', session, dataShards, parityShards, algorithms, md5 } satisfies CodingRequest);
    let closed = false;
    const close = (): void => {
      if (closed) return;
      closed = true;
      thread.openSessions -= 1;
      if (thread.openSessions === 0) thread.worker.unref();
    };
    return {
      code: async (buffers, lengthBytes) => {
        await this.request(thread, (id) => ({ kind: 'code', session, id, memory: buffers.memory as SharedArrayBuffer, blockSizeBytes: buffers.blockSizeBytes, lengthBytes }));
        return buffers.framedChunks(lengthBytes);
      },
      digest: async (buffers, lengthBytes) => {
        await this.request(thread, (id) => ({ kind: 'digest', session, id, memory: buffers.memory as SharedArrayBuffer, blockSizeBytes: buffers.blockSizeBytes, lengthBytes }));
      },
      finish: async () => {
        try {
          return (await this.request(thread, (id) => ({ kind: 'finish', session, id }))).values!;
        } finally {
          close();
        }
      },
      discard: () => {
        if (closed) return;
        if (thread.alive) thread.worker.postMessage({ kind: 'discard', session } satisfies CodingRequest);
        close();
      },
    };
  }

  acquireBuffers(blockSizeBytes: number, dataShards: number, totalShards: number): BlockBuffers {
    return this.pool.acquire(blockSizeBytes, dataShards, totalShards);
  }

  releaseBuffers(buffers: BlockBuffers): void {
    this.pool.release(buffers);
  }

  /** Stops the threads; uploads still coding fail (nothing of theirs is committed). */
  async close(): Promise<void> {
    const running = this.threads.filter((thread): thread is CodingThread => thread !== undefined);
    this.threads.fill(undefined);
    for (const thread of running) this.stopped(thread, 'the server is shutting down');
    await Promise.all(running.map((thread) => thread.worker.terminate()));
  }

  /** Marks a thread stopped and fails what it still owed; false when it was stopped already. */
  private stopped(thread: CodingThread, reason: string): boolean {
    if (!thread.alive) return false;
    thread.alive = false;
    for (const pending of thread.pending.values()) pending.reject(new SvcError('InternalError', `the coding thread of this upload stopped: ${reason}`));
    thread.pending.clear();
    return true;
  }

  private request(thread: CodingThread, build: (id: number) => CodingRequest): Promise<CodingReply> {
    if (!thread.alive) return Promise.reject(new SvcError('InternalError', 'the coding thread of this upload stopped'));
    const id = this.nextRequest++;
    return new Promise<CodingReply>((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      thread.worker.postMessage(build(id));
    }).then((reply) => {
      if (reply.error !== undefined) throw new SvcError('InternalError', `coding failed: ${reply.error}`);
      return reply;
    });
  }

  private leastLoaded(): CodingThread {
    let best: CodingThread | undefined;
    for (let index = 0; index < this.threads.length; index += 1) {
      let thread = this.threads[index];
      if (!thread || !thread.alive) {
        thread = this.start(index);
        this.threads[index] = thread;
      }
      if (!best || thread.openSessions < best.openSessions) best = thread;
    }
    return best!;
  }

  private start(index: number): CodingThread {
    const worker = startModuleThread(import.meta.url, 'coding-worker', `svc-coding-${index}`);
    const thread: CodingThread = { worker, openSessions: 0, pending: new Map(), alive: true };
    worker.on('message', (reply: CodingReply) => {
      const pending = thread.pending.get(reply.id);
      thread.pending.delete(reply.id);
      pending?.resolve(reply);
    });
    const fail = (reason: string): void => {
      if (this.stopped(thread, reason)) this.logger?.error({ thread: index, reason }, 'a coding thread stopped; its uploads fail and a new thread takes new ones');
    };
    worker.on('error', (error) => fail(String(error)));
    worker.on('exit', (code) => fail(`exit code ${code}`));
    return thread;
  }
}
