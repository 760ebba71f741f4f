/**
 * A node's bucket notifications: its targets (from the environment), one durable queue per target
 * under `<events directory>/<type>-<id>`, and the matching of a bucket's rules. `publish` writes
 * every matching event to its target's queue and resolves once each is durable, so a request is
 * answered only after its events are queued; each queue then delivers on its own, in order.
 * Live listeners (`rc watch`) get every event of their bucket as it is raised, whether or not a
 * rule matches, without any queue: a listener that falls too far behind is cut off.
 */
import { join } from 'node:path';
import type { BucketRecord } from '../../object/index.js';
import type { Timers } from '../../util/clock.js';
import { limits } from '../../util/limits.js';
import { ruleMatches } from './event-names.js';
import { eventMessage, sequencerOf, type EventMessage } from './records.js';
import { EventQueue, type EventQueueStats } from './queue.js';
import { publicSettings, type TargetConfig } from './target-config.js';
import { createTarget, type EventTarget } from './targets.js';
import type { EventOrigin, EventSink, ObjectEvent } from './types.js';

export interface TargetStatus extends EventQueueStats {
  id: string;
  type: string;
  arn: string;
  /** Settings without secrets. */
  settings: Record<string, string>;
  queueLimit: number;
}

export interface NotifierOptions {
  targets: TargetConfig[];
  /** `.svc.sys/events` on this node's drive: one directory per target, and `quarantine/`. */
  directory: string;
  bucketRecord(bucket: string): Promise<BucketRecord | undefined>;
  region: string;
  node: string;
  nowMs(): number;
  timers: Timers;
  logger: { warn(fields: Record<string, unknown>, message: string): void };
  /** Replaces the broker clients (tests of the queue alone). */
  createTarget?: (config: TargetConfig) => EventTarget;
}

/** A live listener: its bucket, an optional prefix and event families, and where to hand events. */
export interface EventWatcher {
  bucket: string;
  prefix?: string;
  /** Event name prefixes (`ObjectCreated:`, `ObjectRemoved:`...); absent: every event. */
  names?: string[];
  deliver(message: EventMessage): void;
}

export class EventNotifier implements EventSink {
  private readonly queues = new Map<string, { config: TargetConfig; target: EventTarget; queue: EventQueue }>();
  private readonly watchers = new Set<EventWatcher>();
  private counter = 0;

  private constructor(private readonly options: NotifierOptions) {}

  static async open(options: NotifierOptions): Promise<EventNotifier> {
    const notifier = new EventNotifier(options);
    for (const config of options.targets) {
      const target = (options.createTarget ?? createTarget)(config);
      const queue = await EventQueue.open({
        directory: join(options.directory, `${config.type}-${config.id}`),
        quarantineDirectory: join(options.directory, 'quarantine', `${config.type}-${config.id}`),
        limitEntries: config.queueLimitEntries,
        send: (payload, signal) => target.send(payload as EventMessage, signal),
        timers: options.timers,
        nowMs: options.nowMs,
        retryBaseMs: limits.eventRetryBaseMs,
        retryMaxMs: limits.eventRetryMaxMs,
        sendTimeoutMs: limits.eventSendTimeoutMs,
        dropWarningIntervalMs: limits.eventDropWarningIntervalMs,
        logger: options.logger,
      });
      notifier.queues.set(config.arn, { config, target, queue });
    }
    return notifier;
  }

  targetArns(): string[] {
    return [...this.queues.keys()];
  }

  async publish(events: ObjectEvent[], origin: EventOrigin): Promise<void> {
    // One event after another: the events of one request reach each target in their order.
    for (const event of events) await this.publishOne(event, origin);
  }

  private async publishOne(event: ObjectEvent, origin: EventOrigin): Promise<void> {
    const rules = this.queues.size === 0 ? undefined : (await this.options.bucketRecord(event.bucket))?.notification;
    const watching = [...this.watchers].filter((watcher) => watches(watcher, event));
    if ((rules === undefined || rules.length === 0) && watching.length === 0) return;
    const timeMs = this.options.nowMs();
    const context = { region: this.options.region, timeMs, sequencer: sequencerOf(timeMs, this.counter++) };
    const withNode = { ...origin, node: this.options.node };
    const queued: Promise<void>[] = [];
    for (const rule of rules ?? []) {
      const destination = this.queues.get(rule.arn);
      if (!destination || !ruleMatches(rule, event.name, event.key)) continue;
      queued.push(destination.queue.enqueue(eventMessage(event, rule, withNode, context)));
    }
    await Promise.all(queued);
    for (const watcher of watching) watcher.deliver(eventMessage(event, { id: 'watch', kind: 'queue', arn: '', events: [] }, withNode, context));
  }

  /** Adds a live listener; the returned function removes it. */
  watch(watcher: EventWatcher): () => void {
    if (this.watchers.size >= limits.eventWatchersMax) throw new Error(`at most ${limits.eventWatchersMax} listeners per node`);
    this.watchers.add(watcher);
    return () => void this.watchers.delete(watcher);
  }

  status(): TargetStatus[] {
    return [...this.queues.values()].map(({ config, queue }) => ({
      id: config.id,
      type: config.type,
      arn: config.arn,
      settings: publicSettings(config),
      queueLimit: config.queueLimitEntries,
      ...queue.stats(),
    }));
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map(async ({ target, queue }) => {
      await queue.close();
      await target.close();
    }));
  }
}

function watches(watcher: EventWatcher, event: ObjectEvent): boolean {
  if (watcher.bucket !== event.bucket) return false;
  if (watcher.prefix !== undefined && !event.key.startsWith(watcher.prefix)) return false;
  return watcher.names === undefined || watcher.names.some((name) => event.name.startsWith(name));
}
