/**
 * Rebalance (SPEC "Rebalance status", "States and transitions"): spreads data so that every pool
 * is about equally full. The goal, the used fraction of the whole deployment, is fixed at start;
 * a pool above it moves objects (all versions, ops/move-object.ts) to pools below it until it is
 * within the goal. Run by the leader; state persisted in `rebalance.bin`. Per pool:
 *
 *   active --within goal / nothing left--> completed      active --stop--> stopping --> stopped
 *   active --error--> failed                                start, propagation fails --> stopped
 *
 * A restart never starts a rebalance: an active or stopping one comes back stopped.
 */
import { randomUUID } from 'node:crypto';
import { SvcError } from '../errors/index.js';
import type { ObjectLayer } from '../object/index.js';
import { moveObject } from './move-object.js';
import { limits } from '../util/limits.js';
import { withAttempts } from '../util/retry.js';
import type { StateStore } from './state-store.js';

export type { RebalancePoolState, RebalanceProgress, RebalancePool, RebalanceStatus } from '../contracts/operations.js';
import type { RebalancePool, RebalancePoolState, RebalanceStatus } from '../contracts/operations.js';

export interface RebalanceDocument {
  version: 1;
  generation: number;
  id: string;
  /** The used fraction every pool is brought to, fixed at start. */
  goalUsed: number;
  startedMs: number;
  stoppedMs?: number;
  /** Set when stopped or rolled back: did every peer take the stop? */
  stopPropagation?: { complete: boolean; failedPeers: string[] };
  pools: RebalancePool[];
}


/** Telling the other nodes (admission fence at start, stop): resolves with the peers that failed. */
export interface RebalancePeers {
  announce(event: 'started' | 'rolled-back' | 'stopped', id: string): Promise<string[]>;
}

export interface RebalanceOptions {
  objects: ObjectLayer;
  poolCount: number;
  legacy: boolean;
  store: StateStore<RebalanceDocument>;
  leader: boolean;
  maxAttempts: number;
  nowMs: () => number;
  logger: { info(fields: Record<string, unknown>, message: string): void; warn(fields: Record<string, unknown>, message: string): void };
  peers: RebalancePeers;
  /** A decommission is queued or running (mutual exclusion). */
  decommissionUnfinished: () => boolean;
}

/** A pool is within the goal when its used fraction is at most this much above it. */
const goalTolerance = 0.02;

class Stopped extends Error {}

export class RebalanceManager {
  private document: RebalanceDocument | undefined;
  private worker: { abort: AbortController; done: Promise<void> } | undefined;
  private lastSaveMs = 0;

  constructor(private readonly options: RebalanceOptions) {}

  async load(): Promise<void> {
    this.document = await this.options.store.load();
    const document = this.document;
    if (!this.options.leader || !document) return;
    const interrupted = document.pools.filter((pool) => pool.status === 'active' || pool.status === 'stopping');
    if (interrupted.length === 0) return;
    // Restart rule: never resume or start anew; come back stopped, as persisted.
    for (const pool of interrupted) {
      pool.status = 'stopped';
      pool.stopping = false;
      pool.lastError ||= 'interrupted by a restart; start a new rebalance to continue';
    }
    document.stoppedMs = this.options.nowMs();
    await this.save();
    this.options.logger.warn({ id: document.id }, 'a rebalance was running when the server stopped; it stays stopped');
  }

  /** Follows the leader's state (other nodes). */
  async reload(): Promise<void> {
    if (this.options.leader) return;
    const loaded = await this.options.store.load();
    if (loaded && (!this.document || loaded.generation >= this.document.generation)) this.document = loaded;
  }

  isRunning(): boolean {
    return this.document?.pools.some((pool) => pool.status === 'active' || pool.status === 'stopping') ?? false;
  }

  status(): RebalanceStatus {
    const document = this.document;
    if (!document) return { id: null, pools: [] };
    const now = this.options.nowMs();
    return {
      id: document.id,
      goalUsed: document.goalUsed,
      startedAt: new Date(document.startedMs).toISOString(),
      stoppedAt: document.stoppedMs === undefined ? null : new Date(document.stoppedMs).toISOString(),
      stopPropagation: document.stopPropagation ?? null,
      pools: document.pools.map((pool) => {
        const status = structuredClone(pool);
        if (pool.status === 'active' || pool.status === 'stopping') {
          status.progress.elapsedMs = now - document.startedMs;
          const { bytes, bytesToMove } = pool.progress;
          if (bytes > 0 && bytesToMove > bytes) status.progress.etaMs = Math.round((status.progress.elapsedMs / bytes) * (bytesToMove - bytes));
        }
        return status;
      }),
    };
  }

