/**
 * A node's bucket replication (docs/replication.md). A change that a rule of its bucket matches
 * becomes one task per destination, written to that remote target's queue on this node's drive
 * (the bucket notifications' durable queue, src/ops/events/queue.ts: each task fsynced
 * before the request is answered, delivered oldest first with a capped backoff, kept across
 * restarts) after the version is marked PENDING. Delivering a task reads the version as it is
 * now and writes it on the target with the replica headers (the target keeps its version id and
 * time and marks it REPLICA); the source version then reads COMPLETED, or FAILED while retries go on.
 * A write that was itself a replica is never queued, so two deployments replicating to each other
 * settle.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { isSvcError, SvcError } from '../../errors/index.js';
import type { ObjectInfo, ObjectLayer } from '../../object/index.js';
import type { Timers } from '../../util/clock.js';
import { limits } from '../../util/limits.js';
import { EventQueue, type EventQueueStats } from '../events/queue.js';
import type { EventSink, ObjectEvent } from '../events/types.js';
import type { EventName } from '../events/event-names.js';
import { readObject } from '../compression/compressed-objects.js';
import type { Kms } from '../kms/kms.js';
import type { NewTarget, RemoteTargets, ResolvedTarget, TargetInfo } from './remote-targets.js';
import { destinationsOf, needsTags } from './rules.js';
import { checkTarget, putReplica, putReplicaMarker, targetClient, type ReplicaEncryption } from './target-client.js';
import { replicationStatusKey, type ReplicationChange, type ReplicationSink, type ReplicationStatus, type ReplicationTask } from './types.js';
import { ResyncRunner, type ResyncState } from './resync.js';

export interface TargetReplicationStatus extends TargetInfo, EventQueueStats {
  /** Versions and markers the target took since this node started. */
  completed: number;
  /** Bytes of version data the target took since this node started. */
  sentBytes: number;
  /** Versions that cannot be replicated (encrypted, or refused for good by the target), marked FAILED and not retried, since this node started. */
  unsupported: number;
}

/** One node's replication: its queue of each target and the resyncs it ran or runs. */
export interface NodeReplicationStatus {
  targets: TargetReplicationStatus[];
  resyncs: ResyncState[];
}

/** One node's row of a cluster-wide status: its own figures, or why it did not answer. */
export interface NodeReplicationRow extends Partial<NodeReplicationStatus> {
  /** `host:port` of the node. */
  node: string;
  error?: string;
}

/** What the admin API asks of replication. */
export interface ReplicationAdmin {
  /** Checks the target (reachable, credentials, versioning) and stores it; the secret is never answered. */
  addTarget(request: NewTarget): Promise<TargetInfo>;
  listTargets(bucket?: string): Promise<TargetInfo[]>;
  /** Refused while a rule of the bucket names it; its queue on this node goes with it. */
  removeTarget(bucket: string, arn: string): Promise<TargetInfo>;
  /** This node's figures, or (cluster-wide) every node's with `nodes` holding one row per node and the targets summed. */
  status(bucket?: string): Promise<NodeReplicationStatus & { nodes?: NodeReplicationRow[] }>;
  resync(bucket: string, bucketArn?: string): Promise<ResyncState[]>;
}

export interface ReplicatorOptions {
  objects: ObjectLayer;
  targets: RemoteTargets;
  /** `.svc.sys/replication` on this node's drive: one queue directory per target id, `quarantine/`, `resync/`. */
  directory: string;
  /** The directory is temporary (drives in memory): removed when the replicator closes. */
  removeOnClose?: boolean;
  timers: Timers;
  nowMs(): number;
  logger: { warn(fields: Record<string, unknown>, message: string): void; info(fields: Record<string, unknown>, message: string): void };
  /** Where `s3:Replication:*` events go (the node's bucket notifications); absent, none is raised. */
  events?: EventSink;
  /** The node's KMS, to read SSE-S3 and SSE-KMS versions as plaintext. */
  kms?: () => Kms | undefined;
}

