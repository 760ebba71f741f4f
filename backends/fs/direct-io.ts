/**
 * Shard files written with O_DIRECT: the bytes go from an aligned staging buffer straight to the
 * device instead of being copied into the page cache first, which is most of the CPU a large PUT
 * costs in the kernel (and on virtual machines whose fresh page-cache pages fault on the host,
 * far more). O_DIRECT wants the buffer address, the file offset and the length aligned; shard
 * files are sequences of `[hash][chunk]` frames of any length, so writes are staged: a writer
 * fills a 1 MiB aligned buffer and writes it out whole; at close the tail is written padded to
 * the alignment and the file is truncated back to its true length, then fsynced.
 *
 * O_DIRECT bytes sit in the device's volatile cache (on a virtual machine, the host's page cache)
 * until a flush. A long file is therefore flushed in the background every
 * limits.directIoSyncIntervalBytes while it is written, so the fsync at close, which a PUT's
 * response waits for, finds little left to flush.
 *
 * Aligned memory comes from WebAssembly memories, which the runtime maps page-aligned. A file
 * system that refuses O_DIRECT (tmpfs) gets ordinary buffered writes.
 */
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { FileHandleApi, RawReader, RawWriter } from '../shared/posix-drive.js';
import { limits } from '../../src/util/limits.js';
import { openDescriptor } from './fd-files.js';

export const directIoAlignmentBytes = 4096;
export const stagingBufferBytes = 1024 * 1024;
const slabBytes = 16 * 1024 * 1024;
const wasmPageBytes = 65_536;

interface WasmMemoryConstructor {
  new (descriptor: { initial: number; maximum: number }): { readonly buffer: ArrayBuffer };
}
const WasmMemory = (globalThis as unknown as { WebAssembly: { Memory: WasmMemoryConstructor } }).WebAssembly.Memory;

/** Slabs of aligned memory mapped so far, for every staging size (a diagnostic, and what tests count). */
export const stagingSlabs = { mapped: 0 };

/** Staging buffers of one size at page-aligned addresses, reused; slabs (16 MiB unless told) are added as needed. */
class AlignedBuffers {
  private readonly free: Uint8Array[] = [];

  /**
   * `shared`: the bytes of idle buffers of this pool and of others sharing one budget, and that
   * budget; `buffersPerSlab`: buffers mapped at once (by default as many as fit in 16 MiB).
   */
  constructor(
    private readonly bufferBytes: number,
    private readonly retainedMax: number,
    private readonly options: { shared?: { bytes: number; maxBytes: number }; buffersPerSlab?: number } = {},
  ) {}

  acquire(): Uint8Array {
    if (this.free.length === 0) {
      const perSlab = this.options.buffersPerSlab ?? Math.max(1, Math.floor(slabBytes / this.bufferBytes));
      const pages = Math.ceil((perSlab * this.bufferBytes) / wasmPageBytes);
      const slab = new WasmMemory({ initial: pages, maximum: pages }).buffer;
      stagingSlabs.mapped += 1;
      for (let index = 0; index < perSlab; index += 1) this.free.push(new Uint8Array(slab, index * this.bufferBytes, this.bufferBytes));
      if (this.options.shared) this.options.shared.bytes += perSlab * this.bufferBytes;
    }
    if (this.options.shared) this.options.shared.bytes -= this.bufferBytes;
    return this.free.pop()!;
  }

  /** Keeps at most `retainedMax`, within the shared budget if any; a slab none of whose buffers is kept is collected. */
  release(buffer: Uint8Array): void {
    if (this.free.length >= this.retainedMax) return;
    const shared = this.options.shared;
    if (shared) {
      if (shared.bytes + this.bufferBytes > shared.maxBytes) return;
      shared.bytes += this.bufferBytes;
    }
    this.free.push(buffer);
  }
}

const writeStaging = new AlignedBuffers(stagingBufferBytes, limits.directIoBuffersRetained);
/**
 * Read staging in sizes of whole 256 KiB steps up to limits.directReadStagingBytes, each buffer
 * mapped on its own, kept for reuse up to limits.directReadStagingRetainedBytes in all. A GET
 * reads a few hundred KiB of each shard file at a time, a dozen files at once for each request:
 * staging buffers all of the largest size would outgrow what is kept, so reads would keep mapping
 * fresh slabs, which the runtime counts as external memory and answers with full collections.
 * (Each buffer is a WebAssembly memory of its own; the runtime allows thousands at once, and a
 * process holds about as many as it has reads in flight plus the idle ones kept.)
 */
const readStagingStepBytes = 256 * 1024;
/** Bytes of idle read staging kept, over all sizes. */
const readStagingRetained = { bytes: 0, maxBytes: limits.directReadStagingRetainedBytes };
const readStagingBySize = new Map<number, AlignedBuffers>();

function readStagingFor(spanBytes: number): AlignedBuffers {
  const size = Math.min(limits.directReadStagingBytes, Math.max(1, Math.ceil(spanBytes / readStagingStepBytes)) * readStagingStepBytes);
  let buffers = readStagingBySize.get(size);
  if (!buffers) {
    // One buffer a slab: idle bytes are exactly the buffers given back, so one size's idle slab
    // remainder never crowds another size out of the budget.
    buffers = new AlignedBuffers(size, Number.MAX_SAFE_INTEGER, { shared: readStagingRetained, buffersPerSlab: 1 });
    readStagingBySize.set(size, buffers);
  }
  return buffers;
}

const directFlags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_DIRECT ?? 0);

