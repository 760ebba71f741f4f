/**
 * Distributed namespace locks: a lock is held when a quorum of the nodes' lock servers grant it
 * (write: N/2 + 1; read: N - N/2, so a reader's and a writer's quorums always share a server, for odd
 * N too), refreshed while held, released where asked when done.
 * A failed attempt releases its partial grants, and sends a release wherever its call got no
 * answer (a lost answer may hide a grant), then retries after a random pause until the timeout,
 * and fails with SlowDown.
 *
 * An attempt asks only as many servers as the quorum needs, this node's own first and then the
 * peers that follow it in the servers' order (so each node leans on different peers, and its
 * releases find a frame to the same peer to ride in); the others are asked in the same attempt
 * only when those fall short (a peer down, a grant refused). Two write quorums, or a write and a
 * read quorum, always share a server, whichever servers were asked: exclusion holds as when every
 * server is asked.
 */
import { randomUUID } from 'node:crypto';
import { SvcError } from '../errors/index.js';
import { limits } from '../util/limits.js';
import { lockUid, type LockHolderRun } from './lock-table.js';
import type { LockMode, NamespaceLocker } from '../object/index.js';

/** One node's lock server, local or over RPC. */
export interface LockServer {
  acquire(resource: string, mode: LockMode, uid: string, ttlMs: number): Promise<boolean>;
  refresh(resource: string, uid: string, ttlMs: number): Promise<boolean>;
  release(resource: string, uid: string): Promise<void>;
  /** Reached over the network (another node's): asked after this node's own. */
  readonly remote?: boolean;
}

export interface DistributedLockerOptions {
  servers: LockServer[];
  ttlMs?: number;
  refreshIntervalMs?: number;
  random?: () => number;
  onLost?: (resource: string) => void;
  /** This node's run, named in every lock it takes (lock-table.ts): a restart then frees its earlier locks at once. */
  holder?: LockHolderRun;
}

/** A server's answer to an acquire: granted, refused, or none (it failed or timed out: it may have granted). */
type Answer = 'granted' | 'refused' | 'lost';

export class DistributedNamespaceLocker implements NamespaceLocker {
  private readonly ttlMs: number;
  /** The order servers are asked in: this node's own first, then the peers after it, wrapping around. */
  private readonly askOrder: LockServer[];

  constructor(private readonly options: DistributedLockerOptions) {
    this.ttlMs = options.ttlMs ?? limits.lockExpiryMs;
    const own = Math.max(0, options.servers.findIndex((server) => !server.remote));
    this.askOrder = options.servers.map((_, index) => options.servers[(own + index) % options.servers.length]!);
  }

  private quorum(mode: LockMode): number {
    const count = this.options.servers.length;
    return mode === 'write' ? Math.floor(count / 2) + 1 : count - Math.floor(count / 2);
  }

  async acquire(resource: string, mode: LockMode, timeoutMs: number = limits.lockAcquireTimeoutMs): Promise<() => void> {
    const uid = this.options.holder ? lockUid(this.options.holder, randomUUID()) : randomUUID();
    const deadline = Date.now() + timeoutMs;
    const quorum = this.quorum(mode);
    for (let attempt = 0; ; attempt += 1) {
      const ask = (servers: LockServer[]) => Promise.all(servers.map((server) => server.acquire(resource, mode, uid, this.ttlMs).then((granted): Answer => (granted ? 'granted' : 'refused'), (): Answer => 'lost')));
      let asked = this.askOrder.slice(0, quorum);
      let answers = await ask(asked);
      if (answers.filter((answer) => answer === 'granted').length < quorum) {
        const rest = this.askOrder.slice(quorum);
        answers = [...answers, ...(await ask(rest))];
        asked = [...asked, ...rest];
      }
      const holding = asked.filter((_, index) => answers[index] === 'granted');
      if (holding.length >= quorum) return this.holdUntilReleased(resource, uid, quorum, holding, asked);
      // Released where granted, and where the answer was lost: a call lost to a cut link may have
      // been granted there, or may yet arrive and be granted once the link heals; the release,
      // sent after it on the same stream, then frees it at once instead of at its expiry. Not
      // awaited there: the server may stay unreachable for long.
      for (const server of asked.filter((_, index) => answers[index] === 'lost')) void server.release(resource, uid).catch(() => undefined);
      await Promise.all(holding.map((server) => server.release(resource, uid).catch(() => undefined)));
      if (Date.now() >= deadline) throw new SvcError('SlowDown', `timed out after ${timeoutMs} ms waiting for the ${mode} lock on ${resource}`, { resource });
      const pauseMs = Math.min(250, 10 * 2 ** Math.min(attempt, 5)) * (0.5 + (this.options.random ?? Math.random)());
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }

  /**
   * Refreshes the grants while held (lost when fewer than the quorum still hold it); the release
   * goes to every server asked, so a grant whose answer was lost does not wait for its expiry.
   */
  private holdUntilReleased(resource: string, uid: string, quorum: number, holding: LockServer[], asked: LockServer[]): () => void {
    const timer = setInterval(() => {
      void Promise.all(holding.map((server) => server.refresh(resource, uid, this.ttlMs).catch(() => false))).then((refreshed) => {
        if (refreshed.filter(Boolean).length < quorum) this.options.onLost?.(resource);
      });
    }, this.options.refreshIntervalMs ?? limits.lockRefreshIntervalMs);
    timer.unref();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      clearInterval(timer);
      void Promise.all(asked.map((server) => server.release(resource, uid).catch(() => undefined)));
    };
  }
}
