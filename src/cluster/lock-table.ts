/**
 * One node's lock server: a table of read/write locks with expiry. Holders refresh their locks;
 * a holder that dies stops refreshing and its locks lapse after the expiry (SPEC: released on
 * node death after expiry). Time is injected.
 *
 * A lock's uid may name its holder's run (lockUid): the node and when its process started. A
 * node that restarted holds nothing from before: the first call of its new run drops the locks of
 * its earlier runs at once instead of after their expiry, and a call still arriving from an
 * earlier run is refused. Runs of one node are ordered by their start times. A run never seen
 * before whose start is older than the newest seen is a node whose clock went back across a
 * restart (a call delayed from a dead run is refused only once its run was seen and replaced):
 * it takes locks as any holder does, drops nothing, and its earlier run's locks lapse at their
 * expiry.
 */
import type { Clock } from '../util/clock.js';
import type { LockMode } from '../object/index.js';

interface Holder {
  mode: LockMode;
  expiresAtMs: number;
}

/** One run of a node's process: its endpoint (`host:port`), when it started, and a random id. */
export interface LockHolderRun {
  node: string;
  startedAtMs: number;
  id: string;
}

const separator = '|';
/** How many replaced runs of one node are remembered (and refused). */
const replacedRunsKept = 16;

/** A lock uid that names the run holding it. */
export function lockUid(run: LockHolderRun, serial: string): string {
  return [run.node, String(run.startedAtMs), run.id, serial].join(separator);
}

/** The run a uid names, or undefined for a uid that names none. */
export function lockHolderRunOf(uid: string): LockHolderRun | undefined {
  const parts = uid.split(separator);
  if (parts.length !== 4) return undefined;
  const startedAtMs = Number(parts[1]);
  if (!parts[0] || !Number.isSafeInteger(startedAtMs) || !parts[2]) return undefined;
  return { node: parts[0], startedAtMs, id: parts[2] };
}

export class LockTable {
  private readonly resources = new Map<string, Map<string, Holder>>();
  /** The newest run seen of each holder node. */
  private readonly runs = new Map<string, LockHolderRun>();
  /** Runs seen and then replaced by a newer one, per node (the latest few). */
  private readonly replaced = new Map<string, string[]>();

  constructor(private readonly clock: Clock) {}

  /** Grants the lock to `uid` when compatible with the live holders. */
  acquire(resource: string, mode: LockMode, uid: string, ttlMs: number): boolean {
    if (!this.admit(uid)) return false;
    const holders = this.live(resource);
    const compatible = mode === 'read' ? [...holders.values()].every((holder) => holder.mode === 'read') : holders.size === 0;
    if (!compatible) return false;
    holders.set(uid, { mode, expiresAtMs: this.clock.nowMs() + ttlMs });
    this.resources.set(resource, holders);
    return true;
  }

  /** Extends a live lock; false when it has lapsed, was never held, or its holder's node has restarted since. */
  refresh(resource: string, uid: string, ttlMs: number): boolean {
    if (!this.admit(uid)) return false;
    const holder = this.live(resource).get(uid);
    if (!holder) return false;
    holder.expiresAtMs = this.clock.nowMs() + ttlMs;
    return true;
  }

  release(resource: string, uid: string): void {
    const holders = this.live(resource);
    holders.delete(uid);
    if (holders.size === 0) this.resources.delete(resource);
  }

  /** Resources with live holders (for status and tests). */
  held(): string[] {
    return [...this.resources.keys()].filter((resource) => this.live(resource).size > 0);
  }

  /**
   * False for a call from a run seen and since replaced by a newer one of its node. A newer run
   * becomes the newest, and every lock held by the node's earlier runs is dropped; an unseen run
   * older than the newest (a clock gone back) is admitted and changes nothing.
   */
  private admit(uid: string): boolean {
    const run = lockHolderRunOf(uid);
    if (!run) return true;
    const newest = this.runs.get(run.node);
    if (newest?.id === run.id) return true;
    const replaced = this.replaced.get(run.node) ?? [];
    if (replaced.includes(run.id)) return false;
    if (newest && (run.startedAtMs < newest.startedAtMs || (run.startedAtMs === newest.startedAtMs && run.id < newest.id))) return true;
    this.runs.set(run.node, run);
    if (newest) {
      this.replaced.set(run.node, [...replaced, newest.id].slice(-replacedRunsKept));
      this.dropEarlierRuns(run);
    }
    return true;
  }

  private dropEarlierRuns(run: LockHolderRun): void {
    for (const [resource, holders] of this.resources) {
      for (const uid of holders.keys()) {
        const holder = lockHolderRunOf(uid);
        if (holder?.node === run.node && holder.id !== run.id) holders.delete(uid);
      }
      if (holders.size === 0) this.resources.delete(resource);
    }
  }

  private live(resource: string): Map<string, Holder> {
    const holders = this.resources.get(resource) ?? new Map<string, Holder>();
    const now = this.clock.nowMs();
    for (const [uid, holder] of holders) if (holder.expiresAtMs <= now) holders.delete(uid);
    if (holders.size === 0) this.resources.delete(resource);
    return holders;
  }
}
