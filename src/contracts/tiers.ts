/**
 * The shape of a tier's deletion queues in `GET /svc/admin/v4/tier/info` (src/api/admin/tiers.ts):
 * one row per node and their sum, shared by the server and `rc admin tier info`.
 */

/** One node's queue of tier objects waiting to be deleted on one tier. */
export interface TierDeletionFigures {
  /** Deletions waiting (on disk). */
  pending: number;
  /** Deletions the tier took since the node started. */
  deleted: number;
  /** Attempts that failed (each is retried) since the node started. */
  failed: number;
  /** Entries dropped because the queue was full, since the node started. */
  dropped: number;
  /** When the oldest waiting deletion was queued, if any. */
  oldestQueuedAt?: string;
  /** Why the last attempt failed; cleared by the next success. */
  lastError?: string;
}

/** One node's row: its figures, or why it did not answer. */
export type TierDeletionNodeRow = ({ node: string; state: 'answered' } & TierDeletionFigures) | { node: string; state: 'unreachable'; error: string };

/** A tier's deletion queues summed over the nodes that answered. */
export interface TierDeletionTotals extends TierDeletionFigures {
  tier: string;
  nodesAnswered: number;
  nodesUnreachable: number;
}
