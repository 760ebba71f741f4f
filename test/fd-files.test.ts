import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdtemp, open, readFile, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeDurableFile } from '../backends/fs/fd-files.js';

/** The access-mode bits of open flags (O_ACCMODE, which node:fs does not export). */
const accessModeMask = 0o3;

/** This process's open descriptors that point at `path`, with the open flags /proc reports for each. */
async function descriptorsOn(path: string): Promise<{ fd: string; flags: number }[]> {
  const found: { fd: string; flags: number }[] = [];
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
    if (target !== path) continue;
    const info = await readFile(`/proc/self/fdinfo/${fd}`, 'utf8').catch(() => '');
    const flags = /^flags:\s+([0-7]+)/m.exec(info);
    if (flags) found.push({ fd, flags: Number.parseInt(flags[1]!, 8) });
  }
  return found;
}

async function openDescriptorCount(): Promise<number> {
  return (await readdir('/proc/self/fd')).length;
}

describe('fd-files: durable whole-file writes', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-fd-files-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('opens the file with O_DSYNC, so each write is on stable storage when it returns', async () => {
    // A FIFO holds the writer inside its write once the pipe is full, so its descriptor can be
    // looked at while it is open.
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const body = randomBytes(1024 * 1024);
    const writing = writeDurableFile(fifo, body);
    const reader = await open(fifo, 'r');
    let writer: { flags: number } | undefined;
    for (let tries = 0; tries < 200 && !writer; tries += 1) {
      writer = (await descriptorsOn(fifo)).find((entry) => (entry.flags & accessModeMask) === constants.O_WRONLY);
      if (!writer) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const received: Buffer[] = [];
    for await (const chunk of reader.createReadStream()) received.push(chunk as Buffer);
    await writing;
    expect(writer, 'the writer descriptor was seen').toBeDefined();
    expect(writer!.flags & constants.O_DSYNC).toBe(constants.O_DSYNC);
    expect(Buffer.concat(received).equals(body)).toBe(true);
  });

  it('replaces what was there, and leaves no descriptor open whether it succeeds or fails', async () => {
    const path = join(dir, 'file');
    await writeFile(path, randomBytes(10_000));
    const before = await openDescriptorCount();
    const body = randomBytes(3000);
    await writeDurableFile(path, body);
    expect((await readFile(path)).equals(body)).toBe(true);
    await expect(writeDurableFile(join(dir, 'missing', 'file'), body)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await openDescriptorCount()).toBe(before);
  });
});
