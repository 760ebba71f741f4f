/**
 * Bucket records: a bucket is a directory on every drive of every pool, plus a small record
 * `.svc.sys/buckets/<bucket>.json` on every drive (versioning state, creation time). Like all
 * `.svc.sys` metadata it has parity N/2: written atomically to every drive, needing a majority
 * (N/2 + 1) in every set; read by vote among the drives that answer, needing N - N/2 of them
 * (the read quorum K of parity N/2): the newest record that K drives hold identically wins, as
 * an object's metadata is voted.
 */
import { isSvcError, SvcError } from '../errors/index.js';
import { systemDir, type Drive } from '../drive/index.js';
import type { BucketVersioning } from './types.js';
import type { ErasureSet } from './erasure-set.js';
import { systemMetadataParity } from '../erasure/geometry.js';
import { majority, type SetConfig } from './set-context.js';
import { decodeBucketObjectLock, type BucketObjectLock } from './object-lock.js';
import { isAcl, objectOwnerships, type Acl, type AclGrant, type ObjectOwnership } from '../iam/acl.js';

/** Votes a record needs within a set: K of `.svc.sys` metadata (parity N/2). */
function recordReadQuorum(config: SetConfig): number {
  return config.drives.length - systemMetadataParity(config.drives.length);
}

export interface BucketRecord {
  version: 1;
  name: string;
  createdMs: number;
  versioning: BucketVersioning;
  updatedMs: number;
  /** The bucket's CORS configuration (PutBucketCors); absent when it has none. */
  cors?: CorsRule[];
  /** The bucket policy as PutBucketPolicy gave it (JSON text, validated); absent when it has none. */
  policy?: string;
  /** Object lock (created with it, or PutObjectLockConfiguration on a versioned bucket); absent when off. Never removed once set. */
  objectLock?: BucketObjectLock;
  /** The bucket's lifecycle rules (PutBucketLifecycleConfiguration); absent when it has none. */
  lifecycle?: LifecycleRule[];
  /** The bucket's tags (PutBucketTagging) as key/value pairs in the order given; absent when it has none. */
  tags?: [key: string, value: string][];
  /** The bucket's public access block (PutPublicAccessBlock); absent when it has none. */
  publicAccessBlock?: PublicAccessBlock;
  /** The bucket's notification rules (PutBucketNotificationConfiguration); absent when it has none. */
  notification?: NotificationRule[];
  /** S3 Object Ownership (PutBucketOwnershipControls, or `x-amz-object-ownership` on create); absent: no ownership controls, ACLs count. */
  ownership?: ObjectOwnership;
  /** The bucket's ACL (PutBucketAcl, or a canned ACL or grants on create); absent: the owner alone with FULL_CONTROL. */
  acl?: Acl;
  /** Server access logging (PutBucketLogging); absent: off. */
  logging?: BucketLogging;
  /** The bucket's default encryption (PutBucketEncryption); absent when it has none. */
  encryption?: BucketEncryption;
  /** Bucket replication (PutBucketReplication); absent when it has none. */
  replication?: ReplicationConfiguration;
}

/**
 * A bucket's replication configuration as PutBucketReplication gives it (validated by the S3
 * layer): the role as sent, and rules naming a destination bucket (`arn:aws:s3:::<bucket>`) that
 * a remote target of this bucket serves.
 */
export interface ReplicationConfiguration {
  role: string;
  rules: ReplicationRule[];
}

export interface ReplicationRule {
  id: string;
  priority: number;
  enabled: boolean;
  /** Every condition given must hold (an empty filter matches every key). */
  filter: { prefix?: string; tags?: { key: string; value: string }[] };
  /** How the filter was sent, to answer it back the same way (absent: a plain `Filter`). */
  filterForm?: 'rulePrefix' | 'and' | 'none';
  deleteMarkerReplication: boolean;
  existingObjectReplication: boolean;
  destination: { bucketArn: string; storageClass?: string; replicaKmsKeyId?: string };
  /** SourceSelectionCriteria/SseKmsEncryptedObjects enabled: SSE-KMS versions are replicated (encrypted there with `destination.replicaKmsKeyId`). */
  sseKmsEncryptedObjects?: boolean;
}

