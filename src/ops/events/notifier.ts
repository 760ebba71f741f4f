/**
 * A node's bucket notifications: its targets (from the environment), one durable queue per target
 * under `<events directory>/<type>-<id>`, and the matching of a bucket's rules. `publish` writes
 * every matching event to its target's queue and resolves once each is durable, so a request is
 * answered only after its events are queued; each queue then delivers on its own, several at a
 * time, each object's events in order.
 * Live listeners (`rc watch`) get every event of their bucket as it is raised, whether or not a
 * rule matches, without any queue: a listener that falls too far behind is cut off.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { SvcError } from '../../errors/index.js';
import type { BucketRecord } from '../../object/index.js';
import type { Timers } from '../../util/clock.js';
import { limits } from '../../util/limits.js';
import { ruleMatches, type EventName } from './event-names.js';
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
  /** Where the target was configured: the environment (SVC_NOTIFY_*, fixed) or the admin API (changeable at run time). */
  source: TargetSource;
}

export type TargetSource = 'environment' | 'api';

export interface NotifierOptions {
  targets: TargetConfig[];
  /** `.svc.sys/events` on this node's drive: one directory per target, and `quarantine/`; absent, no target can be added. */
  directory?: string;
  bucketRecord(bucket: string): Promise<BucketRecord | undefined>;
  region: string;
  node: string;
  nowMs(): number;
  timers: Timers;
  logger: { warn(fields: Record<string, unknown>, message: string): void };
  /** Replaces the broker clients (tests of the queue alone). */
  createTarget?: (config: TargetConfig) => EventTarget;
}

/** A live listener: its bucket, an optional prefix, suffix and events, and where to hand events. */
export interface EventWatcher {
  bucket: string;
  prefix?: string;
  suffix?: string;
  /** The events it wants; absent: every event. */
  names?: readonly EventName[];
  deliver(message: EventMessage): void;
}

interface Destination {
  config: TargetConfig;
  source: TargetSource;
  target: EventTarget;
  queue: EventQueue;
}

export class EventNotifier implements EventSink {
  private readonly queues = new Map<string, Destination>();
  private readonly watchers = new Set<EventWatcher>();
  private counter = 0;

  private constructor(private readonly options: NotifierOptions) {}

  static async open(options: NotifierOptions): Promise<EventNotifier> {
    const notifier = new EventNotifier(options);
    for (const config of options.targets) await notifier.openDestination(config, 'environment');
    return notifier;
  }

  private queueDirectory(config: TargetConfig): string {
    if (this.options.directory === undefined) throw new SvcError('InvalidConfiguration', 'this node has no directory for event queues (no local drive on disk): set SVC_NOTIFY_QUEUE_DIR', { variable: 'SVC_NOTIFY_QUEUE_DIR' });
    return join(this.options.directory, `${config.type}-${config.id}`);
  }

  private async openDestination(config: TargetConfig, source: TargetSource): Promise<void> {
    const directory = this.queueDirectory(config);
    const target = (this.options.createTarget ?? createTarget)(config);
    const queue = await EventQueue.open({
      directory,
      quarantineDirectory: join(this.options.directory!, 'quarantine', `${config.type}-${config.id}`),
      limitEntries: config.queueLimitEntries,
      send: (payload, signal) => target.send(payload as EventMessage, signal),
      timers: this.options.timers,
      nowMs: this.options.nowMs,
      retryBaseMs: limits.eventRetryBaseMs,
      retryMaxMs: limits.eventRetryMaxMs,
      sendTimeoutMs: limits.eventSendTimeoutMs,
      dropWarningIntervalMs: limits.eventDropWarningIntervalMs,
      logger: this.options.logger,
      concurrency: limits.eventDeliveriesInFlight,
    });
    this.queues.set(config.arn, { config, source, target, queue });
  }

  /**
   * Sets a target configured through the admin API: a new one opens its queue; one whose settings
   * changed is closed and opened again on the same queue (nothing queued is lost). A target of the
   * environment is never replaced.
   */
  async setTarget(config: TargetConfig): Promise<void> {
    const existing = this.queues.get(config.arn);
    if (existing?.source === 'environment') throw new SvcError('EventTargetReadOnly', `${config.arn} is configured by the environment (SVC_NOTIFY_*): change it there`, { arn: config.arn });
    if (existing && JSON.stringify(existing.config) === JSON.stringify(config)) return;
    if (existing) await this.closeDestination(existing);
    await this.openDestination(config, 'api');
  }

  /** Removes a target configured through the admin API, and its queue (what it held is not delivered). */
  async removeTarget(arn: string): Promise<void> {
    const existing = this.queues.get(arn);
    if (!existing) return;
    if (existing.source === 'environment') throw new SvcError('EventTargetReadOnly', `${arn} is configured by the environment (SVC_NOTIFY_*): it cannot be removed through the API`, { arn });
    await this.closeDestination(existing);
    await rm(this.queueDirectory(existing.config), { recursive: true, force: true });
  }

  /** Whether this node can keep target queues (it has a directory for them). */
  canQueue(): boolean {
    return this.options.directory !== undefined;
  }

  /** The targets configured through the admin API (their ARNs). */
  apiTargets(): string[] {
    return [...this.queues.values()].filter((destination) => destination.source === 'api').map((destination) => destination.config.arn);
  }

  /** Whether the target is configured by the environment. */
  sourceOf(arn: string): TargetSource | undefined {
    return this.queues.get(arn)?.source;
  }

  private async closeDestination(destination: Destination): Promise<void> {
    if (this.queues.get(destination.config.arn) === destination) this.queues.delete(destination.config.arn);
    await destination.queue.close();
    await destination.target.close();
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
      queued.push(destination.queue.enqueue(eventMessage(event, rule, withNode, context), `${event.bucket}/${event.key}`));
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
    return [...this.queues.values()].map(({ config, source, queue }) => ({
      id: config.id,
      type: config.type,
      arn: config.arn,
      settings: publicSettings(config),
      queueLimit: config.queueLimitEntries,
      source,
      ...queue.stats(),
    })).sort((first, second) => first.arn.localeCompare(second.arn));
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((destination) => this.closeDestination(destination)));
  }
}

function watches(watcher: EventWatcher, event: ObjectEvent): boolean {
  if (watcher.bucket !== event.bucket) return false;
  if (watcher.prefix !== undefined && !event.key.startsWith(watcher.prefix)) return false;
  if (watcher.suffix !== undefined && !event.key.endsWith(watcher.suffix)) return false;
  return watcher.names === undefined || watcher.names.includes(event.name);
}
