/**
 * A target's queue of events on this node's drive (docs/notifications.md "Delivery"): one file per
 * event, `<sequence 16 digits>-<queued ms 13 digits>.evt`, in the versioned state-file format
 * (magic `SVEV`), written and fsynced (file and directory) before `enqueue` resolves. Up to
 * `concurrency` deliveries at a time, oldest first, and never two of one order key (an object's
 * `bucket/key`) at once nor out of turn, so each key's events reach the target in the order they
 * were queued; an event whose key is not known (found on the drive at open) waits for every
 * delivery before it and holds back every one after it. A file is removed once the target took
 * it; a failed delivery stops new ones for a capped backoff on the injected timers, then is tried
 * again in its turn. A new queue on the same directory (a restart) delivers what it finds. A file
 * that does not decode is moved to the quarantine directory and counted; a full queue drops its
 * oldest event that is not being delivered, counts it and warns.
 */
import { mkdir, open, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeStateFile, encodeStateFile } from '../../format/state-file.js';
import type { Timers } from '../../util/clock.js';
import { isSvcError, SvcError } from '../../errors/index.js';

export const eventFileMagic = 'SVEV';
const fileName = /^(\d{16})-(\d{13})\.evt$/;

export interface EventQueueStats {
  /** Events waiting, on disk. */
  depth: number;
  /** Taken by the target since this process started. */
  sent: number;
  /** Deliveries that failed (each is retried) since this process started. */
  failed: number;
  /** Events dropped because the queue was full, since this process started. */
  dropped: number;
  /** Event files that did not decode, moved to quarantine, since this process started. */
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
}

interface Entry {
  name: string;
  queuedMs: number;
  /** Events of one key are delivered one after another, in order; undefined: in order with every event. */
  orderKey?: string;
}

/** How far past the oldest waiting event a dispatch looks for one it may start, per delivery slot. */
const scanPerSlot = 64;

export class EventQueue {
  private readonly entries: Entry[] = [];
  private nextSequence = 0;
  private readonly inFlight = new Set<Entry>();
  private readonly sending = new Set<Promise<void>>();
  private failures = 0;
  private paused = false;
  private readonly counts = { sent: 0, failed: 0, dropped: 0, quarantined: 0 };
  private lastError: string | undefined;
  private closed = false;
  private wake: (() => void) | undefined;
  private retryTimer: unknown;
  private readonly abort = new AbortController();
  private lastDropWarningMs = -Infinity;
  private running: Promise<void> | undefined;

  private constructor(private readonly options: EventQueueOptions) {}

  /** Opens the queue on its directory (created if absent) and starts delivering what it holds. */
  static async open(options: EventQueueOptions): Promise<EventQueue> {
    const queue = new EventQueue(options);
    await mkdir(options.directory, { recursive: true });
    for (const name of (await readdir(options.directory)).sort()) {
      const match = fileName.exec(name);
      if (!match) continue; // a temporary file of a write a crash cut short
      queue.entries.push({ name, queuedMs: Number(match[2]) });
      queue.nextSequence = Math.max(queue.nextSequence, Number(match[1]) + 1);
    }
    queue.running = queue.deliverLoop();
    return queue;
  }

  /** Writes the event to the queue; resolves once it is durable. Events with one `orderKey` are delivered in the order queued. */
  async enqueue(payload: unknown, orderKey?: string): Promise<void> {
    const queuedMs = Math.trunc(this.options.nowMs());
    const name = `${String(this.nextSequence++).padStart(16, '0')}-${String(queuedMs).padStart(13, '0')}.evt`;
    const bytes = encodeStateFile(eventFileMagic, { version: 1, queuedMs, payload });
    const temporary = join(this.options.directory, `.${name}.tmp`);
    const handle = await open(temporary, 'w');
    try {
      await handle.writeFile(bytes);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(temporary, join(this.options.directory, name));
    await syncDirectory(this.options.directory);
    if (this.entries.length >= this.options.limitEntries) await this.dropOldest();
    // Concurrent enqueues may finish out of order: the queue stays in sequence order.
    let index = this.entries.length;
    while (index > 0 && this.entries[index - 1]!.name > name) index -= 1;
    this.entries.splice(index, 0, { name, queuedMs, ...(orderKey !== undefined ? { orderKey } : {}) });
    this.wake?.();
  }

  stats(): EventQueueStats {
    const oldest = this.entries[0];
    return { depth: this.entries.length, ...this.counts, ...(oldest ? { oldestQueuedMs: oldest.queuedMs } : {}), ...(this.lastError !== undefined ? { lastError: this.lastError } : {}) };
  }

  /** Stops delivering; what is queued stays on disk for the next start. */
  async close(): Promise<void> {
    this.closed = true;
    this.abort.abort();
    this.options.timers.clearTimeout(this.retryTimer);
    this.wake?.();
    await this.running;
  }

  private async dropOldest(): Promise<void> {
    const index = this.entries.findIndex((entry) => !this.inFlight.has(entry));
    if (index < 0) return;
    const [dropped] = this.entries.splice(index, 1);
    if (!dropped) return;
    await unlink(join(this.options.directory, dropped.name)).catch(() => undefined);
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
    const path = join(this.options.directory, entry.name);
    let payload: unknown;
    try {
      payload = decodeEventFile(await readFile(path));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return this.remove(entry);
      if (!isSvcError(error) && typeof code === 'string') {
        // The drive failed to read it: not the file's fault, so it is retried.
        this.counts.failed += 1;
        this.lastError = (error as Error).message;
        return false;
      }
      await this.quarantine(entry, error);
      return true;
    }
    const timeout = AbortSignal.timeout(this.options.sendTimeoutMs);
    try {
      const signal = AbortSignal.any([this.abort.signal, timeout]);
      await untilAborted(this.options.send(payload, signal), signal);
    } catch (error) {
      if (this.closed) return false;
      this.counts.failed += 1;
      this.lastError = error instanceof Error ? error.message : String(error);
      return false;
    }
    this.counts.sent += 1;
    this.lastError = undefined;
    await unlink(path).catch(() => undefined);
    return this.remove(entry);
  }

  private remove(entry: Entry): true {
    const index = this.entries.indexOf(entry);
    if (index >= 0) this.entries.splice(index, 1);
    return true;
  }

  private async quarantine(entry: Entry, error: unknown): Promise<void> {
    await mkdir(this.options.quarantineDirectory, { recursive: true });
    await rename(join(this.options.directory, entry.name), join(this.options.quarantineDirectory, entry.name)).catch(() => undefined);
    this.counts.quarantined += 1;
    this.remove(entry);
    this.options.logger.warn({ file: entry.name, directory: this.options.directory, error: error instanceof Error ? error.message : String(error) }, 'an event file does not decode: moved to quarantine');
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

/** Rejects when the signal fires first (a send that ignores its signal is left to settle on its own). */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error('delivery timed out'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new Error('delivery timed out'));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** For tests and tools: writes bytes as an event file would be named (a damaged file, a fixture). */
export async function writeRawEventFile(directory: string, sequence: number, queuedMs: number, bytes: Uint8Array): Promise<string> {
  const name = `${String(sequence).padStart(16, '0')}-${String(queuedMs).padStart(13, '0')}.evt`;
  await writeFile(join(directory, name), bytes);
  return name;
}