/**
 * One notification rule, as PutBucketNotificationConfiguration gives it (validated by the S3
 * layer): where to send (`arn:svc:sqs::<id>:<type>`), which event names (`s3:ObjectCreated:*`, ...)
 * and an optional key prefix and suffix. `kind` is the element it came in.
 */
export interface NotificationRule {
  id: string;
  kind: 'queue' | 'topic' | 'function';
  arn: string;
  events: string[];
  prefix?: string;
  suffix?: string;
}

/** Default encryption of a bucket's new objects: SSE-S3 (`AES256`) or SSE-KMS with an optional key id. */
export interface BucketEncryption {
  algorithm: 'AES256' | 'aws:kms';
  kmsKeyId?: string;
  bucketKeyEnabled: boolean;
}

function isBucketEncryption(value: unknown): value is BucketEncryption {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  const known = Object.keys(record).every((name) => ['algorithm', 'kmsKeyId', 'bucketKeyEnabled'].includes(name));
  return known && (record.algorithm === 'AES256' || record.algorithm === 'aws:kms') && (record.kmsKeyId === undefined || (typeof record.kmsKeyId === 'string' && record.algorithm === 'aws:kms')) && typeof record.bucketKeyEnabled === 'boolean';
}

/** Where a bucket's server access logs go. */
export interface BucketLogging {
  targetBucket: string;
  targetPrefix: string;
  /** The key format of log objects: `simple` ([prefix]YYYY-mm-DD-HH-MM-SS-UniqueString) or `partitioned` by the event or delivery time. */
  keyFormat: { kind: 'simple' } | { kind: 'partitioned'; dateSource: 'EventTime' | 'DeliveryTime' };
  /** Target grants as sent (kept and returned; the target bucket's own access decides). */
  targetGrants?: AclGrant[];
}

/** S3's four public access block settings; each false unless set. */
export interface PublicAccessBlock {
  blockPublicAcls: boolean;
  ignorePublicAcls: boolean;
  blockPublicPolicy: boolean;
  restrictPublicBuckets: boolean;
}

export const publicAccessBlockFields = ['blockPublicAcls', 'ignorePublicAcls', 'blockPublicPolicy', 'restrictPublicBuckets'] as const;

/**
 * One lifecycle rule, as PutBucketLifecycleConfiguration gives it (validated by the S3 layer).
 * Days are whole days; a date is an instant (midnight UTC) in milliseconds.
 */
export interface LifecycleRule {
  id: string;
  enabled: boolean;
  filter: LifecycleFilter;
  expiration?: { days?: number; dateMs?: number; expiredObjectDeleteMarker?: boolean };
  noncurrentVersionExpiration?: { noncurrentDays: number; newerNoncurrentVersions?: number };
  abortIncompleteMultipartUploadDays?: number;
  /** Moves the current version's data to the tier named by `storageClass` (a tier's name, docs/lifecycle.md). */
  transition?: { days?: number; dateMs?: number; storageClass: string };
  /** Moves a noncurrent version's data to the tier `storageClass` once it has been noncurrent this many days. */
  noncurrentVersionTransition?: { noncurrentDays: number; storageClass: string };
  /**
   * A rule with two or more `Transition` elements keeps them here, in the order sent (and no
   * `transition`): a version goes to the tier of the latest one it has reached.
   */
  transitions?: { days?: number; dateMs?: number; storageClass: string }[];
  /** Two or more `NoncurrentVersionTransition` elements, likewise (and no `noncurrentVersionTransition`). */
  noncurrentVersionTransitions?: { noncurrentDays: number; storageClass: string }[];
  /** How the filter was sent, to answer it back the same way: a rule-level `Prefix`, or `Filter` with `And` (absent: a plain `Filter`). */
  filterForm?: 'rulePrefix' | 'and';
}

/** What a rule applies to: every condition given must hold (an empty filter matches everything). */
export interface LifecycleFilter {
  prefix?: string;
  tags?: { key: string; value: string }[];
  sizeGreaterThanBytes?: number;
  sizeLessThanBytes?: number;
}

/** One CORS rule, as PutBucketCors gives it. */
export interface CorsRule {
  id?: string;
  allowedOrigins: string[];
  allowedMethods: string[];
  allowedHeaders: string[];
  exposeHeaders: string[];
  maxAgeSeconds?: number;
}

