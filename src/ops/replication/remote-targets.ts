/**
 * Remote replication targets: `.svc.sys/replication.bin`, a cluster state file (a whole copy on
 * every drive, the newest generation wins), so every node knows the same targets. Each target is
 * a source bucket's destination: another deployment's endpoint, bucket and credentials. Secret
 * keys are sealed with AES-256-GCM under a key derived from the root credentials, as the IAM
 * store seals users' secrets: the drives alone never reveal them, and no answer carries them.
 * A node re-reads the file on an interval and whenever it is asked for a target it does not know.
 */
import { hkdfSync, randomBytes } from 'node:crypto';
import { SvcError } from '../../errors/index.js';
import { limits } from '../../util/limits.js';
import type { StateStore } from '../state-store.js';
import { openText, sealText } from '../session-tokens.js';

export interface StoredTarget {
  /** `arn:svc:replication::<id>:<target bucket>`. */
  arn: string;
  id: string;
  sourceBucket: string;
  /** The target deployment's S3 endpoint, `http(s)://host:port`. */
  endpoint: string;
  targetBucket: string;
  region: string;
  accessKey: string;
  /** base64url(iv | ciphertext | tag) of the secret key. */
  sealedSecret: string;
  createdMs: number;
}

export interface ReplicationTargetsDocument {
  generation: number;
  targets: StoredTarget[];
}

/** A target as answered: without its secret. */
export type TargetInfo = Omit<StoredTarget, 'sealedSecret'>;

/** A target with its credentials, for the replicator's client. */
export interface ResolvedTarget extends TargetInfo {
  secretKey: string;
}

export interface NewTarget {
  sourceBucket: string;
  endpoint: string;
  targetBucket: string;
  region?: string;
  accessKey: string;
  secretKey: string;
}

export function validateTargetsDocument(payload: unknown): ReplicationTargetsDocument {
  const document = payload as Partial<ReplicationTargetsDocument> | null;
  const text = (value: unknown): boolean => typeof value === 'string';
  if (typeof document !== 'object' || document === null || !Number.isInteger(document.generation) || !Array.isArray(document.targets)) {
    throw new SvcError('CorruptFormat', 'replication.bin: not a targets document');
  }
  for (const target of document.targets as Partial<StoredTarget>[]) {
    const fields = ['arn', 'id', 'sourceBucket', 'endpoint', 'targetBucket', 'region', 'accessKey', 'sealedSecret'] as const;
    if (typeof target !== 'object' || target === null || !fields.every((field) => text(target[field])) || typeof target.createdMs !== 'number' || Object.keys(target).length !== fields.length + 1) {
      throw new SvcError('CorruptFormat', 'replication.bin: a target has missing or unknown fields');
    }
  }
  return document as ReplicationTargetsDocument;
}

