/**
 * The audit webhook's queue (docs/audit.md "The webhook queue"): bounded, persisted, delivered in
 * order. Entries are JSON lines appended to segment files `segment-<16 digits>.jsonl` of at most
 * one batch each before any delivery is tried; the oldest segment is POSTed as one batch and
 * removed once the receiver answers 2xx. A failure is retried after a capped exponential backoff
 * on the injected timers. Appends are fsynced together every `fsyncIntervalMs`; a new queue on the
 * same directory (a restart) delivers what the files hold. Full, the queue drops its oldest
 * segment that is not being delivered, counts the entries and warns once per interval.
 */
import { mkdir, open, readdir, readFile, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Timers } from '../util/clock.js';
import { limits } from '../util/limits.js';

export interface QueueStats {
  /** Entries waiting (on disk or about to be written). */
  queued: number;
  /** Entries the receiver took since this process started. */
  delivered: number;
  /** Entries dropped since this process started: the queue was full, a line on disk was torn, or an entry was too long. */
  dropped: number;
  /** Segment files refused at start since this process started, moved aside into `quarantine/`. */
  quarantined: number;
  /** Why the last delivery failed; cleared by the next success. */
  lastError?: string;
}

export interface QueueTuning {
  fsyncIntervalMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  dropWarningIntervalMs: number;
}

export interface WebhookQueueOptions extends QueueTuning {
  directory: string;
  limitEntries: number;
  batchSize: number;
  /** Sends one batch; resolves once the receiver took it, rejects otherwise (it is then retried). */
  send(lines: string[], signal: AbortSignal): Promise<void>;
  timers: Timers;
  logger: { warn(fields: Record<string, unknown>, message: string): void };
}

interface Segment {
  seq: number;
  path: string;
  /** Entries in the segment: written plus pending. */
  count: number;
  /** Lines not written to the file yet. */
  pending: string[];
  /** Takes no more entries (full, or taken for delivery). */
  sealed: boolean;
  inFlight: boolean;
  handle?: FileHandle;
  unsynced: boolean;
}

const segmentName = /^segment-(\d{16})\.jsonl$/;

/** Runs file operations one at a time, in order; a failed one does not stop the next. */
export class SerialChain {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const next = this.tail.then(work);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

export class WebhookQueue {
  private readonly segments: Segment[] = [];
  private readonly files = new SerialChain();
  private nextSeq = 0;
  private queued = 0;
  private delivered = 0;
  private dropped = 0;
  private quarantined = 0;
  private lastError: string | undefined;
  private closed = false;
  private writeScheduled = false;
  private syncTimer: unknown;
  private directoryUnsynced = false;
  private deliveryLoop: Promise<void> | undefined;
  private abort = new AbortController();
  private retry: { handle: unknown; wake: () => void } | undefined;
  private readonly drops = { sinceWarning: 0, timer: undefined as unknown };

  private constructor(private readonly options: WebhookQueueOptions) {}

  /** Opens the queue directory (made when missing) and resumes delivery of what it holds. */
  static async open(options: WebhookQueueOptions): Promise<WebhookQueue> {
    const queue = new WebhookQueue(options);
    await mkdir(options.directory, { recursive: true });
    await queue.load();
    queue.kick();
    return queue;
  }

  stats(): QueueStats {
    return { queued: this.queued, delivered: this.delivered, dropped: this.dropped, quarantined: this.quarantined, ...(this.lastError === undefined ? {} : { lastError: this.lastError }) };
  }

  /** Queues one JSON line; never throws, never waits. */
  push(line: string): void {
    if (this.closed || Buffer.byteLength(line) > limits.auditEntryMaxBytes || !this.makeRoom()) {
      this.noteDropped(1);
      return;
    }
    const tail = this.appendableTail();
    tail.pending.push(line);
    tail.count += 1;
    if (tail.count >= this.options.batchSize) tail.sealed = true;
    this.queued += 1;
    this.scheduleWrite();
  }

