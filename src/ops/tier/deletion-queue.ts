/**
 * Tier objects waiting to be deleted (docs/lifecycle.md, "Tiers"): when a transitioned version is
 * deleted, overwritten or expired, the object its tier holds for it must go too. Each such
 * deletion is written to a queue on this node's drive before it is attempted, one queue per tier
 * under `.svc.sys/tier-deletions/<TIER>/`: the bucket notifications' durable queue
 * (src/ops/events/queue.ts: each entry fsynced before it is tried, oldest first, capped backoff), so a tier
 * that cannot be reached, or a restart, loses none. A deletion is done once the tier answered it
 * (an object already gone counts as deleted); the entries of a tier removed meanwhile are dropped.
 */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isSvcError, SvcError } from '../../errors/index.js';
import type { TransitionInfo } from '../../object/index.js';
import type { Timers } from '../../util/clock.js';
import { limits } from '../../util/limits.js';
import { EventQueue, type EventQueueStats } from '../events/queue.js';
import { tierNamePattern } from './tier-document.js';
import type { TierDeletionFigures, TierDeletionNodeRow, TierDeletionTotals } from '../../contracts/tiers.js';

/** One entry of a tier's queue: the object to delete there. */
export interface TierDeletion {
  tier: string;
  remoteKey: string;
  remoteVersionId?: string;
}

/** One tier's queue on this node. */
export interface TierDeletionStats extends TierDeletionFigures {
  tier: string;
}

export type { TierDeletionNodeRow, TierDeletionTotals };

/**
 * The answered rows summed: counts added, the oldest entry the oldest on any node, the last error
 * the first node's that has one (in row order); the rows of unreachable nodes only counted.
 */
export function summedDeletions(tier: string, rows: readonly TierDeletionNodeRow[]): TierDeletionTotals {
  const totals: TierDeletionTotals = { tier, pending: 0, deleted: 0, failed: 0, dropped: 0, nodesAnswered: 0, nodesUnreachable: 0 };
  for (const row of rows) {
    if (row.state === 'unreachable') {
      totals.nodesUnreachable += 1;
      continue;
    }
    totals.nodesAnswered += 1;
    for (const field of ['pending', 'deleted', 'failed', 'dropped'] as const) totals[field] += row[field];
    if (row.oldestQueuedAt !== undefined && (totals.oldestQueuedAt === undefined || row.oldestQueuedAt < totals.oldestQueuedAt)) totals.oldestQueuedAt = row.oldestQueuedAt;
    if (totals.lastError === undefined && row.lastError !== undefined) totals.lastError = row.lastError;
  }
  return totals;
}

export interface TierDeletionQueueOptions {
  directory: string;
  /** Drives in memory keep nothing across a restart: the directory is then temporary, removed at close. */
  removeOnClose?: boolean;
  /** Deletes one tier object; resolves once the tier answered, throws to be retried. */
  remove(deletion: TierDeletion, signal: AbortSignal): Promise<void>;
  timers: Timers;
  nowMs(): number;
  logger: { warn(fields: Record<string, unknown>, message: string): void };
}

export class TierDeletionQueue {
  private readonly queues = new Map<string, { queue: EventQueue; deleted: number }>();
  private readonly opening = new Map<string, Promise<{ queue: EventQueue; deleted: number }>>();
  private closed = false;

  private constructor(private readonly options: TierDeletionQueueOptions) {}

  /** Opens the queues found in the directory: they go on deleting what they hold. */
  static async open(options: TierDeletionQueueOptions): Promise<TierDeletionQueue> {
    const deletions = new TierDeletionQueue(options);
    const names = await readdir(options.directory).catch(() => [] as string[]);
    for (const name of names) if (tierNamePattern.test(name)) await deletions.queueOf(name);
    return deletions;
  }

  /** Writes the deletion to its tier's queue; resolves once it is durable (it is attempted right after). */
  async enqueue(deletion: TierDeletion): Promise<void> {
    if (this.closed) throw new SvcError('InternalError', 'the tier deletion queue is closed');
    const entry: TierDeletion = { tier: deletion.tier, remoteKey: deletion.remoteKey, ...(deletion.remoteVersionId ? { remoteVersionId: deletion.remoteVersionId } : {}) };
    await (await this.queueOf(deletion.tier)).queue.enqueue(entry);
  }

