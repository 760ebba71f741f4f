/**
 * A target's queue of events on this node's drive (docs/notifications.md "Delivery"), in the
 * versioned state-file format: a file `<sequence 16 digits>-<queued ms 13 digits>.evt` holds one
 * event (magic `SVEV`), a file `<first sequence>-<queued ms>-<count>.evt` holds `count` events of
 * consecutive sequences (magic `SVEG`). Every file is written to a temporary name, fsynced,
 * renamed and the directory fsynced before the `enqueue` calls it holds resolve. One write is on the drive
 * at a time: the calls that arrive while it is are written together, in one file, by the next
 * (a group commit), so concurrent requests share their fsyncs while each still resolves only once
 * its event is durable.
 * Up to `concurrency` deliveries at a time, oldest first, and never two of one order key (an
 * object's `bucket/key`) at once nor out of turn, so each key's events reach the target in the
 * order they were queued; an event whose key is not known (found on the drive at open) waits for
 * every delivery before it and holds back every one after it. A file is removed once the target
 * took each of its events (or they were dropped); a failed delivery stops new ones for a capped
 * backoff on the injected timers, then is tried again in its turn. A new queue on the same
 * directory (a restart) delivers every event of every file it finds. A file that does not decode
 * is moved to the quarantine directory and its events counted; a full queue drops its oldest event
 * that is not being delivered, counts it and warns.
 */
import { mkdir, open, readdir, readFile, rename, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeStateFile, encodeStateFile } from '../../format/state-file.js';
import type { Timers } from '../../util/clock.js';
import { limits } from '../../util/limits.js';
import { isSvcError, SvcError } from '../../errors/index.js';

export const eventFileMagic = 'SVEV';
export const eventGroupMagic = 'SVEG';
const singleFileName = /^(\d{16})-(\d{13})\.evt$/;
const groupFileName = /^(\d{16})-(\d{13})-([1-9]\d{0,5})\.evt$/;

export interface EventQueueStats {
  /** Events waiting, on disk. */
  depth: number;
  /** Taken by the target since this process started. */
  sent: number;
  /** Deliveries that failed (each is retried) since this process started. */
  failed: number;
  /** Events dropped because the queue was full, since this process started. */
  dropped: number;
  /** Events of files that did not decode, moved to quarantine, since this process started. */
  quarantined: number;
  /** When the oldest waiting event was queued (ms), if any. */
  oldestQueuedMs?: number;
  /** Why the last delivery failed; cleared by the next success. */
  lastError?: string;
}

export interface EventQueueOptions {
  directory: string;
  quarantineDirectory: string;
  limitEntries: number;
  /** Delivers one event; resolves once the target took it. */
  send(payload: unknown, signal: AbortSignal): Promise<void>;
  timers: Timers;
  nowMs(): number;
  retryBaseMs: number;
  retryMaxMs: number;
  sendTimeoutMs: number;
  dropWarningIntervalMs: number;
  logger: { warn(fields: Record<string, unknown>, message: string): void };
  /** Deliveries in flight at most (default 1: strictly one after another). */
  concurrency?: number;
  /** Called after each fsync the queue makes (of a file or of its directory). */
  onSync?(): void;
}

/** One file of the queue and what is left of it. */
interface QueueFile {
  name: string;
  /** A file of several events (magic `SVEG`) rather than one (`SVEV`). */
  group: boolean;
  count: number;
  /** Its events still in the queue: the file is removed when none is left. */
  remaining: number;
  /** Its events' payloads, from its write or its first read, each let go once delivered. */
  payloads?: unknown[];
  reading?: Promise<unknown[]>;
  quarantined?: boolean;
}

interface Entry {
  file: QueueFile;
  /** Its place in its file. */
  index: number;
  queuedMs: number;
  /** Events of one key are delivered one after another, in order; undefined: in order with every event. */
  orderKey?: string;
}

/** An `enqueue` call waiting for the write that makes its event durable. */
interface Pending {
  sequence: number;
  queuedMs: number;
  payload: unknown;
  orderKey: string | undefined;
  resolve(): void;
  reject(error: unknown): void;
}

/** How far past the oldest waiting event a dispatch looks for one it may start, per delivery slot. */
const scanPerSlot = 64;

