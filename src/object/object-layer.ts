/**
 * The object layer over every pool: buckets exist on every set of every pool; an object lives
 * in exactly one pool (new objects go to the pool with the most free space, overwrites stay
 * where the object is), and within a pool in the set its key hashes to.
 */
import { isSvcError, SvcError } from '../errors/index.js';
import { limits } from '../util/limits.js';
import { mergeSorted, compareKeys } from '../util/merge.js';
import { placeKey, seedFromId, unitDraw } from '../util/hashing.js';
import type { Clock } from '../util/clock.js';
import { randomUUID } from 'node:crypto';
import type { ErasureSet } from './erasure-set.js';
import type { SetConfig } from './set-context.js';
import { abortUpload, completeUpload, createUpload, listParts, listUploads, readUpload, uploadPart, type PartOptions, type PartRecord, type UploadedPart, type UploadRecord } from './multipart.js';
import type { CompletionClaims, RequestedPart } from './multipart-checksums.js';
import type { ListEntry } from './list-objects.js';
import type { ObjectReader } from './get-object.js';
import { checkBucketName, checkObjectKey } from './paths.js';
import { objectResource } from './locks.js';
import { checkWritePrecondition, type WritePrecondition } from './write-preconditions.js';
import type { VersionUpdate } from './update-metadata.js';
import { deleteBucketRecord, listBucketRecords, readBucketRecord, writeBucketRecord, type BucketRecord, type CorsRule, type PublicAccessBlock, type LifecycleRule, type NotificationRule, type BucketLogging, type BucketEncryption, type ReplicationConfiguration } from './bucket-metadata.js';
import type { Acl, ObjectOwnership } from '../iam/acl.js';
import type { BucketVersioning, DeleteObjectResult, GetObjectOptions, MultipartChecksum, ObjectInfo, PutObjectOptions, ReceivedBody } from './types.js';
import type { DigestAlgorithm } from './coding/digests.js';
import { withBucketLock, type BucketObjectLock } from './object-lock.js';
import type { CompressionInfo, EncryptionKeyRecord } from '../format/xl-meta-types.js';
import type { RestoredCopyRecorder, TierGateway } from './tier-gateway.js';
import type { ExpectedVersion, RestoredCopyEnd } from './transitioned.js';
import type { TransitionInfo } from '../format/xl-meta-types.js';

export interface PoolSets {
  index: number;
  sets: ErasureSet[];
}

export interface ObjectLayerOptions {
  deploymentId: string;
  pools: PoolSets[];
  clock: Clock;
  /** Pools that take no new objects (decommissioning). */
  isPoolSuspended?: (poolIndex: number) => boolean;
  /**
   * A number in [0, 1) for the free-space-weighted pool choice. Without it, each key draws its
   * own from its name and the deployment id (see drawFor), so a replayed workload on a
   * deployment of the same id places its keys the same way.
   */
  random?: () => number;
}

export type PutOptions = Omit<PutObjectOptions, 'versioning'>;

/** One pool's answer for a key: its version, or the delete marker that is its newest version. */
interface PoolAnswer {
  poolIndex: number;
  modTimeMs: number;
  info?: ObjectInfo;
  marker?: SvcError;
}

export class ObjectLayer {
  private readonly seed: bigint;
  private readonly bucketCache = new Map<string, BucketRecord>();
  private suspended = new Set<number>();
  private bucketsChanged: (bucket: string) => Promise<void> = async () => undefined;

  constructor(private readonly options: ObjectLayerOptions) {
    this.seed = seedFromId(options.deploymentId);
  }

  get pools(): PoolSets[] {
    return this.options.pools;
  }

  /** Awaited after this node created, deleted or changed a bucket (peers drop their cached records). */
  onBucketsChanged(listener: (bucket: string) => Promise<void>): void {
    this.bucketsChanged = listener;
  }

  /** Pools that take no new objects or uploads (a decommission source). */
  setSuspendedPools(pools: Iterable<number>): void {
    this.suspended = new Set(pools);
  }

  isPoolSuspended(poolIndex: number): boolean {
    return this.suspended.has(poolIndex) || (this.options.isPoolSuspended?.(poolIndex) ?? false);
  }

  /** Capacity of a pool's online drives, summed. */
  async poolUsage(poolIndex: number): Promise<{ totalBytes: number; freeBytes: number; usedBytes: number }> {
    const pool = this.options.pools.find((candidate) => candidate.index === poolIndex);
    if (!pool) throw new SvcError('InternalError', `no pool ${poolIndex}`);
    return poolUsage(pool);
  }

