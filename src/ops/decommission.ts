/**
 * Decommission (SPEC "States and transitions"): entries per pool, persisted in `pool.bin`, run
 * one at a time in queue order by the leader node. An active entry moves every version of every
 * object off its pool (ops/move-object.ts), then re-lists the pool and completes only when
 * nothing is left. A pool with an entry in any state takes no new objects or uploads.
 *
 *   (none)  --start-->  queued  --queue-->  active  --all moved-->  completed
 *                                            |  --error-->  failed      (retained)
 *                                            |  --cancel--> canceled    (retained)
 *   failed/canceled --clear--> (none)    failed/canceled with unresolved entries --start--> queued
 *   restart: queued and active entries resume; terminal ones stay as they are.
 */
import { randomUUID } from 'node:crypto';
import { SvcError } from '../errors/index.js';
import type { ObjectLayer } from '../object/index.js';
import { forEachConcurrent, Limiter } from '../util/concurrency.js';
import { limits } from '../util/limits.js';
import { withAttempts } from '../util/retry.js';
import { moveObject } from './move-object.js';
import type { StateStore } from './state-store.js';

export type { DecommissionState, DecommissionProgress, DecommissionEntry, DecommissionStatus } from '../contracts/operations.js';
import type { DecommissionEntry, DecommissionProgress, DecommissionState, DecommissionStatus } from '../contracts/operations.js';

export interface PoolMetaDocument {
  version: 1;
  generation: number;
  entries: DecommissionEntry[];
}


export interface DecommissionLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface DecommissionOptions {
  objects: ObjectLayer;
  /** Pools in launch order: index and launch pattern. */
  pools: { index: number; pattern: string }[];
  /** One argument without an ellipsis: decommission is not available. */
  legacy: boolean;
  store: StateStore<PoolMetaDocument>;
  /** Runs workers (the leader node); other nodes only follow the persisted state. */
  leader: boolean;
  bucketConcurrency: number;
  entryConcurrency: number;
  maxAttempts: number;
  nowMs: () => number;
  logger: DecommissionLogger;
  /** A rebalance is running (mutual exclusion). */
  rebalanceRunning?: () => boolean;
  /** Persisted state changed (peers reload it). */
  onChange?: () => void;
}


class Stopped extends Error {}

export class DecommissionManager {
  private document: PoolMetaDocument = { version: 1, generation: 0, entries: [] };
  private running: { entry: DecommissionEntry; abort: AbortController; done: Promise<void> } | undefined;
  private lastSaveMs = 0;
  private closed = false;
  /** Per pool: objects being moved now and the most at once (bounded by entryConcurrency). */
  private readonly inFlight = new Map<number, { now: number; peak: number }>();

  constructor(private readonly options: DecommissionOptions) {}

  /** Loads `pool.bin`; the leader resumes queued and active entries (restart rule). */
  async load(): Promise<void> {
    const loaded = await this.options.store.load();
    // Entries of pools no longer in the launch arguments (a completed, removed pool) are dropped.
    if (loaded) this.document = { ...loaded, entries: loaded.entries.filter((entry) => this.patternAt(entry.pool) === entry.pattern) };
    this.applySuspension();
    if (this.options.leader) {
      const resumed = this.document.entries.filter((entry) => entry.state === 'active' || entry.state === 'queued');
      if (resumed.length > 0) this.options.logger.info({ pools: resumed.map((entry) => entry.pool) }, 'resuming decommission after restart');
      // Queue order is the entries' order: an interrupted active entry runs first again.
      for (const entry of this.document.entries) if (entry.state === 'active') entry.state = 'queued';
      this.pump();
    }
  }

  /** Follows another node's changes (non-leaders). */
  async reload(): Promise<void> {
    if (this.options.leader) return;
    const loaded = await this.options.store.load();
    if (loaded && loaded.generation >= this.document.generation) this.document = loaded;
    this.applySuspension();
  }

