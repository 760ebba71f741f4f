/**
 * The data-usage scanner: a paced walk of every bucket that counts its objects, versions, delete
 * markers and bytes, and keeps the result in `.svc.sys/usage.bin` (a state file on every drive,
 * state-store.ts) with the time it finished, so any node can answer with the last result and its age.
 *
 * - Resumable: the walk saves a checkpoint in the same file (the buckets done with their counts,
 *   the bucket being walked with its counts so far and the last key counted) every
 *   `checkpointEveryKeys` keys or `checkpointIntervalMs`, and after each bucket. A scan started
 *   while a checkpoint exists takes it up after its last key, so a restart loses at most the keys
 *   walked since the last save, and never starts again from zero.
 * - One scan at a time in the deployment: a scan holds a cluster-wide lock (`lockScan`) from start
 *   to end; a scan asked for while another node holds it is refused (DataUsageScanRunning).
 * - Scheduled on one node (`schedules`): the node holding the deployment's first endpoint. The
 *   others read the persisted result; a scan started by hand runs on the node that was asked.
 * - A bucket removed during the scan is left out of the result; a key written or removed during it
 *   is counted as the walk finds it (the result is a walk, not a point-in-time snapshot).
 */
import { isSvcError, SvcError } from '../errors/index.js';
import type { ObjectInfo, ObjectLayer } from '../object/index.js';
import type { StateDocument } from './state-store.js';
import { pacer } from './lifecycle.js';
import type { BucketUsage, UsageScanProgress, UsageSnapshot, UsageStatus, UsageTotals } from '../contracts/usage.js';

export type { BucketUsage, UsageScanProgress, UsageSnapshot, UsageStatus, UsageTotals } from '../contracts/usage.js';

/** A scan under way as persisted. */
export interface UsageCheckpoint {
  startedAt: string;
  savedAt: string;
  /** Buckets not yet begun, in walk order. */
  pending: string[];
  /** Buckets walked to their end. */
  done: BucketUsage[];
  /** The bucket being walked and its counts so far. */
  partial: BucketUsage | null;
  /** The last key counted into `partial` (the walk goes on after it). */
  afterKey: string | null;
  keysWalked: number;
  resumes: number;
}

export interface UsageDocument extends StateDocument {
  last: UsageSnapshot | null;
  checkpoint: UsageCheckpoint | null;
}

export interface UsageScannerOptions {
  objects: Pick<ObjectLayer, 'listBuckets' | 'list'>;
  store: { load(): Promise<UsageDocument | undefined>; save(document: UsageDocument): Promise<void> };
  objectsPerSecond: number;
  intervalMs: number;
  /** Wait after start before the first scheduled scan when no result is fresh. */
  firstDelayMs: number;
  checkpointEveryKeys: number;
  checkpointIntervalMs: number;
  /** This node runs scans on schedule. */
  schedules: boolean;
  /** The deployment-wide scan lock; undefined when another node holds it. */
  lockScan: () => Promise<(() => void) | undefined>;
  nowMs: () => number;
  logger: { info(fields: Record<string, unknown>, message: string): void; warn(fields: Record<string, unknown>, message: string): void };
}

export class UsageScanner {
  private running: Promise<UsageSnapshot | undefined> | undefined;
  private document: UsageDocument = { generation: 0, last: null, checkpoint: null };
  private lastSaveMs = 0;
  private keysSinceSave = 0;
  /** Keys walked by this process's current or last scan (not persisted). */
  private keysThisRun = 0;
  private timer: NodeJS.Timeout | undefined;
  private nextScanMs: number | undefined;
  private closed = false;

  constructor(private readonly options: UsageScannerOptions) {}

  /** Schedules scans when this node is the one that does; a scan left unfinished is taken up soon. */
  async start(): Promise<void> {
    if (!this.options.schedules) return;
    const stored = await this.options.store.load().catch(() => undefined);
    const finishedMs = stored?.last ? Date.parse(stored.last.finishedAt) : undefined;
    const dueMs = stored?.checkpoint || finishedMs === undefined ? this.options.firstDelayMs : finishedMs + this.options.intervalMs - this.options.nowMs();
    this.schedule(Math.max(this.options.firstDelayMs, dueMs));
  }

  /**
   * Starts a scan now (resuming the unfinished one, if any) and answers with its progress once it
   * holds the lock; DataUsageScanRunning when a scan runs here or on another node.
   */
  async runNow(): Promise<UsageScanProgress> {
    const begun = await this.begin();
    if (!begun) throw new SvcError('DataUsageScanRunning');
    void begun.done.catch(() => undefined);
    return begun.started;
  }