  /** Fixes the goal, persists, fences every peer, then starts the worker; returns at once. */
  async start(): Promise<{ id: string }> {
    if (this.options.poolCount < 2) throw new SvcError('NotImplemented', 'rebalance needs more than one pool', { reason: 'single-pool' });
    if (this.options.legacy) throw new SvcError('NotImplemented', 'rebalance needs an ellipsis (expandable) deployment', { reason: 'legacy-layout' });
    if (this.isRunning()) throw new SvcError('RebalanceInProgress', 'a rebalance is already running', { id: this.document!.id });
    if (this.options.decommissionUnfinished()) throw new SvcError('DecommissionBlocksRebalance');
    const usage = await Promise.all(Array.from({ length: this.options.poolCount }, (_, pool) => this.options.objects.poolUsage(pool)));
    const total = usage.reduce((sum, pool) => sum + pool.totalBytes, 0);
    const used = usage.reduce((sum, pool) => sum + pool.usedBytes, 0);
    if (total === 0) throw new SvcError('ErasureReadQuorum', 'no pool reports its capacity');
    const goalUsed = used / total;
    const now = this.options.nowMs();
    const document: RebalanceDocument = {
      version: 1,
      generation: this.document?.generation ?? 0,
      id: randomUUID(),
      goalUsed,
      startedMs: now,
      pools: usage.map((pool, id) => {
        const fraction = pool.totalBytes > 0 ? pool.usedBytes / pool.totalBytes : 0;
        return {
          id,
          status: 'active',
          stopping: false,
          used: fraction,
          lastError: '',
          cleanupWarnings: [],
          progress: { objects: 0, versions: 0, bytes: 0, bytesToMove: Math.max(0, Math.round(pool.usedBytes - goalUsed * pool.totalBytes)), remainingBuckets: 0, elapsedMs: 0 },
        };
      }),
    };
    this.document = document;
    await this.save();
    const unfenced = await this.options.peers.announce('started', document.id);
    if (unfenced.length > 0) {
      // Roll back to a terminal state and name every peer that did not roll back.
      const notRolledBack = await this.options.peers.announce('rolled-back', document.id);
      for (const pool of document.pools) {
        pool.status = 'stopped';
        pool.lastError = `start did not reach every peer (${unfenced.join(', ')}); rolled back`;
      }
      document.stoppedMs = this.options.nowMs();
      document.stopPropagation = { complete: notRolledBack.length === 0, failedPeers: notRolledBack };
      await this.save();
      throw new SvcError('RebalancePropagationFailed', `rebalance start did not reach ${unfenced.join(', ')}; rolled back`, { unreached: unfenced, notRolledBack });
    }
    this.options.logger.info({ id: document.id, goalUsed }, 'rebalance started');
    this.runWorker(document);
    return { id: document.id };
  }

  /** Closes admission, stops the worker, persists the stopped state and tells the peers. */
  async stop(): Promise<RebalanceStatus> {
    const document = this.document;
    if (!document || !this.isRunning()) throw new SvcError('NoRebalanceRunning');
    for (const pool of document.pools) {
      if (pool.status === 'active') {
        pool.status = 'stopping';
        pool.stopping = true;
      }
    }
    await this.save();
    if (this.worker) {
      this.worker.abort.abort();
      await this.worker.done;
    }
    for (const pool of document.pools) {
      if (pool.status === 'stopping' || pool.status === 'active') pool.status = 'stopped';
      pool.stopping = false;
      delete pool.progress.currentBucket;
      delete pool.progress.currentObject;
    }
    document.stoppedMs = this.options.nowMs();
    await this.save();
    const failedPeers = await this.options.peers.announce('stopped', document.id);
    document.stopPropagation = { complete: failedPeers.length === 0, failedPeers };
    await this.save();
    this.options.logger.info({ id: document.id, failedPeers }, 'rebalance stopped');
    return this.status();
  }

  /** Shutdown: the worker stops; the persisted state says active and comes back stopped. */
  async close(): Promise<void> {
    if (!this.worker) return;
    this.worker.abort.abort();
    await this.worker.done;
  }

  // --- the worker -------------------------------------------------------------------------

  private runWorker(document: RebalanceDocument): void {
    const abort = new AbortController();
    const done = this.run(document, abort.signal).catch((error: unknown) => {
      this.options.logger.warn({ error: String(error) }, 'rebalance worker stopped');
    });
    this.worker = { abort, done };
    void done.finally(() => {
      if (this.worker?.done === done) this.worker = undefined;
    });
  }

  private async run(document: RebalanceDocument, signal: AbortSignal): Promise<void> {
    // Pools below the goal only receive; they are done at once.
    for (const pool of document.pools) if (pool.used <= document.goalUsed + goalTolerance) this.finishPool(pool, 'completed');
    await this.save();
    for (const pool of document.pools) {
      if (pool.status !== 'active') continue;
      try {
        await this.drainPool(document, pool, signal);
        if (pool.status === 'active') this.finishPool(pool, 'completed');
      } catch (error) {
        if (error instanceof Stopped || signal.aborted) return;
        pool.lastError = error instanceof Error ? error.message : String(error);
        this.finishPool(pool, 'failed');
        this.options.logger.warn({ pool: pool.id, error: pool.lastError }, 'rebalance of a pool failed');
      } finally {
        if (!signal.aborted) await this.save().catch((error: unknown) => this.options.logger.warn({ error: String(error) }, 'could not persist rebalance.bin'));
      }
    }
    if (signal.aborted) return;
    for (const pool of document.pools) {
      // final used fractions; a pool that cannot be measured keeps its last one
      await this.withinGoal(document, pool).catch((error: unknown) => this.options.logger.warn({ pool: pool.id, error: String(error) }, 'could not measure a pool at the end of the rebalance'));
    }
    await this.save().catch((error: unknown) => this.options.logger.warn({ error: String(error) }, 'could not persist rebalance.bin at the end of the rebalance'));
    this.options.logger.info({ id: document.id, used: document.pools.map((pool) => pool.used) }, 'rebalance finished');
  }