  hasUnfinished(): boolean {
    return this.document.entries.some((entry) => entry.state === 'queued' || entry.state === 'active');
  }

  status(pool?: number): DecommissionStatus[] {
    const now = this.options.nowMs();
    return this.document.entries
      .filter((entry) => pool === undefined || entry.pool === pool)
      .map((entry) => {
        const status: DecommissionStatus = structuredClone(entry);
        if (entry.startedMs !== undefined) {
          const elapsedMs = (entry.finishedMs ?? now) - entry.startedMs;
          status.elapsedMs = elapsedMs;
          const { objects, totalObjects } = entry.progress;
          if (entry.state === 'active' && objects > 0 && totalObjects >= objects) status.etaMs = Math.round((elapsedMs / objects) * (totalObjects - objects));
        }
        const flight = this.inFlight.get(entry.pool);
        if (flight) Object.assign(status, { entriesInFlight: flight.now, entriesInFlightPeak: flight.peak });
        return status;
      });
  }

  entryFor(pool: number): DecommissionEntry | undefined {
    return this.document.entries.find((entry) => entry.pool === pool);
  }

  /** Validates the whole batch, then queues it; returns before any data moves. */
  async start(pools: number[]): Promise<DecommissionStatus[]> {
    this.requireSupported();
    if (this.options.rebalanceRunning?.()) throw new SvcError('RebalanceInProgress');
    const seen = new Set<number>();
    for (const pool of pools) {
      if (this.patternAt(pool) === undefined) throw new SvcError('NoSuchPool', undefined, { pool });
      if (seen.has(pool)) throw new SvcError('DuplicatePoolTarget', undefined, { pool });
      seen.add(pool);
      const entry = this.entryFor(pool);
      if (entry?.state === 'active' || entry?.state === 'queued') throw new SvcError('DecommissionInProgress', undefined, { pool, state: entry.state });
      if (entry?.state === 'completed') throw new SvcError('DecommissionAlreadyCompleted', undefined, { pool });
      if (entry && entry.unresolved.length === 0) throw new SvcError('DecommissionNotCleared', undefined, { pool, state: entry.state });
    }
    const remaining = this.options.pools.filter((pool) => !seen.has(pool.index) && !this.entryFor(pool.index));
    if (remaining.length === 0) throw new SvcError('LastPoolCannotBeDecommissioned', undefined, { pools });
    const now = this.options.nowMs();
    for (const pool of pools) {
      const entry: DecommissionEntry = {
        pool,
        pattern: this.patternAt(pool)!,
        id: randomUUID(),
        state: 'queued',
        queuedMs: now,
        updatedMs: now,
        unresolved: [],
        progress: { objects: 0, versions: 0, bytes: 0, totalObjects: 0 },
      };
      this.document.entries = [...this.document.entries.filter((existing) => existing.pool !== pool), entry];
    }
    await this.save();
    this.applySuspension();
    this.options.logger.info({ pools }, 'decommission queued');
    this.pump();
    return this.status().filter((entry) => seen.has(entry.pool));
  }

  async cancel(pool: number): Promise<DecommissionStatus> {
    this.requireSupported();
    if (this.patternAt(pool) === undefined) throw new SvcError('NoSuchPool', undefined, { pool });
    const entry = this.entryFor(pool);
    if (!entry || (entry.state !== 'active' && entry.state !== 'queued')) throw new SvcError('NoActiveDecommission', undefined, { pool, state: entry?.state ?? 'none' });
    if (this.running?.entry === entry) {
      entry.state = 'canceled';
      this.running.abort.abort();
      await this.running.done;
    } else {
      this.finish(entry, 'canceled');
    }
    await this.save();
    this.options.logger.info({ pool }, 'decommission canceled');
    this.pump();
    return this.status(pool)[0]!;
  }

