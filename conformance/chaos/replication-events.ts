/**
 * `kill-node-replicating`: a node SIGKILLed while bucket replication and notifications are busy.
 *
 * A four-node source cluster (real processes on 127.0.0.2-5, two drives each) replicates its
 * versioned bucket (delete markers too) to a one-node svc deployment, and sends every
 * `s3:ObjectCreated:*` and `s3:ObjectRemoved:*` event to a webhook target: a receiver in the
 * harness's process. PUTs (inline to several erasure blocks, overwrites) and DELETEs go out in
 * batches through the nodes that are up; at a write drawn from the seed one node is SIGKILLed
 * once the first answer of its batch, all sent to it, arrives (the batch's other requests in
 * flight on it, its replication and event queues mid-delivery), and started again a number of
 * writes later.
 *
 * Judged, with a bound on every wait: every acknowledged write reaches the replica with its
 * version id and bytes (a delete marker with its id); an event naming the key and version id of
 * every acknowledged write arrives at least once; every node's replication and event queues
 * drain to empty; every acknowledged version reads back from the source; the closing heal fails
 * on nothing and leaves full redundancy. Writes in flight on the killed node have no verdict
 * either way (their outcome is unknown to the client); how many of them arrived anyway is noted.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectVersionsCommand,
  PutBucketNotificationConfigurationCommand,
  PutBucketReplicationCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { startProcessCluster, type ProcessCluster } from '../harness/process-cluster.js';
import { startSvc, testCredentials, waitReady, type SvcProcess } from '../harness/server-process.js';
import type { Target } from '../runner/check.js';
import { md5Of, type Tally } from './history-checker.js';
import { batchSize, bucket, healAndCheckRedundancy, targetFor, trafficKey, volume, type ChaosContext } from './steps.js';

const replicaBucket = 'chaos-replica';
const targetId = 'chaos';
const queueArn = `arn:svc:sqs::${targetId}:webhook`;

interface Write {
  key: string;
  /** The body's MD5 (a PUT), or undefined (a DELETE, which makes a delete marker). */
  md5?: string;
  versionId?: string;
  acknowledged: boolean;
  /** Sent to the node that was killed, in the batch it was killed in. */
  inFlightAtKill: boolean;
}

interface Delivered {
  eventName: string;
  key: string;
  versionId?: string;
}