  /** Every tier's queue on this node, by tier name. */
  stats(): TierDeletionStats[] {
    return [...this.queues.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([tier, open]) => statsOf(tier, open.queue.stats(), open.deleted));
  }

  /** One tier's queue on this node (all zero when it has none). */
  statsOf(tier: string): TierDeletionStats {
    const open = this.queues.get(tier);
    return statsOf(tier, open?.queue.stats() ?? { depth: 0, sent: 0, failed: 0, dropped: 0, quarantined: 0 }, open?.deleted ?? 0);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.opening.values()].map((opening) => opening.catch(() => undefined)));
    await Promise.all([...this.queues.values()].map((open) => open.queue.close()));
    if (this.options.removeOnClose === true) await rm(this.options.directory, { recursive: true, force: true });
  }

  private queueOf(tier: string): Promise<{ queue: EventQueue; deleted: number }> {
    if (!tierNamePattern.test(tier)) throw new SvcError('InternalError', `not a tier name: ${tier}`);
    const open = this.queues.get(tier);
    if (open) return Promise.resolve(open);
    let opening = this.opening.get(tier);
    if (!opening) {
      opening = this.openQueue(tier).finally(() => this.opening.delete(tier));
      this.opening.set(tier, opening);
    }
    return opening;
  }

  private async openQueue(tier: string): Promise<{ queue: EventQueue; deleted: number }> {
    const entry = { deleted: 0 } as { queue: EventQueue; deleted: number };
    entry.queue = await EventQueue.open({
      directory: join(this.options.directory, tier),
      quarantineDirectory: join(this.options.directory, 'quarantine', tier),
      limitEntries: limits.tierDeletionQueueMax,
      send: async (payload, signal) => {
        const deletion = parsedDeletion(payload, tier);
        if (!deletion) {
          this.options.logger.warn({ tier, directory: this.options.directory }, 'a tier deletion entry is not {tier, remoteKey, remoteVersionId?}: dropped');
          return;
        }
        await this.remove(deletion, signal);
        entry.deleted += 1;
      },
      timers: this.options.timers,
      nowMs: this.options.nowMs,
      retryBaseMs: limits.tierDeletionRetryBaseMs,
      retryMaxMs: limits.tierDeletionRetryMaxMs,
      sendTimeoutMs: limits.tierRequestTimeoutMs,
      dropWarningIntervalMs: limits.eventDropWarningIntervalMs,
      logger: this.options.logger,
    });
    this.queues.set(tier, entry);
    if (this.closed) await entry.queue.close();
    return entry;
  }

  /** One attempt: an object already gone, or a tier removed since, is done with. */
  private async remove(deletion: TierDeletion, signal: AbortSignal): Promise<void> {
    try {
      await this.options.remove(deletion, signal);
    } catch (error) {
      if (isSvcError(error, 'TierObjectNotFound') || isSvcError(error, 'TierNotFound')) return;
      throw error;
    }
  }
}

/** A queued entry as enqueue wrote it; undefined for anything else. */
function parsedDeletion(payload: unknown, tier: string): TierDeletion | undefined {
  const entry = payload as Partial<TierDeletion> | null;
  if (typeof entry !== 'object' || entry === null || entry.tier !== tier || typeof entry.remoteKey !== 'string' || entry.remoteKey === '') return undefined;
  if (entry.remoteVersionId !== undefined && typeof entry.remoteVersionId !== 'string') return undefined;
  return entry as TierDeletion;
}

function statsOf(tier: string, stats: EventQueueStats, deleted: number): TierDeletionStats {
  return {
    tier,
    pending: stats.depth,
    deleted,
    failed: stats.failed,
    dropped: stats.dropped,
    ...(stats.oldestQueuedMs !== undefined ? { oldestQueuedAt: new Date(stats.oldestQueuedMs).toISOString() } : {}),
    ...(stats.lastError !== undefined ? { lastError: stats.lastError } : {}),
  };
}

/** The deletion of the tier object a transition names. */
export function deletionOf(transition: TransitionInfo): TierDeletion {
  return { tier: transition.tier, remoteKey: transition.remoteKey, ...(transition.remoteVersionId ? { remoteVersionId: transition.remoteVersionId } : {}) };
}