export function bucketRecordPath(bucket: string): string {
  return `${systemDir}/buckets/${bucket}.json`;
}

export function decodeBucketRecord(bytes: Uint8Array): BucketRecord {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    throw new SvcError('CorruptFormat', 'bucket record is not JSON');
  }
  const record = value as Partial<BucketRecord>;
  if (record.version !== 1) throw new SvcError('UnsupportedFormat', `bucket record version ${String(record.version)}`);
  const validVersioning = record.versioning === 'unversioned' || record.versioning === 'enabled' || record.versioning === 'suspended';
  if (typeof record.name !== 'string' || typeof record.createdMs !== 'number' || typeof record.updatedMs !== 'number' || !validVersioning) {
    throw new SvcError('CorruptFormat', 'bucket record has invalid fields');
  }
  if (record.cors !== undefined && !Array.isArray(record.cors)) throw new SvcError('CorruptFormat', 'bucket record has an invalid cors field');
  if (record.policy !== undefined && typeof record.policy !== 'string') throw new SvcError('CorruptFormat', 'bucket record has an invalid policy field');
  if (record.objectLock !== undefined) {
    record.objectLock = decodeBucketObjectLock(record.objectLock);
    if (record.versioning !== 'enabled') throw new SvcError('CorruptFormat', 'bucket record has object lock without versioning enabled');
  }
  if (record.encryption !== undefined && !isBucketEncryption(record.encryption)) throw new SvcError('CorruptFormat', 'bucket record has an invalid encryption field');
  if (record.tags !== undefined && !(Array.isArray(record.tags) && record.tags.every((tag) => Array.isArray(tag) && tag.length === 2 && tag.every((part) => typeof part === 'string')))) {
    throw new SvcError('CorruptFormat', 'bucket record has an invalid tags field');
  }
  const block = record.publicAccessBlock as unknown;
  if (block !== undefined && !(typeof block === 'object' && block !== null && Object.keys(block).length === 4 && publicAccessBlockFields.every((field) => typeof (block as Record<string, unknown>)[field] === 'boolean'))) {
    throw new SvcError('CorruptFormat', 'bucket record has an invalid publicAccessBlock field');
  }
  if (record.ownership !== undefined && !objectOwnerships.includes(record.ownership)) throw new SvcError('CorruptFormat', 'bucket record has an invalid ownership field');
  if (record.acl !== undefined && !isAcl(record.acl)) throw new SvcError('CorruptFormat', 'bucket record has an invalid acl field');
  if (record.logging !== undefined && !isLogging(record.logging)) throw new SvcError('CorruptFormat', 'bucket record has an invalid logging field');
  if (record.lifecycle !== undefined && !isLifecycle(record.lifecycle)) throw new SvcError('CorruptFormat', 'bucket record has an invalid lifecycle field');
  if (record.notification !== undefined && !isNotification(record.notification)) throw new SvcError('CorruptFormat', 'bucket record has an invalid notification field');
  if (record.replication !== undefined && !isReplication(record.replication)) throw new SvcError('CorruptFormat', 'bucket record has an invalid replication field');
  return record as BucketRecord;
}

function isReplication(value: unknown): value is ReplicationConfiguration {
  const configuration = value as Partial<ReplicationConfiguration> | null;
  if (typeof configuration !== 'object' || configuration === null || typeof configuration.role !== 'string' || !Array.isArray(configuration.rules)) return false;
  const known = ['id', 'priority', 'enabled', 'filter', 'filterForm', 'deleteMarkerReplication', 'existingObjectReplication', 'destination', 'sseKmsEncryptedObjects'];
  return configuration.rules.every((rule: Partial<ReplicationRule>) =>
    typeof rule === 'object' && rule !== null && Object.keys(rule).every((name) => known.includes(name)) &&
    typeof rule.id === 'string' && Number.isInteger(rule.priority) && typeof rule.enabled === 'boolean' &&
    typeof rule.deleteMarkerReplication === 'boolean' && typeof rule.existingObjectReplication === 'boolean' &&
    (rule.filterForm === undefined || rule.filterForm === 'rulePrefix' || rule.filterForm === 'and' || rule.filterForm === 'none') &&
    typeof rule.filter === 'object' && rule.filter !== null && (rule.filter.prefix === undefined || typeof rule.filter.prefix === 'string') &&
    (rule.filter.tags === undefined || (Array.isArray(rule.filter.tags) && rule.filter.tags.every((tag) => typeof tag?.key === 'string' && typeof tag.value === 'string'))) &&
    typeof rule.destination === 'object' && rule.destination !== null && typeof rule.destination.bucketArn === 'string' &&
    (rule.destination.storageClass === undefined || typeof rule.destination.storageClass === 'string') &&
    (rule.destination.replicaKmsKeyId === undefined || typeof rule.destination.replicaKmsKeyId === 'string') &&
    (rule.sseKmsEncryptedObjects === undefined || typeof rule.sseKmsEncryptedObjects === 'boolean'));
}

