/**
 * One node's lock server: a table of read/write locks with expiry. Holders refresh their locks;
 * a holder that dies stops refreshing and its locks lapse after the expiry (SPEC: released on
 * node death after expiry). Time is injected.
 */
import type { Clock } from '../util/clock.js';
import type { LockMode } from '../object/index.js';

interface Holder {
  mode: LockMode;
  expiresAtMs: number;
}

export class LockTable {
  private readonly resources = new Map<string, Map<string, Holder>>();

  constructor(private readonly clock: Clock) {}

  /** Grants the lock to `uid` when compatible with the live holders. */
  acquire(resource: string, mode: LockMode, uid: string, ttlMs: number): boolean {
    const holders = this.live(resource);
    const compatible = mode === 'read' ? [...holders.values()].every((holder) => holder.mode === 'read') : holders.size === 0;
    if (!compatible) return false;
    holders.set(uid, { mode, expiresAtMs: this.clock.nowMs() + ttlMs });
    this.resources.set(resource, holders);
    return true;
  }

  /** Extends a live lock; false when it has lapsed or was never held. */
  refresh(resource: string, uid: string, ttlMs: number): boolean {
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

  private live(resource: string): Map<string, Holder> {
    const holders = this.resources.get(resource) ?? new Map<string, Holder>();
    const now = this.clock.nowMs();
    for (const [uid, holder] of holders) if (holder.expiresAtMs <= now) holders.delete(uid);
    if (holders.size === 0) this.resources.delete(resource);
    return holders;
  }
}
