/**
 * Power cuts. A `PowerCutDisk` is one drive's medium: an inner Drive holding every byte written
 * (what the page cache and the platter hold together) and a record of which files' contents are
 * not yet durable by the Drive contract (src/drive/drive.ts, "Durability"): written by
 * `writeFile` without `sync`, appended to, or streamed by a FileWriter not yet closed. Namespace
 * changes (creates, renames, deletes) are durable once their call resolves, as the contract says;
 * a rename carries a file's volatility with it, so a file renamed into place before its data was
 * synced stays at risk.
 *
 * A `PowerSupply` powers one generation of drives (one run of a server). It counts the writing
 * calls made through its drives and trips at a chosen count (or when told): from then on every
 * call through those drives fails with DriveOffline, as a machine without power answers nothing;
 * calls already running finish underneath but report failure. `settle()` waits for them. Then
 * `loseVolatile` on the disks chosen to lose power throws away what a real cut could: each
 * non-durable file comes back whole, truncated, or with a zero-filled tail, never shorter than its
 * durable prefix. A new supply then powers the next generation over the same disks. In a
 * cluster, the peers' drives a node reaches over the network go through its supply too
 * (`reach`): once it trips, the node sends them nothing more.
 *
 * Every choice is drawn from a seeded Prng and made in path order, so a seed replays it.
 */
import { SvcError } from '../src/errors/index.js';
import type { DiskInfo, Drive, FileReader, FileStat, FileWriter } from '../src/drive/index.js';
import type { Prng } from '../src/util/prng.js';

/** What became of one non-durable file at a power cut. */
export interface LostWrite {
  endpoint: string;
  path: string;
  fate: 'whole' | 'truncated' | 'zero-filled';
  /** Bytes kept intact (the file's length when whole). */
  keptBytes: number;
  sizeBytes: number;
}

export class PowerCutDisk {
  /** Path -> how many leading bytes of its current contents are durable (0: none). */
  private readonly volatile = new Map<string, number>();

  constructor(readonly inner: Drive) {}

  get endpoint(): string {
    return this.inner.endpoint;
  }

  /** Paths whose contents are not durable yet, in path order. */
  volatilePaths(): string[] {
    return [...this.volatile.keys()].sort();
  }

  markDurable(path: string): void {
    this.volatile.delete(path);
  }

  markVolatile(path: string, durableBytes = 0): void {
    this.volatile.set(path, Math.min(durableBytes, this.volatile.get(path) ?? durableBytes));
  }

  isVolatile(path: string): boolean {
    return this.volatile.has(path);
  }

  /** A tree (a file, or a directory and everything below it) left the namespace. */
  forgetTree(path: string): void {
    for (const key of [...this.volatile.keys()]) if (within(key, path)) this.volatile.delete(key);
  }

  /** A tree moved: what was volatile under `source` is volatile under `target`; what `target` held is gone. */
  moveTree(source: string, target: string): void {
    this.forgetTree(target);
    for (const [key, durableBytes] of [...this.volatile]) {
      if (!within(key, source)) continue;
      this.volatile.delete(key);
      this.volatile.set(target + key.slice(source.length), durableBytes);
    }
  }

  /**
   * The power cut on this disk: every non-durable file keeps its durable prefix and, drawn from
   * `prng`, the rest whole, a part of it, or zeros in its place. Afterwards all is durable.
   */
  async loseVolatile(prng: Prng): Promise<LostWrite[]> {
    const lost: LostWrite[] = [];
    for (const path of this.volatilePaths()) {
      const durableBytes = this.volatile.get(path)!;
      let bytes: Uint8Array;
      try {
        bytes = await this.inner.readFile(path);
      } catch {
        continue; // gone already (removed by a call that finished after the trip)
      }
      const keptBytes = durableBytes + prng.int(Math.max(0, bytes.length - durableBytes) + 1);
      const fate = keptBytes >= bytes.length ? 'whole' : prng.next() < 0.5 ? 'truncated' : 'zero-filled';
      if (fate === 'truncated') await this.inner.writeFile(path, bytes.subarray(0, keptBytes), { sync: true });
      if (fate === 'zero-filled') await this.inner.writeFile(path, Buffer.concat([bytes.subarray(0, keptBytes), new Uint8Array(bytes.length - keptBytes)]), { sync: true });
      lost.push({ endpoint: this.endpoint, path, fate, keptBytes, sizeBytes: bytes.length });
    }
    this.volatile.clear();
    return lost;
  }
}

function within(path: string, tree: string): boolean {
  return path === tree || path.startsWith(`${tree}/`);
}

export class PowerSupply {
  private writes = 0;
  private tripAtWrites = Number.POSITIVE_INFINITY;
  private running = 0;
  private idle: (() => void)[] = [];
  private tripListeners: ((writes: number) => void)[] = [];
  tripped = false;

  /** Writing calls made through this supply's drives so far. */
  get writeCount(): number {
    return this.writes;
  }

