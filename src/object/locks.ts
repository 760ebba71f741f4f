/**
 * Namespace locks: per-(bucket, object) read/write locks shared by PUT, DELETE, multipart
 * complete, heal and data movement. The local implementation serves one process; the cluster
 * layer provides a distributed one behind the same interface.
 */
import { SvcError } from '../errors/index.js';
import { limits } from '../util/limits.js';

export type LockMode = 'read' | 'write';

export interface NamespaceLocker {
  /** Waits for the lock (at most `timeoutMs`), returns its release function. */
  acquire(resource: string, mode: LockMode, timeoutMs?: number): Promise<() => void>;
}

export function objectResource(bucket: string, key: string): string {
  return `${bucket}/${key}`;
}

interface Waiter {
  mode: LockMode;
  grant: () => void;
}

interface LockState {
  readers: number;
  writer: boolean;
  queue: Waiter[];
}

/** A fair (FIFO) in-process read/write lock table. */
export class LocalNamespaceLocker implements NamespaceLocker {
  private readonly locks = new Map<string, LockState>();

  constructor(private readonly defaultTimeoutMs: number = limits.localLockAcquireTimeoutMs) {}

  acquire(resource: string, mode: LockMode, timeoutMs = this.defaultTimeoutMs): Promise<() => void> {
    const state = this.stateOf(resource);
    if (state.queue.length === 0 && this.compatible(state, mode)) {
      this.take(state, mode);
      return Promise.resolve(this.releaser(resource, mode));
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        mode,
        grant: () => {
          clearTimeout(timer);
          resolve(this.releaser(resource, mode));
        },
      };
      const timer = setTimeout(() => {
        state.queue.splice(state.queue.indexOf(waiter), 1);
        this.cleanup(resource, state);
        reject(new SvcError('SlowDown', `timed out after ${timeoutMs} ms waiting for the ${mode} lock on ${resource}`));
      }, timeoutMs);
      state.queue.push(waiter);
    });
  }

  /** Number of resources with a holder or waiter (for tests and status). */
  get size(): number {
    return this.locks.size;
  }

  private stateOf(resource: string): LockState {
    let state = this.locks.get(resource);
    if (!state) {
      state = { readers: 0, writer: false, queue: [] };
      this.locks.set(resource, state);
    }
    return state;
  }

  private compatible(state: LockState, mode: LockMode): boolean {
    return mode === 'read' ? !state.writer : !state.writer && state.readers === 0;
  }

  private take(state: LockState, mode: LockMode): void {
    if (mode === 'read') state.readers += 1;
    else state.writer = true;
  }

  private releaser(resource: string, mode: LockMode): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const state = this.locks.get(resource);
      if (!state) return;
      if (mode === 'read') state.readers -= 1;
      else state.writer = false;
      this.grantWaiters(state);
      this.cleanup(resource, state);
    };
  }

  private grantWaiters(state: LockState): void {
    while (state.queue.length > 0 && this.compatible(state, state.queue[0]!.mode)) {
      const waiter = state.queue.shift()!;
      this.take(state, waiter.mode);
      waiter.grant();
    }
  }

  private cleanup(resource: string, state: LockState): void {
    if (state.readers === 0 && !state.writer && state.queue.length === 0) this.locks.delete(resource);
  }
}
