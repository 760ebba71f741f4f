/**
 * The lifecycle scanner of this node: it scans on schedule the buckets whose name hashes to this
 * node among the deployment's nodes, each under a cluster-wide lock. Its clock is the wall clock,
 * moved forward by SVC_LIFECYCLE_CLOCK_OFFSET (set by the test harness only).
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { ServerConfig } from '../cluster/server-config.js';
import type { StartedStorage } from '../cluster/startup.js';
import type { OwnEndpointTest } from '../cluster/own-endpoints.js';
import { LifecycleScanner } from '../ops/lifecycle.js';
import { limits } from '../util/limits.js';
import type { EventSink, ObjectEvent } from '../ops/events/types.js';
import type { TransitionVersion } from '../ops/tier/transition.js';
import type { RestoreIndex } from '../ops/tier/restore-index.js';

export function createLifecycleService(options: { config: ServerConfig; storage: StartedStorage; isOwn: OwnEndpointTest; logger: Logger; events?: EventSink; transition?: TransitionVersion; restores?: RestoreIndex }): LifecycleScanner {
  const { config, storage, isOwn, logger } = options;
  const nodes = [...new Set(config.layout.pools.flatMap((pool) => pool.endpoints).flatMap((endpoint) => (endpoint.kind === 'url' ? [`${endpoint.host}:${endpoint.port}`] : [])))].sort();
  const own = config.layout.pools.flatMap((pool) => pool.endpoints).find((endpoint) => endpoint.kind === 'url' && isOwn(endpoint));
  const ownIndex = own?.kind === 'url' ? nodes.indexOf(`${own.host}:${own.port}`) : 0;
  const ownerOf = (bucket: string): number => (nodes.length <= 1 ? 0 : createHash('sha256').update(bucket).digest().readUInt32BE(0) % nodes.length);
  const locker = storage.objects.allSets()[0]!.config.locker;
  const scanner = new LifecycleScanner({
    objects: storage.objects,
    now: () => Date.now() + config.lifecycleClockOffsetMs,
    objectsPerSecond: config.lifecycleObjectsPerSecond,
    intervalMs: config.lifecycleIntervalMs,
    ownsBucket: (bucket) => ownerOf(bucket) === ownIndex,
    // A bucket whose lock is not granted in time is skipped this cycle (the scanner's answer to no lock).
    lockBucket: (bucket) =>
      locker.acquire(`.svc.sys/lifecycle/${bucket}`, 'write', limits.lifecycleBucketLockTimeoutMs).catch((error: unknown) => {
        logger.debug({ bucket, err: error }, 'lifecycle bucket lock not granted: the bucket waits for the next cycle');
        return undefined;
      }),
    logger,
    ...(options.events ? { onExpired: lifecycleEvents(options.events) } : {}),
    ...(options.transition ? { transition: options.transition } : {}),
    ...(options.restores ? { restores: options.restores } : {}),
  });
  if (config.lifecycleClockOffsetMs > 0) logger.warn({ offsetMs: config.lifecycleClockOffsetMs }, 'SVC_LIFECYCLE_CLOCK_OFFSET is set: lifecycle rules are judged ahead of the wall clock (a test harness setting)');
  scanner.start();
  return scanner;
}

/** Expiries as bucket notification events, raised by the service itself rather than by a caller. */
function lifecycleEvents(events: EventSink): (event: ObjectEvent) => Promise<void> {
  let counter = 0;
  return (event) => events.publish([event], { principalId: 'svc:lifecycle', sourceIp: 'svc:lifecycle', requestId: `lifecycle-${Date.now().toString(16)}-${(counter++).toString(16)}` });
}
