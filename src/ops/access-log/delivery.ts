/**
 * Delivery of server access logs (docs/access-logging.md). Each record is appended, as the
 * request is answered, to this node's open batch file `open-<16 digits>.jsonl` in a local
 * directory; a batch is sealed (renamed `batch-<16 digits>.jsonl`) when it reaches its record or
 * byte limit or when the flush interval passes, and a sealed batch is written as one log object
 * per source bucket into the target bucket, then removed. An object's key names the node, the
 * batch and the group, so a batch delivered again after a crash rewrites the same objects rather
 * than adding new ones; a restart seals what the last process left open and delivers it. A
 * delivery that fails is retried at the next interval, in order. Records beyond the pending-bytes
 * bound are dropped, counted and warned about.
 */
import { appendFileSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock, Timers } from '../../util/clock.js';
import { formatRecord, logObjectKey, type AccessLogRecord, type LogTarget } from './record.js';

export interface AccessLogTuning {
  /** A batch is sealed at this many records. */
  flushRecords: number;
  /** ... or at this many bytes of journal. */
  flushBytes: number;
  /** ... or when this long has passed since its first record. */
  flushIntervalMs: number;
  /** Journal bytes (open and sealed batches) beyond which new records are dropped. */
  maxPendingBytes: number;
}

export interface AccessLogDeliveryOptions extends AccessLogTuning {
  directory: string;
  /** This node's name in log object keys (any text; made key-safe). */
  node: string;
  region: string;
  clock: Clock;
  timers: Timers;
  /** Writes one log object; rejects when it cannot (the batch is then kept and retried). */
  write(bucket: string, key: string, body: Buffer): Promise<void>;
  /** Whether the target still takes logs (exists, its policy does not deny the logging service); a refused group is dropped. */
  accepts(target: LogTarget): Promise<boolean>;
  logger: { warn(fields: Record<string, unknown>, message: string): void };
}

export interface AccessLogStats {
  /** Records on disk waiting for delivery. */
  pending: number;
  delivered: number;
  dropped: number;
  lastError?: string;
}

interface JournalLine {
  source: string;
  owner: string;
  target: LogTarget;
  timeMs: number;
  line: string;
}

const seqWidth = 16;
const seqOf = (name: string): number => Number(/-(\d+)\.jsonl$/.exec(name)?.[1] ?? NaN);
const fileName = (kind: 'open' | 'batch', seq: number): string => `${kind}-${String(seq).padStart(seqWidth, '0')}.jsonl`;

export class AccessLogDelivery {
  private seq = 0;
  private openRecords = 0;
  private openBytes = 0;
  private openSinceMs: number | undefined;
  private pendingBytes = 0;
  private timer: unknown;
  private delivering: Promise<void> | undefined;
  private closed = false;
  private lastDropWarningMs = -Infinity;
  private readonly stats: AccessLogStats = { pending: 0, delivered: 0, dropped: 0 };
  private readonly nodeKey: string;

  constructor(private readonly options: AccessLogDeliveryOptions) {
    this.nodeKey = options.node.replace(/[^A-Za-z0-9.-]/g, '_');
    mkdirSync(options.directory, { recursive: true });
    let highest = 0;
    for (const name of readdirSync(options.directory)) {
      const seq = seqOf(name);
      if (Number.isNaN(seq)) continue;
      highest = Math.max(highest, seq);
      // What the last process left open is sealed as it is: it was answered, so it is delivered.
      if (name.startsWith('open-')) renameSync(join(options.directory, name), join(options.directory, fileName('batch', seq)));
      const sizeBytes = statSync(join(options.directory, name.startsWith('open-') ? fileName('batch', seq) : name)).size;
      this.pendingBytes += sizeBytes;
      this.stats.pending += this.countLines(name.startsWith('open-') ? fileName('batch', seq) : name);
    }
    this.seq = highest + 1;
    this.schedule();
  }

  /** Appends one answered request's record for the source bucket's logging target. */
  record(record: AccessLogRecord, target: LogTarget): void {
    const entry: JournalLine = { source: record.bucket, owner: record.bucketOwner, target, timeMs: record.timeMs, line: formatRecord(record) };
    const text = `${JSON.stringify(entry)}\n`;
    const sizeBytes = Buffer.byteLength(text);
    if (this.pendingBytes + sizeBytes > this.options.maxPendingBytes) {
      this.drop(1, 'the access log journal is full');
      return;
    }
    appendFileSync(join(this.options.directory, fileName('open', this.seq)), text);
    this.pendingBytes += sizeBytes;
    this.stats.pending += 1;
    this.openRecords += 1;
    this.openBytes += sizeBytes;
    this.openSinceMs ??= this.options.clock.nowMs();
    if (!this.closed && (this.openRecords >= this.options.flushRecords || this.openBytes >= this.options.flushBytes)) void this.flush();
  }