export class EventQueue {
  private readonly entries: Entry[] = [];
  private nextSequence = 0;
  private readonly inFlight = new Set<Entry>();
  private readonly sending = new Set<Promise<void>>();
  private pending: Pending[] = [];
  private writing: Promise<void> | undefined;
  private failures = 0;
  private paused = false;
  private readonly counts = { sent: 0, failed: 0, dropped: 0, quarantined: 0 };
  private lastError: string | undefined;
  private closed = false;
  private wake: (() => void) | undefined;
  private retryTimer: unknown;
  /** One per delivery in flight: aborted by its timeout or by `close`. */
  private readonly deliveries = new Set<AbortController>();
  /** The queue's directory, open for its fsyncs while events are written. */
  private directoryHandle: FileHandle | undefined;
  private lastDropWarningMs = -Infinity;
  private running: Promise<void> | undefined;

  private constructor(private readonly options: EventQueueOptions) {}

  /** Opens the queue on its directory (created if absent) and starts delivering what it holds. */
  static async open(options: EventQueueOptions): Promise<EventQueue> {
    const queue = new EventQueue(options);
    await mkdir(options.directory, { recursive: true });
    for (const name of (await readdir(options.directory)).sort()) {
      const single = singleFileName.exec(name);
      const match = single ?? groupFileName.exec(name);
      if (!match) continue; // a temporary file of a write a crash cut short
      const count = single ? 1 : Number(match[3]);
      const file: QueueFile = { name, group: !single, count, remaining: count };
      for (let index = 0; index < count; index += 1) queue.entries.push({ file, index, queuedMs: Number(match[2]) });
      queue.nextSequence = Math.max(queue.nextSequence, Number(match[1]) + count);
    }
    queue.running = queue.deliverLoop();
    return queue;
  }