  /** Takes the object's namespace lock (data movement holds it across read, write and cleanup). */
  lockObject(bucket: string, key: string, mode: 'read' | 'write' = 'write'): Promise<() => void> {
    return this.allSets()[0]!.config.locker.acquire(objectResource(bucket, key), mode);
  }

  /** Every key of one pool with all its versions (newest first), in key order. */
  async *listPool(poolIndex: number, bucket: string, options: { prefix?: string; startAfter?: string } = {}): AsyncGenerator<{ key: string; versions: ObjectInfo[] }> {
    const pool = this.options.pools.find((candidate) => candidate.index === poolIndex);
    if (!pool) throw new SvcError('InternalError', `no pool ${poolIndex}`);
    const walk = { prefix: options.prefix ?? '', ...(options.startAfter !== undefined ? { startAfter: options.startAfter } : {}) };
    for await (const [key, group] of mergeSorted(pool.sets.map((set) => set.list(bucket, walk)), (entry) => entry.key)) {
      const versions = group.flatMap((entry) => (entry.kind === 'object' ? entry.versions : []));
      if (versions.length === 0) continue;
      versions.sort((a, b) => b.modTimeMs - a.modTimeMs || compareKeys(b.versionId, a.versionId));
      yield { key, versions };
    }
  }

  allSets(): ErasureSet[] {
    return this.options.pools.flatMap((pool) => pool.sets);
  }

  setFor(poolIndex: number, key: string): ErasureSet {
    const pool = this.options.pools.find((candidate) => candidate.index === poolIndex);
    if (!pool) throw new SvcError('InternalError', `no pool ${poolIndex}`);
    return pool.sets[placeKey(key, this.seed, pool.sets.length)]!;
  }

  // --- buckets -------------------------------------------------------------------------

  /** Creates a bucket; with `objectLock` it has object lock, and versioning on for good. */
  async makeBucket(bucket: string, options: { objectLock?: boolean; ownership?: ObjectOwnership; acl?: Acl } = {}): Promise<void> {
    checkBucketName(bucket);
    if (await this.bucketRecord(bucket)) throw new SvcError('BucketAlreadyOwnedByYou', undefined, { bucket });
    const now = this.options.clock.nowMs();
    await Promise.all(this.allSets().map((set) => set.makeBucketDir(bucket)));
    const base: BucketRecord = options.objectLock
      ? { version: 1, name: bucket, createdMs: now, updatedMs: now, versioning: 'enabled', objectLock: { enabled: true } }
      : { version: 1, name: bucket, createdMs: now, updatedMs: now, versioning: 'unversioned' };
    // New buckets have ACLs disabled unless asked otherwise (S3's default since April 2023).
    const record: BucketRecord = { ...base, ownership: options.ownership ?? 'BucketOwnerEnforced', ...(options.acl ? { acl: options.acl } : {}) };
    await writeBucketRecord(this.allSets(), record);
    this.bucketCache.set(bucket, record);
    await this.bucketsChanged(bucket);
  }

  async deleteBucket(bucket: string): Promise<void> {
    await this.requireBucket(bucket);
    for (const set of this.allSets()) {
      if (!(await set.isBucketEmpty(bucket))) throw new SvcError('BucketNotEmpty', undefined, { bucket });
    }
    await Promise.all(this.allSets().map((set) => set.deleteBucketDir(bucket, { force: true })));
    await deleteBucketRecord(this.allSets(), bucket);
    this.bucketCache.delete(bucket);
    await this.bucketsChanged(bucket);
  }

  async requireBucket(bucket: string): Promise<BucketRecord> {
    const record = await this.bucketRecord(bucket);
    if (!record) throw new SvcError('NoSuchBucket', undefined, { bucket });
    return record;
  }

  async bucketRecord(bucket: string): Promise<BucketRecord | undefined> {
    const cached = this.bucketCache.get(bucket);
    if (cached) return cached;
    const record = await readBucketRecord(this.allSets(), bucket);
    if (record) this.bucketCache.set(bucket, record);
    return record;
  }

  async listBuckets(): Promise<BucketRecord[]> {
    const first = this.options.pools[0]?.sets[0];
    return first ? listBucketRecords(first) : [];
  }

  async setBucketVersioning(bucket: string, status: 'enabled' | 'suspended'): Promise<void> {
    await this.changeBucketRecord(bucket, (record) => {
      if (record.objectLock && status !== 'enabled') throw new SvcError('InvalidBucketState', 'An Object Lock configuration is present on this bucket, so the versioning state cannot be changed.', { bucket });
      if (record.replication && status !== 'enabled') throw new SvcError('InvalidBucketState', 'A replication configuration is present on this bucket, so the versioning state cannot be changed.', { bucket });
      return { ...record, versioning: status };
    });
  }

