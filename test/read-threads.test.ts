import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { readWholeFile } from '../backends/fs/fd-files.js';
import { nodeReadThreadOptions, ReadThreads } from '../backends/fs/read-threads.js';

const notUsed = async (path: string): Promise<Uint8Array> => {
  throw new Error(`the fallback read ${path}`);
};

/** Lets reads asked for in this turn of the event loop be sent. */
function settled(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A FIFO: reading it holds a read thread inside open() until a writer comes. */
function fifoAt(path: string): string {
  execFileSync('mkfifo', [path]);
  return path;
}

/** Lets a reader held in open() of `fifo` go, if there is one; a reader that went away meanwhile is fine. */
async function release(fifo: string): Promise<void> {
  try {
    const writer = await open(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    await writer.write(Buffer.from('x')).catch(() => undefined);
    await writer.close();
  } catch (error) {
    expect((error as NodeJS.ErrnoException).code).toBe('ENXIO'); // no reader left
  }
}

async function feed(fifo: string, bytes: Uint8Array): Promise<void> {
  const writer = await open(fifo, 'w');
  await writer.write(bytes);
  await writer.close();
}

describe('file-read threads', () => {
  let dir: string;
  let threads: ReadThreads | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-read-threads-'));
  });
  afterEach(async () => {
    await threads?.close();
    threads = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('reads whole files, small and large, and fails as node:fs does', async () => {
    threads = new ReadThreads({ threads: 2, depth: 8, maxQueued: 256, maxWaitMs: 10_000 });
    const small = randomBytes(2600);
    const large = randomBytes(3 * 1024 * 1024 + 5);
    await writeFile(join(dir, 'small'), small);
    await writeFile(join(dir, 'large'), large);
    await writeFile(join(dir, 'empty'), '');
    await mkdir(join(dir, 'sub'));
    const [readSmall, readLarge, readEmpty] = await Promise.all(['small', 'large', 'empty'].map((name) => threads!.read(join(dir, name), notUsed)));
    expect(Buffer.from(readSmall!).equals(small)).toBe(true);
    expect(Buffer.from(readLarge!).equals(large)).toBe(true);
    expect(readEmpty!.length).toBe(0);
    await expect(threads.read(join(dir, 'missing'), notUsed)).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(threads.read(join(dir, 'sub'), notUsed)).rejects.toMatchObject({ code: 'EISDIR' });
    await expect(threads.read(join(dir, 'small', 'below'), notUsed)).rejects.toMatchObject({ code: 'ENOTDIR' });
    // A burst far beyond what the threads take at once waits its turn; none takes the fallback.
    const files = await Promise.all(Array.from({ length: 40 }, async (_, index) => {
      const bytes = randomBytes(100 + index);
      await writeFile(join(dir, `burst-${index}`), bytes);
      return bytes;
    }));
    const burst = await Promise.all(Array.from({ length: 200 }, (_, index) => threads!.read(join(dir, `burst-${index % 40}`), notUsed)));
    burst.forEach((bytes, index) => expect(Buffer.from(bytes).equals(files[index % 40]!)).toBe(true));
    expect(threads.inFlight()).toEqual({ sent: 0, queued: 0 });
  });

  it('as a node configures them, take 64 GETs\' xl.meta reads on a set of 16 drives at once without the fallback', async () => {
    // The wait limit only sends reads behind a slow drive to the pool; a loaded test machine must not.
    threads = new ReadThreads({ ...nodeReadThreadOptions(), maxWaitMs: 10_000 });
    const metas = await Promise.all(Array.from({ length: 16 }, async (_, drive) => {
      const bytes = randomBytes(600 + drive);
      await writeFile(join(dir, `xl-${drive}`), bytes);
      return bytes;
    }));
    const reads = await Promise.all(Array.from({ length: 64 * 16 }, (_, index) => threads!.read(join(dir, `xl-${index % 16}`), notUsed)));
    reads.forEach((bytes, index) => expect(Buffer.from(bytes).equals(metas[index % 16]!)).toBe(true));
  });

  it('queues reads for a busy thread, and sends them to the fallback when the queue is full', async () => {
    threads = new ReadThreads({ threads: 1, depth: 1, maxQueued: 1, maxWaitMs: 10_000 });
    const fallback = vi.fn(readWholeFile);
    const held = fifoAt(join(dir, 'held'));
    await writeFile(join(dir, 'plain'), 'plain bytes');
    const first = threads.read(held, fallback); // the thread is held in open() of the FIFO
    await settled();
    const second = threads.read(join(dir, 'plain'), fallback); // waits for the thread
    await settled();
    expect(threads.inFlight()).toEqual({ sent: 1, queued: 1 });
    const third = await threads.read(join(dir, 'plain'), fallback); // no room left: the fallback
    expect(Buffer.from(third).toString()).toBe('plain bytes');
    expect(fallback).toHaveBeenCalledTimes(1);
    await feed(held, Buffer.from('through the fifo'));
    expect(Buffer.from(await first).toString()).toBe('through the fifo');
    expect(Buffer.from(await second).toString()).toBe('plain bytes');
    expect(fallback).toHaveBeenCalledTimes(1); // the second was read by the thread once it was free
  });

  it('sends waiting reads to the fallback once the oldest has waited too long, as behind a hung drive', async () => {
    threads = new ReadThreads({ threads: 1, depth: 1, maxQueued: 256, maxWaitMs: 50 });
    const fallback = vi.fn(readWholeFile);
    const held = fifoAt(join(dir, 'held'));
    await writeFile(join(dir, 'plain'), 'plain bytes');
    const first = threads.read(held, fallback);
    await settled();
    const waiting = [threads.read(join(dir, 'plain'), fallback), threads.read(join(dir, 'plain'), fallback)];
    const started = performance.now();
    for (const read of waiting) expect(Buffer.from(await read).toString()).toBe('plain bytes');
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    expect(fallback).toHaveBeenCalledTimes(2); // with nothing else arriving, the timer moved them
    expect(threads.inFlight()).toEqual({ sent: 1, queued: 0 });
    await feed(held, Buffer.from('late'));
    expect(Buffer.from(await first).toString()).toBe('late');
  });

  it('hands the reads a stopped thread had to the fallback, and starts a new thread for the waiting and the next', async () => {
    threads = new ReadThreads({ threads: 1, depth: 1, maxQueued: 256, maxWaitMs: 10_000 });
    const fallback = vi.fn(async (path: string) => Buffer.from(`fallback read ${path}`));
    const held = fifoAt(join(dir, 'held'));
    const plain = join(dir, 'plain');
    await writeFile(plain, 'plain bytes');
    expect(Buffer.from(await threads.read(plain, fallback)).toString()).toBe('plain bytes'); // the thread runs
    const first = threads.read(held, fallback);
    const queued = threads.read(plain, fallback);
    await new Promise((resolve) => setTimeout(resolve, 100)); // the thread is now inside open() of the FIFO
    const stopping = threads.close();
    await release(held);
    await stopping;
    // Read by the thread just before it stopped, or, sent but unanswered, by the fallback.
    expect(['x', `fallback read ${held}`]).toContain(Buffer.from(await first).toString());
    // The queued read was never sent to the stopped thread: a new thread read it.
    expect(Buffer.from(await queued).toString()).toBe('plain bytes');
    const callsSoFar = fallback.mock.calls.length;
    expect(Buffer.from(await threads.read(plain, fallback)).toString()).toBe('plain bytes');
    expect(fallback).toHaveBeenCalledTimes(callsSoFar);
  });
});
