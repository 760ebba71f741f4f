import { randomBytes } from 'node:crypto';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openDirectReader, openDirectWriter, stagingBufferBytes, stagingSlabs } from '../backends/fs/direct-io.js';

/** The prototype every FileHandle shares, so its datasync can be watched. */
async function fileHandlePrototype(dir: string): Promise<{ datasync(): Promise<void> }> {
  const handle = await open(join(dir, 'probe'), 'w');
  await handle.close();
  return Object.getPrototypeOf(handle) as { datasync(): Promise<void> };
}

describe('O_DIRECT shard writer: background flushes', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-direct-io-'));
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await rm(dir, { recursive: true, force: true });
  });

  it('flushes a long file while it is written, and the file reads back whole', async (context) => {
    const writer = await openDirectWriter(join(dir, 'long'), stagingBufferBytes);
    if (!writer) return context.skip(); // this file system refuses O_DIRECT; the buffered path has no background flushes
    // Flushes that end at once: a real one may outlast the writes after it (one runs at a time),
    // which would make the count depend on the disk.
    const datasync = vi.spyOn(await fileHandlePrototype(dir), 'datasync').mockResolvedValue(undefined);
    const body = randomBytes(5 * stagingBufferBytes + 12_345);
    for (let offset = 0; offset < body.length; offset += 300_000) await writer.write(body.subarray(offset, offset + 300_000));
    // One flush per interval written, each started while writing, before close.
    expect(datasync.mock.calls.length).toBe(5);
    await writer.close();
    expect(datasync.mock.calls.length).toBeGreaterThanOrEqual(2);
    expect((await readFile(join(dir, 'long'))).equals(body)).toBe(true);
  });

  it('does not flush in the background below the interval', async (context) => {
    const writer = await openDirectWriter(join(dir, 'short'), 64 * stagingBufferBytes);
    if (!writer) return context.skip();
    const datasync = vi.spyOn(await fileHandlePrototype(dir), 'datasync');
    await writer.write(randomBytes(3 * stagingBufferBytes));
    expect(datasync).not.toHaveBeenCalled();
    await writer.close();
  });

  it('a failed background flush fails close, so the PUT is not acknowledged', async (context) => {
    const writer = await openDirectWriter(join(dir, 'failing'), stagingBufferBytes);
    if (!writer) return context.skip();
    vi.spyOn(await fileHandlePrototype(dir), 'datasync').mockRejectedValue(Object.assign(new Error('flush failed'), { code: 'EIO' }));
    await writer.write(randomBytes(2 * stagingBufferBytes));
    await expect(writer.close()).rejects.toMatchObject({ code: 'EIO' });
  });
});

describe('O_DIRECT reads', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-direct-read-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('read any range (unaligned, short at the end, longer than one staging buffer) byte for byte', async (context) => {
    const body = randomBytes(9 * 1024 * 1024 + 777);
    const writer = await openDirectWriter(join(dir, 'file'));
    if (!writer) return context.skip(); // this file system refuses O_DIRECT
    await writer.write(body);
    await writer.close();
    const reader = (await openDirectReader(join(dir, 'file')))!;
    try {
      for (const [offset, length] of [[0, 1], [4095, 2], [12_345, 350_000], [1, 4 * 1024 * 1024 + 70_000], [body.length - 10, 100], [0, body.length]] as const) {
        const bytes = await reader.read(offset, length);
        expect(Buffer.from(bytes).equals(body.subarray(offset, offset + length))).toBe(true);
        const into = Buffer.alloc(length + 5);
        const view = await reader.read(offset, length, into);
        expect(view.buffer).toBe(into.buffer);
        expect(Buffer.from(view).equals(body.subarray(offset, offset + length))).toBe(true);
      }
    } finally {
      await reader.close();
    }
  });

  it('a GET-sized burst of concurrent shard reads maps its staging once, then reuses it', async (context) => {
    const body = randomBytes(2 * 1024 * 1024);
    const writer = await openDirectWriter(join(dir, 'shard'));
    if (!writer) return context.skip();
    await writer.write(body);
    await writer.close();
    const reader = (await openDirectReader(join(dir, 'shard')))!;
    const burst = () => Promise.all(Array.from({ length: 24 }, (_, index) => reader.read(index * 1000 + 7, 350_000)));
    try {
      await burst();
      const mapped = stagingSlabs.mapped;
      for (let round = 0; round < 3; round += 1) {
        const reads = await burst();
        reads.forEach((bytes, index) => expect(Buffer.from(bytes).equals(body.subarray(index * 1000 + 7, index * 1000 + 7 + 350_000))).toBe(true));
      }
      expect(stagingSlabs.mapped).toBe(mapped);
    } finally {
      await reader.close();
    }
  });
});