/** The principal and source address replication events carry: the service itself, not a client. */
export const replicationPrincipal = 'svc:replication';

const queueDirectoryName = /^[0-9a-f]{16}$/;

interface TargetQueue {
  queue: EventQueue;
  completed: number;
  sentBytes: number;
  unsupported: number;
}

export class Replicator implements ReplicationSink, ReplicationAdmin {
  private readonly queues = new Map<string, TargetQueue>();
  private readonly opening = new Map<string, Promise<TargetQueue>>();
  private readonly clients = new Map<string, { fingerprint: string; client: S3Client }>();
  private readonly resyncs: ResyncRunner;
  private closed = false;

  private constructor(private readonly options: ReplicatorOptions) {
    this.resyncs = new ResyncRunner({
      objects: options.objects,
      directory: join(options.directory, 'resync'),
      nowMs: options.nowMs,
      logger: options.logger,
      enqueue: (task) => this.enqueue(task),
      configuration: async (bucket) => (await options.objects.bucketRecord(bucket))?.replication,
      timers: options.timers,
    });
  }

  async addTarget(request: NewTarget): Promise<TargetInfo> {
    const record = await this.options.objects.requireBucket(request.sourceBucket);
    if (record.versioning !== 'enabled') throw new SvcError('InvalidRequest', `versioning is not enabled on bucket ${request.sourceBucket}: replication needs it on both sides`, { bucket: request.sourceBucket });
    await checkTarget({ ...request, region: request.region ?? 'us-east-1' });
    return this.options.targets.add(request);
  }

  listTargets(bucket?: string): Promise<TargetInfo[]> {
    return this.options.targets.list(bucket);
  }

  async removeTarget(bucket: string, arn: string): Promise<TargetInfo> {
    const rules = (await this.options.objects.requireBucket(bucket)).replication?.rules ?? [];
    const removed = await this.options.targets.remove(bucket, arn, (target) => rules.some((rule) => rule.destination.bucketArn === target.arn || rule.destination.bucketArn === `arn:aws:s3:::${target.targetBucket}`));
    await this.forget(removed);
    return removed;
  }

  /** Opens the queues found on the drive (they deliver what they hold) and resumes unfinished resyncs. */
  static async open(options: ReplicatorOptions): Promise<Replicator> {
    const replicator = new Replicator(options);
    await mkdir(options.directory, { recursive: true });
    await options.targets.reload();
    for (const name of await readdir(options.directory)) if (queueDirectoryName.test(name)) await replicator.queueOf(name);
    await replicator.resyncs.resume();
    return replicator;
  }

  /** The destinations a rule of `bucket` may name; read from the drives (a target may have been added through another node a moment ago). */
  async destinations(bucket: string): Promise<Set<string>> {
    await this.options.targets.reload();
    const targets = await this.options.targets.list(bucket);
    return new Set(targets.flatMap((target) => [target.arn, `arn:aws:s3:::${target.targetBucket}`]));
  }

  async queue(changes: ReplicationChange[]): Promise<void> {
    for (const change of changes) await this.queueOne(change);
  }

  private async queueOne(change: ReplicationChange): Promise<void> {
    const configuration = (await this.options.objects.bucketRecord(change.bucket))?.replication;
    if (!configuration) return;
    let info: ObjectInfo | undefined;
    if (change.kind === 'version') {
      info = await this.options.objects.headObject(change.bucket, change.key, change.versionId).catch(() => undefined);
      if (!info) return;
    }
    const tags = info && needsTags(configuration) ? [...new URLSearchParams(info.systemMetadata['x-amz-tagging'] ?? '')] : undefined;
    const destinations = [];
    for (const destination of destinationsOf(configuration, change.key, tags, change.kind, info?.encryption?.kind)) {
      if (await this.options.targets.resolve(change.bucket, destination.bucketArn)) destinations.push(destination);
    }
    if (destinations.length === 0) return;
    // Marked before it is queued: a delivery that completes at once is not overwritten by PENDING.
    if (info && info.systemMetadata[replicationStatusKey] !== 'REPLICA') await this.mark(change, 'PENDING');
    for (const destination of destinations) {
      await this.enqueue({ bucket: change.bucket, key: change.key, versionId: change.versionId, kind: change.kind, bucketArn: destination.bucketArn, ruleId: destination.ruleId, ...(destination.storageClass !== undefined ? { storageClass: destination.storageClass } : {}) });
    }
  }