  private async drainPool(document: RebalanceDocument, pool: RebalancePool, signal: AbortSignal): Promise<void> {
    const { objects } = this.options;
    const buckets = await objects.listBuckets();
    let sinceMeasure = 0;
    for (const [index, bucket] of buckets.entries()) {
      pool.progress.remainingBuckets = buckets.length - index;
      pool.progress.currentBucket = bucket.name;
      for await (const { key } of objects.listPool(pool.id, bucket.name)) {
        if (signal.aborted) throw new Stopped();
        pool.progress.currentObject = key;
        const target = await this.targetPool(document, pool.id, objects.drawFor(bucket.name, key));
        if (target === undefined) return;
        try {
          const moved = await withAttempts(() => moveObject(objects, bucket.name, key, pool.id, async () => target), { attempts: this.options.maxAttempts, signal });
          pool.progress.objects += moved.versions > 0 ? 1 : 0;
          pool.progress.versions += moved.versions;
          pool.progress.bytes += moved.bytes;
          sinceMeasure += moved.bytes;
          if (moved.cleanupWarning && pool.cleanupWarnings.length < limits.rebalanceCleanupWarningsKept) pool.cleanupWarnings.push(moved.cleanupWarning);
        } catch (error) {
          if (signal.aborted) throw new Stopped();
          pool.lastError = `${bucket.name}/${key}: ${error instanceof Error ? error.message : String(error)}`;
          this.options.logger.warn({ pool: pool.id, bucket: bucket.name, key, error: pool.lastError }, 'rebalance could not move an object');
        }
        if (sinceMeasure >= limits.rebalanceRemeasureEveryBytes) {
          sinceMeasure = 0;
          if (await this.withinGoal(document, pool)) return;
        }
        await this.saveProgress();
      }
      if (await this.withinGoal(document, pool)) return;
    }
  }

  private async withinGoal(document: RebalanceDocument, pool: RebalancePool): Promise<boolean> {
    const usage = await this.options.objects.poolUsage(pool.id);
    pool.used = usage.totalBytes > 0 ? usage.usedBytes / usage.totalBytes : 0;
    return pool.used <= document.goalUsed + goalTolerance;
  }

  /**
   * A pool below the goal, chosen at random weighted by the room it has below the goal; none when
   * every other pool has reached it (the source is then as close to the goal as the data allows).
   * `draw` (in [0, 1)) is the object's own, so a replay moves it to the same pool.
   */
  private async targetPool(document: RebalanceDocument, source: number, draw: number): Promise<number | undefined> {
    const candidates: { id: number; room: number }[] = [];
    for (const pool of document.pools) {
      if (pool.id === source || this.options.objects.isPoolSuspended(pool.id)) continue;
      const usage = await this.options.objects.poolUsage(pool.id);
      const room = document.goalUsed * usage.totalBytes - usage.usedBytes;
      if (room > 0) candidates.push({ id: pool.id, room });
    }
    if (candidates.length === 0) return undefined;
    let point = draw * candidates.reduce((sum, candidate) => sum + candidate.room, 0);
    for (const candidate of candidates) {
      point -= candidate.room;
      if (point < 0) return candidate.id;
    }
    return candidates.at(-1)!.id;
  }

  private finishPool(pool: RebalancePool, status: RebalancePoolState): void {
    pool.status = status;
    pool.stopping = false;
    pool.progress.remainingBuckets = 0;
    delete pool.progress.currentBucket;
    delete pool.progress.currentObject;
  }

  private async saveProgress(): Promise<void> {
    const now = this.options.nowMs();
    if (now - this.lastSaveMs < limits.dataMovementProgressSaveIntervalMs) return;
    this.lastSaveMs = now;
    await this.save().catch((error: unknown) => this.options.logger.warn({ error: String(error) }, 'could not persist rebalance progress'));
  }

  private async save(): Promise<void> {
    if (!this.document) return;
    this.document.generation += 1;
    await this.options.store.save(this.document);
  }
}

export function validateRebalance(payload: unknown): RebalanceDocument {
  const document = payload as RebalanceDocument;
  if (!document || document.version !== 1 || typeof document.generation !== 'number' || typeof document.id !== 'string' || !Array.isArray(document.pools)) {
    throw new SvcError('CorruptFormat', 'rebalance.bin: not a rebalance document');
  }
  for (const pool of document.pools) {
    if (typeof pool.id !== 'number' || !['active', 'stopping', 'completed', 'stopped', 'failed'].includes(pool.status)) throw new SvcError('CorruptFormat', 'rebalance.bin: malformed pool entry');
  }
  return document;
}
