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

/** One entry of a tier's queue: the object to delete there. */
export interface TierDeletion {
  tier: string;
  remoteKey: string;
  remoteVersionId?: string;
}

/** One tier's queue on this node. */
export interface TierDeletionStats {
  tier: string;
  /** Deletions waiting (on disk). */
  pending: number;
  /** Deletions the tier took since this node started. */
  deleted: number;
  /** Attempts that failed (each is retried) since this node started. */
  failed: number;
  /** Entries dropped because the queue was full, since this node started. */
  dropped: number;
  /** When the oldest waiting deletion was queued, if any. */
  oldestQueuedAt?: string;
  /** Why the last attempt failed; cleared by the next success. */
  lastError?: string;
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