function isNotification(value: unknown): value is NotificationRule[] {
  const isText = (field: unknown): boolean => field === undefined || typeof field === 'string';
  return Array.isArray(value) && value.every((rule: Partial<NotificationRule>) =>
    typeof rule === 'object' && rule !== null && typeof rule.id === 'string' && typeof rule.arn === 'string' &&
    (rule.kind === 'queue' || rule.kind === 'topic' || rule.kind === 'function') &&
    Array.isArray(rule.events) && rule.events.every((name) => typeof name === 'string') && isText(rule.prefix) && isText(rule.suffix));
}

function isLogging(value: unknown): value is BucketLogging {
  const logging = value as Partial<BucketLogging> | null;
  const format = logging?.keyFormat as { kind?: unknown; dateSource?: unknown } | undefined;
  return typeof logging === 'object' && logging !== null && typeof logging.targetBucket === 'string' && typeof logging.targetPrefix === 'string' &&
    typeof format === 'object' && (format.kind === 'simple' || (format.kind === 'partitioned' && (format.dateSource === 'EventTime' || format.dateSource === 'DeliveryTime'))) &&
    (logging.targetGrants === undefined || isAcl({ owner: '', grants: logging.targetGrants }));
}

function isLifecycle(value: unknown): value is LifecycleRule[] {
  const isCount = (field: unknown): boolean => field === undefined || (typeof field === 'number' && Number.isInteger(field) && field >= 0);
  return Array.isArray(value) && value.every((rule: Partial<LifecycleRule>) =>
    typeof rule === 'object' && rule !== null && typeof rule.id === 'string' && typeof rule.enabled === 'boolean' &&
    typeof rule.filter === 'object' && rule.filter !== null && (rule.filter.prefix === undefined || typeof rule.filter.prefix === 'string') &&
    (rule.filter.tags === undefined || Array.isArray(rule.filter.tags)) && isCount(rule.filter.sizeGreaterThanBytes) && isCount(rule.filter.sizeLessThanBytes) &&
    (rule.expiration === undefined || (isCount(rule.expiration.days) && (rule.expiration.dateMs === undefined || typeof rule.expiration.dateMs === 'number'))) &&
    (rule.noncurrentVersionExpiration === undefined || (isCount(rule.noncurrentVersionExpiration.noncurrentDays) && isCount(rule.noncurrentVersionExpiration.newerNoncurrentVersions))) &&
    isCount(rule.abortIncompleteMultipartUploadDays) &&
    (rule.transition === undefined || (typeof rule.transition.storageClass === 'string' && isCount(rule.transition.days) && (rule.transition.dateMs === undefined || typeof rule.transition.dateMs === 'number'))) &&
    (rule.noncurrentVersionTransition === undefined || (typeof rule.noncurrentVersionTransition.storageClass === 'string' && isCount(rule.noncurrentVersionTransition.noncurrentDays))) &&
    (rule.transitions === undefined || (Array.isArray(rule.transitions) && rule.transitions.every((step) => typeof step === 'object' && step !== null && typeof step.storageClass === 'string' && isCount(step.days) && (step.dateMs === undefined || typeof step.dateMs === 'number')))) &&
    (rule.noncurrentVersionTransitions === undefined || (Array.isArray(rule.noncurrentVersionTransitions) && rule.noncurrentVersionTransitions.every((step) => typeof step === 'object' && step !== null && typeof step.storageClass === 'string' && isCount(step.noncurrentDays)))) &&
    (rule.filterForm === undefined || rule.filterForm === 'rulePrefix' || rule.filterForm === 'and'));
}