/**
 * Opens `absolute` for O_DIRECT writing; undefined when the file system refuses O_DIRECT (the
 * caller writes buffered instead). Other errors (ENOENT, EACCES...) are thrown as they are.
 */
export async function openDirectWriter(absolute: string, syncIntervalBytes: number = limits.directIoSyncIntervalBytes): Promise<RawWriter | undefined> {
  if (constants.O_DIRECT === undefined) return undefined;
  let handle: FileHandle;
  try {
    handle = await open(absolute, directFlags, 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EINVAL') return undefined;
    throw error;
  }
  return new DirectWriter(handle, syncIntervalBytes);
}

class DirectWriter implements RawWriter {
  private stage: Uint8Array | undefined = writeStaging.acquire();
  private filled = 0;
  private fileOffset = 0;
  private syncedOffset = 0;
  /** The background flush under way, if any (at most one); its failure is kept for close. */
  private syncing: Promise<void> | undefined;
  private syncError: unknown;

  constructor(private readonly handle: FileHandle, private readonly syncIntervalBytes: number) {}

  async write(chunk: Uint8Array): Promise<void> {
    const stage = this.usable();
    for (let taken = 0; taken < chunk.length; ) {
      const take = Math.min(chunk.length - taken, stage.length - this.filled);
      stage.set(chunk.subarray(taken, taken + take), this.filled);
      this.filled += take;
      taken += take;
      if (this.filled === stage.length) {
        await this.flush(stage.length);
        if (!this.syncing && this.fileOffset - this.syncedOffset >= this.syncIntervalBytes) this.syncInBackground();
      }
    }
  }

  async close(): Promise<void> {
    const stage = this.usable();
    try {
      if (this.filled > 0) {
        const length = this.filled;
        const padded = Math.ceil(length / directIoAlignmentBytes) * directIoAlignmentBytes;
        stage.fill(0, length, padded);
        await this.flush(padded);
        await this.handle.truncate(this.fileOffset - padded + length);
      }
      await this.syncing;
      if (this.syncError !== undefined) throw this.syncError;
      await this.handle.sync();
    } finally {
      await this.finish();
    }
  }

  async abort(): Promise<void> {
    await this.syncing;
    await this.finish().catch(() => undefined);
  }

  private usable(): Uint8Array {
    if (!this.stage) throw Object.assign(new Error('the writer is closed'), { code: 'EBADF' });
    return this.stage;
  }

  private async flush(length: number): Promise<void> {
    let written = 0;
    while (written < length) {
      const { bytesWritten } = await this.handle.write(this.stage!, written, length - written, this.fileOffset + written);
      if (bytesWritten === 0) throw Object.assign(new Error('the device accepted no bytes'), { code: 'EIO' });
      written += bytesWritten;
    }
    this.fileOffset += length;
    this.filled = 0;
  }

  /** Starts a datasync of what is written so far; the writer does not wait for it. */
  private syncInBackground(): void {
    this.syncedOffset = this.fileOffset;
    this.syncing = this.handle.datasync().then(
      () => { this.syncing = undefined; },
      (error: unknown) => { this.syncError ??= error; this.syncing = undefined; },
    );
  }

  private async finish(): Promise<void> {
    const stage = this.stage;
    if (!stage) return;
    this.stage = undefined;
    try {
      await this.handle.close();
    } finally {
      writeStaging.release(stage);
    }
  }
}

/** Reads at least this long go around the page cache; shorter ones (metadata) stay buffered. */
export const directReadMinBytes = 64 * 1024;

/**
 * Opens `absolute` for O_DIRECT reads; undefined when the file system refuses O_DIRECT (the
 * caller reads buffered instead). Other errors (ENOENT...) are thrown as they are.
 */
export async function openDirectReader(absolute: string): Promise<RawReader | undefined> {
  if (constants.O_DIRECT === undefined) return undefined;
  try {
    return new DirectReader(await openDescriptor(absolute, constants.O_RDONLY | constants.O_DIRECT));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EINVAL') return undefined;
    throw error;
  }
}

/**
 * Reads with O_DIRECT: the aligned span around the bytes asked for is read into a staging
 * buffer (up to limits.directReadStagingBytes, so a read of a few blocks' chunks is one call), and the
 * bytes are copied out, so the caller owns ordinary memory. A short file gives a short result.
 * Given `into`, the bytes land at its start.
 */
class DirectReader implements RawReader {
  private closed = false;

  constructor(private readonly handle: FileHandleApi) {}

  async read(offset: number, length: number, into?: Uint8Array): Promise<Uint8Array> {
    if (this.closed) throw Object.assign(new Error('the reader is closed'), { code: 'EBADF' });
    const staging = readStagingFor((offset % directIoAlignmentBytes) + length);
    const stage = staging.acquire();
    try {
      const result = into ?? Buffer.allocUnsafe(length);
      let filled = 0;
      while (filled < length) {
        const position = offset + filled;
        const alignedStart = Math.floor(position / directIoAlignmentBytes) * directIoAlignmentBytes;
        const skip = position - alignedStart;
        const span = Math.min(stage.length, Math.ceil((skip + length - filled) / directIoAlignmentBytes) * directIoAlignmentBytes);
        const { bytesRead } = await this.handle.read(stage, 0, span, alignedStart);
        if (bytesRead <= skip) break;
        const take = Math.min(bytesRead - skip, length - filled);
        result.set(stage.subarray(skip, skip + take), filled);
        filled += take;
        if (bytesRead < span) break;
      }
      return filled === result.length ? result : result.subarray(0, filled);
    } finally {
      staging.release(stage);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.handle.close().catch(() => undefined);
  }
}