  /**
   * Sets the bucket's object lock configuration (its default retention). Object lock can be
   * turned on for a bucket whose versioning is enabled, and never off.
   */
  async setBucketObjectLock(bucket: string, lock: BucketObjectLock): Promise<void> {
    await this.changeBucketRecord(bucket, (record) => {
      if (!record.objectLock && record.versioning !== 'enabled') throw new SvcError('InvalidBucketState', 'Versioning must be \'Enabled\' on the bucket to apply a Object Lock configuration', { bucket });
      return { ...record, objectLock: lock };
    });
  }

  /** Sets (or, with undefined, removes) the bucket's CORS rules. */
  async setBucketCors(bucket: string, rules: CorsRule[] | undefined): Promise<void> {
    await this.changeBucketRecord(bucket, ({ cors: _old, ...record }) => (rules ? { ...record, cors: rules } : record));
  }

  /** Sets (or, with undefined, removes) the bucket's policy (JSON text, validated by the caller). */
  async setBucketPolicy(bucket: string, policy: string | undefined): Promise<void> {
    await this.changeBucketRecord(bucket, ({ policy: _old, ...record }) => (policy === undefined ? record : { ...record, policy }));
  }

  /** Sets (or, with undefined, removes) the bucket's tags (validated by the caller). */
  /** Sets (or, with undefined, removes) the bucket's default encryption (validated by the caller). */
  async setBucketEncryption(bucket: string, encryption: BucketEncryption | undefined): Promise<void> {
    await this.changeBucketRecord(bucket, ({ encryption: _old, ...record }) => (encryption === undefined ? record : { ...record, encryption }));
  }

  async setBucketTags(bucket: string, tags: [string, string][] | undefined): Promise<void> {
    await this.changeBucketRecord(bucket, ({ tags: _old, ...record }) => (tags === undefined ? record : { ...record, tags }));
  }

  /** Sets (or, with undefined, removes) the bucket's public access block. */
  async setBucketPublicAccessBlock(bucket: string, block: PublicAccessBlock | undefined): Promise<void> {
    await this.changeBucketRecord(bucket, ({ publicAccessBlock: _old, ...record }) => (block === undefined ? record : { ...record, publicAccessBlock: block }));
  }

  /** Sets (or, with undefined, removes) the bucket's notification rules (validated by the caller). */
  async setBucketNotification(bucket: string, rules: NotificationRule[] | undefined): Promise<void> {
    await this.changeBucketRecord(bucket, ({ notification: _old, ...record }) => (rules === undefined ? record : { ...record, notification: rules }));
  }

  /** Sets (or, with undefined, removes) the bucket's Object Ownership (checked by the caller). */
  async setBucketOwnership(bucket: string, ownership: ObjectOwnership | undefined): Promise<void> {
    await this.changeBucketRecord(bucket, ({ ownership: _old, ...record }) => (ownership === undefined ? record : { ...record, ownership }));
  }

  /** Sets the bucket's ACL (validated by the caller); undefined: back to the owner alone. */
  async setBucketAcl(bucket: string, acl: Acl | undefined): Promise<void> {
    await this.changeBucketRecord(bucket, ({ acl: _old, ...record }) => (acl === undefined ? record : { ...record, acl }));
  }

  /** Sets (or, with undefined, removes) the bucket's server access logging. */
  async setBucketLogging(bucket: string, logging: BucketLogging | undefined): Promise<void> {
    await this.changeBucketRecord(bucket, ({ logging: _old, ...record }) => (logging === undefined ? record : { ...record, logging }));
  }

  /** Sets (or, with undefined, removes) the bucket's lifecycle rules (validated by the caller). */
  async setBucketLifecycle(bucket: string, rules: LifecycleRule[] | undefined): Promise<void> {
    await this.changeBucketRecord(bucket, ({ lifecycle: _old, ...record }) => (rules === undefined ? record : { ...record, lifecycle: rules }));
  }

  /** Sets (or, with undefined, removes) the bucket's replication configuration (validated by the caller); versioning must stay enabled meanwhile. */
  async setBucketReplication(bucket: string, replication: ReplicationConfiguration | undefined): Promise<void> {
    await this.changeBucketRecord(bucket, ({ replication: _old, ...record }) => {
      if (replication !== undefined && record.versioning !== 'enabled') throw new SvcError('InvalidRequest', 'Versioning must be \'Enabled\' on the bucket to apply a replication configuration.', { bucket });
      return replication === undefined ? record : { ...record, replication };
    });
  }

