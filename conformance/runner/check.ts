/**
 * A conformance check: one behaviour of SPEC.md, verified black-box against a deployment. A check
 * throws CheckFailure (or any error) when the target violates it, or Skip when it cannot be
 * decided on this target (for example a single-pool deployment for pool checks).
 */
import { randomBytes } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import { jsonOrRaw, sendSigned } from '../../src/cli/rc/signed-request.js';
import { createPrng, type Prng } from '../../src/util/prng.js';
import { rawS3, type RawAnswer, type RawRequest } from './http.js';

/** What a target may or may not offer; probed before a run (capabilities.ts). */
export const capabilityNames = ['admin', 'iam', 'multi-pool', 'versioning', 'multipart', 'checksums', 'aws-chunked', 'aws-chunked-trailer', 'presigned', 'object-lock', 'sse-s3', 'sse-kms', 'sse-c', 'sigv2'] as const;
export type Capability = (typeof capabilityNames)[number];

export interface CapabilityState {
  present: boolean;
  /** What the probe saw. */
  detail: string;
}

export type Capabilities = Record<Capability, CapabilityState>;

export class CheckFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckFailure';
  }
}

/**
 * Thrown by a check whose own probe found the feature it verifies absent (an API a target does not
 * implement): the check is reported n/a with `probe`, the request that showed it and its answer.
 */
export class NotApplicable extends Error {
  constructor(readonly probe: string) {
    super(probe);
    this.name = 'NotApplicable';
  }
}

/** The last request a check sent and what came back, for failure reports. */
export interface Exchange {
  request?: string;
  answer?: string;
}

export class Skip extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'Skip';
  }
}

/** How long one S3 request may take before the check fails: a target that never answers fails its check, not the run. */
const requestTimeoutMs = 30_000;

export interface TargetOptions {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  seed: number;
  /** Finds what the target offers (capabilities.ts `probeCapabilities`; kept apart to keep imports one-way). */
  probe?: (target: Target) => Promise<Capabilities>;
  /** Model-based runs: how many random command sequences (default 20). */
  runs?: number;
  /** Model-based runs: stop starting new sequences after this long. */
  budgetMs?: number;
  /** A KMS key of the target the SSE-KMS checks may name (`--kms-key-id`); without it they are n/a. */
  kmsKeyId?: string;
  /**
   * The target is a test deployment that takes SSE-C customer keys over plain HTTP (`--ssec-over-http`,
   * svc with SVC_KMS_ALLOW_INSECURE_SSEC=on): the check that plain HTTP is refused is skipped.
   */
  ssecOverHttp?: boolean;
}

export interface AdminAnswer {
  status: number;
  body: Record<string, any>;
}

/** Everything a check may use: clients, a seeded PRNG, and buckets it owns (removed afterwards). */
export class Target {
  readonly s3: S3Client;
  readonly prng: Prng;
  private readonly buckets = new Set<string>();
  private readonly runId: string;
  private made = 0;
  private probed: Promise<Capabilities> | undefined;
  /** The last S3 request of the running check (SDK and raw), reset by the runner before each check. */
  lastExchange: Exchange = {};

  constructor(readonly options: TargetOptions) {
    this.s3 = this.clientWith(options.secretKey);
    this.prng = createPrng(options.seed);
    this.runId = randomBytes(3).toString('hex');
  }

  clientWith(secretKey: string): S3Client {
    return this.clientFor(this.options.accessKey, secretKey);
  }

