/**
 * Live listeners of a bucket's events (`rc watch`), across the cluster. A listener is a stream of
 * newline-delimited JSON on the node it asked: each event as a target receives it
 * (`{EventName, Key, Records}`), a `{"Watching": {...}}` line once every node follows it, a blank
 * line now and then while nothing happens, and a last `{"Error": {...}}` line when it is cut off.
 *
 * The node it asked watches its own notifier, and every peer through the `event-listen` peer
 * operation: a long poll that, on its first call, subscribes the peer's notifier and from then on
 * answers what the peer raised since the last call. A peer keeps a subscription while it is polled
 * (a lease) and forgets it after. Every buffer is bounded: a peer's subscription holds at most
 * limits.eventListenRelayEvents events, and the stream at most limits.eventListenBufferBytes
 * waiting for its reader; a listener past either is cut off, with the reason counted and logged.
 * A peer that does not answer is polled again every limits.eventListenRetryMs; what it raised
 * meanwhile is not seen (a listener watches live events; the durable way is a target).
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { SvcError } from '../../errors/index.js';
import type { Timers } from '../../util/clock.js';
import { limits } from '../../util/limits.js';
import { eventsOf, isKnownEventPattern, type EventName } from './event-names.js';
import type { EventWatcher } from './notifier.js';
import type { EventMessage } from './records.js';

/** What a listener wants: a bucket, and optionally a key prefix, a suffix and event patterns (`s3:ObjectCreated:*`). */
export interface ListenFilter {
  bucket: string;
  prefix?: string;
  suffix?: string;
  events?: string[];
}

/** One poll of a peer (the `event-listen` peer operation). */
export interface ListenPoll extends ListenFilter {
  /** The listener's id: the peer keeps one subscription per id. */
  listener: string;
  /** How long the peer may wait for a first event (capped at limits.eventListenPollWaitMs). */
  waitMs: number;
  /** Ends the subscription now. */
  stop?: boolean;
}

export interface ListenPollAnswer {
  messages: EventMessage[];
  /** Set when the peer cut the subscription off: why. */
  cutOff?: string;
}

/** How this node reaches one peer's `event-listen`. */
export interface ListenPeer {
  name: string;
  poll(request: ListenPoll): Promise<ListenPollAnswer>;
}

export interface ListenStats {
  /** Listeners on this node's stream, and peers' subscriptions held here. */
  active: number;
  /** Listeners cut off (too slow) since this node started. */
  cutOff: number;
}

interface Subscription {
  unwatch(): void;
  buffered: EventMessage[];
  cutOff?: string;
  wake?: () => void;
  lease: unknown;
}

export interface EventListenHubOptions {
  watch(watcher: EventWatcher): () => void;
  /** Whether the bucket exists. */
  bucketExists(bucket: string): Promise<boolean>;
  peers: ListenPeer[];
  timers: Timers;
  logger: { warn(fields: Record<string, unknown>, message: string): void };
}

/** The events a filter names (undefined: every event); InvalidArgument for a name this server does not raise. */
export function listenedEvents(patterns: readonly string[] | undefined): EventName[] | undefined {
  if (patterns === undefined || patterns.length === 0) return undefined;
  const unknown = patterns.filter((pattern) => !isKnownEventPattern(pattern));
  if (unknown.length > 0) throw new SvcError('InvalidArgument', `unknown event name(s): ${unknown.join(', ')} (names such as s3:ObjectCreated:* or s3:ObjectRemoved:Delete)`, { field: 'events' });
  return [...new Set(patterns.flatMap(eventsOf))];
}

export class EventListenHub {
  private readonly subscriptions = new Map<string, Subscription>();
  private readonly streams = new Set<() => void>();
  private cutOffCount = 0;

  constructor(private readonly options: EventListenHubOptions) {}

  stats(): ListenStats {
    return { active: this.streams.size + this.subscriptions.size, cutOff: this.cutOffCount };
  }

