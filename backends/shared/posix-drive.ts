/**
 * A Drive over a Node-style promises file-system API: node:fs/promises for backends/fs, a memfs
 * volume for backends/memfs. Durable writes put data on stable storage (an fsync, or the backend's
 * own durable write) before the rename that publishes it; with `syncDir`, a rename or delete
 * syncs the directory it changed before it resolves (the Drive contract's durability rules).
 */
import { randomUUID } from 'node:crypto';
import { posix } from 'node:path';
import { SvcError, isSvcError } from '../../src/errors/index.js';
import { checkDrivePath, parentOf, tmpDir, trashDir, systemDir, type DiskInfo, type Drive, type FileReader, type FileStat, type FileWriter } from '../../src/drive/index.js';
import { mapDriveErrors } from './errors.js';

/** The subset of fs/promises this drive uses (memfs implements it too). */
export interface FileSystemApi {
  open(path: string, flags: string): Promise<FileHandleApi>;
  readFile(path: string): Promise<Uint8Array>;
  appendFile(path: string, data: Uint8Array): Promise<void>;
  mkdir(path: string, options: { recursive: true }): Promise<unknown>;
  rename(source: string, target: string): Promise<void>;
  rm(path: string, options: { recursive: true; force: true }): Promise<void>;
  rmdir(path: string): Promise<void>;
  unlink(path: string): Promise<void>;
  readdir(path: string, options: { withFileTypes: true }): Promise<DirentApi[]>;
  stat(path: string): Promise<{ size: number; mtimeMs: number; isDirectory(): boolean }>;
  /** Writes a whole file that is on stable storage when this resolves (fs: O_DSYNC); without it, write + sync. */
  writeDurable?(path: string, data: Uint8Array): Promise<void>;
  /**
   * Puts a directory's entries on stable storage (fs: fsync of the directory). On a journaling
   * file system (ext4, xfs) that commits every earlier namespace change too, the directories
   * made on the way included. Absent (memfs): nothing to do.
   */
  syncDir?(path: string): Promise<void>;
}

export interface FileHandleApi {
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  write(buffer: Uint8Array, offset?: number, length?: number): Promise<{ bytesWritten: number }>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

export interface DirentApi {
  name: string | Buffer;
  isDirectory(): boolean;
  isFile(): boolean;
}

export interface PosixDriveOptions {
  fs: FileSystemApi;
  root: string;
  endpoint: string;
  /** Capacity and usage when the file system cannot tell (memfs). */
  capacity?: { totalBytes: number; usedBytes(): number; charge(deltaBytes: number): void };
  statfs?: () => Promise<{ totalBytes: number; freeBytes: number; filesystemId?: string }>;
  /**
   * Opens a streaming writer that bypasses the page cache (backends/fs: O_DIRECT), or answers
   * undefined when the file system refuses; openWriter then writes buffered.
   */
  openDirectWriter?: (absolute: string) => Promise<RawWriter | undefined>;
  /**
   * Opens a file for reads around the page cache (backends/fs: O_DIRECT), or answers undefined
   * when the file system refuses; readRange uses it for reads of at least `minBytes`.
   */
  directReads?: { minBytes: number; open(absolute: string): Promise<RawReader | undefined> };
}

/** What a direct reader offers; the drive adds error mapping. */
export interface RawReader {
  read(offset: number, length: number, into?: Uint8Array): Promise<Uint8Array>;
  close(): Promise<void>;
}

/** What a direct writer offers; the drive adds error mapping and removal on abort. */
export interface RawWriter {
  write(chunk: Uint8Array): Promise<void>;
  close(): Promise<void>;
  abort(): Promise<void>;
}

const readChunkBytes = 1024 * 1024;

export class PosixDrive implements Drive {
  readonly endpoint: string;
  private readonly fs: FileSystemApi;
  private readonly root: string;
  private directWrites = true;
  private directReadsAllowed = true;

  constructor(private readonly options: PosixDriveOptions) {
    this.endpoint = options.endpoint;
    this.fs = options.fs;
    this.root = options.root;
  }

  private abs(path: string): string {
    return posix.join(this.root, checkDrivePath(path));
  }