  /** An S3 client signing with other credentials (a user or service account a check made). */
  clientFor(accessKey: string, secretKey: string): S3Client {
    const client = new S3Client({ endpoint: this.options.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: accessKey, secretAccessKey: secretKey }, maxAttempts: 1, requestHandler: { requestTimeout: requestTimeoutMs, connectionTimeout: requestTimeoutMs } });
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const request = args.request as { method?: string; path?: string; query?: Record<string, unknown>; headers?: Record<string, string> };
        const query = Object.entries(request.query ?? {}).map(([name, value]) => (value === null || value === '' ? name : `${name}=${String(value)}`)).join('&');
        this.lastExchange = { request: `${context.commandName ?? 'request'}: ${request.method ?? '?'} ${request.path ?? '/'}${query ? `?${query}` : ''}${describeHeaders(request.headers)}` };
        try {
          const result = await next(args);
          this.lastExchange.answer = String((result.response as { statusCode?: number }).statusCode ?? 'answered');
          return result;
        } catch (error) {
          const failure = error as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
          this.lastExchange.answer = `${failure.$metadata?.httpStatusCode ?? 'no answer'} ${failure.name ?? 'Error'}${failure.message ? `: ${failure.message.slice(0, 200)}` : ''}`;
          throw error;
        }
      },
      { step: 'finalizeRequest', name: 'recordExchange', priority: 'low' },
    );
    return client;
  }

  /** A bucket name owned by this run (created by the caller through `makeBucket`). */
  bucketName(purpose: string): string {
    this.made += 1;
    const name = `conf-${this.runId}-${this.made}-${purpose}`.toLowerCase().replace(/[^a-z0-9-]+/g, '-').slice(0, 63);
    return name.replace(/-+$/, '');
  }

  /** The prefix every bucket name of this run starts with. */
  get runPrefix(): string {
    return `conf-${this.runId}-`;
  }

  /** Creates `runPrefix + suffix` (a lower-case suffix not starting with a digit) and removes it with the run's other buckets. */
  async makeBucketNamed(suffix: string): Promise<string> {
    const { CreateBucketCommand } = await import('@aws-sdk/client-s3');
    const name = `${this.runPrefix}${suffix}`;
    await this.s3.send(new CreateBucketCommand({ Bucket: name }));
    this.buckets.add(name);
    return name;
  }

  /** With `objectLock`, the bucket is created with object lock (and so versioning) enabled. */
  async makeBucket(purpose: string, options: { objectLock?: boolean } = {}): Promise<string> {
    const { CreateBucketCommand } = await import('@aws-sdk/client-s3');
    const name = this.bucketName(purpose);
    await this.s3.send(new CreateBucketCommand({ Bucket: name, ...(options.objectLock ? { ObjectLockEnabledForBucket: true } : {}) }));
    this.buckets.add(name);
    return name;
  }

  /** Removes every version of every object in the buckets this run made, then the buckets. */
  async cleanup(): Promise<string[]> {
    const problems: string[] = [];
    for (const bucket of [...this.buckets]) {
      try {
        await this.dropBucket(bucket);
      } catch (error) {
        problems.push(`${bucket}: ${(error as Error).message}`);
      }
    }
    return problems;
  }

  /** Empties one bucket of this run (versions, delete markers, open uploads) and deletes it. */
  async dropBucket(bucket: string): Promise<void> {
    const { DeleteBucketCommand, ListMultipartUploadsCommand, AbortMultipartUploadCommand } = await import('@aws-sdk/client-s3');
    await this.deleteEveryVersion(bucket);
    const uploads = await this.s3.send(new ListMultipartUploadsCommand({ Bucket: bucket })).catch(() => ({ Uploads: [] }));
    for (const upload of uploads.Uploads ?? []) await this.s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: upload.Key!, UploadId: upload.UploadId! }));
    await this.s3.send(new DeleteBucketCommand({ Bucket: bucket }));
    this.buckets.delete(bucket);
  }

  /**
   * Deletes every version and delete marker; on a target without ListObjectVersions, every listed
   * key. GOVERNANCE retention is bypassed (the checks never leave COMPLIANCE or a legal hold behind).
   */
  private async deleteEveryVersion(bucket: string): Promise<void> {
    const { ListObjectVersionsCommand, ListObjectsV2Command, DeleteObjectCommand } = await import('@aws-sdk/client-s3');
    for (let round = 0; round < 1000; round += 1) {
      const page = await this.s3.send(new ListObjectVersionsCommand({ Bucket: bucket })).catch(async () => {
        const listed = await this.s3.send(new ListObjectsV2Command({ Bucket: bucket }));
        return { Versions: (listed.Contents ?? []).map((object) => ({ Key: object.Key, VersionId: undefined })), DeleteMarkers: [] };
      });
      const all = [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])];
      if (all.length === 0) return;
      for (const version of all) await this.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: version.Key!, VersionId: version.VersionId, ...(version.VersionId ? { BypassGovernanceRetention: true } : {}) }));
    }
  }

  /** What the target offers, probed once (runSuites probes before the first check). */
  capabilities(): Promise<Capabilities> {
    const probe = this.options.probe;
    if (!probe) return Promise.reject(new Error('this target was made without a capability probe'));
    this.probed ??= probe(this);
    return this.probed;
  }

  /** A raw S3 request (signed unless `unsigned`), answered with status, headers and the error code. */
  async raw(request: RawRequest): Promise<RawAnswer> {
    const query = new URLSearchParams(request.query ?? {}).toString();
    this.lastExchange = { request: `${request.method} ${request.path}${query ? `?${query}` : ''}${describeHeaders(request.headers)}${request.unsigned ? ' (unsigned)' : ''}` };
    const answer = await rawS3(this.options, request);
    this.lastExchange.answer = `${answer.status}${answer.code ? ` ${answer.code}` : ''}`;
    return answer;
  }

  /** A SigV4-signed admin request (or unsigned with `unsigned`), by the run's credentials unless `as` names others. */
  async admin(method: 'GET' | 'POST', path: string, rawQuery = '', options: { body?: string; unsigned?: boolean; bareQuestionMark?: boolean; as?: { accessKey: string; secretKey: string } } = {}): Promise<AdminAnswer> {
    const { as, ...rest } = options;
    const signer = as ?? { accessKey: this.options.accessKey, secretKey: this.options.secretKey };
    const answer = await sendSigned({ endpoint: this.options.endpoint, ...signer, method, path, rawQuery, timeoutMs: 30_000, ...rest });
    return { status: answer.status, body: jsonOrRaw(answer.text) };
  }
}