  /**
   * Writes the event to the queue; resolves once it is durable. Events with one `orderKey` are
   * delivered in the order queued (the order of the calls).
   */
  enqueue(payload: unknown, orderKey?: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ sequence: this.nextSequence++, queuedMs: Math.trunc(this.options.nowMs()), payload, orderKey, resolve, reject });
      this.writing ??= this.writeLoop();
    });
  }

  stats(): EventQueueStats {
    const oldest = this.entries[0];
    return { depth: this.entries.length, ...this.counts, ...(oldest ? { oldestQueuedMs: oldest.queuedMs } : {}), ...(this.lastError !== undefined ? { lastError: this.lastError } : {}) };
  }

  /** Stops delivering (the writes under way finish); what is queued stays on disk for the next start. */
  async close(): Promise<void> {
    this.closed = true;
    for (const delivery of this.deliveries) delivery.abort();
    this.options.timers.clearTimeout(this.retryTimer);
    this.wake?.();
    await this.running;
    await this.writing;
    await this.closeDirectory();
  }

  private async closeDirectory(): Promise<void> {
    const handle = this.directoryHandle;
    this.directoryHandle = undefined;
    await handle?.close().catch(() => undefined);
  }

  /** Writes what waits, one file at a time, until nothing does: the calls made meanwhile go together in the next file. */
  private async writeLoop(): Promise<void> {
    await Promise.resolve(); // the calls of this same turn join the first file
    try {
      while (this.pending.length > 0) {
        const group = this.pending.splice(0, limits.eventQueueGroupEventsMax);
        try {
          const file = await this.write(group);
          for (const [index, waiting] of group.entries()) {
            if (this.entries.length >= this.options.limitEntries) await this.dropOldest();
            this.entries.push({ file, index, queuedMs: waiting.queuedMs, ...(waiting.orderKey !== undefined ? { orderKey: waiting.orderKey } : {}) });
          }
        } catch (error) {
          for (const waiting of group) waiting.reject(error);
          continue;
        }
        this.wake?.();
        for (const waiting of group) waiting.resolve();
      }
    } finally {
      this.writing = undefined;
    }
  }

  /** One file of the group's events, durable when it resolves: written to a temporary name, fsynced, renamed, and the directory fsynced. */
  private async write(group: Pending[]): Promise<QueueFile> {
    const first = group[0]!;
    const stem = `${String(first.sequence).padStart(16, '0')}-${String(first.queuedMs).padStart(13, '0')}`;
    const single = group.length === 1;
    const name = single ? `${stem}.evt` : `${stem}-${group.length}.evt`;
    const payloads = group.map((waiting) => waiting.payload);
    const bytes = single
      ? encodeStateFile(eventFileMagic, { version: 1, queuedMs: first.queuedMs, payload: first.payload })
      : encodeStateFile(eventGroupMagic, { version: 1, queuedMs: first.queuedMs, payloads });
    const temporary = join(this.options.directory, `.${name}.tmp`);
    try {
      const handle = await open(temporary, 'w');
      try {
        await handle.writeFile(bytes);
        await handle.datasync();
        this.options.onSync?.();
      } finally {
        await handle.close();
      }
      await rename(temporary, join(this.options.directory, name));
    } catch (error) {
      await unlink(temporary).catch(() => undefined);
      throw error;
    }
    await this.syncDirectory();
    return { name, group: !single, count: group.length, remaining: group.length, ...(this.entries.length < limits.eventQueueKeptPayloadsMax ? { payloads } : {}) };
  }

  private async syncDirectory(): Promise<void> {
    try {
      this.directoryHandle ??= await open(this.options.directory, 'r');
      await this.directoryHandle.sync();
    } catch (error) {
      await this.closeDirectory();
      throw error;
    }
    this.options.onSync?.();
  }

  private async dropOldest(): Promise<void> {
    const entry = this.entries.find((candidate) => !this.inFlight.has(candidate));
    if (!entry) return;
    await this.release(entry);
    this.counts.dropped += 1;
    const nowMs = this.options.nowMs();
    if (nowMs - this.lastDropWarningMs >= this.options.dropWarningIntervalMs) {
      this.lastDropWarningMs = nowMs;
      this.options.logger.warn({ directory: this.options.directory, dropped: this.counts.dropped, limit: this.options.limitEntries }, 'event queue full: its oldest events are dropped');
    }
  }

  private async deliverLoop(): Promise<void> {
    while (!this.closed) {
      for (const entry of this.ready()) this.start(entry);
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
    await Promise.all(this.sending);
  }

  /**
   * The entries that may start now, oldest first: none while paused after a failure; an entry
   * whose key has an earlier entry waiting or in flight waits for it; an entry without a key
   * starts only when nothing is in flight, and nothing after it starts before it is done.
   */
  private ready(): Entry[] {
    const concurrency = this.options.concurrency ?? 1;
    if (this.paused || this.inFlight.size >= concurrency) return [];
    const chosen: Entry[] = [];
    const heldKeys = new Set<string>();
    const scanLimit = Math.min(this.entries.length, concurrency * scanPerSlot);
    for (let index = 0; index < scanLimit && this.inFlight.size + chosen.length < concurrency; index += 1) {
      const entry = this.entries[index]!;
      if (entry.orderKey === undefined) {
        if (!this.inFlight.has(entry) && this.inFlight.size === 0 && chosen.length === 0) chosen.push(entry);
        break;
      }
      if (!this.inFlight.has(entry) && !heldKeys.has(entry.orderKey)) chosen.push(entry);
      heldKeys.add(entry.orderKey);
    }
    return chosen;
  }

  private start(entry: Entry): void {
    this.inFlight.add(entry);
    const sending: Promise<void> = this.deliver(entry).then((delivered) => {
      this.inFlight.delete(entry);
      this.sending.delete(sending);
      if (delivered) this.failures = 0;
      else this.pause();
      this.wake?.();
    });
    this.sending.add(sending);
  }

  /** After a failure no delivery starts for a backoff doubling with each failure in a row. */
  private pause(): void {
    this.failures += 1;
    if (this.paused || this.closed) return;
    this.paused = true;
    const delayMs = Math.min(this.options.retryMaxMs, this.options.retryBaseMs * 2 ** Math.min(this.failures - 1, 20));
    this.retryTimer = this.options.timers.setTimeout(() => {
      this.paused = false;
      this.wake?.();
    }, delayMs);
  }

  /** True when the entry left the queue (taken, quarantined or dropped meanwhile). */
  private async deliver(entry: Entry): Promise<boolean> {
    let payload: unknown;
    try {
      payload = await this.payloadOf(entry);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') {
        await this.release(entry);
        return true;
      }
      if (!isSvcError(error) && typeof code === 'string') {
        // The drive failed to read it: not the file's fault, so it is retried.
        this.counts.failed += 1;
        this.lastError = (error as Error).message;
        return false;
      }
      await this.quarantine(entry.file, error);
      return true;
    }
    const delivery = new AbortController();
    const timer = setTimeout(() => delivery.abort(), this.options.sendTimeoutMs);
    timer.unref();
    this.deliveries.add(delivery);
    try {
      await untilAborted(this.options.send(payload, delivery.signal), delivery.signal);
    } catch (error) {
      if (this.closed) return false;
      this.counts.failed += 1;
      this.lastError = error instanceof Error ? error.message : String(error);
      return false;
    } finally {
      clearTimeout(timer);
      this.deliveries.delete(delivery);
    }
    this.counts.sent += 1;
    this.lastError = undefined;
    await this.release(entry);
    return true;
  }

  /** The entry's payload: kept from the write, or read from its file (once for every event of the file). */
  private async payloadOf(entry: Entry): Promise<unknown> {
    const file = entry.file;
    if (!file.payloads) {
      file.reading ??= readFile(join(this.options.directory, file.name)).then((bytes) => {
        const payloads = file.group ? decodeEventGroupFile(bytes, file.count) : [decodeEventFile(bytes)];
        file.payloads = payloads;
        return payloads;
      }).finally(() => (file.reading = undefined));
      await file.reading;
    }
    return file.payloads![entry.index];
  }

  /** Takes the entry out of the queue; the last of its file removes the file. */
  private async release(entry: Entry): Promise<void> {
    const index = this.entries.indexOf(entry);
    if (index < 0) return;
    this.entries.splice(index, 1);
    const file = entry.file;
    if (file.payloads) file.payloads[entry.index] = undefined;
    file.remaining -= 1;
    if (file.remaining === 0) await unlink(join(this.options.directory, file.name)).catch(() => undefined);
  }

  /** Moves a file that does not decode to quarantine, with every event it holds that is still queued. */
  private async quarantine(file: QueueFile, error: unknown): Promise<void> {
    if (file.quarantined) return;
    file.quarantined = true;
    let events = 0;
    for (let index = this.entries.length - 1; index >= 0; index -= 1) {
      if (this.entries[index]!.file !== file) continue;
      this.entries.splice(index, 1);
      events += 1;
    }
    file.remaining = 0;
    this.counts.quarantined += events;
    await mkdir(this.options.quarantineDirectory, { recursive: true });
    await rename(join(this.options.directory, file.name), join(this.options.quarantineDirectory, file.name)).catch(() => undefined);
    this.options.logger.warn({ file: file.name, events, directory: this.options.directory, error: error instanceof Error ? error.message : String(error) }, 'an event file does not decode: moved to quarantine');
  }
}