export function encodeBucketRecord(record: BucketRecord): Uint8Array {
  return Buffer.from(`${JSON.stringify(record, null, 2)}\n`);
}

/** Writes the record on every drive of every set; each set needs a majority. */
export async function writeBucketRecord(sets: ErasureSet[], record: BucketRecord): Promise<void> {
  const bytes = encodeBucketRecord(record);
  await Promise.all(
    sets.map(async (set) => {
      const results = await Promise.all(set.drives.map((drive) => attempt(drive, (d) => d.writeFileAtomic(bucketRecordPath(record.name), bytes))));
      const ok = results.filter(Boolean).length;
      if (ok < majority(set.config)) throw new SvcError('ErasureWriteQuorum', undefined, { bucket: record.name, succeeded: ok });
    }),
  );
}

export async function deleteBucketRecord(sets: ErasureSet[], bucket: string): Promise<void> {
  await Promise.all(sets.flatMap((set) => set.drives.map((drive) => attempt(drive, (d) => d.deleteFile(bucketRecordPath(bucket))))));
}

/**
 * Reads the record by vote: within each set the newest record held by K drives wins; across
 * sets the newest such record wins (a pool added later may not hold the bucket yet). Undefined
 * when every set that answered positively lacks it; ErasureReadQuorum when no set can answer.
 */
export async function readBucketRecord(sets: ErasureSet[], bucket: string): Promise<BucketRecord | undefined> {
  let best: BucketRecord | undefined;
  let decided = 0;
  for (const set of sets) {
    const answers = await Promise.all(set.drives.map((drive) => readOne(drive, bucket)));
    const needed = recordReadQuorum(set.config);
    const votes = new Map<string, { record: BucketRecord; count: number }>();
    for (const answer of answers) {
      if (typeof answer !== 'object') continue;
      const signature = JSON.stringify(answer);
      votes.set(signature, { record: answer, count: (votes.get(signature)?.count ?? 0) + 1 });
    }
    const missing = answers.filter((answer) => answer === 'missing').length;
    for (const { record, count } of votes.values()) {
      if (count >= needed && (!best || record.updatedMs > best.updatedMs)) best = record;
    }
    if (missing >= needed || [...votes.values()].some((vote) => vote.count >= needed)) decided += 1;
  }
  if (!best && decided === 0) throw new SvcError('ErasureReadQuorum', undefined, { bucket, operation: 'bucket-record' });
  return best;
}

async function readOne(drive: Drive | undefined, bucket: string): Promise<BucketRecord | 'missing' | 'failed'> {
  if (!drive) return 'failed';
  try {
    return decodeBucketRecord(await drive.readFile(bucketRecordPath(bucket)));
  } catch (error) {
    return isSvcError(error, 'FileNotFound') ? 'missing' : 'failed';
  }
}

async function attempt(drive: Drive | undefined, action: (drive: Drive) => Promise<void>): Promise<boolean> {
  if (!drive) return false;
  try {
    await action(drive);
    return true;
  } catch {
    return false;
  }
}

/** Bucket names present on K (read quorum of parity N/2) of a set's drives: the bucket listing. */
export async function listBucketRecords(set: ErasureSet): Promise<BucketRecord[]> {
  const counts = new Map<string, { record: BucketRecord; count: number }>();
  await Promise.all(
    set.drives.map(async (drive) => {
      if (!drive) return;
      const names = await drive.listDir(`${systemDir}/buckets`).catch(() => [] as string[]);
      for (const name of names) {
        if (!name.endsWith('.json')) continue;
        const record = await readOne(drive, name.slice(0, -'.json'.length));
        if (typeof record !== 'object') continue;
        const entry = counts.get(record.name);
        if (!entry || record.updatedMs > entry.record.updatedMs) counts.set(record.name, { record, count: (entry?.count ?? 0) + 1 });
        else entry.count += 1;
      }
    }),
  );
  const needed = recordReadQuorum(set.config);
  return [...counts.values()].filter((entry) => entry.count >= needed).map((entry) => entry.record).sort((a, b) => (a.name < b.name ? -1 : 1));
}