  /** Writes a task to its target's queue (a destination no target serves any more is skipped). */
  private async enqueue(task: ReplicationTask): Promise<boolean> {
    const target = await this.options.targets.resolve(task.bucket, task.bucketArn);
    if (!target) return false;
    await (await this.queueOf(target.id)).queue.enqueue(task, `${task.bucket}/${task.key}`);
    return true;
  }

  async configured(bucket: string): Promise<void> {
    const configuration = (await this.options.objects.bucketRecord(bucket))?.replication;
    const existing = configuration?.rules.filter((rule) => rule.enabled && rule.existingObjectReplication) ?? [];
    for (const arn of new Set(existing.map((rule) => rule.destination.bucketArn))) await this.resyncs.start(bucket, arn);
  }

  async resync(bucket: string, bucketArn?: string): Promise<ResyncState[]> {
    const configuration = (await this.options.objects.requireBucket(bucket)).replication;
    if (!configuration) throw new SvcError('ReplicationConfigurationNotFoundError', `bucket ${bucket} has no replication configuration`, { bucket });
    const arns = [...new Set(configuration.rules.filter((rule) => rule.enabled).map((rule) => rule.destination.bucketArn))];
    const chosen = bucketArn === undefined ? arns : arns.filter((arn) => arn === bucketArn || (bucketArn.startsWith('arn:svc:') && arn === `arn:aws:s3:::${bucketArn.split(':').pop()}`));
    if (chosen.length === 0) throw new SvcError('NoSuchRemoteTarget', `no enabled rule of ${bucket} names ${bucketArn ?? 'a destination'}`, { bucket });
    const states: ResyncState[] = [];
    for (const arn of chosen) states.push(await this.resyncs.start(bucket, arn));
    return states;
  }

  async status(bucket?: string): Promise<NodeReplicationStatus> {
    const targets = await this.options.targets.list(bucket);
    const answer: TargetReplicationStatus[] = [];
    for (const target of targets) {
      const open = this.queues.get(target.id);
      const stats = open?.queue.stats() ?? { depth: 0, sent: 0, failed: 0, dropped: 0, quarantined: 0 };
      answer.push({ ...target, ...stats, completed: open?.completed ?? 0, sentBytes: open?.sentBytes ?? 0, unsupported: open?.unsupported ?? 0 });
    }
    return { targets: answer, resyncs: this.resyncs.states(bucket) };
  }

  /** Every open queue's statistics by target id (metrics). */
  queueStats(): { target: string; stats: EventQueueStats; completed: number; sentBytes: number }[] {
    return [...this.queues.entries()].map(([id, open]) => ({ target: id, stats: open.queue.stats(), completed: open.completed, sentBytes: open.sentBytes }));
  }

  /** Forgets a removed target's queue and its files. */
  private async forget(target: TargetInfo): Promise<void> {
    const open = this.queues.get(target.id);
    this.queues.delete(target.id);
    await open?.queue.close();
    this.clients.get(target.arn)?.client.destroy();
    this.clients.delete(target.arn);
    await rm(join(this.options.directory, target.id), { recursive: true, force: true });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.resyncs.close();
    await Promise.all([...this.queues.values()].map((open) => open.queue.close()));
    for (const { client } of this.clients.values()) client.destroy();
    if (this.options.removeOnClose === true) await rm(this.options.directory, { recursive: true, force: true });
  }

