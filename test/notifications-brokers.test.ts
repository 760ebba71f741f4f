/**
 * Bucket notifications to the real brokers from Debian (started on loopback by the test): for
 * each target type a bucket whose rule sends every event to it, then every kind of change through
 * the AWS SDK (put, copy, multipart, POST form, tagging put and delete, delete marker, version
 * delete, DeleteObjects). Each target receives every event once, in order, in AWS's record shape
 * (eventVersion 2.1, URL-encoded key, size, ETag, version id, sequencer, principal, source
 * address); a refused request and a failed one raise nothing. Redis and PostgreSQL also keep the
 * namespace format: one entry per object, removed with it. The lifecycle scanner (its clock two
 * days ahead) raises s3:LifecycleExpiration events. A broker that is not installed is skipped
 * with the reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CompleteMultipartUploadCommand, CopyObjectCommand, CreateBucketCommand, CreateMultipartUploadCommand, DeleteObjectCommand, DeleteObjectsCommand, DeleteObjectTaggingCommand,
  PutBucketLifecycleConfigurationCommand, PutBucketNotificationConfigurationCommand, PutBucketVersioningCommand, PutObjectCommand, PutObjectTaggingCommand, UploadPartCommand, type Event, type S3Client,
} from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { s3ClientFor, startSvc, testCredentials, type SvcProcess } from './helpers/server-process.js';
import { missingBroker, startBroker, type Broker, type BrokerKind } from './helpers/brokers.js';
import { amqpConsumer, mqttConsumer, natsConsumer, pollUntil, postgresConsumer, postgresRows, redisHash, redisListConsumer, webhookReceiver, type Consumer, type ReceivedRecord, type WebhookReceiver } from './helpers/event-consumers.js';
import { sdkErrorOf } from './helpers/codes.js';
import { admin } from './helpers/admin-client.js';

type TargetKind = 'webhook' | BrokerKind;
const brokerKinds: BrokerKind[] = ['nats', 'redis', 'mqtt', 'amqp', 'postgres'];
const missing = Object.fromEntries(brokerKinds.map((kind) => [kind, missingBroker(kind)])) as Record<BrokerKind, string | undefined>;
const available = brokerKinds.filter((kind) => missing[kind] === undefined);

let root: string;
let server: SvcProcess;
let s3: S3Client;
let webhook: WebhookReceiver;
const brokers = new Map<BrokerKind, Broker>();
const consumers = new Map<TargetKind, Consumer>();

function targetEnv(): Record<string, string> {
  const env: Record<string, string> = {
    SVC_NOTIFY_WEBHOOK_ENABLE_1: 'on', SVC_NOTIFY_WEBHOOK_ENDPOINT_1: webhook.url, SVC_NOTIFY_WEBHOOK_AUTH_TOKEN_1: 'hook-token',
  };
  const address = (kind: BrokerKind): string | undefined => brokers.get(kind)?.address;
  if (address('nats')) Object.assign(env, { SVC_NOTIFY_NATS_ENABLE_1: 'on', SVC_NOTIFY_NATS_ADDRESS_1: address('nats'), SVC_NOTIFY_NATS_SUBJECT_1: 'svc.events' });
  if (address('redis')) {
    Object.assign(env, { SVC_NOTIFY_REDIS_ENABLE_1: 'on', SVC_NOTIFY_REDIS_ADDRESS_1: address('redis'), SVC_NOTIFY_REDIS_KEY_1: 'svc-events', SVC_NOTIFY_REDIS_FORMAT_1: 'access' });
    Object.assign(env, { SVC_NOTIFY_REDIS_ENABLE_ns: 'on', SVC_NOTIFY_REDIS_ADDRESS_ns: address('redis'), SVC_NOTIFY_REDIS_KEY_ns: 'svc-objects', SVC_NOTIFY_REDIS_FORMAT_ns: 'namespace' });
  }
  if (address('mqtt')) Object.assign(env, { SVC_NOTIFY_MQTT_ENABLE_1: 'on', SVC_NOTIFY_MQTT_BROKER_1: address('mqtt'), SVC_NOTIFY_MQTT_TOPIC_1: 'svc/events', SVC_NOTIFY_MQTT_QOS_1: '1' });
  if (address('amqp')) Object.assign(env, { SVC_NOTIFY_AMQP_ENABLE_1: 'on', SVC_NOTIFY_AMQP_URL_1: address('amqp'), SVC_NOTIFY_AMQP_EXCHANGE_1: 'svc-events', SVC_NOTIFY_AMQP_ROUTING_KEY_1: 'bucketevents', SVC_NOTIFY_AMQP_EXCHANGE_TYPE_1: 'direct' });
  if (address('postgres')) {
    Object.assign(env, { SVC_NOTIFY_POSTGRES_ENABLE_1: 'on', SVC_NOTIFY_POSTGRES_CONNECTION_STRING_1: address('postgres'), SVC_NOTIFY_POSTGRES_TABLE_1: 'svc_events', SVC_NOTIFY_POSTGRES_FORMAT_1: 'access' });
    Object.assign(env, { SVC_NOTIFY_POSTGRES_ENABLE_ns: 'on', SVC_NOTIFY_POSTGRES_CONNECTION_STRING_ns: address('postgres'), SVC_NOTIFY_POSTGRES_TABLE_ns: 'svc_objects', SVC_NOTIFY_POSTGRES_FORMAT_ns: 'namespace' });
  }
  return env;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-notify-brokers-'));
  webhook = await webhookReceiver();
  await Promise.all(available.map(async (kind) => brokers.set(kind, await startBroker(kind))));
  consumers.set('webhook', webhook);
  if (brokers.has('nats')) consumers.set('nats', await natsConsumer(brokers.get('nats')!.address, 'svc.events'));
  if (brokers.has('redis')) consumers.set('redis', redisListConsumer(brokers.get('redis')!.address, 'svc-events'));
  if (brokers.has('mqtt')) consumers.set('mqtt', await mqttConsumer(brokers.get('mqtt')!.address, 'svc/events'));
  if (brokers.has('amqp')) consumers.set('amqp', await amqpConsumer(brokers.get('amqp')!.address, 'svc-events', 'bucketevents'));
  if (brokers.has('postgres')) consumers.set('postgres', postgresConsumer(brokers.get('postgres')!.address, 'svc_events'));
  server = await startSvc({ args: [join(root, 'd{1...4}')], env: { ...targetEnv(), SVC_LIFECYCLE_CLOCK_OFFSET: '2d' } });
  s3 = s3ClientFor(server.url);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await Promise.all([...consumers.values()].map((consumer) => consumer.close().catch(() => undefined)));
  await Promise.all([...brokers.values()].map((broker) => broker.dispose()));
  await rm(root, { recursive: true, force: true });
}, 60_000);

const allEvents: Event[] = ['s3:ObjectCreated:*', 's3:ObjectRemoved:*', 's3:ObjectTagging:*'];

async function bucketFor(bucket: string, arn: string): Promise<void> {
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  await s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
  await s3.send(new PutBucketNotificationConfigurationCommand({ Bucket: bucket, NotificationConfiguration: { QueueConfigurations: [{ Id: 'everything', QueueArn: arn, Events: allEvents }] } }));
}

/** Every kind of change, in order; answers the event names expected and what the first one must say. */
async function everyChange(bucket: string): Promise<{ names: string[]; put: { etag: string; versionId: string } }> {
  const put = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'photos/cat 1.jpg', Body: 'meow' }));
  await s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'copy.jpg', CopySource: `${bucket}/photos/cat%201.jpg` }));
  const upload = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'multi.bin' }));
  const part = await s3.send(new UploadPartCommand({ Bucket: bucket, Key: 'multi.bin', UploadId: upload.UploadId, PartNumber: 1, Body: 'part one' }));
  const multi = await s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'multi.bin', UploadId: upload.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] } }));
  const post = await createPresignedPost(s3, { Bucket: bucket, Key: 'posted.txt', Expires: 300 });
  const form = new FormData();
  for (const [name, value] of Object.entries(post.fields)) form.append(name, value);
  form.append('file', new Blob(['posted body']), 'posted.txt');
  expect((await fetch(post.url, { method: 'POST', body: form })).status).toBe(204);
  await s3.send(new PutObjectTaggingCommand({ Bucket: bucket, Key: 'copy.jpg', Tagging: { TagSet: [{ Key: 'k', Value: 'v' }] } }));
  await s3.send(new DeleteObjectTaggingCommand({ Bucket: bucket, Key: 'copy.jpg' }));
  await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'copy.jpg' }));
  await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'multi.bin', VersionId: multi.VersionId }));
  await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: [{ Key: 'posted.txt' }] } }));
  // Refused (a wrong secret) and failed (a precondition) requests raise nothing.
  const stranger = s3ClientFor(server.url, { credentials: { accessKeyId: testCredentials.accessKeyId, secretAccessKey: 'not-the-secret' } });
  expect(await sdkErrorOf(stranger.send(new PutObjectCommand({ Bucket: bucket, Key: 'refused', Body: 'x' })))).toMatchObject({ status: 403 });
  expect(await sdkErrorOf(s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'photos/cat 1.jpg', Body: 'x', IfNoneMatch: '*' })))).toMatchObject({ status: 412 });
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'last', Body: '' }));
  return {
    names: ['ObjectCreated:Put', 'ObjectCreated:Copy', 'ObjectCreated:CompleteMultipartUpload', 'ObjectCreated:Post', 'ObjectTagging:Put', 'ObjectTagging:Delete', 'ObjectRemoved:DeleteMarkerCreated', 'ObjectRemoved:Delete', 'ObjectRemoved:DeleteMarkerCreated', 'ObjectCreated:Put'],
    put: { etag: put.ETag!.replace(/"/g, ''), versionId: put.VersionId! },
  };
}

function expectAwsShape(record: ReceivedRecord, bucket: string, expected: { etag: string; versionId: string }): void {
  expect(record).toMatchObject({
    eventVersion: '2.1',
    eventSource: 'aws:s3',
    awsRegion: 'us-east-1',
    eventName: 'ObjectCreated:Put',
    userIdentity: { principalId: testCredentials.accessKeyId },
    requestParameters: { sourceIPAddress: '127.0.0.1' },
    s3: { s3SchemaVersion: '1.0', configurationId: 'everything', bucket: { name: bucket, arn: `arn:aws:s3:::${bucket}` }, object: { key: 'photos/cat+1.jpg', size: 4, eTag: expected.etag, versionId: expected.versionId } },
  });
  expect(new Date(record.eventTime).toISOString()).toBe(record.eventTime);
  expect(record.responseElements['x-amz-request-id']).toMatch(/\S/);
  expect(record.s3.object.sequencer).toMatch(/^[0-9A-F]{16,}$/);
}

describe('every event type reaches each target in AWS record shape', () => {
  const kinds: TargetKind[] = ['webhook', ...brokerKinds];
  for (const kind of kinds) {
    const reason = kind === 'webhook' ? undefined : missing[kind];
    it.skipIf(reason !== undefined)(`${kind}${reason ? ` (skipped: ${reason})` : ''}`, async () => {
      const bucket = `events-${kind}`;
      await bucketFor(bucket, `arn:svc:sqs::1:${kind}`);
      const { names, put } = await everyChange(bucket);
      const records = await pollUntil(() => consumers.get(kind)!.records(), (got) => got.filter((record) => record.s3.bucket.name === bucket).length >= names.length);
      const mine = records.filter((record) => record.s3.bucket.name === bucket);
      expect(mine.map((record) => record.eventName).sort()).toEqual([...names].sort());
      expectAwsShape(mine.find((record) => record.s3.object.key === 'photos/cat+1.jpg')!, bucket, put);
      // Each object's events arrive in the order of its changes; those of different objects may
      // overtake each other (several deliveries in flight), as a slow target shows under load.
      const sequencers = new Map<string, string[]>();
      for (const record of mine) sequencers.set(record.s3.object.key, [...(sequencers.get(record.s3.object.key) ?? []), record.s3.object.sequencer]);
      expect(sequencers.get('copy.jpg')).toHaveLength(4);
      for (const ofKey of sequencers.values()) expect([...ofKey].sort()).toEqual(ofKey);
      if (kind === 'webhook') expect(new Set(webhook.authorizations)).toEqual(new Set(['Bearer hook-token']));
    }, 60_000);
  }
});

describe('namespace format: one entry per object', () => {
  it.skipIf(missing.redis !== undefined || missing.postgres !== undefined)(`Redis hash and PostgreSQL table${missing.redis ?? missing.postgres ? ' (skipped: a broker is missing)' : ''}`, async () => {
    for (const kind of ['redis', 'postgres'] as const) {
      const bucket = `objects-${kind}`;
      await s3.send(new CreateBucketCommand({ Bucket: bucket }));
      await s3.send(new PutBucketNotificationConfigurationCommand({ Bucket: bucket, NotificationConfiguration: { QueueConfigurations: [{ QueueArn: `arn:svc:sqs::ns:${kind}`, Events: ['s3:ObjectCreated:*', 's3:ObjectRemoved:*'] }] } }));
      for (const key of ['kept', 'gone', 'kept']) await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: key }));
      await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'gone' }));
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'marker', Body: '' }));
    }
    const redis = await pollUntil(() => redisHash(brokers.get('redis')!.address, 'svc-objects'), (hash) => 'objects-redis/marker' in hash);
    expect(Object.keys(redis).sort()).toEqual(['objects-redis/kept', 'objects-redis/marker']);
    const rows = await pollUntil(() => postgresRows(brokers.get('postgres')!.address, 'svc_objects', 'namespace'), (got) => got.some((row) => row.key === 'objects-postgres/marker'));
    expect(rows.map((row) => row.key)).toEqual(['objects-postgres/kept', 'objects-postgres/marker']);
    expect(rows[0]!.record.eventName).toBe('ObjectCreated:Put');
  }, 60_000);
});