  private watcherOf(filter: ListenFilter, deliver: (message: EventMessage) => void): EventWatcher {
    const names = listenedEvents(filter.events);
    return { bucket: filter.bucket, ...(filter.prefix ? { prefix: filter.prefix } : {}), ...(filter.suffix ? { suffix: filter.suffix } : {}), ...(names ? { names } : {}), deliver };
  }

  private countCutOff(fields: Record<string, unknown>, reason: string): void {
    this.cutOffCount += 1;
    this.options.logger.warn({ ...fields, reason, cutOff: this.cutOffCount }, 'an event listener was cut off');
  }

  /** A peer's poll: subscribes on the first call, then answers what was raised since the last (waiting a little for something). */
  async poll(request: ListenPoll): Promise<ListenPollAnswer> {
    const existing = this.subscriptions.get(request.listener);
    if (request.stop === true) {
      if (existing) this.forget(request.listener, existing);
      return { messages: [] };
    }
    const subscription = existing ?? this.subscribe(request);
    this.renewLease(request.listener, subscription);
    if (subscription.buffered.length === 0 && subscription.cutOff === undefined && request.waitMs > 0) {
      await new Promise<void>((resolve) => {
        const timer = this.options.timers.setTimeout(resolve, Math.min(request.waitMs, limits.eventListenPollWaitMs));
        subscription.wake = () => {
          this.options.timers.clearTimeout(timer);
          resolve();
        };
      });
      subscription.wake = undefined;
    }
    const messages = subscription.buffered.splice(0, limits.eventListenPollBatch);
    if (subscription.cutOff !== undefined && subscription.buffered.length === 0) {
      this.forget(request.listener, subscription);
      return { messages, cutOff: subscription.cutOff };
    }
    return { messages };
  }

  private subscribe(request: ListenPoll): Subscription {
    if (this.subscriptions.size >= limits.eventWatchersMax) throw new SvcError('SlowDown', `this node follows at most ${limits.eventWatchersMax} listeners`);
    const subscription: Subscription = { unwatch: () => undefined, buffered: [], lease: undefined };
    subscription.unwatch = this.options.watch(this.watcherOf(request, (message) => {
      if (subscription.cutOff !== undefined) return;
      if (subscription.buffered.length >= limits.eventListenRelayEvents) {
        subscription.cutOff = `more than ${limits.eventListenRelayEvents} events waited for the listener`;
        subscription.unwatch();
        this.countCutOff({ listener: request.listener, bucket: request.bucket }, subscription.cutOff);
      } else subscription.buffered.push(message);
      subscription.wake?.();
    }));
    this.subscriptions.set(request.listener, subscription);
    return subscription;
  }

  private renewLease(listener: string, subscription: Subscription): void {
    this.options.timers.clearTimeout(subscription.lease);
    subscription.lease = this.options.timers.setTimeout(() => this.forget(listener, subscription), limits.eventListenLeaseMs);
  }

  private forget(listener: string, subscription: Subscription): void {
    this.options.timers.clearTimeout(subscription.lease);
    subscription.unwatch();
    subscription.wake?.();
    if (this.subscriptions.get(listener) === subscription) this.subscriptions.delete(listener);
  }

  /** A listener's stream on this node: its events from every node until it is destroyed (the client went away) or cut off. */
  async open(filter: ListenFilter): Promise<Readable> {
    const names = listenedEvents(filter.events);
    if (!(await this.options.bucketExists(filter.bucket))) throw new SvcError('NoSuchBucket', undefined, { bucket: filter.bucket });
    return new ListenStream(this, filter, names).start();
  }

  /** @internal the stream's side of the hub. */
  attach(close: () => void): () => void {
    this.streams.add(close);
    return () => void this.streams.delete(close);
  }

  /** @internal */
  cutOff(fields: Record<string, unknown>, reason: string): void {
    this.countCutOff(fields, reason);
  }

  /** @internal */
  get hubOptions(): EventListenHubOptions {
    return this.options;
  }

  close(): void {
    for (const [listener, subscription] of this.subscriptions) this.forget(listener, subscription);
    for (const close of [...this.streams]) close();
  }
}