  /** Trips the supply when the `count`-th writing call starts (that call fails). */
  tripAt(count: number): void {
    this.tripAtWrites = count;
    if (this.writes >= count) this.trip();
  }

  trip(): void {
    if (this.tripped) return;
    this.tripped = true;
    for (const listener of this.tripListeners.splice(0)) listener(this.writes);
  }

  /** Resolves with the write count when the supply trips. */
  whenTripped(): Promise<number> {
    return this.tripped ? Promise.resolve(this.writes) : new Promise((resolve) => this.tripListeners.push(resolve));
  }

  /** Resolves once no call through this supply's drives is running. */
  settle(): Promise<void> {
    return this.running === 0 ? Promise.resolve() : new Promise((resolve) => this.idle.push(resolve));
  }

  /** A drive over `disk` powered by this supply. */
  power(disk: PowerCutDisk): Drive {
    return new PowerCutDrive(disk, this);
  }

  /**
   * A peer's drive as the machine on this supply reaches it over the network: once the supply
   * trips that machine sends nothing more, and an answer still on its way finds no one to take
   * it (the call fails). What the peer did with a call already sent stays done.
   */
  reach(drive: Drive): Drive {
    return new SilencedDrive(drive, this);
  }

  /** Runs one call: refused when tripped (a writing call may trip the supply first), reported failed if a trip came meanwhile. */
  async run<T>(endpoint: string, writing: boolean, action: () => Promise<T>): Promise<T> {
    if (writing && !this.tripped) {
      this.writes += 1;
      if (this.writes >= this.tripAtWrites) this.trip();
    }
    this.refuseWhenTripped(endpoint);
    this.running += 1;
    try {
      const result = await action();
      this.refuseWhenTripped(endpoint);
      return result;
    } finally {
      this.running -= 1;
      if (this.running === 0) for (const resolve of this.idle.splice(0)) resolve();
    }
  }

  refuseWhenTripped(endpoint: string): void {
    if (this.tripped) throw new SvcError('DriveOffline', `power cut: ${endpoint}`, { endpoint });
  }
}

/** The Drive a server sees: every call goes to the disk's inner drive through the supply. */
class PowerCutDrive implements Drive {
  private readonly inner: Drive;

  constructor(private readonly disk: PowerCutDisk, private readonly supply: PowerSupply) {
    this.inner = disk.inner;
  }

  get endpoint(): string {
    return this.inner.endpoint;
  }

  private read<T>(action: () => Promise<T>): Promise<T> {
    return this.supply.run(this.endpoint, false, action);
  }

  private write<T>(action: () => Promise<T>): Promise<T> {
    return this.supply.run(this.endpoint, true, action);
  }

  readFile(path: string): Promise<Uint8Array> {
    return this.read(() => this.inner.readFile(path));
  }

  readRange(path: string, offset: number, length: number, into?: Uint8Array): Promise<Uint8Array> {
    return this.read(() => this.inner.readRange(path, offset, length, into));
  }

  async *readStream(path: string, options?: { offset?: number; length?: number }): AsyncIterable<Uint8Array> {
    this.supply.refuseWhenTripped(this.endpoint);
    for await (const chunk of this.inner.readStream(path, options)) {
      this.supply.refuseWhenTripped(this.endpoint);
      yield chunk;
    }
  }

  openReader(path: string): Promise<FileReader> {
    return this.read(async () => {
      const reader = await this.inner.openReader(path);
      return { read: (offset, length, into) => this.read(() => reader.read(offset, length, into)), close: () => reader.close() };
    });
  }

  writeFile(path: string, data: Uint8Array, options: { sync?: boolean } = {}): Promise<void> {
    return this.write(async () => {
      await this.inner.writeFile(path, data, options);
      if (options.sync) this.disk.markDurable(path);
      else this.disk.markVolatile(path);
    });
  }

  writeFileAtomic(path: string, data: Uint8Array): Promise<void> {
    return this.write(async () => {
      await this.inner.writeFileAtomic(path, data);
      this.disk.markDurable(path);
    });
  }

  appendFile(path: string, data: Uint8Array): Promise<void> {
    return this.write(async () => {
      const before = await this.inner.stat(path).then((stat) => stat.sizeBytes, () => 0);
      await this.inner.appendFile(path, data);
      this.disk.markVolatile(path, before);
    });
  }

  openWriter(path: string): Promise<FileWriter> {
    return this.write(async () => {
      const writer = await this.inner.openWriter(path);
      this.disk.markVolatile(path);
      return {
        write: (chunk) => this.write(() => writer.write(chunk)),
        close: () =>
          this.write(async () => {
            await writer.close();
            this.disk.markDurable(path);
          }),
        abort: async () => {
          if (this.supply.tripped) return; // nothing reaches the disk after the cut: the partial file stays
          await this.read(async () => {
            await writer.abort();
            this.disk.forgetTree(path);
          }).catch(() => undefined);
        },
      };
    });
  }

  makeDir(path: string): Promise<void> {
    return this.write(() => this.inner.makeDir(path));
  }

