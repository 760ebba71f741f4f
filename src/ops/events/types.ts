/** What a change raises for bucket notifications, before it becomes AWS's record (records.ts). */
import type { EventName } from './event-names.js';

/** One change to one object, as the handler that made it knows it. */
export interface ObjectEvent {
  name: EventName;
  bucket: string;
  key: string;
  sizeBytes?: number;
  /** Without quotes. */
  etag?: string;
  /** Absent or 'null' on an unversioned bucket. */
  versionId?: string;
  /** Replication events: where the version went (or failed to go), and why it failed. */
  replication?: ReplicationEventData;
}

/** What a `Replication:*` record carries besides the object (AWS's `replicationEventData`). */
export interface ReplicationEventData {
  ruleId?: string;
  destinationBucket: string;
  /** `s3:ReplicateObject` or `s3:ReplicateDelete`. */
  operation: string;
  requestTimeMs: number;
  failureReason?: string;
}

/** Who made the change, from where, and under which request id. */
export interface EventOrigin {
  principalId: string;
  sourceIp: string;
  requestId: string;
  /** The answering node, as `x-amz-id-2`-style responseElements carry it. */
  node?: string;
}

/** The events side of a node as the S3 layer sees it. */
export interface EventSink {
  /** ARNs of this deployment's targets: the only ones a rule may name. */
  targetArns(): string[];
  /** Queues the events that match the bucket's rules on the drives; resolves once they are durable. */
  publish(events: ObjectEvent[], origin: EventOrigin): Promise<void>;
}

/** The event of a new or changed version, from what the object layer answered. */
export function versionEvent(name: EventName, info: { bucket: string; key: string; sizeBytes: number; etag: string; versionId: string }): ObjectEvent {
  return { name, bucket: info.bucket, key: info.key, sizeBytes: info.sizeBytes, etag: info.etag, versionId: info.versionId };
}

/** The event of a deletion: a delete marker made (no version named) or a version removed. */
export function removalEvent(bucket: string, key: string, result: { versionId: string; deleteMarker: boolean }, versionNamed: boolean, family: 'ObjectRemoved' | 'LifecycleExpiration' = 'ObjectRemoved'): ObjectEvent {
  const name: EventName = result.deleteMarker && !versionNamed ? `${family}:DeleteMarkerCreated` : `${family}:Delete`;
  return { name, bucket, key, versionId: result.versionId };
}
