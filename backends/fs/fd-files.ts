/**
 * Files as plain descriptors over node:fs's callback API, for the hot paths of the fs backend:
 * every xl.meta read and write opens, reads or writes, and closes a small file, and a
 * descriptor costs the event loop less than a promises FileHandle object per file. Whole-file
 * reads skip the stat: a read shorter than asked means the end of a regular file.
 */
import * as fs from 'node:fs';
import type { FileHandleApi } from '../shared/posix-drive.js';

const firstReadBytes = 16 * 1024;

function call<T>(action: (done: (error: NodeJS.ErrnoException | null, value: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => action((error, value) => (error ? reject(error) : resolve(value))));
}

class DescriptorHandle implements FileHandleApi {
  constructor(private readonly fd: number) {}

  async read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }> {
    const bytesRead = await call<number>((done) => fs.read(this.fd, buffer, offset, length, position, done));
    return { bytesRead };
  }

  async write(buffer: Uint8Array, offset = 0, length = buffer.length - offset): Promise<{ bytesWritten: number }> {
    const bytesWritten = await call<number>((done) => fs.write(this.fd, buffer, offset, length, null, done));
    return { bytesWritten };
  }

  sync(): Promise<void> {
    return call<void>((done) => fs.fsync(this.fd, (error) => done(error, undefined)));
  }

  close(): Promise<void> {
    return call<void>((done) => fs.close(this.fd, (error) => done(error, undefined)));
  }
}

export async function openDescriptor(path: string, flags: string): Promise<FileHandleApi> {
  return new DescriptorHandle(await call<number>((done) => fs.open(path, flags, 0o644, done)));
}

/** A whole file: open, read until a short read, close (three calls for a file under 16 KiB). */
export async function readWholeFile(path: string): Promise<Uint8Array> {
  const handle = await openDescriptor(path, 'r');
  try {
    let buffer = Buffer.allocUnsafe(firstReadBytes);
    let filled = 0;
    for (;;) {
      const wanted = buffer.length - filled;
      const { bytesRead } = await handle.read(buffer, filled, wanted, filled);
      filled += bytesRead;
      if (bytesRead < wanted) return buffer.subarray(0, filled);
      const grown = Buffer.allocUnsafe(buffer.length * 4);
      grown.set(buffer);
      buffer = grown;
    }
  } finally {
    await handle.close();
  }
}