/** Decodes one event file strictly: the state-file frame, then `{ version: 1, queuedMs, payload }`. */
export function decodeEventFile(bytes: Uint8Array): unknown {
  const document = decodeStateFile(eventFileMagic, bytes) as { version?: unknown; queuedMs?: unknown; payload?: unknown } | null;
  if (typeof document !== 'object' || document === null || document.version !== 1 || typeof document.queuedMs !== 'number' || document.payload === undefined) {
    throw new SvcError('CorruptFormat', `${eventFileMagic}: not a version 1 event document`);
  }
  return document.payload;
}

/** Decodes a file of several events strictly: the state-file frame, then `{ version: 1, queuedMs, payloads }` with as many payloads as its name says. */
export function decodeEventGroupFile(bytes: Uint8Array, count: number): unknown[] {
  const document = decodeStateFile(eventGroupMagic, bytes) as { version?: unknown; queuedMs?: unknown; payloads?: unknown } | null;
  if (typeof document !== 'object' || document === null || document.version !== 1 || typeof document.queuedMs !== 'number' || !Array.isArray(document.payloads) || document.payloads.length !== count) {
    throw new SvcError('CorruptFormat', `${eventGroupMagic}: not a version 1 document of ${count} events`);
  }
  return document.payloads as unknown[];
}

/** Rejects when the signal fires first (a send that ignores its signal is left to settle on its own). */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error('delivery timed out'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new Error('delivery timed out'));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Fsyncs a directory, so that the names just created or renamed in it are durable. */
export async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** For tests and tools: writes bytes as an event file would be named (a damaged file, a fixture); with `count`, as a file of that many events. */
export async function writeRawEventFile(directory: string, sequence: number, queuedMs: number, bytes: Uint8Array, count?: number): Promise<string> {
  const name = `${String(sequence).padStart(16, '0')}-${String(queuedMs).padStart(13, '0')}${count === undefined ? '' : `-${count}`}.evt`;
  await writeFile(join(directory, name), bytes);
  return name;
}