/**
 * Which contract a check holds a target to: `s3` only behaviour AWS documents (each such check
 * names its `source`), `svc` the rules of SPEC.md that go beyond S3 (endpoints, admin API, IAM
 * routes, storage-class refusal, quorum, inline and layout rules).
 */
export const profileNames = ['s3', 'svc'] as const;
export type Profile = (typeof profileNames)[number];

/** The headers a report shows of a request: the conditional, checksum and x-amz-* ones that decide an answer (never credentials). */
function describeHeaders(headers: Record<string, string> | undefined): string {
  const shown = Object.entries(headers ?? {}).filter(([name]) => /^(if-|range$|content-md5$|x-amz-(?!date$|content-sha256$|security-token$|user-agent$))/i.test(name));
  // An SSE-C customer key is a secret: reports name the header, never its value.
  const value = (name: string, text: string) => (/customer-key$/i.test(name) ? '(not shown)' : text);
  return shown.length === 0 ? '' : ` [${shown.map(([name, text]) => `${name.toLowerCase()}: ${value(name, text)}`).join(', ')}]`;
}

export interface Check {
  /** Stable id, e.g. `s3.object.etag-is-md5`; `s3.*` and `model.*` checks are of the s3 profile unless `profile` says otherwise. */
  id: string;
  /** The SPEC.md section, or the S3 operation (`S3 GetObject`), it verifies. */
  spec: string;
  title: string;
  /** Overrides the profile the id implies. */
  profile?: Profile;
  /**
   * What the expected behaviour rests on: an AWS API reference or user-guide page, or a
   * ceph/s3-tests case that agrees with AWS (required in the s3 profile; svc checks default to
   * their SPEC.md section).
   */
  source?: string;
  /** What the target must offer for the check to apply (probed before the run). */
  needs?: Capability[];
  /** Changes cluster-wide state (rebalance, decommission): runs only with --allow-admin-mutations. */
  mutates?: boolean;
  run(target: Target): Promise<void>;
}

/** The profile a check belongs to. */
export function profileOf(check: Pick<Check, 'id' | 'profile'>): Profile {
  return check.profile ?? (check.id.startsWith('s3.') || check.id.startsWith('model.') ? 's3' : 'svc');
}

/** Where a check's expectation comes from, as reports print it. */
export function sourceOf(check: Pick<Check, 'id' | 'profile' | 'spec' | 'source'>): string {
  return check.source ?? (profileOf(check) === 'svc' ? `SPEC.md: ${check.spec}` : '');
}

export function expectThat(condition: unknown, message: string): asserts condition {
  if (!condition) throw new CheckFailure(message);
}

/** The S3 error name of a failed SDK call, or 'no error'. */
export async function errorOf(promise: Promise<unknown>): Promise<{ name: string; status?: number }> {
  try {
    await promise;
    return { name: 'no error' };
  } catch (error) {
    const failure = error as { name?: string; $metadata?: { httpStatusCode?: number } };
    return { name: failure.name ?? 'Error', ...(failure.$metadata?.httpStatusCode !== undefined ? { status: failure.$metadata.httpStatusCode } : {}) };
  }
}