export class RemoteTargets {
  private document: ReplicationTargetsDocument = { generation: 0, targets: [] };
  private loadedMs = -Infinity;
  private readonly sealKey: Buffer;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly options: {
      store: StateStore<ReplicationTargetsDocument>;
      root: { accessKey: string; secretKey: string };
      nowMs(): number;
      /** The cluster-wide lock that makes changes from different nodes take turns (releases when called back). */
      lock?: () => Promise<() => void>;
    },
  ) {
    this.sealKey = Buffer.from(hkdfSync('sha256', options.root.secretKey, options.root.accessKey, 'svc replication targets v1', 32));
  }

  /** Reads the newest stored document. */
  async reload(): Promise<void> {
    const loaded = await this.options.store.load();
    this.loadedMs = this.options.nowMs();
    if (loaded && loaded.generation >= this.document.generation) this.document = loaded;
  }

  private async fresh(): Promise<void> {
    if (this.options.nowMs() - this.loadedMs >= limits.replicationTargetsReloadMs) await this.reload();
  }

  /** The targets (of one source bucket, or all), without secrets. */
  async list(sourceBucket?: string): Promise<TargetInfo[]> {
    await this.fresh();
    return this.document.targets.filter((target) => sourceBucket === undefined || target.sourceBucket === sourceBucket).map(withoutSecret);
  }

  /** The target a rule of `sourceBucket` names by `arn:aws:s3:::<bucket>` or by its own ARN; a miss re-reads the file once. */
  async resolve(sourceBucket: string, bucketArn: string): Promise<ResolvedTarget | undefined> {
    await this.fresh();
    let found = this.find(sourceBucket, bucketArn);
    if (!found) {
      await this.reload();
      found = this.find(sourceBucket, bucketArn);
    }
    if (!found) return undefined;
    const secretKey = openText(this.sealKey, found.sealedSecret);
    if (secretKey === undefined) throw new SvcError('InvalidToken', `the secret of replication target ${found.arn} does not unseal with this deployment's root credentials`);
    return { ...withoutSecret(found), secretKey };
  }

  private find(sourceBucket: string, bucketArn: string): StoredTarget | undefined {
    return this.document.targets.find((target) => target.sourceBucket === sourceBucket && (target.arn === bucketArn || `arn:aws:s3:::${target.targetBucket}` === bucketArn));
  }

  /** Stores a target checked by the caller; its ARN is answered (the secret never is). */
  async add(request: NewTarget): Promise<TargetInfo> {
    return this.change((targets) => {
      if (targets.some((target) => target.sourceBucket === request.sourceBucket && target.targetBucket === request.targetBucket)) {
        throw new SvcError('RemoteTargetExists', `bucket ${request.sourceBucket} already has a remote target for a bucket named ${request.targetBucket}`, { bucket: request.sourceBucket });
      }
      if (targets.length >= limits.maxReplicationTargets) throw new SvcError('InvalidArgument', `at most ${limits.maxReplicationTargets} remote targets`);
      const id = randomBytes(8).toString('hex');
      const stored: StoredTarget = {
        arn: `arn:svc:replication::${id}:${request.targetBucket}`,
        id,
        sourceBucket: request.sourceBucket,
        endpoint: request.endpoint,
        targetBucket: request.targetBucket,
        region: request.region ?? 'us-east-1',
        accessKey: request.accessKey,
        sealedSecret: sealText(this.sealKey, request.secretKey),
        createdMs: this.options.nowMs(),
      };
      return { targets: [...targets, stored], answer: withoutSecret(stored) };
    });
  }

  /** Removes a target of the bucket by ARN; `inUse` refuses when a rule still names it. */
  async remove(sourceBucket: string, arn: string, inUse: (target: TargetInfo) => boolean): Promise<TargetInfo> {
    return this.change((targets) => {
      const target = targets.find((candidate) => candidate.sourceBucket === sourceBucket && candidate.arn === arn);
      if (!target) throw new SvcError('NoSuchRemoteTarget', `bucket ${sourceBucket} has no remote target ${arn}`, { bucket: sourceBucket });
      if (inUse(withoutSecret(target))) throw new SvcError('RemoteTargetInUse', `a replication rule of ${sourceBucket} names ${arn}`, { bucket: sourceBucket });
      return { targets: targets.filter((candidate) => candidate !== target), answer: withoutSecret(target) };
    });
  }

  /** One change at a time on this node, under the cluster lock across nodes: read, change, save. */
  private change<T>(apply: (targets: StoredTarget[]) => { targets: StoredTarget[]; answer: T }): Promise<T> {
    const run = async (): Promise<T> => {
      const release = this.options.lock ? await this.options.lock() : () => undefined;
      try {
        await this.reload();
        const { targets, answer } = apply(this.document.targets);
        const next = { generation: this.document.generation + 1, targets };
        await this.options.store.save(next);
        this.document = next;
        return answer;
      } finally {
        release();
      }
    };
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }
}

function withoutSecret({ sealedSecret: _secret, ...info }: StoredTarget): TargetInfo {
  return info;
}