  private run<T>(path: string, action: (absolute: string) => Promise<T>): Promise<T> {
    return mapDriveErrors(this.endpoint, path, () => action(this.abs(path)));
  }

  readFile(path: string): Promise<Uint8Array> {
    return this.run(path, (absolute) => this.fs.readFile(absolute));
  }

  readRange(path: string, offset: number, length: number, into?: Uint8Array): Promise<Uint8Array> {
    return this.run(path, async (absolute) => {
      const reader = await this.rawReader(absolute, length);
      try {
        return await reader.read(offset, length, into);
      } finally {
        await reader.close();
      }
    });
  }

  openReader(path: string): Promise<FileReader> {
    return this.run(path, async (absolute) => {
      const reader = await this.rawReader(absolute, Number.POSITIVE_INFINITY);
      return {
        read: (offset, length, into) => mapDriveErrors(this.endpoint, path, () => reader.read(offset, length, into)),
        close: () => reader.close().catch(() => undefined),
      };
    });
  }

  /** A reader of `absolute`, around the page cache when reads of `typicalBytes` qualify and the file system allows. */
  private async rawReader(absolute: string, typicalBytes: number): Promise<RawReader> {
    const direct = this.directReadsAllowed ? this.options.directReads : undefined;
    if (direct && typicalBytes >= direct.minBytes) {
      const reader = await direct.open(absolute);
      if (reader) return reader;
      this.directReadsAllowed = false; // refused once, refused always: stop asking
    }
    const handle = await this.fs.open(absolute, 'r');
    return {
      read: (offset, length, into) => readAt(handle, offset, length, into),
      close: () => handle.close(),
    };
  }

  async *readStream(path: string, options: { offset?: number; length?: number } = {}): AsyncIterable<Uint8Array> {
    const start = options.offset ?? 0;
    const end = options.length === undefined ? Number.POSITIVE_INFINITY : start + options.length;
    const reader = await this.openReader(path);
    try {
      for (let position = start; position < end; ) {
        const chunk = await reader.read(position, Math.min(readChunkBytes, end - position));
        if (chunk.length === 0) return;
        yield chunk;
        position += chunk.length;
      }
    } finally {
      await reader.close();
    }
  }

  writeFile(path: string, data: Uint8Array, options: { sync?: boolean } = {}): Promise<void> {
    return this.run(path, async (absolute) => {
      await this.reserve(path, data.length, true);
      await this.withParent(absolute, () => this.writeWhole(absolute, data, options.sync ?? false));
    });
  }

  writeFileAtomic(path: string, data: Uint8Array): Promise<void> {
    return this.run(path, async (absolute) => {
      await this.reserve(path, data.length, true);
      const tmp = this.abs(`${tmpDir}/${randomUUID()}`);
      await this.withParent(tmp, () => this.writeWhole(tmp, data, true));
      await this.withParent(absolute, () => this.fs.rename(tmp, absolute));
      await this.syncParent(absolute);
    });
  }

  appendFile(path: string, data: Uint8Array): Promise<void> {
    return this.run(path, async (absolute) => {
      await this.reserve(path, data.length, false);
      await this.fs.mkdir(posix.dirname(absolute), { recursive: true });
      await this.fs.appendFile(absolute, data);
    });
  }

  openWriter(path: string): Promise<FileWriter> {
    return this.run(path, async (absolute) => {
      await this.reserve(path, 0, true);
      const openDirect = this.directWrites ? this.options.openDirectWriter : undefined;
      if (openDirect) {
        const direct = await this.withParent(absolute, () => openDirect(absolute));
        if (direct) return this.directWriterFor(path, absolute, direct);
        this.directWrites = false; // refused once, refused always: stop asking
      }
      const handle = await this.withParent(absolute, () => this.fs.open(absolute, 'w'));
      return this.writerFor(path, absolute, handle);
    });
  }

  makeDir(path: string): Promise<void> {
    return this.run(path, async (absolute) => {
      await this.fs.mkdir(absolute, { recursive: true });
    });
  }