  async clear(pool: number): Promise<void> {
    this.requireSupported();
    if (this.patternAt(pool) === undefined) throw new SvcError('NoSuchPool', undefined, { pool });
    const entry = this.entryFor(pool);
    if (!entry || (entry.state !== 'failed' && entry.state !== 'canceled') || entry.unresolved.length > 0) {
      throw new SvcError('DecommissionNotClearable', undefined, { pool, state: entry?.state ?? 'none', unresolved: entry?.unresolved.length ?? 0 });
    }
    this.document.entries = this.document.entries.filter((existing) => existing !== entry);
    await this.save();
    this.applySuspension();
    this.options.logger.info({ pool }, 'decommission entry cleared');
  }

  /** Shutdown: stops the worker; its entry stays active in `pool.bin` and resumes at restart. */
  async close(): Promise<void> {
    this.closed = true;
    if (!this.running) return;
    this.running.abort.abort();
    await this.running.done;
  }

  // --- the worker -------------------------------------------------------------------------

  private pump(): void {
    if (!this.options.leader || this.closed || this.running) return;
    const next = this.document.entries.find((entry) => entry.state === 'queued');
    if (!next) return;
    const abort = new AbortController();
    const done = this.run(next, abort.signal).catch((error: unknown) => {
      this.options.logger.warn({ pool: next.pool, error: String(error) }, 'decommission worker stopped');
    });
    this.running = { entry: next, abort, done };
    void done.finally(() => {
      this.running = undefined;
      this.pump();
    });
  }

  private async run(entry: DecommissionEntry, signal: AbortSignal): Promise<void> {
    entry.state = 'active';
    entry.startedMs ??= this.options.nowMs();
    entry.updatedMs = this.options.nowMs();
    await this.save();
    this.options.logger.info({ pool: entry.pool, id: entry.id }, 'decommission started');
    try {
      entry.progress.totalObjects = entry.progress.objects + (await this.countObjects(entry.pool, signal));
      for (let pass = 1; pass <= 3; pass += 1) {
        await this.movePool(entry, signal);
        // A cancel that arrived while the last objects moved wins over completing or failing.
        if (signal.aborted) throw new Stopped();
        if (entry.unresolved.length > 0) {
          this.finish(entry, 'failed', `${entry.unresolved.length} object(s) could not be moved; first: ${entry.unresolved[0]} (${entry.reason ?? 'unknown error'})`);
          return;
        }
        const left = await this.countObjects(entry.pool, signal);
        if (signal.aborted) throw new Stopped();
        if (left === 0) {
          this.finish(entry, 'completed');
          this.options.logger.info({ pool: entry.pool, objects: entry.progress.objects, bytes: entry.progress.bytes }, 'decommission completed');
          return;
        }
        this.options.logger.info({ pool: entry.pool, left, pass }, 'objects appeared in the pool while it drained; listing again');
      }
      this.finish(entry, 'failed', 'objects kept appearing in the pool after three passes');
    } catch (error) {
      if (error instanceof Stopped || signal.aborted) {
        // Canceled (state already set by cancel) or shutting down (stays active in pool.bin).
        if ((entry.state as DecommissionState) === 'canceled') this.finish(entry, 'canceled');
        return;
      }
      this.finish(entry, 'failed', error instanceof Error ? error.message : String(error));
      this.options.logger.warn({ pool: entry.pool, reason: entry.reason }, 'decommission failed');
    } finally {
      if (!this.closed || entry.state !== 'active') await this.save().catch((error: unknown) => this.options.logger.warn({ error: String(error) }, 'could not persist pool.bin'));
    }
  }

  /**
   * Moves every object of the pool: `bucketConcurrency` buckets at once, and at most
   * `entryConcurrency` objects in flight across all of them (one budget for the pool).
   */
  private async movePool(entry: DecommissionEntry, signal: AbortSignal): Promise<void> {
    const { objects } = this.options;
    const buckets = await objects.listBuckets();
    const flight = { now: 0, peak: 0 };
    this.inFlight.set(entry.pool, flight);
    const entries = new Limiter(this.options.entryConcurrency);
    await forEachConcurrent(buckets, this.options.bucketConcurrency, async (bucket) => {
      await forEachConcurrent(objects.listPool(entry.pool, bucket.name), this.options.entryConcurrency, ({ key }) => entries.run(async () => {
        flight.now += 1;
        flight.peak = Math.max(flight.peak, flight.now);
        try {
          await this.moveEntry(entry, bucket.name, key, signal);
        } finally {
          flight.now -= 1;
        }
      }));
    });
  }