/** A webhook target in this process: takes every POST, keeps its record. */
async function startReceiver(): Promise<{ url: string; events: Delivered[]; close(): Promise<void> }> {
  const events: Delivered[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      try {
        const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { EventName: string; Records: { s3: { object: { key: string; versionId?: string } } }[] };
        for (const record of message.Records ?? []) {
          const key = decodeURIComponent(record.s3.object.key.replace(/\+/g, ' '));
          events.push({ eventName: message.EventName, key, ...(record.s3.object.versionId ? { versionId: record.s3.object.versionId } : {}) });
        }
        response.writeHead(200).end();
      } catch {
        response.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/events`,
    events,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

export function killNodeReplicating() {
  return async (context: ChaosContext): Promise<{ problems: string[]; checker: Tally }> => {
    const root = await mkdtemp(join(tmpdir(), 'svc-chaos-replica-'));
    const receiver = await startReceiver();
    let replica: SvcProcess | undefined;
    let cluster: ProcessCluster | undefined;
    try {
      replica = await startSvc({ args: [join(root, 'd{1...4}')], waitReady: false, env: { SVC_CONSOLE_ENABLE: 'false' } });
      await waitReady(replica, 60_000);
      cluster = await startProcessCluster({
        nodes: 4,
        drivesPerNode: 2,
        env: { [`SVC_NOTIFY_WEBHOOK_ENABLE_${targetId}`]: 'on', [`SVC_NOTIFY_WEBHOOK_ENDPOINT_${targetId}`]: receiver.url },
      });
      const source = cluster;
      const replicaUrl = replica.url;
      const targets = source.urls.map((url) => targetFor(url, context.seed));
      await configure(targets, targetFor(replicaUrl, context.seed));
      context.note(`four nodes replicating ${bucket} to a one-node deployment, events to a webhook`);
      const scale = volume(context.size);
      const count = 40 * scale;
      const victim = context.prng.int(targets.length);
      const killAt = 2 * scale + context.prng.int(8 * scale);
      const restartAt = killAt + 6 * scale + context.prng.int(6 * scale);
      const writes = await runWrites(context, count, targets, (index) => source.nodes[index] !== undefined, async (index, inFlight) => {
        if (index === killAt) {
          await inFlight;
          await source.kill(victim);
          context.note(`write ${index}: node ${victim + 1} SIGKILLed with its batch in flight`);
        }
        if (index === restartAt) {
          await source.start(victim);
          context.note(`write ${index}: node ${victim + 1} restarted`);
        }
      }, victim, killAt);
      if (!source.nodes[victim]) {
        await source.start(victim);
        context.note(`node ${victim + 1} restarted after the traffic`);
      }
      const acknowledged = writes.filter((write) => write.acknowledged);
      const refused = writes.filter((write) => !write.acknowledged);
      context.note(`${acknowledged.length} writes acknowledged, ${refused.length} not (${refused.filter((write) => write.inFlightAtKill).length} of them sent to the killed node as it went)`);
      const deadlineMs = Date.now() + 60_000 * scale;
      const problems = [
        ...(await checkReplica(context, targetFor(replicaUrl, context.seed).s3, writes, deadlineMs)),
        ...(await checkEvents(context, receiver.events, acknowledged, deadlineMs)),
        ...(await checkQueuesDrained(targets, deadlineMs)),
        ...(await checkSource(targets[0]!.s3, acknowledged)),
        ...(await healAndCheckRedundancy(targets[0]!, context)),
      ];
      const refusals = new Map<string, number>();
      for (const write of refused) {
        const cause = write.inFlightAtKill ? 'sent to the killed node' : 'refused';
        refusals.set(cause, (refusals.get(cause) ?? 0) + 1);
      }
      return { problems, checker: { acknowledged: acknowledged.length, refused: refused.length, refusals } };
    } finally {
      await cluster?.destroy();
      await replica?.kill();
      await receiver.close();
      await rm(root, { recursive: true, force: true });
    }
  };
}

/** Versioned buckets on both sides, the remote target, the replication rule and the notification rule. */
async function configure(targets: Target[], replica: Target): Promise<void> {
  const source = targets[0]!.s3;
  await source.send(new CreateBucketCommand({ Bucket: bucket }));
  await source.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
  await replica.s3.send(new CreateBucketCommand({ Bucket: replicaBucket }));
  await replica.s3.send(new PutBucketVersioningCommand({ Bucket: replicaBucket, VersioningConfiguration: { Status: 'Enabled' } }));
  const body = JSON.stringify({ bucket, endpoint: replica.options.endpoint, targetBucket: replicaBucket, accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey });
  const added = await targets[0]!.admin('POST', '/svc/admin/v4/replication/target/add', '', { body });
  if (added.status !== 200) throw new Error(`replication target add answered ${added.status} ${JSON.stringify(added.body)}`);
  await targets[1]!.s3.send(new PutBucketReplicationCommand({
    Bucket: bucket,
    ReplicationConfiguration: { Role: '', Rules: [{ ID: 'all', Priority: 1, Status: 'Enabled', Filter: { Prefix: '' }, DeleteMarkerReplication: { Status: 'Enabled' }, Destination: { Bucket: `arn:aws:s3:::${replicaBucket}` } }] },
  }));
  await targets[2]!.s3.send(new PutBucketNotificationConfigurationCommand({
    Bucket: bucket,
    NotificationConfiguration: { QueueConfigurations: [{ QueueArn: queueArn, Events: ['s3:ObjectCreated:*', 's3:ObjectRemoved:*'] }] },
  }));
}

/**
 * `count` writes in batches through the nodes up, each batch's writes in parallel; `at(index,
 * inFlight)` runs once the batch holding write `index` is sent, before its answers are awaited
 * (`inFlight` resolves at the batch's first answer, when the others are as a rule still running).
 * The batch holding write `killAt` is sent to the node `victim` alone.
 */
async function runWrites(context: ChaosContext, count: number, targets: Target[], up: (index: number) => boolean, at: (index: number, inFlight: Promise<void>) => Promise<void>, victim: number, killAt: number): Promise<Write[]> {
  const writes: Write[] = [];
  const written = new Set<string>();
  const batch = batchSize(context);
  const round = (context.round += 1);
  for (let start = 0; start < count; start += batch) {
    const nodes = targets.map((_, index) => index).filter(up);
    const keys = new Set<string>();
    // The batch the kill lands in goes to the victim whole: its requests are in flight as it goes.
    const killBatch = start <= killAt && killAt < start + batch && up(victim);
    const answers = Array.from({ length: Math.min(batch, count - start) }, (_, offset) => {
      const index = start + offset;
      const node = killBatch ? victim : nodes[index % nodes.length]!;
      const key = trafficKey(context, round, index, start, keys);
      const remove = written.has(key) && context.prng.int(3) === 0;
      const body = remove ? undefined : bodyFor(context, key);
      written.add(key);
      const write: Write = { key, ...(body ? { md5: md5Of(body) } : {}), acknowledged: false, inFlightAtKill: killBatch };
      writes.push(write);
      const s3 = targets[node]!.s3;
      const request: Promise<{ VersionId?: string }> = body ? s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body })) : s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
      return request.then((answer) => {
        write.versionId = answer.VersionId;
        write.acknowledged = true;
      }, () => undefined);
    });
    const inFlight = Promise.race(answers);
    for (let index = start; index < Math.min(count, start + batch); index += 1) await at(index, inFlight);
    await Promise.all(answers);
  }
  return writes;
}

function bodyFor(context: ChaosContext, key: string): Buffer {
  const size = [100, 5_000, 200_000, 1_100_000, 2_500_000][context.prng.int(5)]! + context.prng.int(1000);
  const body = Buffer.alloc(size, context.prng.int(256));
  body.write(`${key}#${context.prng.int(2 ** 31)}#`);
  return body;
}

async function poll<T>(what: () => Promise<T>, done: (value: T) => boolean, deadlineMs: number): Promise<T> {
  for (;;) {
    const value = await what();
    if (done(value) || Date.now() > deadlineMs) return value;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Every version and delete marker of a bucket, by id: the ETag of a version, `marker` for a delete marker. */
async function versionsOf(s3: S3Client, name: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  let keyMarker: string | undefined;
  let versionIdMarker: string | undefined;
  for (;;) {
    const page = await s3.send(new ListObjectVersionsCommand({ Bucket: name, KeyMarker: keyMarker, VersionIdMarker: versionIdMarker }));
    for (const version of page.Versions ?? []) found.set(`${version.Key} ${version.VersionId}`, version.ETag!.replace(/"/g, ''));
    for (const marker of page.DeleteMarkers ?? []) found.set(`${marker.Key} ${marker.VersionId}`, 'marker');
    if (!page.IsTruncated) return found;
    keyMarker = page.NextKeyMarker;
    versionIdMarker = page.NextVersionIdMarker;
  }
}

const expectedEntry = (write: Write): string => write.md5 ?? 'marker';

async function checkReplica(context: ChaosContext, replica: S3Client, writes: Write[], deadlineMs: number): Promise<string[]> {
  const acknowledged = writes.filter((write) => write.acknowledged);
  const missing = (versions: Map<string, string>) => acknowledged.filter((write) => versions.get(`${write.key} ${write.versionId}`) !== expectedEntry(write));
  const versions = await poll(() => versionsOf(replica, replicaBucket), (now) => missing(now).length === 0, deadlineMs);
  const problems = missing(versions).map((write) => `${write.key} ${write.md5 ? 'version' : 'delete marker'} ${write.versionId}: acknowledged but ${versions.has(`${write.key} ${write.versionId}`) ? `on the replica as ${versions.get(`${write.key} ${write.versionId}`)}` : 'not on the replica'}`);
  for (const write of acknowledged.filter((entry) => entry.md5 !== undefined && !problems.some((problem) => problem.startsWith(`${entry.key} version ${entry.versionId}:`)))) {
    try {
      const object = await replica.send(new GetObjectCommand({ Bucket: replicaBucket, Key: write.key, VersionId: write.versionId }));
      if (md5Of(await object.Body!.transformToByteArray()) !== write.md5) problems.push(`${write.key} version ${write.versionId}: the replica's bytes differ from the acknowledged body`);
    } catch (error) {
      problems.push(`${write.key} version ${write.versionId}: listed on the replica, but its GET answers ${(error as Error).name}`);
    }
  }
  context.note(`replica: ${acknowledged.length} acknowledged writes checked, ${versions.size} versions and delete markers held`);
  return problems;
}

async function checkEvents(context: ChaosContext, events: Delivered[], acknowledged: Write[], deadlineMs: number): Promise<string[]> {
  const eventFor = (write: Write) => events.some((event) => event.key === write.key && event.versionId === write.versionId && event.eventName.startsWith(write.md5 ? 's3:ObjectCreated:' : 's3:ObjectRemoved:'));
  await poll(async () => acknowledged.filter((write) => !eventFor(write)).length, (left) => left === 0, deadlineMs);
  const problems = acknowledged.filter((write) => !eventFor(write)).map((write) => `${write.key} ${write.md5 ? 'version' : 'delete marker'} ${write.versionId}: acknowledged but no event for it arrived`);
  const distinct = new Set(events.map((event) => `${event.eventName} ${event.key} ${event.versionId}`)).size;
  context.note(`webhook: ${events.length} events received, ${distinct} distinct (${events.length - distinct} delivered again)`);
  return problems;
}

/** Every node's replication and event queues empty. */
async function checkQueuesDrained(targets: Target[], deadlineMs: number): Promise<string[]> {
  const waiting = async (): Promise<string[]> => {
    const left: string[] = [];
    for (const [index, target] of targets.entries()) {
      const replication = await target.admin('GET', '/svc/admin/v4/replication/status', `bucket=${bucket}`);
      for (const entry of (replication.body.targets ?? []) as { arn: string; queued: number }[]) if (entry.queued > 0) left.push(`node ${index + 1}: ${entry.queued} replication task(s) still queued for ${entry.arn}`);
      const events = await target.admin('GET', '/svc/admin/v4/event/targets');
      for (const entry of (events.body.targets ?? []) as { arn: string; queued: number }[]) if (entry.queued > 0) left.push(`node ${index + 1}: ${entry.queued} event(s) still queued for ${entry.arn}`);
      if (replication.status !== 200 || events.status !== 200) left.push(`node ${index + 1}: status routes answered ${replication.status} and ${events.status}`);
    }
    return left;
  };
  return poll(waiting, (left) => left.length === 0, deadlineMs);
}

/** Every acknowledged version reads back from the source by its id, with its bytes. */
async function checkSource(s3: S3Client, acknowledged: Write[]): Promise<string[]> {
  const problems: string[] = [];
  for (const write of acknowledged.filter((entry) => entry.md5 !== undefined)) {
    try {
      const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: write.key, VersionId: write.versionId }));
      if (md5Of(await object.Body!.transformToByteArray()) !== write.md5) problems.push(`${write.key} version ${write.versionId}: the source's bytes differ from the acknowledged body`);
    } catch (error) {
      problems.push(`${write.key} version ${write.versionId}: the source answers ${(error as Error).name}`);
    }
  }
  return problems;
}
