/**
 * AWS's event record (eventVersion 2.1) and the message a target receives: MinIO's envelope
 * `{ EventName, Key, Records: [record] }`, whose `Records` is what S3 sends to SQS. Pure.
 */
import type { NotificationRule } from '../../object/index.js';
import type { EventOrigin, ObjectEvent } from './types.js';

export interface EventRecord {
  eventVersion: '2.1';
  eventSource: 'aws:s3';
  awsRegion: string;
  eventTime: string;
  eventName: string;
  userIdentity: { principalId: string };
  requestParameters: { sourceIPAddress: string };
  responseElements: Record<string, string>;
  s3: {
    s3SchemaVersion: '1.0';
    configurationId: string;
    bucket: { name: string; ownerIdentity: { principalId: string }; arn: string };
    object: { key: string; size?: number; eTag?: string; versionId?: string; sequencer: string };
  };
  /** Replication events only. */
  replicationEventData?: { replicationRuleId?: string; destinationBucket: string; s3Operation: string; requestTime: string; failureReason?: string };
}

export interface EventMessage {
  EventName: string;
  /** `bucket/key`, not encoded. */
  Key: string;
  Records: [EventRecord];
}

/** An object key as S3 writes it in records: URL-encoded, a space as `+`, slashes kept. */
export function encodeRecordKey(key: string): string {
  return key.split('/').map((segment) => encodeURIComponent(segment).replace(/%20/g, '+')).join('/');
}

/** Orders the events of one key: increases with every event this node raises (hex, fixed width). */
export function sequencerOf(timeMs: number, counter: number): string {
  return (BigInt(timeMs) * 1_000_000n + BigInt(counter % 1_000_000)).toString(16).toUpperCase().padStart(16, '0');
}

export function eventMessage(event: ObjectEvent, rule: NotificationRule, origin: EventOrigin, context: { region: string; timeMs: number; sequencer: string }): EventMessage {
  const object: EventRecord['s3']['object'] = { key: encodeRecordKey(event.key), sequencer: context.sequencer };
  if (event.sizeBytes !== undefined) object.size = event.sizeBytes;
  if (event.etag !== undefined) object.eTag = event.etag;
  if (event.versionId !== undefined && event.versionId !== 'null') object.versionId = event.versionId;
  const record: EventRecord = {
    eventVersion: '2.1',
    eventSource: 'aws:s3',
    awsRegion: context.region,
    eventTime: new Date(context.timeMs).toISOString(),
    eventName: event.name,
    userIdentity: { principalId: origin.principalId },
    requestParameters: { sourceIPAddress: origin.sourceIp },
    responseElements: { 'x-amz-request-id': origin.requestId, ...(origin.node !== undefined ? { 'x-amz-id-2': origin.node } : {}) },
    s3: {
      s3SchemaVersion: '1.0',
      configurationId: rule.id,
      bucket: { name: event.bucket, ownerIdentity: { principalId: origin.principalId }, arn: `arn:aws:s3:::${event.bucket}` },
      object,
    },
  };
  if (event.replication) {
    const data = event.replication;
    record.replicationEventData = {
      ...(data.ruleId !== undefined ? { replicationRuleId: data.ruleId } : {}),
      destinationBucket: data.destinationBucket,
      s3Operation: data.operation,
      requestTime: new Date(data.requestTimeMs).toISOString(),
      ...(data.failureReason !== undefined ? { failureReason: data.failureReason } : {}),
    };
  }
  return { EventName: `s3:${event.name}`, Key: `${event.bucket}/${event.key}`, Records: [record] };
}