  private async changeBucketRecord(bucket: string, change: (record: BucketRecord) => BucketRecord): Promise<void> {
    const record = await this.requireBucket(bucket);
    const next: BucketRecord = { ...change(record), updatedMs: Math.max(this.options.clock.nowMs(), record.updatedMs + 1) };
    await writeBucketRecord(this.allSets(), next);
    this.bucketCache.set(bucket, next);
    await this.bucketsChanged(bucket);
  }

  /**
   * Makes every bucket exist on every set (after a pool was appended, its sets lack the
   * buckets of the older pools). Returns the names of the buckets that were repaired.
   */
  async syncBuckets(): Promise<string[]> {
    const repaired: string[] = [];
    const known = new Map<string, BucketRecord>();
    for (const set of this.allSets()) for (const record of await listBucketRecords(set)) if (!known.has(record.name) || known.get(record.name)!.updatedMs < record.updatedMs) known.set(record.name, record);
    for (const record of known.values()) {
      const missing: ErasureSet[] = [];
      for (const set of this.allSets()) if (!(await set.bucketExists(record.name)) || (await readBucketRecord([set], record.name).catch(() => undefined)) === undefined) missing.push(set);
      if (missing.length === 0) continue;
      await Promise.all(missing.map((set) => set.makeBucketDir(record.name)));
      await writeBucketRecord(missing, record);
      repaired.push(record.name);
    }
    return repaired;
  }

  /** Writes a bucket's record again on the given sets' drives (heal of a replaced drive). */
  async rewriteBucketRecord(record: BucketRecord, sets: ErasureSet[]): Promise<void> {
    await writeBucketRecord(sets, record);
  }

  /** Forgets cached bucket records (another node changed them). */
  invalidateBuckets(): void {
    this.bucketCache.clear();
  }

  // --- objects -------------------------------------------------------------------------

  // Every operation on a key checks it first (paths.ts), before a drive is touched: a name that
  // cannot be a key is the client's 400, never a drive error or a quorum failure.

  async putObject(bucket: string, key: string, body: AsyncIterable<Uint8Array>, options: PutOptions): Promise<ObjectInfo> {
    checkObjectKey(key);
    const record = await this.requireBucket(bucket);
    // A condition that already fails is answered before the body is read; it is checked again
    // under the write lock before the new version is published.
    if (options.precondition) options.precondition(await this.currentVersion(bucket, key));
    const poolIndex = (await this.poolHolding(bucket, key)) ?? (await this.poolForNewObject(bucket, key));
    this.refuseSuspended(poolIndex, bucket, key);
    const systemMetadata = withBucketLock(record.objectLock, options.systemMetadata ?? {}, this.options.clock.nowMs());
    return this.setFor(poolIndex, key).putObject(bucket, key, body, { ...options, systemMetadata, versioning: record.versioning });
  }

  async headObject(bucket: string, key: string, versionId?: string): Promise<ObjectInfo> {
    checkObjectKey(key);
    await this.requireBucket(bucket);
    const { info } = await this.locate(bucket, key, versionId);
    return info;
  }

  /** The object's current version; undefined when there is none or it is a delete marker. */
  private async currentVersion(bucket: string, key: string): Promise<ObjectInfo | undefined> {
    try {
      return await this.headObject(bucket, key);
    } catch (error) {
      if (isSvcError(error, 'NoSuchKey')) return undefined;
      throw error;
    }
  }

  async getObject(bucket: string, key: string, options: GetObjectOptions = {}): Promise<ObjectReader> {
    checkObjectKey(key);
    await this.requireBucket(bucket);
    if (this.options.pools.length === 1) return this.setFor(this.options.pools[0]!.index, key).getObject(bucket, key, options);
    const { poolIndex } = await this.locate(bucket, key, options.versionId);
    return this.setFor(poolIndex, key).getObject(bucket, key, options);
  }

  /** Remote tiers for every set: reads of transitioned versions, and their tier objects freed on delete. */
  setTierGateway(gateway: TierGateway): void {
    for (const set of this.allSets()) set.config.tiers = gateway;
  }

  /**
   * Records that a version's stored bytes are now on a tier (they were uploaded by the caller,
   * which holds the object's write lock); its local shards are freed. InvalidObjectState when the
   * version changed meanwhile.
   */
  async recordTransition(bucket: string, key: string, expected: ExpectedVersion, transition: TransitionInfo): Promise<ObjectInfo> {
    const { poolIndex } = await this.locate(bucket, key, expected.versionId);
    return this.setFor(poolIndex, key).recordTransition(bucket, key, expected, transition);
  }