  rename(source: string, target: string): Promise<void> {
    return this.run(source, async (absoluteSource) => {
      const absoluteTarget = this.abs(target);
      const replaced = this.options.capacity ? await this.sizeOf(target) : 0;
      await this.withParent(absoluteTarget, () => this.fs.rename(absoluteSource, absoluteTarget), absoluteSource);
      this.options.capacity?.charge(-replaced);
      await this.syncParent(absoluteTarget);
    });
  }

  deleteFile(path: string): Promise<void> {
    return this.run(path, async (absolute) => {
      const stat = await this.fs.stat(absolute);
      if (stat.isDirectory()) throw new SvcError('IsADirectory', `is a directory: ${path}`, { path });
      await this.fs.unlink(absolute);
      this.options.capacity?.charge(-stat.size);
      await this.syncParent(absolute);
    });
  }

  deleteDir(path: string): Promise<void> {
    return this.run(path, async (absolute) => {
      const stat = await this.fs.stat(absolute);
      if (!stat.isDirectory()) throw new SvcError('NotADirectory', `not a directory: ${path}`, { path });
      await this.fs.rmdir(absolute);
      await this.syncParent(absolute);
    });
  }

  deleteRecursive(path: string): Promise<void> {
    return this.run(path, async (absolute) => {
      const trash = this.abs(`${trashDir}/${randomUUID()}`);
      const bytes = this.options.capacity ? await this.treeSize(path) : 0;
      await this.fs.mkdir(posix.dirname(trash), { recursive: true });
      try {
        await this.fs.rename(absolute, trash);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw error;
      }
      this.options.capacity?.charge(-bytes);
      await this.syncParent(absolute);
      await this.fs.rm(trash, { recursive: true, force: true });
    });
  }

  listDir(path: string): Promise<string[]> {
    return this.run(path, async (absolute) => {
      const entries = await this.fs.readdir(absolute, { withFileTypes: true });
      return entries
        .filter((entry) => entry.isDirectory() || entry.isFile())
        .map((entry) => (entry.isDirectory() ? `${String(entry.name)}/` : String(entry.name)))
        .sort(compareBytes);
    });
  }

  async *walk(prefix: string, options: { startAfter?: string } = {}): AsyncIterable<string> {
    const start = checkDrivePath(prefix);
    let entries: string[];
    try {
      entries = await this.listDir(start);
    } catch (error) {
      if (isSvcError(error, 'FileNotFound') || isSvcError(error, 'NotADirectory')) return;
      throw error;
    }
    for (const entry of entries) {
      const path = start === '' ? entry : `${start}/${entry}`;
      if (entry.endsWith('/')) {
        const dir = path.slice(0, -1);
        if (dir === tmpDir || dir === trashDir) continue;
        const after = options.startAfter;
        if (after !== undefined && compareBytes(path, after) < 0 && !after.startsWith(path)) continue;
        yield* this.walk(dir, options);
      } else if (options.startAfter === undefined || compareBytes(path, options.startAfter) > 0) {
        yield path;
      }
    }
  }

  stat(path: string): Promise<FileStat> {
    return this.run(path, async (absolute) => {
      const stat = await this.fs.stat(absolute);
      return { sizeBytes: stat.size, modTimeMs: stat.mtimeMs, isDirectory: stat.isDirectory() };
    });
  }

  async diskInfo(): Promise<DiskInfo> {
    try {
      if (this.options.capacity) {
        const usedBytes = this.options.capacity.usedBytes();
        const totalBytes = this.options.capacity.totalBytes;
        return { endpoint: this.endpoint, online: true, totalBytes, usedBytes, freeBytes: Math.max(0, totalBytes - usedBytes) };
      }
      const { totalBytes, freeBytes, filesystemId } = await this.options.statfs!();
      return { endpoint: this.endpoint, online: true, totalBytes, freeBytes, usedBytes: totalBytes - freeBytes, ...(filesystemId === undefined ? {} : { filesystemId }) };
    } catch (error) {
      return { endpoint: this.endpoint, online: false, totalBytes: 0, freeBytes: 0, usedBytes: 0, error: String(error) };
    }
  }

  async close(): Promise<void> {
    // Nothing is held open between calls.
  }

