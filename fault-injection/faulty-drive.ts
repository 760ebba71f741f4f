/**
 * A Drive wrapper that injects faults chosen per drive and per operation: offline, errors
 * (EIO, ENOSPC, EACCES), latency, hangs (a call that does not return while the plan is in
 * force), corrupted reads (bit flips in what is returned; the inner data stays clean), torn
 * writes (a prefix only) and silently dropped writes, on every path or only on paths containing
 * a given text. Randomness comes
 * from a seeded PRNG, so a seed replays the same fault decisions. `liveness: true` passes every
 * call through untouched, whatever else is configured.
 */
import { SvcError, type ErrorCode } from '../src/errors/index.js';
import type { DiskInfo, Drive, FileReader, FileStat, FileWriter } from '../src/drive/index.js';
import { createPrng, type Prng } from '../src/util/prng.js';
import { parseFaultOptions, type DriveOperation, type FaultOptions, type OperationFault } from './fault-options.js';

export { parseFaultOptions, driveOperations, type DriveOperation, type FaultOptions, type OperationFault } from './fault-options.js';

export interface FaultyDrive extends Drive {
  readonly inner: Drive;
  readonly faults: FaultOptions;
  setFaults(options: FaultOptions): void;
  clearFaults(): void;
}

const errnoCodes: Record<NonNullable<OperationFault['error']>, ErrorCode> = {
  EIO: 'DriveFaulty',
  ENOSPC: 'DriveFull',
  EACCES: 'DriveAccessDenied',
};

export function createFaultyDrive(inner: Drive, options: FaultOptions = {}): FaultyDrive {
  return new FaultInjectingDrive(inner, options);
}

class FaultInjectingDrive implements FaultyDrive {
  private current: FaultOptions;
  private prng: Prng;
  /** Calls hung under the plan in force; released when the plan changes. */
  private releaseHung: (() => void)[] = [];

  constructor(readonly inner: Drive, options: FaultOptions) {
    this.current = parseFaultOptions(options);
    this.prng = createPrng(options.seed ?? 1);
  }

  get endpoint(): string {
    return this.inner.endpoint;
  }

  get faults(): FaultOptions {
    return this.current;
  }

  setFaults(options: FaultOptions): void {
    this.current = parseFaultOptions(options);
    if (options.seed !== undefined) this.prng = createPrng(options.seed);
    this.releaseHungCalls();
  }

  clearFaults(): void {
    this.current = {};
    this.releaseHungCalls();
  }

  private releaseHungCalls(): void {
    const waiting = this.releaseHung;
    this.releaseHung = [];
    for (const release of waiting) release();
  }

  /** The fault that applies to an operation now (the specific one over the wildcard), if any. */
  private faultFor(operation: DriveOperation, path: string): OperationFault | undefined {
    if (this.current.liveness) return undefined;
    const fault = this.current.operations?.[operation] ?? this.current.operations?.['*'];
    if (!fault) return undefined;
    if (fault.pathContains !== undefined && !path.includes(fault.pathContains)) return undefined;
    const probability = fault.probability ?? 1;
    return probability >= 1 || this.prng.next() < probability ? fault : undefined;
  }

  private async before(operation: DriveOperation, path: string): Promise<OperationFault | undefined> {
    if (this.current.offline && !this.current.liveness) {
      throw new SvcError('DriveOffline', `drive ${this.endpoint} is offline`, { endpoint: this.endpoint, path, injected: true });
    }
    const fault = this.faultFor(operation, path);
    if (fault?.hang) {
      await new Promise<void>((resolve) => this.releaseHung.push(resolve));
      return this.before(operation, path);
    }
    if (fault?.latencyMs) await new Promise((resolve) => setTimeout(resolve, fault.latencyMs));
    if (fault?.error) {
      const code = errnoCodes[fault.error];
      throw new SvcError(code, `injected ${fault.error} on ${operation} ${path}`, { endpoint: this.endpoint, path, injected: true });
    }
    return fault;
  }

  private corrupt(fault: OperationFault | undefined, bytes: Uint8Array): Uint8Array {
    const flips = fault?.corruptReads?.bitFlips ?? 0;
    if (flips === 0 || bytes.length === 0) return bytes;
    const copy = new Uint8Array(bytes);
    for (let flip = 0; flip < flips; flip += 1) {
      const bit = this.prng.int(copy.length * 8);
      copy[bit >> 3] = copy[bit >> 3]! ^ (1 << (bit & 7));
    }
    return copy;
  }