  private queueOf(id: string): Promise<TargetQueue> {
    const open = this.queues.get(id);
    if (open) return Promise.resolve(open);
    let opening = this.opening.get(id);
    if (!opening) {
      opening = this.openQueue(id).finally(() => this.opening.delete(id));
      this.opening.set(id, opening);
    }
    return opening;
  }

  private async openQueue(id: string): Promise<TargetQueue> {
    const entry = { completed: 0, sentBytes: 0, unsupported: 0 } as TargetQueue;
    entry.queue = await EventQueue.open({
      directory: join(this.options.directory, id),
      quarantineDirectory: join(this.options.directory, 'quarantine', id),
      limitEntries: limits.replicationQueueLimit,
      send: (payload, signal) => this.deliver(entry, payload as ReplicationTask, signal),
      timers: this.options.timers,
      nowMs: this.options.nowMs,
      retryBaseMs: limits.replicationRetryBaseMs,
      retryMaxMs: limits.replicationRetryMaxMs,
      sendTimeoutMs: limits.replicationSendTimeoutMs,
      dropWarningIntervalMs: limits.eventDropWarningIntervalMs,
      logger: this.options.logger,
    });
    if (this.closed) await entry.queue.close();
    this.queues.set(id, entry);
    return entry;
  }

  /** Sends one task; resolves when the target has it (or there is nothing left to send), throws to be retried. */
  private async deliver(entry: TargetQueue, task: ReplicationTask, signal: AbortSignal): Promise<void> {
    const target = await this.options.targets.resolve(task.bucket, task.bucketArn);
    if (!target) return; // the target was removed: its tasks are dropped
    const client = await this.clientOf(target);
    const source = await this.readSource(task);
    if (source.kind === 'gone') return;
    if (source.kind === 'marker') {
      await putReplicaMarker(client, target.targetBucket, task.key, task.versionId, source.modTimeMs, signal).catch((error: unknown) => {
        throw new Error(failureOf(error), { cause: error });
      });
      entry.completed += 1;
      await this.raise('Replication:OperationCompletedReplication', task, target.targetBucket, { versionId: task.versionId });
      return;
    }
    if (source.kind === 'unsupported') return this.unsupported(entry, task, target.targetBucket, source.info, source.reason);
    const { info } = source;
    const encryption = await this.replicaEncryption(task, info);
    if (typeof encryption === 'string') {
      await source.body.return();
      return this.unsupported(entry, task, target.targetBucket, info, encryption);
    }
    try {
      await putReplica(client, target.targetBucket, info, await source.body.payload(), task.storageClass, signal, encryption);
    } catch (error) {
      await source.body.return();
      const reason = failureOf(error);
      if (!refusedForGood(error)) {
        if (info.systemMetadata[replicationStatusKey] !== 'FAILED') {
          // The first failed attempt marks the version and raises the event; retries go on quietly.
          await this.mark(task, 'FAILED');
          await this.raise('Replication:OperationFailedReplication', task, target.targetBucket, info, reason);
        }
        throw new Error(reason, { cause: error });
      }
      // Retrying cannot help (the target refuses this version as it is): it stays FAILED and is counted, and the queue goes on.
      this.options.logger.warn({ bucket: task.bucket, key: task.key, versionId: task.versionId, target: target.arn, error: reason }, 'the replication target refused a version for good: it stays FAILED');
      return this.unsupported(entry, task, target.targetBucket, info, reason);
    }
    entry.completed += 1;
    entry.sentBytes += info.sizeBytes;
    await this.mark(task, 'COMPLETED');
    await this.raise('Replication:OperationCompletedReplication', task, target.targetBucket, info);
  }