  /** Stops delivery (a batch being sent is sent again after a restart), writes and fsyncs what is pending. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.abort.abort(new Error('the audit log is closing'));
    this.retry?.wake();
    if (this.syncTimer !== undefined) this.options.timers.clearTimeout(this.syncTimer);
    if (this.drops.timer !== undefined) this.options.timers.clearTimeout(this.drops.timer);
    this.warnDropped();
    await this.deliveryLoop;
    await this.files.run(async () => {
      await this.writePending();
      await this.syncAll(true);
    });
  }

  private async load(): Promise<void> {
    const names = (await readdir(this.options.directory)).filter((name) => segmentName.test(name)).sort();
    for (const name of names) {
      const seq = Number(segmentName.exec(name)![1]);
      const path = join(this.options.directory, name);
      this.nextSeq = Math.max(this.nextSeq, seq + 1);
      const judged = await judgeSegment(path);
      if ('refused' in judged) {
        await this.quarantine(path, name, judged.refused);
        continue;
      }
      const { count, torn } = judged;
      if (torn) this.noteDropped(1);
      if (count === 0) {
        await unlink(path);
        continue;
      }
      this.segments.push({ seq, path, count, pending: [], sealed: true, inFlight: false, unsynced: false });
      this.queued += count;
    }
    while (this.queued > this.options.limitEntries && this.dropOldest()) {
      // the limit was lowered since these were queued
    }
  }

  /**
   * Moves a segment the queue will not deliver into `quarantine/` beside the segments (kept for a
   * person to look at, never read again), counts it and says why. When the move fails the file is
   * left where it is and judged again at the next start.
   */
  private async quarantine(path: string, name: string, reason: string): Promise<void> {
    this.quarantined += 1;
    const target = join(this.options.directory, 'quarantine', `${name}.${Date.now()}`);
    try {
      await mkdir(join(this.options.directory, 'quarantine'), { recursive: true });
      await rename(path, target);
    } catch (error) {
      this.options.logger.warn({ segment: path, reason, error: String(error) }, `audit queue segment ${name} refused (${reason}); it could not be moved aside`);
      return;
    }
    this.options.logger.warn({ segment: path, reason, quarantinedAs: target }, `audit queue segment ${name} refused (${reason}) and quarantined`);
  }

  /** Room for one more entry: drops the oldest segment not being delivered while full; false when none can go. */
  private makeRoom(): boolean {
    while (this.queued >= this.options.limitEntries) if (!this.dropOldest()) return false;
    return true;
  }

  private dropOldest(): boolean {
    const index = this.segments.findIndex((segment) => !segment.inFlight);
    if (index < 0) return false;
    const [victim] = this.segments.splice(index, 1);
    this.queued -= victim!.count;
    this.noteDropped(victim!.count);
    void this.files.run(() => discard(victim!));
    return true;
  }

  private appendableTail(): Segment {
    const last = this.segments.at(-1);
    if (last && !last.sealed) return last;
    const seq = this.nextSeq++;
    const segment: Segment = { seq, path: join(this.options.directory, `segment-${String(seq).padStart(16, '0')}.jsonl`), count: 0, pending: [], sealed: false, inFlight: false, unsynced: false };
    this.segments.push(segment);
    return segment;
  }

  private scheduleWrite(): void {
    if (this.writeScheduled) return;
    this.writeScheduled = true;
    void this.files.run(async () => {
      this.writeScheduled = false;
      await this.writePending();
      this.kick();
    });
  }

  /** Appends every segment's pending lines to its file (one write each); fsync follows on the cadence. */
  private async writePending(): Promise<void> {
    for (const segment of this.segments) {
      if (segment.pending.length === 0) continue;
      // Lines pushed while this write waits stay pending for the next one.
      const written = segment.pending.length;
      const text = `${segment.pending.join('\n')}\n`;
      try {
        if (!segment.handle) {
          segment.handle = await open(segment.path, 'a');
          this.directoryUnsynced = true;
        }
        await segment.handle.write(text);
        segment.pending = segment.pending.slice(written);
        segment.unsynced = true;
      } catch (error) {
        this.options.logger.warn({ error: String(error), segment: segment.path }, 'the audit queue could not write a segment; it tries again');
        break;
      }
    }
    this.scheduleSync();
  }

  private scheduleSync(): void {
    if (this.syncTimer !== undefined || this.closed || !this.segments.some((segment) => segment.unsynced || segment.pending.length > 0)) return;
    this.syncTimer = this.options.timers.setTimeout(() => {
      this.syncTimer = undefined;
      void this.files.run(async () => {
        await this.writePending();
        await this.syncAll(false);
      });
    }, this.options.fsyncIntervalMs);
  }

  /** fsyncs written segments (and the directory for new files); closes the files of sealed segments, or all of them. */
  private async syncAll(closeAll: boolean): Promise<void> {
    for (const segment of this.segments) {
      if (!segment.handle) continue;
      try {
        if (segment.unsynced) await segment.handle.datasync();
        segment.unsynced = false;
        if (closeAll || segment.sealed) {
          await segment.handle.close();
          delete segment.handle;
        }
      } catch (error) {
        this.options.logger.warn({ error: String(error), segment: segment.path }, 'the audit queue could not fsync a segment');
      }
    }
    if (this.directoryUnsynced) {
      this.directoryUnsynced = false;
      await syncDirectory(this.options.directory).catch(() => undefined);
    }
  }

  private kick(): void {
    if (this.deliveryLoop || this.closed || this.segments.length === 0) return;
    this.deliveryLoop = this.deliver().finally(() => {
      this.deliveryLoop = undefined;
      if (this.segments.length > 0 && !this.closed) this.kick();
    });
  }

