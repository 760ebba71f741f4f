/**
 * The deployment's remote tiers (docs/lifecycle.md, "Tiers"): S3 endpoints (another svc, or any
 * S3) that lifecycle transitions move versions' data to. The registry keeps them in `tiers.bin`
 * (tier-document.ts) and talks to each through the AWS SDK's S3 client:
 *
 * - add checks the tier before keeping it: its bucket must exist and take, read back and delete a
 *   probe object with the credentials given (named errors otherwise); rm is refused while a
 *   lifecycle rule or a transitioned version names the tier (the caller looks).
 * - as the object layer's TierGateway it reads transitioned versions back (ranges, streamed) and
 *   deletes the tier's object of a removed version through this node's durable deletion queue
 *   (deletion-queue.ts), retried until the tier takes it, across restarts.
 * - upload puts one version's stored bytes as one tier object (the lifecycle scanner's transition),
 *   in parts when it is larger than the multipart threshold (multipart-upload.ts).
 *
 * A tier added on one node is found by the others at their next look-up of an unknown name.
 */
import { hkdfSync, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { s3Sdk } from '../s3-sdk.js';
import { isSvcError, SvcError } from '../../errors/index.js';
import { limits } from '../../util/limits.js';
import type { TierGateway, TransitionInfo } from '../../object/index.js';
import type { StateStore } from '../state-store.js';
import { openText, sealText } from '../session-tokens.js';
import { checkTierFields, tierInfo, type TierDocument, type TierInfo, type TierRecord } from './tier-document.js';
import { uploadInParts } from './multipart-upload.js';
import { deletionOf, TierDeletionQueue, type TierDeletion, type TierDeletionQueueOptions, type TierDeletionStats } from './deletion-queue.js';

export interface TierInput {
  name: string;
  endpoint: string;
  bucket: string;
  prefix?: string;
  region?: string;
  accessKey: string;
  secretKey: string;
}

interface TierLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

export class TierRegistry implements TierGateway {
  private document: TierDocument = { generation: 0, tiers: [] };
  private readonly clients = new Map<string, S3Client>();
  private readonly sealKey: Buffer;
  private deletions: TierDeletionQueue | undefined;

  constructor(
    private readonly options: {
      store: StateStore<TierDocument>;
      root: { accessKey: string; secretKey: string };
      nowMs: () => number;
      logger: TierLogger;
      /** The cluster-wide lock that makes changes from different nodes take turns. */
      lock?: () => Promise<() => void>;
    },
  ) {
    this.sealKey = Buffer.from(hkdfSync('sha256', options.root.secretKey, options.root.accessKey, 'svc tier secrets v1', 32));
  }

  async load(): Promise<void> {
    const loaded = await this.options.store.load();
    if (loaded && loaded.generation >= this.document.generation) this.adopt(loaded);
  }

  list(): TierInfo[] {
    return this.document.tiers.map(tierInfo);
  }

  async info(name: string): Promise<TierInfo> {
    return tierInfo(await this.record(name.toUpperCase()));
  }

  /** Is there a tier of this name (after a reload, when this node does not know it)? */
  async has(name: string): Promise<boolean> {
    return (await this.record(name).catch(() => undefined)) !== undefined;
  }

  /** Checks the tier (reachable, bucket there, credentials able to write, read and delete) and keeps it. */
  async add(input: TierInput): Promise<TierInfo> {
    const name = input.name.toUpperCase();
    const fields = { name, endpoint: input.endpoint.replace(/\/+$/, '') + '/', bucket: input.bucket, prefix: input.prefix ?? '', region: input.region ?? 'us-east-1', accessKey: input.accessKey, secretKey: input.secretKey };
    checkTierFields(fields);
    fields.endpoint = fields.endpoint.slice(0, -1);
    const { secretKey, ...kept } = fields;
    const record: TierRecord = { ...kept, sealedSecret: sealText(this.sealKey, secretKey), createdAt: new Date(this.options.nowMs()).toISOString() };
    return this.change(async (document) => {
      if (document.tiers.some((tier) => tier.name === name)) throw new SvcError('TierAlreadyExists', undefined, { tier: name });
      if (document.tiers.length >= limits.maxTiers) throw new SvcError('InvalidArgument', `a deployment has ${limits.maxTiers} tiers at most`);
      await probe(await clientFor(record, secretKey), record);
      this.options.logger.info({ tier: name, endpoint: record.endpoint, bucket: record.bucket }, 'tier added');
      return { document: { generation: document.generation + 1, tiers: [...document.tiers, record] }, answer: tierInfo(record) };
    });
  }

  /** Removes a tier; `usedBy` names what still uses it (TierInUse), or undefined. */
  async remove(name: string, usedBy: (name: string) => Promise<string | undefined>): Promise<void> {
    const upper = name.toUpperCase();
    await this.change(async (document) => {
      if (!document.tiers.some((tier) => tier.name === upper)) throw new SvcError('TierNotFound', undefined, { tier: upper });
      const user = await usedBy(upper);
      if (user !== undefined) throw new SvcError('TierInUse', `tier ${upper} is still used: ${user}`, { tier: upper });
      return { document: { generation: document.generation + 1, tiers: document.tiers.filter((tier) => tier.name !== upper) }, answer: undefined };
    });
    this.clients.get(upper)?.destroy();
    this.clients.delete(upper);
  }

  /**
   * Puts one version's stored bytes on the tier as `remoteKey` (under the tier's prefix): one PUT,
   * or a multipart upload when the version is larger than `multipartThresholdBytes`.
   */
  async upload(tier: string, remoteKey: string, body: AsyncIterable<Uint8Array>, sizeBytes: number, multipartThresholdBytes: number = limits.maxPutObjectSizeBytes): Promise<{ remoteVersionId?: string }> {
    const { client, record } = await this.clientOf(tier);
    if (sizeBytes > multipartThresholdBytes) return uploadInParts(client, { bucket: record.bucket, key: remoteKey }, body, sizeBytes, (send) => call(record, send));
    const { PutObjectCommand } = await s3Sdk();
    const answer = await call(record, () => client.send(new PutObjectCommand({ Bucket: record.bucket, Key: remoteKey, Body: Readable.from(body), ContentLength: sizeBytes })));
    return answer.VersionId ? { remoteVersionId: answer.VersionId } : {};
  }

  /** The tier object's key for a version: the tier's prefix and a name drawn from the version's identity (a retried transition writes the same one). */
  async remoteKeyFor(tier: string, versionDigest: string): Promise<string> {
    const { record } = await this.clientOf(tier);
    return `${record.prefix}${versionDigest.slice(0, 2)}/${versionDigest.slice(2, 4)}/${versionDigest}`;
  }

  async open(transition: TransitionInfo, range: { offset: number; length: number }): Promise<AsyncIterable<Uint8Array>> {
    const { client, record } = await this.clientOf(transition.tier);
    const { GetObjectCommand } = await s3Sdk();
    const answer = await call(record, () =>
      client.send(new GetObjectCommand({ Bucket: record.bucket, Key: transition.remoteKey, ...(transition.remoteVersionId ? { VersionId: transition.remoteVersionId } : {}), Range: `bytes=${range.offset}-${range.offset + range.length - 1}` })),
    );
    if (!answer.Body) throw new SvcError('TierUnreachable', `tier ${record.name} answered without a body`, { tier: record.name });
    return answer.Body as unknown as AsyncIterable<Uint8Array>;
  }

  /**
   * The tier object of a version deleted, overwritten or expired: written to the tier's deletion
   * queue on this node (durable, retried with backoff until the tier takes it).
   */
  release(transition: TransitionInfo): void {
    const deletion = deletionOf(transition);
    const queued = this.deletions ? this.deletions.enqueue(deletion) : this.deleteObject(deletion);
    void queued.catch((error: unknown) => {
      this.options.logger.warn({ tier: deletion.tier, remoteKey: deletion.remoteKey, error: String(error) }, 'a tier object could not be queued for deletion: it is left on its tier');
    });
  }

  /** Opens this node's deletion queues (what they hold from before a restart is deleted now). */
  async openDeletions(options: Omit<TierDeletionQueueOptions, 'remove' | 'logger'>): Promise<void> {
    this.deletions = await TierDeletionQueue.open({ ...options, remove: (deletion, signal) => this.deleteObject(deletion, signal), logger: this.options.logger });
  }

  /** This node's deletion queue of one tier (zeros when it has none). */
  deletionStats(tier: string): TierDeletionStats {
    return this.deletions?.statsOf(tier.toUpperCase()) ?? { tier: tier.toUpperCase(), pending: 0, deleted: 0, failed: 0, dropped: 0 };
  }

  /** Every deletion queue on this node (metrics). */
  allDeletionStats(): TierDeletionStats[] {
    return this.deletions?.stats() ?? [];
  }

  async close(): Promise<void> {
    await this.deletions?.close();
    for (const client of this.clients.values()) client.destroy();
    this.clients.clear();
  }

  /** Deletes one object on its tier (TierObjectNotFound when it is gone already, TierNotFound when the tier is). */
  async deleteObject(deletion: TierDeletion, signal?: AbortSignal): Promise<void> {
    const { client, record } = await this.clientOf(deletion.tier);
    const { DeleteObjectCommand } = await s3Sdk();
    const command = new DeleteObjectCommand({ Bucket: record.bucket, Key: deletion.remoteKey, ...(deletion.remoteVersionId ? { VersionId: deletion.remoteVersionId } : {}) });
    await call(record, () => client.send(command, signal ? { abortSignal: signal } : {}));
  }

  private async clientOf(name: string): Promise<{ client: S3Client; record: TierRecord }> {
    const record = await this.record(name);
    let client = this.clients.get(name);
    if (!client) {
      const secret = openText(this.sealKey, record.sealedSecret);
      if (secret === undefined) throw new SvcError('TierUnreachable', `the secret of tier ${name} does not unseal with this deployment's root credentials`, { tier: name });
      const made = await clientFor(record, secret);
      // Another call may have made one meanwhile: keep the first.
      client = this.clients.get(name);
      if (client) made.destroy();
      else this.clients.set(name, (client = made));
    }
    return { client, record };
  }

  private async record(name: string): Promise<TierRecord> {
    let record = this.document.tiers.find((tier) => tier.name === name);
    if (!record) {
      await this.load();
      record = this.document.tiers.find((tier) => tier.name === name);
    }
    if (!record) throw new SvcError('TierNotFound', undefined, { tier: name });
    return record;
  }

  private adopt(document: TierDocument): void {
    for (const [name, client] of this.clients) {
      const before = this.document.tiers.find((tier) => tier.name === name);
      const after = document.tiers.find((tier) => tier.name === name);
      if (!after || after.sealedSecret !== before?.sealedSecret || after.endpoint !== before.endpoint) {
        client.destroy();
        this.clients.delete(name);
      }
    }
    this.document = document;
  }

  private async change<T>(step: (document: TierDocument) => Promise<{ document: TierDocument; answer: T }>): Promise<T> {
    const release = (await this.options.lock?.()) ?? (() => undefined);
    try {
      await this.load();
      const { document, answer } = await step(this.document);
      await this.options.store.save(document);
      this.adopt(document);
      return answer;
    } finally {
      release();
    }
  }
}

async function clientFor(record: TierRecord, secretKey: string): Promise<S3Client> {
  const { S3Client } = await s3Sdk();
  return new S3Client({
    endpoint: record.endpoint,
    region: record.region,
    forcePathStyle: true,
    credentials: { accessKeyId: record.accessKey, secretAccessKey: secretKey },
    maxAttempts: 2,
    requestHandler: { connectionTimeout: limits.tierConnectTimeoutMs, requestTimeout: limits.tierRequestTimeoutMs },
  });
}

/** The tier must hold its bucket and let these credentials write, read and delete in it. */
async function probe(client: S3Client, record: TierRecord): Promise<void> {
  const probeKey = `${record.prefix}.svc-tier-probe-${randomUUID()}`;
  const { DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, PutObjectCommand } = await s3Sdk();
  try {
    await call(record, () => client.send(new HeadBucketCommand({ Bucket: record.bucket })));
    await call(record, () => client.send(new PutObjectCommand({ Bucket: record.bucket, Key: probeKey, Body: 'svc tier probe' })));
    const read = await call(record, () => client.send(new GetObjectCommand({ Bucket: record.bucket, Key: probeKey })));
    await read.Body?.transformToByteArray();
    await call(record, () => client.send(new DeleteObjectCommand({ Bucket: record.bucket, Key: probeKey })));
  } finally {
    client.destroy();
  }
}

/** One request to a tier, its failure named: unreachable, credentials refused, bucket or object missing. */
async function call<T>(record: TierRecord, request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    throw tierError(record, error);
  }
}

function tierError(record: TierRecord, error: unknown): SvcError {
  if (isSvcError(error)) return error;
  const failure = error as { name?: string; code?: string; $metadata?: { httpStatusCode?: number }; message?: string };
  const status = failure.$metadata?.httpStatusCode;
  const details = { tier: record.name, endpoint: record.endpoint, bucket: record.bucket, cause: failure.name ?? failure.code ?? String(error) };
  if (['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied', 'Forbidden'].includes(failure.name ?? '') || status === 403) {
    return new SvcError('TierInvalidCredentials', `tier ${record.name} refused the credentials: ${failure.name ?? status}`, details);
  }
  if (failure.name === 'NoSuchBucket' || (failure.name === 'NotFound' && status === 404)) return new SvcError('TierBucketNotFound', `tier ${record.name} has no bucket ${record.bucket}`, details);
  if (failure.name === 'NoSuchKey') return new SvcError('TierObjectNotFound', `tier ${record.name} lacks the object of this version`, details);
  return new SvcError('TierUnreachable', `tier ${record.name} (${record.endpoint}) cannot be reached: ${failure.message ?? failure.name ?? String(error)}`, details);
}