  /** Runs one scan to its end (undefined when stopped by close); DataUsageScanRunning as runNow. */
  async runScan(): Promise<UsageSnapshot | undefined> {
    const begun = await this.begin();
    if (!begun) throw new SvcError('DataUsageScanRunning');
    return begun.done;
  }

  /** This node runs scans on schedule (and reports their result in its metrics). */
  schedulesScans(): boolean {
    return this.options.schedules;
  }

  /** Keys walked by this process's current or last scan. */
  keysWalkedThisRun(): number {
    return this.keysThisRun;
  }

  async status(): Promise<UsageStatus> {
    const document = this.running ? this.document : ((await this.options.store.load()) ?? this.document);
    const nowMs = this.options.nowMs();
    const last = document.last;
    return {
      generatedAt: new Date(nowMs).toISOString(),
      running: this.running !== undefined,
      objectsPerSecond: this.options.objectsPerSecond,
      intervalMs: this.options.intervalMs,
      nextScanAt: this.nextScanMs === undefined || this.running ? null : new Date(this.nextScanMs).toISOString(),
      last,
      ageSeconds: last ? Math.max(0, Math.floor((nowMs - Date.parse(last.finishedAt)) / 1000)) : null,
      current: document.checkpoint ? progressOf(document.checkpoint) : null,
    };
  }

  /** Stops the scan after the key it is on (its checkpoint saved) and the schedule. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    this.nextScanMs = Date.now() + delayMs;
    this.timer = setTimeout(() => {
      // The next scan is scheduled an interval after this one ends (or was refused).
      void this.begin()
        .then((begun) => begun?.done)
        .catch((error: unknown) => this.options.logger.warn({ err: error }, 'data-usage scan failed; its checkpoint is taken up by the next one'))
        .finally(() => this.schedule(this.options.intervalMs));
    }, delayMs);
    this.timer.unref();
  }

  /** Takes the lock and starts the scan; undefined when a scan runs already (here or elsewhere). */
  private async begin(): Promise<{ done: Promise<UsageSnapshot | undefined>; started: UsageScanProgress } | undefined> {
    if (this.running || this.closed) return undefined;
    const release = await this.options.lockScan().catch(() => undefined);
    if (!release) return undefined;
    if (this.running) {
      release();
      return undefined;
    }
    let prepared: (progress: UsageScanProgress) => void = () => undefined;
    const ready = new Promise<UsageScanProgress>((resolve) => (prepared = resolve));
    const done = this.scan(prepared).finally(() => {
      release();
      this.running = undefined;
    });
    this.running = done;
    // The answer waits until the checkpoint exists; a scan that failed before it is thrown.
    const outcome: { failure?: { error: unknown } } = {};
    const started = await Promise.race([ready, done.then(() => undefined, (error: unknown) => void (outcome.failure = { error }))]);
    if (outcome.failure) throw outcome.failure.error;
    return { done, started: started ?? (await ready) };
  }

  private async scan(prepared: (progress: UsageScanProgress) => void): Promise<UsageSnapshot | undefined> {
    this.document = (await this.options.store.load()) ?? { generation: 0, last: null, checkpoint: null };
    const earlier = this.document.checkpoint;
    const checkpoint: UsageCheckpoint = earlier ? { ...earlier, resumes: earlier.resumes + 1 } : await this.freshCheckpoint();
    this.document.checkpoint = checkpoint;
    this.keysThisRun = 0;
    this.options.logger.info({ resumes: checkpoint.resumes, keysWalked: checkpoint.keysWalked, buckets: checkpoint.pending.length + checkpoint.done.length + (checkpoint.partial ? 1 : 0) }, earlier ? 'data-usage scan resumed from its checkpoint' : 'data-usage scan started');
    await this.save(true);
    prepared(progressOf(checkpoint));
    const pace = pacer(this.options.objectsPerSecond);
    while (!this.closed) {
      if (!checkpoint.partial) {
        const next = checkpoint.pending.shift();
        if (next === undefined) break;
        checkpoint.partial = emptyUsage(next);
        checkpoint.afterKey = null;
      }
      const walked = await this.walk(checkpoint, pace);
      if (walked === 'stopped') break;
      if (walked === 'done') checkpoint.done.push(checkpoint.partial!);
      checkpoint.partial = null;
      checkpoint.afterKey = null;
      await this.save(false);
    }
    if (this.closed) {
      await this.save(false);
      return undefined;
    }
    const snapshot = finish(checkpoint, this.options.nowMs());
    this.document = { ...this.document, last: snapshot, checkpoint: null };
    await this.save(true);
    this.options.logger.info({ buckets: snapshot.total.buckets, objects: snapshot.total.objects, sizeBytes: snapshot.total.sizeBytes, keysThisRun: this.keysThisRun, resumes: snapshot.resumes }, 'data-usage scan finished');
    return snapshot;
  }