  /**
   * RestoreObject: a copy of a transitioned version's bytes on the drives until `expiryMs`, made
   * under the object's write lock. ObjectAlreadyInActiveTierError for a version never transitioned.
   */
  async restoreObject(bucket: string, key: string, versionId: string | undefined, expiryMs: number): Promise<{ restoredNow: boolean; info: ObjectInfo }> {
    checkObjectKey(key);
    await this.requireBucket(bucket);
    const release = await this.lockObject(bucket, key, 'write');
    try {
      const { poolIndex } = await this.locate(bucket, key, versionId);
      return await this.setFor(poolIndex, key).restoreCopy(bucket, key, versionId, expiryMs);
    } finally {
      release();
    }
  }

  /** Ends a restored copy whose expiry is at or before `nowMs` (the lifecycle scanner, under the object's write lock). */
  async dropRestoredCopy(bucket: string, key: string, versionId: string, nowMs: number): Promise<RestoredCopyEnd> {
    const { poolIndex } = await this.locate(bucket, key, versionId);
    return this.setFor(poolIndex, key).dropRestoredCopy(bucket, key, versionId, nowMs);
  }

  /** Where each set notes its restored copies (the restored-copy index). */
  setRestoredCopyRecorders(recorderFor: (poolIndex: number, setIndex: number) => RestoredCopyRecorder): void {
    for (const set of this.allSets()) set.config.restores = recorderFor(set.config.poolIndex, set.config.setIndex);
  }

  /** Notes a restored copy in the index of the set holding the version (a repair walk found it). */
  async noteRestoredCopy(bucket: string, key: string, versionId: string, expiryMs: number): Promise<void> {
    const { poolIndex } = await this.locate(bucket, key, versionId);
    await this.setFor(poolIndex, key).config.restores?.record({ bucket, key, versionId, expiryMs });
  }

  /** Changes the stored metadata (tags) of one version in place, data untouched. */
  async updateVersionMetadata(bucket: string, key: string, versionId: string | undefined, update: VersionUpdate): Promise<ObjectInfo> {
    await this.requireBucket(bucket);
    const { poolIndex } = await this.locate(bucket, key, versionId);
    return this.setFor(poolIndex, key).updateVersionMetadata(bucket, key, versionId, update);
  }

  /**
   * Removes a version (by id) or adds a delete marker. A version that object lock protects is
   * refused (AccessDenied); `bypassGovernance` lets GOVERNANCE retention give way. With
   * `lockHeld`, the caller already holds the object's write lock (lockObject), as the lifecycle
   * scanner does to re-check before it deletes.
   *
   * A delete that removes (an unversioned key, or one version by id) removes it from every pool
   * holding it, older copies first: a move cut short after its copy and before its cleanup (a
   * crash, a power cut) leaves the key in two pools, and the copy left behind must not read back
   * once the newer one is gone. A delete marker goes to the pool of the newest version, which
   * decides reads in every pool.
   */
  async deleteObject(bucket: string, key: string, versionId?: string, deleteOptions: { bypassGovernance?: boolean; lockHeld?: boolean; precondition?: WritePrecondition; marker?: { versionId: string; modTimeMs: number } } = {}): Promise<DeleteObjectResult> {
    checkObjectKey(key);
    const record = await this.requireBucket(bucket);
    if (deleteOptions.precondition) return this.deleteConditionally(bucket, key, versionId, { ...deleteOptions, precondition: deleteOptions.precondition });
    const options = {
      versioning: record.versioning,
      // A delete marker with a given id and time (a replica of another deployment's marker).
      ...(deleteOptions.marker && versionId === undefined ? { marker: deleteOptions.marker } : {}),
      ...(versionId !== undefined ? { versionId } : {}),
      ...(deleteOptions.bypassGovernance ? { bypassGovernance: true } : {}),
      ...(deleteOptions.lockHeld === true ? { lockHeld: true } : {}),
    };
    if (record.versioning === 'unversioned' || versionId !== undefined) {
      const holding = await this.poolsHolding(bucket, key, versionId);
      let result: DeleteObjectResult = { versionId: versionId ?? 'null', deleteMarker: false };
      for (const poolIndex of holding.reverse()) result = await this.setFor(poolIndex, key).deleteObject(bucket, key, options);
      return result;
    }
    const poolIndex = (await this.poolHolding(bucket, key)) ?? (await this.poolForNewObject(bucket, key));
    return this.setFor(poolIndex, key).deleteObject(bucket, key, options);
  }

