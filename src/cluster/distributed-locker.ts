/**
 * Distributed namespace locks: a lock is held when a majority of the nodes' lock servers grant
 * it (write: N/2 + 1; read: N/2, at least 1), refreshed while held, released everywhere when done.
 * A failed attempt releases its partial grants and retries after a random pause until the
 * timeout, then fails with SlowDown.
 */
import { randomUUID } from 'node:crypto';
import { SvcError } from '../errors/index.js';
import { limits } from '../util/limits.js';
import type { LockMode, NamespaceLocker } from '../object/index.js';

/** One node's lock server, local or over RPC. */
export interface LockServer {
  acquire(resource: string, mode: LockMode, uid: string, ttlMs: number): Promise<boolean>;
  refresh(resource: string, uid: string, ttlMs: number): Promise<boolean>;
  release(resource: string, uid: string): Promise<void>;
}

export interface DistributedLockerOptions {
  servers: LockServer[];
  ttlMs?: number;
  refreshIntervalMs?: number;
  random?: () => number;
  onLost?: (resource: string) => void;
}

export class DistributedNamespaceLocker implements NamespaceLocker {
  private readonly ttlMs: number;

  constructor(private readonly options: DistributedLockerOptions) {
    this.ttlMs = options.ttlMs ?? limits.lockExpiryMs;
  }

  private quorum(mode: LockMode): number {
    const count = this.options.servers.length;
    return mode === 'write' ? Math.floor(count / 2) + 1 : Math.max(1, Math.floor(count / 2));
  }

  async acquire(resource: string, mode: LockMode, timeoutMs: number = limits.lockAcquireTimeoutMs): Promise<() => void> {
    const uid = randomUUID();
    const deadline = Date.now() + timeoutMs;
    for (let attempt = 0; ; attempt += 1) {
      const granted = await Promise.all(this.options.servers.map((server) => server.acquire(resource, mode, uid, this.ttlMs).catch(() => false)));
      if (granted.filter(Boolean).length >= this.quorum(mode)) return this.holdUntilReleased(resource, uid);
      await Promise.all(this.options.servers.map((server, index) => (granted[index] ? server.release(resource, uid).catch(() => undefined) : undefined)));
      if (Date.now() >= deadline) throw new SvcError('SlowDown', `timed out after ${timeoutMs} ms waiting for the ${mode} lock on ${resource}`, { resource });
      const pauseMs = Math.min(250, 10 * 2 ** Math.min(attempt, 5)) * (0.5 + (this.options.random ?? Math.random)());
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }

  private holdUntilReleased(resource: string, uid: string): () => void {
    const timer = setInterval(() => {
      void Promise.all(this.options.servers.map((server) => server.refresh(resource, uid, this.ttlMs).catch(() => false))).then((refreshed) => {
        if (refreshed.filter(Boolean).length < Math.floor(this.options.servers.length / 2) + 1) this.options.onLost?.(resource);
      });
    }, this.options.refreshIntervalMs ?? limits.lockRefreshIntervalMs);
    timer.unref();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      clearInterval(timer);
      void Promise.all(this.options.servers.map((server) => server.release(resource, uid).catch(() => undefined)));
    };
  }
}
