/**
 * Bucket notifications for the composition root: the targets from the environment and their
 * queues under `.svc.sys/events` on this node's first local drive (or SVC_NOTIFY_QUEUE_DIR).
 * The notifier always exists: live listeners (`rc watch`) need no target, and targets added
 * through the admin API join it at run time.
 */
import { join } from 'node:path';
import type { Logger } from 'pino';
import { SvcError } from '../errors/index.js';
import type { ServerConfig } from '../cluster/server-config.js';
import type { OwnEndpointTest } from '../cluster/own-endpoints.js';
import type { StartedStorage } from '../cluster/startup.js';
import { systemTimers } from '../util/clock.js';
import { nodeName } from '../observability.js';
import { EventNotifier } from '../ops/events/notifier.js';
import { readTargetConfigs } from '../ops/events/target-config.js';

export async function openEvents(config: ServerConfig, env: Record<string, string | undefined>, isOwn: OwnEndpointTest, log: Logger, storage: () => StartedStorage | undefined): Promise<EventNotifier> {
  const targets = readTargetConfigs(env);
  const directory = env.SVC_NOTIFY_QUEUE_DIR?.trim() || eventsDirectoryOf(config, isOwn);
  // Targets need a directory for their queues; without one, only live listeners work.
  if (targets.length > 0 && directory === undefined) {
    throw new SvcError('InvalidConfiguration', 'SVC_NOTIFY_QUEUE_DIR must be set: this node has no local drive on disk to keep the event queues on', { variable: 'SVC_NOTIFY_QUEUE_DIR' });
  }
  const notifier = await EventNotifier.open({
    targets,
    ...(directory !== undefined ? { directory } : {}),
    bucketRecord: async (bucket) => storage()?.objects.bucketRecord(bucket),
    region: 'us-east-1',
    node: nodeName(config),
    nowMs: () => Date.now(),
    timers: systemTimers,
    logger: log,
  });
  if (targets.length > 0) log.info({ targets: notifier.status().map(({ arn, settings, queueLimit, depth }) => ({ arn, settings, queueLimit, depth })), directory }, 'event targets');
  return notifier;
}

/** `.svc.sys/events` on this node's first local drive on disk; undefined when it has none (memfs, or only remote drives). */
function eventsDirectoryOf(config: ServerConfig, isOwn: OwnEndpointTest): string | undefined {
  const first = config.layout.pools.flatMap((pool) => pool.endpoints).find((endpoint) => endpoint.kind === 'local' || isOwn(endpoint));
  if (!first || config.driveBackend === 'memfs') return undefined;
  return join(config.driveRoot ? join(config.driveRoot, first.path) : first.path, '.svc.sys', 'events');
}