describe('lifecycle expiry', () => {
  it('raises s3:LifecycleExpiration:DeleteMarkerCreated on a versioned bucket and :Delete on an unversioned one', async () => {
    for (const [bucket, versioned] of [['expiring-versioned', true], ['expiring-plain', false]] as const) {
      await s3.send(new CreateBucketCommand({ Bucket: bucket }));
      if (versioned) await s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'old', Body: 'old' }));
      await s3.send(new PutBucketNotificationConfigurationCommand({ Bucket: bucket, NotificationConfiguration: { QueueConfigurations: [{ Id: 'expiry', QueueArn: 'arn:svc:sqs::1:webhook', Events: ['s3:LifecycleExpiration:*'] }] } }));
      await s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: bucket, LifecycleConfiguration: { Rules: [{ ID: 'day', Status: 'Enabled', Filter: { Prefix: '' }, Expiration: { Days: 1 } }] } }));
    }
    expect((await admin(server.url, 'POST', '/svc/admin/v4/lifecycle/run')).status).toBe(200);
    const records = await pollUntil(() => webhook.records(), (got) => got.filter((record) => record.eventName.startsWith('LifecycleExpiration:')).length >= 2);
    const expiries = records.filter((record) => record.eventName.startsWith('LifecycleExpiration:')).map((record) => [record.s3.bucket.name, record.s3.object.key, record.eventName, record.userIdentity.principalId]).sort();
    expect(expiries).toEqual([
      ['expiring-plain', 'old', 'LifecycleExpiration:Delete', 'svc:lifecycle'],
      ['expiring-versioned', 'old', 'LifecycleExpiration:DeleteMarkerCreated', 'svc:lifecycle'],
    ]);
  }, 60_000);
});
