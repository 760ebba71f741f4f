/**
 * The internode transport of one node: the streams to its peers (rpc-stream.ts), the tokens they
 * carry (rpc-token.ts), the keep-alive connections of plain internode requests, the buffers of
 * internode traffic given back once used, and one object per peer that callers share (a peer's
 * batcher). The composition root (src/main.ts) creates one and hands it to everything that calls
 * or serves peers; nothing here is process-wide, so two nodes in one process, or a test with its
 * own clock, each have their own.
 *
 * Pooled streams are dropped when unused: at each lookup, a stream with no call waiting whose
 * connection has closed, or that has not been asked for in `idleStreamMs` (on the transport's
 * clock), is closed and forgotten; the next call to that peer opens a new one.
 */
import { Agent } from 'node:http';
import { BufferPool } from '../util/buffer-pool.js';
import { systemClock, type Clock } from '../util/clock.js';
import { limits } from '../util/limits.js';
import { RpcStreamClient, type StreamTarget } from './rpc-stream.js';
import { RpcTokenSource } from './rpc-token.js';

export interface TransportOptions {
  /** The clock tokens are signed against and idle streams are judged by (the system clock when unset). */
  clock?: Clock;
  idleStreamMs?: number;
  /** Idle buffers kept for reuse, in bytes (limits.internodeBuffersRetainedBytes when unset). */
  buffersRetainedBytes?: number;
  /** The keep-alive connections of plain requests (an agent of its own when unset). */
  agent?: Agent;
}

interface PooledStream {
  client: RpcStreamClient;
  lastUsedMs: number;
}

export class Transport {
  readonly clock: Clock;
  /** Buffers of internode traffic given back once used: ranges a peer read for an answer it has sent. */
  readonly buffers: BufferPool;
  /** Keep-alive connections of plain internode requests (shard streams, single drive calls). */
  readonly agent: Agent;
  private readonly idleStreamMs: number;
  private readonly streams = new Map<string, PooledStream>();
  private readonly tokenSources = new Map<string, RpcTokenSource>();
  private readonly perPeerObjects = new Map<string, unknown>();

  constructor(options: TransportOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.idleStreamMs = options.idleStreamMs ?? limits.internodeIdleStreamMs;
    this.buffers = new BufferPool(options.buffersRetainedBytes ?? limits.internodeBuffersRetainedBytes);
    this.agent = options.agent ?? new Agent({ keepAlive: true, maxSockets: limits.internodeMaxSocketsPerPeer });
  }

  /** The stream to one peer as reached with these credentials, shared by everything calling it. */
  streamTo(target: StreamTarget): RpcStreamClient {
    const nowMs = this.clock.nowMs();
    this.evictIdle(nowMs);
    const key = `${target.host}:${target.port}/${target.rpcKey.toString('hex')}/${target.launchHash ?? ''}`;
    let pooled = this.streams.get(key);
    if (!pooled) {
      pooled = { client: new RpcStreamClient(target, { tokens: this.tokensFor(target.rpcKey), clock: this.clock }), lastUsedMs: nowMs };
      this.streams.set(key, pooled);
    }
    pooled.lastUsedMs = nowMs;
    return pooled.client;
  }

  /** A token to send with `key` now: the key's current one, signed anew every limits.rpcTokenReuseMs. */
  tokenFor(key: Buffer): string {
    return this.tokensFor(key).tokenAt(this.clock.nowMs());
  }

  /** The one object of `kind` for the peer named by `key` (created by `create` the first time), shared by its callers. */
  perPeer<T>(kind: string, key: string, create: () => T): T {
    const name = `${kind}\n${key}`;
    if (!this.perPeerObjects.has(name)) this.perPeerObjects.set(name, create());
    return this.perPeerObjects.get(name) as T;
  }

  /** Streams in the pool (open, opening, or closed and not yet evicted). */
  get pooledStreams(): number {
    return this.streams.size;
  }

  /** Closes every stream and keep-alive connection; calls in flight fail as unreachable. */
  close(): void {
    for (const { client } of this.streams.values()) client.close();
    this.streams.clear();
    this.perPeerObjects.clear();
    this.agent.destroy();
  }

  private tokensFor(key: Buffer): RpcTokenSource {
    const name = key.toString('hex');
    let source = this.tokenSources.get(name);
    if (!source) {
      source = new RpcTokenSource(key);
      this.tokenSources.set(name, source);
    }
    return source;
  }

  private evictIdle(nowMs: number): void {
    for (const [key, { client, lastUsedMs }] of this.streams) {
      if (client.pending > 0) continue;
      if (!client.closed && nowMs - lastUsedMs < this.idleStreamMs) continue;
      client.close();
      this.streams.delete(key);
    }
  }
}