  /**
   * A delete on a condition about the object's current version, checked under the write lock of
   * the set holding that version (absent everywhere: checked against no object). A version in
   * another pool than the current one is removed after the check, under its own set's lock.
   */
  private async deleteConditionally(bucket: string, key: string, versionId: string | undefined, deleteOptions: { bypassGovernance?: boolean; precondition: WritePrecondition }): Promise<DeleteObjectResult> {
    const current = await this.poolHolding(bucket, key);
    if (current === undefined) deleteOptions.precondition(undefined);
    const record = await this.requireBucket(bucket);
    const base = { versioning: record.versioning, ...(versionId !== undefined ? { versionId } : {}), ...(deleteOptions.bypassGovernance ? { bypassGovernance: true } : {}) };
    const targets = record.versioning === 'unversioned' || versionId !== undefined ? await this.poolsHolding(bucket, key, versionId) : [current ?? (await this.poolForNewObject(bucket, key))];
    if (current !== undefined && !targets.includes(current)) await checkWritePrecondition(this.setFor(current, key).config, bucket, key, deleteOptions.precondition);
    let result: DeleteObjectResult = { versionId: versionId ?? 'null', deleteMarker: false };
    for (const poolIndex of targets.reverse()) {
      result = await this.setFor(poolIndex, key).deleteObject(bucket, key, poolIndex === current ? { ...base, precondition: deleteOptions.precondition } : base);
    }
    return result;
  }

  /**
   * Every key (with all its versions) or common prefix across all pools and sets, in key order.
   * With `livePrefixesOnly`, a common prefix is listed only when some key below it has a current
   * version that is not a delete marker (what ListObjects shows); in a bucket that was never
   * versioned every key is live, so nothing is checked there.
   */
  async *list(bucket: string, options: { prefix: string; startAfter?: string; delimiter?: string; livePrefixesOnly?: boolean }): AsyncGenerator<ListEntry> {
    const record = await this.requireBucket(bucket);
    const { livePrefixesOnly, ...walk } = options;
    const checkPrefixes = livePrefixesOnly === true && record.versioning !== 'unversioned';
    const sources = this.allSets().map((set) => set.list(bucket, walk));
    for await (const [key, group] of mergeSorted(sources, (entry) => entry.key)) {
      if (group.some((entry) => entry.kind === 'prefix')) {
        if (!checkPrefixes || (await this.hasLiveKey(bucket, key))) yield { kind: 'prefix', key };
        continue;
      }
      const versions = group.flatMap((entry) => (entry.kind === 'object' ? entry.versions : []));
      versions.sort((a, b) => b.modTimeMs - a.modTimeMs || compareKeys(b.versionId, a.versionId));
      versions.forEach((version, index) => (version.isLatest = index === 0));
      yield { kind: 'object', key, versions };
    }
  }

  /**
   * Does any key below `prefix` have a current version that is not a delete marker? Walks the
   * prefix in key order and stops at the first such key, so the cost is the run of deleted keys
   * before it (all of them when there is none).
   */
  private async hasLiveKey(bucket: string, prefix: string): Promise<boolean> {
    for await (const entry of this.list(bucket, { prefix })) {
      if (entry.kind === 'object' && entry.versions[0]?.deleteMarker !== true) return true;
    }
    return false;
  }

  bucketVersioning(record: BucketRecord): BucketVersioning {
    return record.versioning;
  }

  // --- multipart ------------------------------------------------------------------------

  async createMultipartUpload(bucket: string, key: string, options: Omit<PutOptions, 'sizeBytes' | 'beforeCommit' | 'modTimeMs' | 'versionId' | 'encryption' | 'compression'> & { checksum?: MultipartChecksum; encryption?: EncryptionKeyRecord; compression?: CompressionInfo['algorithm'] }): Promise<string> {
    checkObjectKey(key);
    const bucketRecord = await this.requireBucket(bucket);
    // Lock fields on a bucket without object lock are refused now; the default retention is applied at completion.
    withBucketLock(bucketRecord.objectLock, options.systemMetadata ?? {}, this.options.clock.nowMs());
    const poolIndex = (await this.poolHolding(bucket, key)) ?? (await this.poolForNewObject(bucket, key));
    this.refuseSuspended(poolIndex, bucket, key);
    const uploadId = Buffer.from(`${poolIndex}.${randomUUID()}`).toString('base64url');
    await createUpload(this.setFor(poolIndex, key).config, bucket, key, uploadId, options);
    return uploadId;
  }

  async uploadPart(bucket: string, key: string, uploadId: string, partNumber: number, body: AsyncIterable<Uint8Array>, options: PartOptions): Promise<UploadedPart> {
    const { config, record } = await this.upload(bucket, key, uploadId);
    return uploadPart(config, record, partNumber, body, options);
  }