  /**
   * Runs an action that needs the parent directory of `absolute`; when it fails because that
   * directory is missing, creates it and runs the action once more. Most writes land in
   * directories that exist, so the common case costs no mkdir. A rename passes its `source`:
   * when that is what is missing, the failure stands.
   */
  private async withParent<T>(absolute: string, action: () => Promise<T>, source?: string): Promise<T> {
    try {
      return await action();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      if (source !== undefined && !(await this.exists(source))) throw error;
      await this.fs.mkdir(posix.dirname(absolute), { recursive: true });
      return action();
    }
  }

  /** Makes a rename or delete in the directory holding `absolute` durable (see FileSystemApi.syncDir). */
  private async syncParent(absolute: string): Promise<void> {
    try {
      await this.fs.syncDir?.(posix.dirname(absolute));
    } catch (error) {
      // Removed meanwhile (an empty object directory cleaned up by another call): nothing left to sync.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }

  private async exists(absolute: string): Promise<boolean> {
    try {
      await this.fs.stat(absolute);
      return true;
    } catch {
      return false;
    }
  }

  private async writeWhole(absolute: string, data: Uint8Array, sync: boolean): Promise<void> {
    if (sync && this.fs.writeDurable) return this.fs.writeDurable(absolute, data);
    const handle = await this.fs.open(absolute, 'w');
    try {
      await writeAll(handle, data);
      if (sync) await handle.sync();
    } finally {
      await handle.close();
    }
  }

  private writerFor(path: string, absolute: string, handle: FileHandleApi): FileWriter {
    let open = true;
    const finish = async (): Promise<void> => {
      if (!open) return;
      open = false;
      await handle.close();
    };
    return {
      write: (chunk) =>
        mapDriveErrors(this.endpoint, path, async () => {
          await this.reserve(path, chunk.length, false);
          await writeAll(handle, chunk);
        }),
      close: () =>
        mapDriveErrors(this.endpoint, path, async () => {
          await handle.sync();
          await finish();
        }),
      abort: async () => {
        await finish().catch(() => undefined);
        const size = await this.sizeOf(path);
        await this.fs.unlink(absolute).then(() => this.options.capacity?.charge(-size)).catch(() => undefined);
      },
    };
  }

  private directWriterFor(path: string, absolute: string, writer: RawWriter): FileWriter {
    return {
      write: (chunk) => mapDriveErrors(this.endpoint, path, () => writer.write(chunk)),
      close: () => mapDriveErrors(this.endpoint, path, () => writer.close()),
      abort: async () => {
        await writer.abort();
        await this.fs.unlink(absolute).catch(() => undefined);
      },
    };
  }

  /** Capacity accounting (memfs): refuses writes past capacity with DriveFull. */
  private async reserve(path: string, bytes: number, replaces: boolean): Promise<void> {
    const capacity = this.options.capacity;
    if (!capacity) return;
    const replaced = replaces ? await this.sizeOf(path) : 0;
    if (capacity.usedBytes() - replaced + bytes > capacity.totalBytes) {
      throw new SvcError('DriveFull', `no space left on ${this.endpoint}`, { path });
    }
    capacity.charge(bytes - replaced);
  }

  private async sizeOf(path: string): Promise<number> {
    try {
      const stat = await this.fs.stat(this.abs(path));
      return stat.isDirectory() ? 0 : stat.size;
    } catch {
      return 0;
    }
  }

  private async treeSize(path: string): Promise<number> {
    try {
      const stat = await this.fs.stat(this.abs(path));
      if (!stat.isDirectory()) return stat.size;
    } catch {
      return 0;
    }
    let total = 0;
    for await (const file of this.walk(path)) total += await this.sizeOf(file);
    return total;
  }
}

/** `length` bytes at `offset` (fewer at the end of the file), into `into` when given. */
async function readAt(handle: FileHandleApi, offset: number, length: number, into?: Uint8Array): Promise<Uint8Array> {
  const buffer = into ?? Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, offset + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled === buffer.length ? buffer : buffer.subarray(0, filled);
}

async function writeAll(handle: FileHandleApi, data: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < data.length) {
    const { bytesWritten } = await handle.write(data, offset, data.length - offset);
    offset += bytesWritten;
  }
}

export function compareBytes(a: string, b: string): number {
  return a === b ? 0 : Buffer.compare(Buffer.from(a), Buffer.from(b));
}

export { parentOf, systemDir };