  private async freshCheckpoint(): Promise<UsageCheckpoint> {
    const at = new Date(this.options.nowMs()).toISOString();
    const buckets = (await this.options.objects.listBuckets()).map((bucket) => bucket.name);
    return { startedAt: at, savedAt: at, pending: buckets, done: [], partial: null, afterKey: null, keysWalked: 0, resumes: 0 };
  }

  /** Walks the checkpoint's bucket after its last key: to its end, until close, or until the bucket is gone. */
  private async walk(checkpoint: UsageCheckpoint, pace: () => Promise<void>): Promise<'done' | 'stopped' | 'gone'> {
    const usage = checkpoint.partial!;
    try {
      for await (const entry of this.options.objects.list(usage.bucket, { prefix: '', ...(checkpoint.afterKey !== null ? { startAfter: checkpoint.afterKey } : {}) })) {
        if (this.closed) return 'stopped';
        if (entry.kind !== 'object') continue;
        countKey(usage, entry.versions);
        checkpoint.afterKey = entry.key;
        checkpoint.keysWalked += 1;
        this.keysThisRun += 1;
        this.keysSinceSave += 1;
        if (this.keysSinceSave >= this.options.checkpointEveryKeys || this.options.nowMs() - this.lastSaveMs >= this.options.checkpointIntervalMs) await this.save(false);
        await pace();
      }
    } catch (error) {
      if (isSvcError(error, 'NoSuchBucket')) return 'gone';
      throw error;
    }
    return 'done';
  }

  /** Saves the document; a failed checkpoint is logged (the next save catches up), a failed final save is thrown. */
  private async save(mustSucceed: boolean): Promise<void> {
    const nowMs = this.options.nowMs();
    if (this.document.checkpoint) this.document.checkpoint.savedAt = new Date(nowMs).toISOString();
    this.document = { ...this.document, generation: this.document.generation + 1 };
    this.lastSaveMs = nowMs;
    this.keysSinceSave = 0;
    try {
      await this.options.store.save(this.document);
    } catch (error) {
      if (mustSucceed) throw error;
      this.options.logger.warn({ err: error }, 'data-usage checkpoint not saved; the scan goes on');
    }
  }
}

export function emptyUsage(bucket: string): BucketUsage {
  return { bucket, objects: 0, versions: 0, deleteMarkers: 0, sizeBytes: 0, currentSizeBytes: 0 };
}

/** Adds one key (its versions newest first) to a bucket's counts. */
export function countKey(usage: BucketUsage, versions: readonly ObjectInfo[]): void {
  versions.forEach((version, index) => {
    if (version.deleteMarker) {
      usage.deleteMarkers += 1;
      return;
    }
    usage.versions += 1;
    usage.sizeBytes += version.sizeBytes;
    if (index === 0) {
      usage.objects += 1;
      usage.currentSizeBytes += version.sizeBytes;
    }
  });
}

function finish(checkpoint: UsageCheckpoint, nowMs: number): UsageSnapshot {
  const buckets = [...checkpoint.done].sort((a, b) => (a.bucket < b.bucket ? -1 : a.bucket > b.bucket ? 1 : 0));
  const total: UsageTotals = { buckets: buckets.length, objects: 0, versions: 0, deleteMarkers: 0, sizeBytes: 0, currentSizeBytes: 0 };
  for (const usage of buckets) {
    total.objects += usage.objects;
    total.versions += usage.versions;
    total.deleteMarkers += usage.deleteMarkers;
    total.sizeBytes += usage.sizeBytes;
    total.currentSizeBytes += usage.currentSizeBytes;
  }
  return { startedAt: checkpoint.startedAt, finishedAt: new Date(nowMs).toISOString(), resumes: checkpoint.resumes, buckets, total };
}

function progressOf(checkpoint: UsageCheckpoint): UsageScanProgress {
  return {
    startedAt: checkpoint.startedAt,
    savedAt: checkpoint.savedAt,
    bucket: checkpoint.partial?.bucket ?? null,
    bucketsDone: checkpoint.done.length,
    bucketsTotal: checkpoint.done.length + checkpoint.pending.length + (checkpoint.partial ? 1 : 0),
    keysWalked: checkpoint.keysWalked,
    resumes: checkpoint.resumes,
  };
}