  /** Seals the open batch and delivers every sealed one (in order); resolves when this round is done. */
  flush(): Promise<void> {
    this.seal();
    this.delivering ??= this.deliverAll().finally(() => {
      this.delivering = undefined;
    });
    return this.delivering;
  }

  statistics(): AccessLogStats {
    return { ...this.stats };
  }

  /**
   * Stops delivering: the timer stops and a delivery under way finishes; what is journaled stays
   * on disk and the next start delivers it (records of requests still being answered are
   * journaled too).
   */
  async close(): Promise<void> {
    this.closed = true;
    this.options.timers.clearTimeout(this.timer);
    await this.delivering?.catch(() => undefined);
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = this.options.timers.setTimeout(() => {
      const due = this.openSinceMs !== undefined && this.options.clock.nowMs() - this.openSinceMs >= this.options.flushIntervalMs;
      const waiting = this.openSinceMs === undefined && this.stats.pending > 0;
      void (due || waiting ? this.flush() : Promise.resolve()).finally(() => this.schedule());
    }, Math.max(1, Math.min(this.options.flushIntervalMs, 1000)));
  }

  private seal(): void {
    if (this.openRecords === 0) return;
    renameSync(join(this.options.directory, fileName('open', this.seq)), join(this.options.directory, fileName('batch', this.seq)));
    this.seq += 1;
    this.openRecords = 0;
    this.openBytes = 0;
    this.openSinceMs = undefined;
  }

  private async deliverAll(): Promise<void> {
    const sealed = readdirSync(this.options.directory).filter((name) => name.startsWith('batch-')).sort();
    for (const name of sealed) {
      try {
        await this.deliverBatch(name);
      } catch (error) {
        this.stats.lastError = error instanceof Error ? error.message : String(error);
        return;
      }
    }
    delete this.stats.lastError;
  }

  /** One sealed batch: one object per source bucket (keys fixed by node, batch and group), then the file goes. */
  private async deliverBatch(name: string): Promise<void> {
    const path = join(this.options.directory, name);
    const text = readFileSync(path, 'utf8');
    const groups = new Map<string, JournalLine[]>();
    let torn = 0;
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const entry = parseLine(line);
      if (!entry) {
        torn += 1;
        continue;
      }
      const group = `${entry.source}\n${JSON.stringify(entry.target)}`;
      groups.set(group, [...(groups.get(group) ?? []), entry]);
    }
    if (torn > 0) this.drop(torn, 'a line of the access log journal was torn');
    const deliveryTimeMs = this.options.clock.nowMs();
    let index = 0;
    for (const entries of groups.values()) {
      const first = entries[0]!;
      const unique = `${this.nodeKey}-${String(seqOf(name)).padStart(seqWidth, '0')}-${index}`;
      index += 1;
      if (!(await this.options.accepts(first.target))) {
        this.drop(entries.length, `the target bucket ${first.target.targetBucket} no longer takes access logs`);
        continue;
      }
      const key = logObjectKey(first.target, { owner: first.owner, region: this.options.region, sourceBucket: first.source, eventTimeMs: first.timeMs, deliveryTimeMs, unique });
      await this.options.write(first.target.targetBucket, key, Buffer.from(entries.map((entry) => `${entry.line}\n`).join('')));
      this.stats.delivered += entries.length;
    }
    unlinkSync(path);
    this.pendingBytes = Math.max(0, this.pendingBytes - Buffer.byteLength(text));
    this.stats.pending = Math.max(0, this.stats.pending - (text.split('\n').length - 1));
  }

  private countLines(name: string): number {
    return readFileSync(join(this.options.directory, name), 'utf8').split('\n').filter((line) => line !== '').length;
  }

  private drop(count: number, reason: string): void {
    this.stats.dropped += count;
    const nowMs = this.options.clock.nowMs();
    if (nowMs - this.lastDropWarningMs < this.options.flushIntervalMs) return;
    this.lastDropWarningMs = nowMs;
    this.options.logger.warn({ dropped: this.stats.dropped, reason }, 'server access log records dropped');
  }
}

function parseLine(line: string): JournalLine | undefined {
  try {
    const entry = JSON.parse(line) as Partial<JournalLine>;
    if (typeof entry.source !== 'string' || typeof entry.line !== 'string' || typeof entry.timeMs !== 'number' || typeof entry.owner !== 'string' || typeof entry.target !== 'object') return undefined;
    return entry as JournalLine;
  } catch {
    return undefined;
  }
}