class ListenStream {
  private readonly id = randomUUID();
  private closed = false;
  private readonly stream: Readable;
  private readonly cleanups: (() => void)[] = [];

  constructor(private readonly hub: EventListenHub, private readonly filter: ListenFilter, private readonly names: EventName[] | undefined) {
    this.stream = new Readable({
      read: () => undefined,
      destroy: (error, callback) => {
        this.close();
        callback(error);
      },
    });
  }

  start(): Readable {
    const { watch, peers, timers } = this.hub.hubOptions;
    const watcher: EventWatcher = { bucket: this.filter.bucket, ...(this.filter.prefix ? { prefix: this.filter.prefix } : {}), ...(this.filter.suffix ? { suffix: this.filter.suffix } : {}), ...(this.names ? { names: this.names } : {}), deliver: (message) => this.offer(message) };
    this.cleanups.push(watch(watcher), this.hub.attach(() => this.finish()));
    const keepAlive = setInterval(() => {
      if (this.stream.readableLength === 0) this.push('\n');
    }, limits.eventListenKeepAliveMs);
    keepAlive.unref();
    this.cleanups.push(() => clearInterval(keepAlive));
    void Promise.all(peers.map((peer) => this.follow(peer, timers))).then((unreachable) => {
      this.line({ Watching: { bucket: this.filter.bucket, nodes: peers.length + 1, unreachable: unreachable.filter((name): name is string => name !== undefined) } });
    });
    return this.stream;
  }

  private push(text: string): void {
    if (!this.closed) this.stream.push(text);
  }

  private line(value: unknown): void {
    this.push(`${JSON.stringify(value)}\n`);
  }

  private offer(message: EventMessage): void {
    if (this.closed) return;
    if (this.stream.readableLength > limits.eventListenBufferBytes) {
      this.cutOffWith(`more than ${limits.eventListenBufferBytes} bytes of events waited for the listener to read them`);
      return;
    }
    this.line(message);
  }

  private cutOffWith(reason: string): void {
    if (this.closed) return;
    this.hub.cutOff({ listener: this.id, bucket: this.filter.bucket }, reason);
    // The reason goes after what is already waiting; the stream then ends.
    this.stream.push(`${JSON.stringify({ Error: { Code: 'SlowDown', Message: `this listener was cut off: ${reason}` } })}\n`);
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.close();
    this.stream.push(null);
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const cleanup of this.cleanups) cleanup();
    for (const peer of this.hub.hubOptions.peers) void peer.poll({ ...this.request(), waitMs: 0, stop: true }).catch(() => undefined);
  }

  private request(): Omit<ListenPoll, 'waitMs'> {
    return { listener: this.id, bucket: this.filter.bucket, ...(this.filter.prefix ? { prefix: this.filter.prefix } : {}), ...(this.filter.suffix ? { suffix: this.filter.suffix } : {}), ...(this.filter.events ? { events: this.filter.events } : {}) };
  }

  /** Polls one peer until the stream closes; resolves after the first poll with the peer's name when it did not answer. */
  private follow(peer: ListenPeer, timers: Timers): Promise<string | undefined> {
    return new Promise((firstDone) => {
      let first = true;
      const done = (unreachable: string | undefined): void => {
        if (first) firstDone(unreachable);
        first = false;
      };
      const loop = async (): Promise<void> => {
        while (!this.closed) {
          try {
            const answer = await peer.poll({ ...this.request(), waitMs: first ? 0 : limits.eventListenPollWaitMs });
            done(undefined);
            for (const message of answer.messages) this.offer(message);
            if (answer.cutOff !== undefined) this.cutOffWith(`${peer.name}: ${answer.cutOff}`);
          } catch {
            done(peer.name);
            if (!this.closed) await new Promise<void>((resolve) => timers.setTimeout(resolve, limits.eventListenRetryMs));
          }
        }
        done(undefined);
      };
      void loop();
    });
  }
}