  /** Applies torn and dropped writes; returns true when the caller should write normally. */
  private async tornOrDropped(fault: OperationFault | undefined, write: (data: Uint8Array) => Promise<void>, data: Uint8Array): Promise<boolean> {
    if (fault?.silentDrop) return false;
    if (fault?.tornWrite) {
      await write(data.subarray(0, Math.floor(data.length * Math.min(Math.max(fault.tornWrite.fraction, 0), 0.999))));
      throw new SvcError('DriveFaulty', `injected torn write on ${this.endpoint}`, { endpoint: this.endpoint, injected: true });
    }
    return true;
  }

  async readFile(path: string): Promise<Uint8Array> {
    const fault = await this.before('readFile', path);
    return this.corrupt(fault, await this.inner.readFile(path));
  }

  async readRange(path: string, offset: number, length: number, into?: Uint8Array): Promise<Uint8Array> {
    const fault = await this.before('readRange', path);
    return this.corruptInPlace(fault, await this.inner.readRange(path, offset, length, into), into);
  }

  /** Each read through a reader is faulted as a readRange: the same faults hit a GET either way. */
  async openReader(path: string): Promise<FileReader> {
    const reader = await this.inner.openReader(path);
    return {
      read: async (offset, length, into) => {
        const fault = await this.before('readRange', path);
        return this.corruptInPlace(fault, await reader.read(offset, length, into), into);
      },
      close: () => reader.close(),
    };
  }

  /** Corrupts `bytes` as the fault says; where the caller gave `into`, the corruption lands there. */
  private corruptInPlace(fault: OperationFault | undefined, bytes: Uint8Array, into: Uint8Array | undefined): Uint8Array {
    const corrupted = this.corrupt(fault, bytes);
    if (!into || corrupted === bytes) return corrupted;
    bytes.set(corrupted);
    return bytes;
  }

  async *readStream(path: string, options?: { offset?: number; length?: number }): AsyncIterable<Uint8Array> {
    const fault = await this.before('readStream', path);
    for await (const chunk of this.inner.readStream(path, options)) yield this.corrupt(fault, chunk);
  }

  async writeFile(path: string, data: Uint8Array, options?: { sync?: boolean }): Promise<void> {
    const fault = await this.before('writeFile', path);
    if (await this.tornOrDropped(fault, (bytes) => this.inner.writeFile(path, bytes, options), data)) await this.inner.writeFile(path, data, options);
  }

  async writeFileAtomic(path: string, data: Uint8Array): Promise<void> {
    const fault = await this.before('writeFileAtomic', path);
    if (await this.tornOrDropped(fault, (bytes) => this.inner.writeFile(path, bytes), data)) await this.inner.writeFileAtomic(path, data);
  }

  async appendFile(path: string, data: Uint8Array): Promise<void> {
    const fault = await this.before('appendFile', path);
    if (await this.tornOrDropped(fault, (bytes) => this.inner.appendFile(path, bytes), data)) await this.inner.appendFile(path, data);
  }

  async openWriter(path: string): Promise<FileWriter> {
    await this.before('openWriter', path);
    const writer = await this.inner.openWriter(path);
    return {
      write: async (chunk) => {
        const fault = await this.before('openWriter', path);
        if (await this.tornOrDropped(fault, (bytes) => writer.write(bytes), chunk)) await writer.write(chunk);
      },
      close: async () => {
        await this.before('openWriter', path);
        await writer.close();
      },
      abort: () => writer.abort(),
    };
  }

  async makeDir(path: string): Promise<void> {
    await this.before('makeDir', path);
    await this.inner.makeDir(path);
  }

  async rename(source: string, target: string): Promise<void> {
    await this.before('rename', source);
    await this.inner.rename(source, target);
  }

  async deleteFile(path: string): Promise<void> {
    await this.before('deleteFile', path);
    await this.inner.deleteFile(path);
  }

  async deleteDir(path: string): Promise<void> {
    await this.before('deleteDir', path);
    await this.inner.deleteDir(path);
  }

  async deleteRecursive(path: string): Promise<void> {
    await this.before('deleteRecursive', path);
    await this.inner.deleteRecursive(path);
  }

  async listDir(path: string): Promise<string[]> {
    await this.before('listDir', path);
    return this.inner.listDir(path);
  }

  async *walk(prefix: string, options?: { startAfter?: string }): AsyncIterable<string> {
    await this.before('walk', prefix);
    yield* this.inner.walk(prefix, options);
  }

  async stat(path: string): Promise<FileStat> {
    await this.before('stat', path);
    return this.inner.stat(path);
  }

  async diskInfo(): Promise<DiskInfo> {
    if (this.current.offline && !this.current.liveness) {
      return { endpoint: this.endpoint, online: false, totalBytes: 0, freeBytes: 0, usedBytes: 0, error: 'offline (injected)' };
    }
    const fault = this.faultFor('diskInfo', '');
    const info = await this.inner.diskInfo();
    return fault?.error === 'ENOSPC' ? { ...info, freeBytes: 0, usedBytes: info.totalBytes } : info;
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