  rename(source: string, target: string): Promise<void> {
    return this.write(async () => {
      await this.inner.rename(source, target);
      this.disk.moveTree(source, target);
    });
  }

  deleteFile(path: string): Promise<void> {
    return this.write(async () => {
      await this.inner.deleteFile(path);
      this.disk.forgetTree(path);
    });
  }

  deleteDir(path: string): Promise<void> {
    return this.write(() => this.inner.deleteDir(path));
  }

  deleteRecursive(path: string): Promise<void> {
    return this.write(async () => {
      await this.inner.deleteRecursive(path);
      this.disk.forgetTree(path);
    });
  }

  listDir(path: string): Promise<string[]> {
    return this.read(() => this.inner.listDir(path));
  }

  async *walk(prefix: string, options?: { startAfter?: string }): AsyncIterable<string> {
    this.supply.refuseWhenTripped(this.endpoint);
    for await (const path of this.inner.walk(prefix, options)) {
      this.supply.refuseWhenTripped(this.endpoint);
      yield path;
    }
  }

  stat(path: string): Promise<FileStat> {
    return this.read(() => this.inner.stat(path));
  }

  async diskInfo(): Promise<DiskInfo> {
    if (this.supply.tripped) return { endpoint: this.endpoint, online: false, totalBytes: 0, freeBytes: 0, usedBytes: 0, error: 'power cut' };
    return this.inner.diskInfo();
  }

  async close(): Promise<void> {
    // The disk outlives this generation of drives: nothing to release.
  }
}

/** A peer's drive, silenced when the caller's supply trips (PowerSupply.reach). */
class SilencedDrive implements Drive {
  constructor(private readonly inner: Drive, private readonly supply: PowerSupply) {}

  get endpoint(): string {
    return this.inner.endpoint;
  }

  private async call<T>(action: () => Promise<T>): Promise<T> {
    this.supply.refuseWhenTripped(this.endpoint);
    const result = await action();
    this.supply.refuseWhenTripped(this.endpoint);
    return result;
  }

  private async *stream<T>(items: AsyncIterable<T>): AsyncIterable<T> {
    this.supply.refuseWhenTripped(this.endpoint);
    for await (const item of items) {
      this.supply.refuseWhenTripped(this.endpoint);
      yield item;
    }
  }

  readFile(path: string): Promise<Uint8Array> {
    return this.call(() => this.inner.readFile(path));
  }

  readRange(path: string, offset: number, length: number, into?: Uint8Array): Promise<Uint8Array> {
    return this.call(() => this.inner.readRange(path, offset, length, into));
  }

  readStream(path: string, options?: { offset?: number; length?: number }): AsyncIterable<Uint8Array> {
    return this.stream(this.inner.readStream(path, options));
  }

  openReader(path: string): Promise<FileReader> {
    return this.call(async () => {
      const reader = await this.inner.openReader(path);
      return { read: (offset, length, into) => this.call(() => reader.read(offset, length, into)), close: () => reader.close() };
    });
  }

  writeFile(path: string, data: Uint8Array, options?: { sync?: boolean }): Promise<void> {
    return this.call(() => this.inner.writeFile(path, data, options));
  }

  writeFileAtomic(path: string, data: Uint8Array): Promise<void> {
    return this.call(() => this.inner.writeFileAtomic(path, data));
  }

  appendFile(path: string, data: Uint8Array): Promise<void> {
    return this.call(() => this.inner.appendFile(path, data));
  }

  openWriter(path: string): Promise<FileWriter> {
    return this.call(async () => {
      const writer = await this.inner.openWriter(path);
      return {
        write: (chunk) => this.call(() => writer.write(chunk)),
        close: () => this.call(() => writer.close()),
        // After the cut nothing is sent: the partial file stays on the peer.
        abort: async () => (this.supply.tripped ? undefined : writer.abort()),
      };
    });
  }

  makeDir(path: string): Promise<void> {
    return this.call(() => this.inner.makeDir(path));
  }

  rename(source: string, target: string): Promise<void> {
    return this.call(() => this.inner.rename(source, target));
  }

  deleteFile(path: string): Promise<void> {
    return this.call(() => this.inner.deleteFile(path));
  }

  deleteDir(path: string): Promise<void> {
    return this.call(() => this.inner.deleteDir(path));
  }

  deleteRecursive(path: string): Promise<void> {
    return this.call(() => this.inner.deleteRecursive(path));
  }

  listDir(path: string): Promise<string[]> {
    return this.call(() => this.inner.listDir(path));
  }

  walk(prefix: string, options?: { startAfter?: string }): AsyncIterable<string> {
    return this.stream(this.inner.walk(prefix, options));
  }

  stat(path: string): Promise<FileStat> {
    return this.call(() => this.inner.stat(path));
  }

  async diskInfo(): Promise<DiskInfo> {
    if (this.supply.tripped) return { endpoint: this.endpoint, online: false, totalBytes: 0, freeBytes: 0, usedBytes: 0, error: 'power cut (this node)' };
    return this.inner.diskInfo();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