  /** Sends the oldest segment until none is left, waiting out the backoff after each failure. */
  private async deliver(): Promise<void> {
    let attempt = 0;
    while (!this.closed && this.segments.length > 0) {
      const head = this.segments[0]!;
      head.sealed = true;
      head.inFlight = true;
      try {
        await this.sendSegment(head);
        attempt = 0;
      } catch (error) {
        head.inFlight = false;
        if (this.closed) return;
        this.lastError = describe(error);
        await this.wait(Math.min(this.options.retryBaseMs * 2 ** attempt, this.options.retryMaxMs));
        attempt += 1;
      }
    }
  }

  private async sendSegment(head: Segment): Promise<void> {
    await this.files.run(() => this.writePending());
    if (head.pending.length > 0) throw new Error('the queue could not write its segment (see the log)');
    const lines = linesOf(await readFile(head.path, 'utf8').catch(() => ''));
    const whole = lines.filter(isJson);
    if (whole.length > 0) await this.options.send(whole, this.abort.signal);
    this.segments.splice(this.segments.indexOf(head), 1);
    this.queued -= head.count;
    this.delivered += whole.length;
    if (head.count > whole.length) this.noteDropped(head.count - whole.length);
    this.lastError = undefined;
    await this.files.run(() => discard(head));
  }

  private wait(delayMs: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        if (this.retry) this.options.timers.clearTimeout(this.retry.handle);
        this.retry = undefined;
        resolve();
      };
      this.retry = { handle: this.options.timers.setTimeout(wake, delayMs), wake };
    });
  }

  /** Counts dropped entries; the first drop after a quiet interval is logged at once, later ones once per interval. */
  private noteDropped(count: number): void {
    this.dropped += count;
    this.drops.sinceWarning += count;
    if (this.drops.timer !== undefined || this.closed) return;
    this.warnDropped();
    const again = (): void => {
      this.drops.timer = undefined;
      if (this.drops.sinceWarning === 0) return;
      this.warnDropped();
      this.drops.timer = this.options.timers.setTimeout(again, this.options.dropWarningIntervalMs);
    };
    this.drops.timer = this.options.timers.setTimeout(again, this.options.dropWarningIntervalMs);
  }

  private warnDropped(): void {
    if (this.drops.sinceWarning === 0) return;
    this.options.logger.warn({ dropped: this.drops.sinceWarning, droppedTotal: this.dropped, limit: this.options.limitEntries }, 'the audit webhook queue dropped its oldest entries (full, or torn on disk)');
    this.drops.sinceWarning = 0;
  }
}

/**
 * Judges a segment file found at start. Appends can tear only the last line of a file (a power
 * cut mid-write), so a final line that is not JSON is dropped and counted; anything else that does
 * not check out means the file is not one this queue wrote, and it is refused: a file larger than
 * a full batch of the longest entries, more lines than a batch may hold, a line longer than an
 * entry may be, or a line that is not JSON before the last.
 */
async function judgeSegment(path: string): Promise<{ count: number; torn: boolean } | { refused: string }> {
  const maxBytes = limits.auditWebhookBatchSizeMax * (limits.auditEntryMaxBytes + 1);
  const { size } = await stat(path);
  if (size > maxBytes) return { refused: `${size} bytes, more than the ${maxBytes} a segment may hold` };
  const lines = linesOf(await readFile(path, 'utf8'));
  if (lines.length > limits.auditWebhookBatchSizeMax) return { refused: `${lines.length} lines, more than the ${limits.auditWebhookBatchSizeMax} a batch may hold` };
  const long = lines.findIndex((line) => Buffer.byteLength(line) > limits.auditEntryMaxBytes);
  if (long >= 0) return { refused: `line ${long + 1} is longer than the ${limits.auditEntryMaxBytes} bytes an entry may be` };
  const broken = lines.findIndex((line) => !isJson(line));
  if (broken >= 0 && broken < lines.length - 1) return { refused: `line ${broken + 1} of ${lines.length} is not JSON, and only the last line can be torn` };
  const torn = broken === lines.length - 1 && broken >= 0;
  return { count: lines.length - (torn ? 1 : 0), torn };
}

function linesOf(text: string): string[] {
  return text.split('\n').filter((line) => line !== '');
}

/** A line cut short by a power cut is not JSON: it is dropped (and counted), never sent. */
function isJson(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}

async function discard(segment: Segment): Promise<void> {
  segment.pending = [];
  await segment.handle?.close().catch(() => undefined);
  delete segment.handle;
  await unlink(segment.path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
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

/** A failure's reason, for stats and logs: the receiver's status or the network error (never the request's headers). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as Error & { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ? `${error.message} (${cause.code})` : error.message;
}