  /** A version that will not be replicated as it is: FAILED for good, counted, announced. */
  private async unsupported(entry: TargetQueue, task: ReplicationTask, targetBucket: string, info: ObjectInfo, reason: string): Promise<void> {
    entry.unsupported += 1;
    if (info.systemMetadata[replicationStatusKey] !== 'FAILED') await this.mark(task, 'FAILED');
    await this.raise('Replication:OperationFailedReplication', task, targetBucket, info, reason);
  }

  /**
   * How the replica of an encrypted version is encrypted on the target (undefined for a plain
   * one), or why it cannot be: an SSE-KMS version goes only under a rule that enables
   * SseKmsEncryptedObjects and names the target's key.
   */
  private async replicaEncryption(task: ReplicationTask, info: ObjectInfo): Promise<ReplicaEncryption | undefined | string> {
    const kind = info.encryption?.kind;
    if (kind === undefined) return undefined;
    if (kind === 'SSE-S3') return { kind: 'SSE-S3' };
    if (kind !== 'SSE-KMS') return customerKeyReason;
    const configuration = (await this.options.objects.bucketRecord(task.bucket))?.replication;
    const tags = [...new URLSearchParams(info.systemMetadata['x-amz-tagging'] ?? '')];
    const destination = configuration && destinationsOf(configuration, task.key, tags, 'version', kind).find((candidate) => candidate.bucketArn === task.bucketArn);
    if (destination?.replicaKmsKeyId === undefined) return 'an SSE-KMS version is replicated only by a rule with SseKmsEncryptedObjects enabled and a ReplicaKmsKeyID';
    return { kind: 'SSE-KMS', keyId: destination.replicaKmsKeyId };
  }

  /** Raises an `s3:Replication:*` event for a version or delete marker; a failure to queue it is logged, never the delivery's. */
  private async raise(name: EventName, task: ReplicationTask, targetBucket: string, version: Partial<Pick<ObjectInfo, 'sizeBytes' | 'etag'>> & { versionId: string }, failureReason?: string): Promise<void> {
    const sink = this.options.events;
    if (!sink) return;
    const event: ObjectEvent = {
      name,
      bucket: task.bucket,
      key: task.key,
      versionId: version.versionId,
      ...(version.sizeBytes !== undefined ? { sizeBytes: version.sizeBytes } : {}),
      ...(version.etag !== undefined ? { etag: version.etag } : {}),
      replication: {
        ...(task.ruleId !== undefined ? { ruleId: task.ruleId } : {}),
        destinationBucket: `arn:aws:s3:::${targetBucket}`,
        operation: task.kind === 'delete-marker' ? 's3:ReplicateDelete' : 's3:ReplicateObject',
        requestTimeMs: this.options.nowMs(),
        ...(failureReason !== undefined ? { failureReason } : {}),
      },
    };
    const origin = { principalId: replicationPrincipal, sourceIp: replicationPrincipal, requestId: randomBytes(8).toString('hex').toUpperCase() };
    await sink.publish([event], origin).catch((error: unknown) => {
      this.options.logger.warn({ bucket: task.bucket, key: task.key, event: name, error: error instanceof Error ? error.message : String(error) }, 'a replication event could not be queued');
    });
  }

  /**
   * The source of a task as it is now: a version with its bytes (decrypted and inflated), a delete
   * marker, a version that cannot be read without its client's key (SSE-C), or nothing (removed since).
   */
  private async readSource(task: ReplicationTask): Promise<{ kind: 'gone' } | { kind: 'marker'; modTimeMs: number } | { kind: 'unsupported'; info: ObjectInfo; reason: string } | { kind: 'version'; info: ObjectInfo; body: SourceBody }> {
    const customerKeyed: { info?: ObjectInfo } = {};
    try {
      const reader = await readObject(this.options.objects, this.options.kms?.(), task.bucket, task.key, {
        versionId: task.versionId,
        prepare: (info) => {
          if (info.encryption?.kind !== 'SSE-C') return undefined;
          customerKeyed.info = info;
          throw new SvcError('InvalidRequest', customerKeyReason);
        },
      });
      return { kind: 'version', info: reader.info, body: sourceBody(reader) };
    } catch (error) {
      if (customerKeyed.info) return { kind: 'unsupported', info: customerKeyed.info, reason: customerKeyReason };
      if (isSvcError(error) && error.details.deleteMarker === true && typeof error.details.modTimeMs === 'number') return { kind: 'marker', modTimeMs: error.details.modTimeMs };
      if (isSvcError(error, 'NoSuchKey') || isSvcError(error, 'NoSuchVersion')) return { kind: 'gone' };
      throw error;
    }
  }