  private async moveEntry(entry: DecommissionEntry, bucket: string, key: string, signal: AbortSignal): Promise<void> {
    const { objects } = this.options;
    if (signal.aborted) throw new Stopped();
    entry.progress.currentBucket = bucket;
    entry.progress.currentObject = key;
    try {
      const moved = await withAttempts(() => moveObject(objects, bucket, key, entry.pool, () => objects.poolForNewObject(bucket, key)), { attempts: this.options.maxAttempts, signal });
      if (moved.versions > 0) {
        entry.progress.objects += 1;
        entry.progress.versions += moved.versions;
        entry.progress.bytes += moved.bytes;
      }
    } catch (error) {
      if (error instanceof Stopped || signal.aborted) throw error;
      entry.reason = error instanceof Error ? error.message : String(error);
      if (entry.unresolved.length < limits.decommissionUnresolvedListed) entry.unresolved.push(`${bucket}/${key}`);
      this.options.logger.warn({ pool: entry.pool, bucket, key, error: entry.reason }, 'decommission could not move an object');
    }
    await this.saveProgress(entry);
  }

  private async countObjects(pool: number, signal: AbortSignal): Promise<number> {
    let count = 0;
    for (const bucket of await this.options.objects.listBuckets()) {
      for await (const _entry of this.options.objects.listPool(pool, bucket.name)) {
        if (signal.aborted) throw new Stopped();
        count += 1;
      }
    }
    return count;
  }

  private finish(entry: DecommissionEntry, state: DecommissionState, reason?: string): void {
    entry.state = state;
    entry.finishedMs = this.options.nowMs();
    entry.updatedMs = entry.finishedMs;
    if (reason !== undefined) entry.reason = reason;
    delete entry.progress.currentBucket;
    delete entry.progress.currentObject;
  }

  private async saveProgress(entry: DecommissionEntry): Promise<void> {
    const now = this.options.nowMs();
    entry.updatedMs = now;
    if (now - this.lastSaveMs < limits.dataMovementProgressSaveIntervalMs) return;
    this.lastSaveMs = now;
    await this.save().catch((error: unknown) => this.options.logger.warn({ error: String(error) }, 'could not persist decommission progress'));
  }

  private async save(): Promise<void> {
    this.document.generation += 1;
    await this.options.store.save(this.document);
    this.options.onChange?.();
  }

  private applySuspension(): void {
    this.options.objects.setSuspendedPools(this.document.entries.map((entry) => entry.pool));
  }

  private patternAt(pool: number): string | undefined {
    return this.options.pools.find((candidate) => candidate.index === pool)?.pattern;
  }

  private requireSupported(): void {
    if (this.options.pools.length < 2) throw new SvcError('NotImplemented', 'decommission needs more than one pool', { reason: 'single-pool' });
    if (this.options.legacy) throw new SvcError('NotImplemented', 'decommission needs an ellipsis (expandable) deployment', { reason: 'legacy-layout' });
  }
}

export function validatePoolMeta(payload: unknown): PoolMetaDocument {
  const document = payload as PoolMetaDocument;
  if (!document || document.version !== 1 || typeof document.generation !== 'number' || !Array.isArray(document.entries)) {
    throw new SvcError('CorruptFormat', 'pool.bin: not a pool metadata document');
  }
  for (const entry of document.entries) {
    if (typeof entry.pool !== 'number' || typeof entry.pattern !== 'string' || !['queued', 'active', 'completed', 'failed', 'canceled'].includes(entry.state)) {
      throw new SvcError('CorruptFormat', 'pool.bin: malformed entry');
    }
  }
  return document;
}
