import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { readWholeFile } from '../backends/fs/fd-files.js';
import { ReadThreads } from '../backends/fs/read-threads.js';

const notUsed = async (path: string): Promise<Uint8Array> => {
  throw new Error(`the fallback read ${path}`);
};

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
    threads = new ReadThreads(2, 8);
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
    expect(threads.waiting()).toBe(0);
  });

  it('sends reads to the fallback while every thread has its queue full, as behind a hung drive', async () => {
    threads = new ReadThreads(1, 2);
    const fallback = vi.fn(readWholeFile);
    const held = fifoAt(join(dir, 'held'));
    await writeFile(join(dir, 'plain'), 'plain bytes');
    const first = threads.read(held, fallback);
    const second = threads.read(join(dir, 'plain'), fallback); // queued behind the held one
    expect(threads.waiting()).toBe(2);
    const third = await threads.read(join(dir, 'plain'), fallback);
    expect(Buffer.from(third).toString()).toBe('plain bytes');
    expect(fallback).toHaveBeenCalledTimes(1);
    await feed(held, Buffer.from('through the fifo'));
    expect(Buffer.from(await first).toString()).toBe('through the fifo');
    expect(Buffer.from(await second).toString()).toBe('plain bytes');
    expect(fallback).toHaveBeenCalledTimes(1);
  });

  it('hands the reads of a thread that stops to the fallback, and starts a new thread for the next', async () => {
    threads = new ReadThreads(1, 8);
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
    await first; // read by the thread just before it stopped, or by the fallback
    expect(Buffer.from(await queued).toString()).toBe(`fallback read ${plain}`);
    const callsSoFar = fallback.mock.calls.length;
    expect(Buffer.from(await threads.read(plain, fallback)).toString()).toBe('plain bytes');
    expect(fallback).toHaveBeenCalledTimes(callsSoFar);
  });
});
