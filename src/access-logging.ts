/**
 * Server access logging in the composition root: this node's delivery (src/ops/access-log/)
 * keeps its journal in `.svc.sys/access-log` on its first local drive (or SVC_ACCESS_LOG_DIR),
 * writes log objects through the object layer, and the S3 listener hands it a record per
 * request (src/api/s3/access-log-hook.ts). A node with no local disk and no directory set does
 * not log (and says so).
 */
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { SvcError } from './errors/index.js';
import type { ObjectLayer } from './object/index.js';
import { AccessLogDelivery } from './ops/access-log/delivery.js';
import { installAccessLog } from './api/s3/access-log-hook.js';
import { targetRefusesDelivery } from './api/s3/handlers/bucket-logging.js';
import { limits } from './util/limits.js';
import { systemClock, systemTimers } from './util/clock.js';

export interface AccessLoggingSettings {
  /** The journal directory; undefined: this node does not log. */
  directory: string | undefined;
  flushIntervalMs: number;
}

/** SVC_ACCESS_LOG_DIR and SVC_ACCESS_LOG_FLUSH_INTERVAL_MS, with the first local drive's `.svc.sys/access-log` as the default directory. */
export function accessLoggingSettings(env: Record<string, string | undefined>, firstLocalDrivePath: string | undefined): AccessLoggingSettings {
  const intervalText = env.SVC_ACCESS_LOG_FLUSH_INTERVAL_MS;
  const flushIntervalMs = intervalText === undefined ? limits.accessLogFlushIntervalMsDefault : Number(intervalText);
  if (!Number.isSafeInteger(flushIntervalMs) || flushIntervalMs < 1) {
    throw new SvcError('InvalidConfiguration', `SVC_ACCESS_LOG_FLUSH_INTERVAL_MS must be a whole number of milliseconds of at least 1, not '${intervalText}'`, { variable: 'SVC_ACCESS_LOG_FLUSH_INTERVAL_MS' });
  }
  const directory = env.SVC_ACCESS_LOG_DIR ?? (firstLocalDrivePath === undefined ? undefined : join(firstLocalDrivePath, '.svc.sys', 'access-log'));
  return { directory, flushIntervalMs };
}

export interface AccessLoggingParts {
  settings: AccessLoggingSettings;
  node: string;
  region: string;
  ownerId: string;
  virtualHostSuffixes: string[];
  /** The object layer once storage is up (throws before). */
  objects(): ObjectLayer;
  logger: { warn(fields: Record<string, unknown>, message: string): void; info(fields: Record<string, unknown>, message: string): void };
}

/** Opens the delivery and installs the hook on the S3 listener; undefined when this node does not log. */
export function startAccessLogging(app: FastifyInstance, parts: AccessLoggingParts): AccessLogDelivery | undefined {
  const { directory, flushIntervalMs } = parts.settings;
  if (directory === undefined) {
    parts.logger.warn({}, 'server access logging is off on this node: it has no local drive on disk; set SVC_ACCESS_LOG_DIR');
    return undefined;
  }
  const delivery = new AccessLogDelivery({
    directory,
    node: parts.node,
    region: parts.region,
    flushRecords: limits.accessLogFlushRecords,
    flushBytes: limits.accessLogFlushBytes,
    flushIntervalMs,
    maxPendingBytes: limits.accessLogMaxPendingBytes,
    clock: systemClock,
    timers: systemTimers,
    logger: parts.logger,
    write: async (bucket, key, body) => {
      await parts.objects().putObject(bucket, key, (async function* () { yield body; })(), { storageClass: 'STANDARD', sizeBytes: body.length, contentType: 'text/plain' });
    },
    accepts: async (target) => {
      const record = await parts.objects().bucketRecord(target.targetBucket);
      return record !== undefined && !targetRefusesDelivery(record, target.targetPrefix);
    },
  });
  installAccessLog(app, {
    sink: delivery,
    bucketRecord: async (bucket) => parts.objects().bucketRecord(bucket),
    ownerId: parts.ownerId,
    hostId: Buffer.from(parts.node).toString('base64'),
    virtualHostSuffixes: parts.virtualHostSuffixes,
  });
  return delivery;
}