  private async clientOf(target: ResolvedTarget): Promise<S3Client> {
    const fingerprint = `${target.endpoint}\n${target.region}\n${target.accessKey}\n${target.secretKey}`;
    const cached = this.clients.get(target.arn);
    if (cached?.fingerprint === fingerprint) return cached.client;
    cached?.client.destroy();
    const client = await targetClient(target);
    if (this.clients.get(target.arn)?.fingerprint === fingerprint) {
      // Another delivery made the same client meanwhile: keep that one.
      client.destroy();
      return this.clients.get(target.arn)!.client;
    }
    this.clients.set(target.arn, { fingerprint, client });
    return client;
  }

  /** Records a version's replication status (a REPLICA keeps its status; a version removed since is left alone). */
  private async mark(change: Pick<ReplicationChange, 'bucket' | 'key' | 'versionId'>, status: ReplicationStatus): Promise<void> {
    await this.options.objects
      .updateVersionMetadata(change.bucket, change.key, change.versionId, (version) => {
        const current = version.systemMetadata[replicationStatusKey];
        return { systemMetadata: current === 'REPLICA' ? version.systemMetadata : { ...version.systemMetadata, [replicationStatusKey]: status } };
      })
      .catch((error: unknown) => {
        if (!isSvcError(error, 'NoSuchKey') && !isSvcError(error, 'NoSuchVersion') && !isSvcError(error, 'MethodNotAllowed')) throw error;
      });
  }
}

/** Why an SSE-C version is not replicated: its key is the client's, never stored here. */
const customerKeyReason = 'an SSE-C version cannot be replicated: its key is the client\'s and is not kept by this deployment';

/**
 * An answer that a retry cannot change: a 4xx about the request itself. Refused credentials (403),
 * a missing bucket (404), timeouts (408) and throttling (429) may change, so they are retried.
 */
function refusedForGood(error: unknown): boolean {
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return status !== undefined && status >= 400 && status < 500 && ![403, 404, 408, 429].includes(status);
}

/** A failed attempt in words, with the target's error code and status when it answered. */
function failureOf(error: unknown): string {
  const answered = error as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = answered.$metadata?.httpStatusCode;
  return status === undefined ? (answered.message ?? String(error)) : `${answered.name ?? 'Error'} (${status}): ${answered.message ?? ''}`;
}

interface SourceBody {
  /** The whole body in memory up to the in-memory limit, a stream beyond. */
  payload(): Promise<Uint8Array | Readable>;
  /** Ends the read (releases its lock) when the body is not sent. */
  return(): Promise<void>;
}

function sourceBody(reader: { info: ObjectInfo; body: AsyncIterable<Uint8Array>; release(chunk: Uint8Array): void }): SourceBody {
  const copies = async function* (): AsyncGenerator<Uint8Array> {
    for await (const chunk of reader.body) {
      const copy = Buffer.from(chunk);
      reader.release(chunk);
      yield copy;
    }
  };
  return {
    payload: async () => {
      if (reader.info.sizeBytes > limits.replicationInMemoryMaxBytes) return Readable.from(copies());
      const parts: Uint8Array[] = [];
      for await (const part of copies()) parts.push(part);
      return Buffer.concat(parts);
    },
    return: async () => {
      await reader.body[Symbol.asyncIterator]().return?.();
    },
  };
}