  async completeMultipartUpload(bucket: string, key: string, uploadId: string, parts: RequestedPart[], precondition?: WritePrecondition, stated?: CompletionClaims): Promise<ObjectInfo> {
    const bucketRecord = await this.requireBucket(bucket);
    try {
      const { config, record } = await this.upload(bucket, key, uploadId);
      const systemMetadata = withBucketLock(bucketRecord.objectLock, record.systemMetadata, this.options.clock.nowMs());
      return await completeUpload(config, { ...record, systemMetadata }, parts, bucketRecord.versioning, precondition, stated);
    } catch (error) {
      // NoSuchUpload: completed earlier; InvalidPart: completed by a twin request while this one waited for the lock.
      if (!isSvcError(error, 'NoSuchUpload') && !isSvcError(error, 'InvalidPart')) throw error;
      return this.completedAlready(bucket, key, parts, error);
    }
  }

  /**
   * A completion sent again (an SDK retrying after a lost answer) finds no upload: when the
   * object's current version is the one those very parts made, it is answered as the first was.
   */
  private async completedAlready(bucket: string, key: string, parts: { number: number; etag: string }[], notFound: Error): Promise<ObjectInfo> {
    const info = await this.headObject(bucket, key).catch(() => undefined);
    const same =
      info !== undefined &&
      info.parts.length === parts.length &&
      info.parts.every((part, index) => part.number === parts[index]!.number && part.etag === parts[index]!.etag.replace(/"/g, ''));
    if (!same) throw notFound;
    return info;
  }

  /** The record of an upload in progress (its geometry, metadata and, when encrypted, its sealed key). */
  async multipartUpload(bucket: string, key: string, uploadId: string): Promise<UploadRecord> {
    return (await this.upload(bucket, key, uploadId)).record;
  }

  async abortMultipartUpload(bucket: string, key: string, uploadId: string): Promise<void> {
    const { config, record } = await this.upload(bucket, key, uploadId);
    await abortUpload(config, record);
  }

  async listParts(bucket: string, key: string, uploadId: string): Promise<{ record: UploadRecord; parts: PartRecord[] }> {
    const { config, record } = await this.upload(bucket, key, uploadId);
    return { record, parts: await listParts(config, record) };
  }

  async listMultipartUploads(bucket: string): Promise<UploadRecord[]> {
    await this.requireBucket(bucket);
    const all = await Promise.all(this.allSets().map((set) => listUploads(set.config, bucket)));
    return all.flat().sort((a, b) => compareKeys(a.key, b.key) || a.initiatedMs - b.initiatedMs);
  }

  private async upload(bucket: string, key: string, uploadId: string): Promise<{ config: SetConfig; record: UploadRecord }> {
    checkObjectKey(key);
    await this.requireBucket(bucket);
    const poolIndex = Number(Buffer.from(uploadId, 'base64url').toString().split('.')[0]);
    if (!/^[A-Za-z0-9_-]+$/.test(uploadId) || !this.options.pools.some((pool) => pool.index === poolIndex)) throw new SvcError('NoSuchUpload', undefined, { uploadId });
    const config = this.setFor(poolIndex, key).config;
    return { config, record: await readUpload(config, bucket, key, uploadId) };
  }

  // --- placement -------------------------------------------------------------------------

  /** A write staged for a pool being decommissioned is refused; the client retries later. */
  private refuseSuspended(poolIndex: number, bucket: string, key: string): void {
    if (this.isPoolSuspended(poolIndex)) {
      throw new SvcError('SlowDown', `pool ${poolIndex} is being decommissioned and takes no new writes; retry once the object has moved`, { bucket, key, pool: poolIndex });
    }
  }

  /** The pool that holds any version of the object, when one does. */
  async poolHolding(bucket: string, key: string): Promise<number | undefined> {
    if (this.options.pools.length === 1) return this.options.pools[0]!.index;
    return (await this.probePools(bucket, key, undefined))?.poolIndex;
  }

  /**
   * The pool and version a read answers from. With several pools, the pool holding the key's
   * newest version decides, exactly as one pool would: when that version is a delete marker, its
   * NoSuchKey (or MethodNotAllowed by version id) is thrown with the marker's details.
   */
  private async locate(bucket: string, key: string, versionId?: string): Promise<{ poolIndex: number; info: ObjectInfo }> {
    if (this.options.pools.length === 1) {
      const poolIndex = this.options.pools[0]!.index;
      return { poolIndex, info: await this.setFor(poolIndex, key).headObject(bucket, key, versionId) };
    }
    const found = await this.probePools(bucket, key, versionId);
    if (!found) throw new SvcError(versionId === undefined ? 'NoSuchKey' : 'NoSuchVersion', undefined, { bucket, key });
    if (found.marker) throw found.marker;
    return { poolIndex: found.poolIndex, info: found.info! };
  }

  /** The pools holding the key (the version, given its id), newest first; the one pool when there is only one. */
  private async poolsHolding(bucket: string, key: string, versionId: string | undefined): Promise<number[]> {
    if (this.options.pools.length === 1) return [this.options.pools[0]!.index];
    return (await this.poolAnswers(bucket, key, versionId)).map((answer) => answer.poolIndex);
  }

  /** The newest version found in any pool (a delete marker included): it decides. */
  private async probePools(bucket: string, key: string, versionId: string | undefined): Promise<PoolAnswer | undefined> {
    return (await this.poolAnswers(bucket, key, versionId))[0];
  }

  /**
   * Asks every pool in parallel: the answers of the pools that hold the key, newest first (ties in
   * pool order). A pool that cannot answer (below read quorum) makes the whole lookup fail closed
   * rather than guess.
   */
  private async poolAnswers(bucket: string, key: string, versionId: string | undefined): Promise<PoolAnswer[]> {
    const answers = await Promise.all(
      this.options.pools.map(async (pool): Promise<PoolAnswer | undefined> => {
        try {
          const info = await this.setFor(pool.index, key).headObject(bucket, key, versionId);
          return { poolIndex: pool.index, modTimeMs: info.modTimeMs, info };
        } catch (error) {
          if (isSvcError(error) && error.details.deleteMarker === true) return { poolIndex: pool.index, modTimeMs: Number(error.details.modTimeMs ?? 0), marker: error };
          if (isSvcError(error, 'NoSuchKey') || isSvcError(error, 'NoSuchVersion')) return undefined;
          throw error;
        }
      }),
    );
    return answers.filter((answer): answer is PoolAnswer => answer !== undefined).sort((a, b) => b.modTimeMs - a.modTimeMs);
  }

  /**
   * A pool for a new object: among pools under the fullness limit and not suspended, chosen at
   * random weighted by free space, so new writes spread across pools in proportion to room. The
   * draw is the key's own (drawFor): the same key on the same free space picks the same pool.
   */
  /**
   * The number in [0, 1) a weighted random choice for this key uses: the injected source when
   * there is one, otherwise an even hash of the key keyed by the deployment id.
   */
  drawFor(bucket: string, key: string): number {
    return this.options.random ? this.options.random() : unitDraw(`${bucket}/${key}`, this.seed);
  }

  async poolForNewObject(bucket: string, key: string): Promise<number> {
    const usage = await Promise.all(this.options.pools.map(async (pool) => ({ index: pool.index, ...(await poolUsage(pool)) })));
    const candidates = usage.filter(
      (pool) => !this.isPoolSuspended(pool.index) && pool.totalBytes > 0 && pool.usedBytes / pool.totalBytes <= limits.poolFullFraction,
    );
    if (candidates.length === 0) {
      if (this.options.pools.length === 1 && !this.isPoolSuspended(this.options.pools[0]!.index)) return this.options.pools[0]!.index;
      throw new SvcError('SlowDown', 'no pool can take new objects (all are full or being decommissioned)');
    }
    const totalFree = candidates.reduce((sum, pool) => sum + pool.freeBytes, 0);
    let point = this.drawFor(bucket, key) * totalFree;
    for (const pool of candidates) {
      point -= pool.freeBytes;
      if (point < 0) return pool.index;
    }
    return candidates.at(-1)!.index;
  }
}

async function poolUsage(pool: PoolSets): Promise<{ totalBytes: number; freeBytes: number; usedBytes: number }> {
  const infos = await Promise.all(pool.sets.flatMap((set) => set.drives.map((drive) => drive?.diskInfo())));
  let totalBytes = 0;
  let freeBytes = 0;
  let usedBytes = 0;
  // Drives on one file system (directories of one disk) share its capacity: count it once.
  const counted = new Set<string>();
  for (const info of infos) {
    if (!info?.online) continue;
    if (info.filesystemId !== undefined) {
      if (counted.has(info.filesystemId)) continue;
      counted.add(info.filesystemId);
    }
    totalBytes += info.totalBytes;
    freeBytes += info.freeBytes;
    usedBytes += info.totalBytes - info.freeBytes;
  }
  return { totalBytes, freeBytes, usedBytes };
}
