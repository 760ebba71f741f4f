/** What the S3 layer sees of bucket replication (docs/replication.md); the replicator implements it. */
import type { ObjectEvent } from '../events/types.js';

/** One change to replicate: a version written or changed (data, tags, retention, legal hold), or a delete marker made. */
export interface ReplicationChange {
  bucket: string;
  key: string;
  versionId: string;
  kind: 'version' | 'delete-marker';
}

/** One queued task: a version (or delete marker) of a key, for the target serving `bucketArn`. */
export interface ReplicationTask {
  bucket: string;
  key: string;
  versionId: string;
  kind: 'version' | 'delete-marker';
  bucketArn: string;
  storageClass?: string;
  /** The rule that sent it (replication events name it); absent on tasks queued by a resync. */
  ruleId?: string;
}

export interface ReplicationSink {
  /** The destination ARNs a replication rule of `bucket` may name (the bucket's remote targets). */
  destinations(bucket: string): Promise<Set<string>>;
  /**
   * Queues the changes that a rule of their bucket matches, durably, and marks each version
   * PENDING; resolves once they are queued (before the request is answered).
   */
  queue(changes: ReplicationChange[]): Promise<void>;
  /** A configuration was put: rules with ExistingObjectReplication start a resync of what the bucket holds. */
  configured(bucket: string): Promise<void>;
}

/**
 * The headers one deployment sends another with a replica (docs/replication.md): the source's
 * version id and modification time (ms), which the target keeps, and its ETag. A request carrying
 * them needs s3:ReplicateObject (s3:ReplicateDelete for a delete marker) besides its own action.
 */
export const replicaHeaders = {
  versionId: 'x-svc-replica-version-id',
  modTimeMs: 'x-svc-replica-mtime-ms',
  etag: 'x-svc-replica-etag',
} as const;

/** The system metadata key of a version's replication status, answered as `x-amz-replication-status`. */
export const replicationStatusKey = 'x-amz-replication-status';

export type ReplicationStatus = 'PENDING' | 'COMPLETED' | 'FAILED' | 'REPLICA';

/** The changes a successful answer's events report that replication carries. */
export function changesOf(events: ObjectEvent[]): ReplicationChange[] {
  const changes: ReplicationChange[] = [];
  for (const event of events) {
    if (event.versionId === undefined || event.versionId === 'null') continue;
    if (event.name.startsWith('ObjectCreated:') || event.name.startsWith('ObjectTagging:')) changes.push({ bucket: event.bucket, key: event.key, versionId: event.versionId, kind: 'version' });
    else if (event.name === 'ObjectRemoved:DeleteMarkerCreated') changes.push({ bucket: event.bucket, key: event.key, versionId: event.versionId, kind: 'delete-marker' });
  }
  return changes;
}
