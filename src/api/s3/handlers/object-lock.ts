/**
 * Object lock: Put/GetObjectLockConfiguration (`?object-lock`), Put/GetObjectRetention
 * (`?retention`), Put/GetObjectLegalHold (`?legal-hold`), the `x-amz-object-lock-*` headers of
 * PutObject, CopyObject and CreateMultipartUpload, and the governance bypass of deletes. The rules
 * themselves (what may be removed or shortened) live in the object layer (src/object/object-lock.ts).
 */
import { SvcError, isSvcError } from '../../../errors/index.js';
import {
  BodyDigests,
  checkDefaultRetention,
  checkRetentionChange,
  isRetentionMode,
  legalHoldKey,
  lockModeKey,
  lockRetainUntilKey,
  versionLock,
  withLegalHold,
  withRetention,
  type BucketObjectLock,
  type ObjectInfo,
  type Retention,
} from '../../../object/index.js';
import { limits } from '../../../util/limits.js';
import { expectationsFrom, PayloadVerifier } from '../auth/checksums.js';
import { headerValue, readAll, type S3Context, type S3Request, type S3Response } from '../context.js';
import { parseXmlBody, toXml } from '../xml.js';
import type { ReplicationChange } from '../../../ops/replication/types.js';

type Headers = Record<string, string | string[] | undefined>;

const xml = (root: string, content: Record<string, unknown>, headers: Record<string, string> = {}): S3Response => ({
  status: 200,
  headers: { 'content-type': 'application/xml', ...headers },
  body: toXml(root, content),
});
const versionHeader = (info: ObjectInfo): Record<string, string> => (info.versionId !== 'null' ? { 'x-amz-version-id': info.versionId } : {});

/** Whether the request promises its body's integrity (Content-MD5 or an x-amz-checksum-* header or trailer). */
export function hasIntegrityHeader(headers: Headers): boolean {
  const expectations = expectationsFrom(headers, undefined);
  return expectations.contentMd5Base64 !== undefined || expectations.checksums.size > 0;
}

/** S3 requires an integrity header on requests that set object lock parameters. */
export function requireIntegrityHeader(headers: Headers): void {
  if (!hasIntegrityHeader(headers)) throw new SvcError('InvalidRequest', 'Content-MD5 OR x-amz-checksum- HTTP header is required for Put Object requests with Object Lock parameters');
}

/** Reads a small configuration body that must carry Content-MD5 or a checksum, and checks it. */
async function readVerifiedBody(request: S3Request): Promise<Uint8Array> {
  requireIntegrityHeader(request.headers);
  const expectations = expectationsFrom(request.headers, request.trailers);
  if (request.auth.payload.kind === 'sha256') expectations.sha256Hex = request.auth.payload.expectedHex;
  const verifier = new PayloadVerifier(expectations);
  const body = await readAll(request.body, limits.maxXmlConfigBodyBytes);
  const digests = new BodyDigests(verifier.algorithms);
  digests.update(body);
  const values = digests.finish();
  verifier.verify({ md5Hex: values.md5, sizeBytes: body.length, digests: values });
  return body;
}

/**
 * `x-amz-bypass-governance-retention: true` from a caller who holds s3:BypassGovernanceRetention.
 * Without the permission the header counts for nothing: a governance-locked version then stays
 * refused (AccessDenied), anything else proceeds.
 */
export async function governanceBypass(request: S3Request, bucket: string, key: string): Promise<boolean> {
  if (headerValue(request.headers, 'x-amz-bypass-governance-retention')?.toLowerCase() !== 'true') return false;
  try {
    await request.authorize?.('s3:BypassGovernanceRetention', bucket, key);
    return true;
  } catch (error) {
    if (isSvcError(error, 'AccessDenied')) return false;
    throw error;
  }
}

/**
 * The lock fields a new version asks for in its `x-amz-object-lock-*` headers (checked, and the
 * caller's permissions to set them); empty when it asks for none.
 */
export async function lockFieldsFromHeaders(request: S3Request, bucket: string, key: string, nowMs: number): Promise<Record<string, string>> {
  const mode = headerValue(request.headers, lockModeKey);
  const until = headerValue(request.headers, lockRetainUntilKey);
  const hold = headerValue(request.headers, legalHoldKey);
  let fields: Record<string, string> = {};
  if (mode !== undefined || until !== undefined) {
    if (mode === undefined || until === undefined) throw new SvcError('InvalidArgument', 'x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied');
    if (!isRetentionMode(mode)) throw new SvcError('InvalidArgument', `Unknown wormMode directive: x-amz-object-lock-mode must be GOVERNANCE or COMPLIANCE, not '${mode}'.`);
    const retainUntilMs = parseDate(until, 'InvalidArgument');
    if (retainUntilMs <= nowMs) throw new SvcError('InvalidArgument', 'The retain until date must be in the future!');
    await request.authorize?.('s3:PutObjectRetention', bucket, key);
    fields = withRetention(fields, { mode, retainUntilMs });
  }
  if (hold !== undefined) {
    if (hold !== 'ON' && hold !== 'OFF') throw new SvcError('InvalidArgument', 'Legal Hold must be either of \'ON\' or \'OFF\'');
    await request.authorize?.('s3:PutObjectLegalHold', bucket, key);
    fields = withLegalHold(fields, hold);
  }
  return fields;
}

/**
 * A GET or HEAD shows a version's retention only to a caller who may read it
 * (s3:GetObjectRetention), and its legal hold likewise (s3:GetObjectLegalHold), as S3 does.
 */
export async function withoutHiddenLockHeaders(request: S3Request, bucket: string, key: string, headers: Record<string, string | number>): Promise<Record<string, string | number>> {
  const may = async (action: string): Promise<boolean> => {
    try {
      await request.authorize?.(action, bucket, key);
      return true;
    } catch (error) {
      if (isSvcError(error, 'AccessDenied')) return false;
      throw error;
    }
  };
  const shown = { ...headers };
  if (lockModeKey in shown && !(await may('s3:GetObjectRetention'))) {
    delete shown[lockModeKey];
    delete shown[lockRetainUntilKey];
  }
  if (legalHoldKey in shown && !(await may('s3:GetObjectLegalHold'))) delete shown[legalHoldKey];
  return shown;
}

function parseDate(text: string, code: 'InvalidArgument' | 'MalformedXML'): number {
  const ms = /^\d{4}-\d{2}-\d{2}T/.test(text) ? Date.parse(text) : NaN;
  if (!Number.isFinite(ms)) throw new SvcError(code, `The retain until date must be an ISO 8601 date and time, not '${text}'.`);
  return ms;
}

// --- bucket configuration ------------------------------------------------------------------

export async function putObjectLockConfiguration(context: S3Context, request: S3Request, bucket: string): Promise<S3Response> {
  await context.objects.requireBucket(bucket);
  const lock = parseLockConfiguration(await readVerifiedBody(request));
  await context.objects.setBucketObjectLock(bucket, lock);
  return { status: 200, headers: {} };
}

export async function getObjectLockConfiguration(context: S3Context, _request: S3Request, bucket: string): Promise<S3Response> {
  const record = await context.objects.requireBucket(bucket);
  if (!record.objectLock) throw new SvcError('ObjectLockConfigurationNotFoundError', undefined, { bucket });
  const rule = record.objectLock.defaultRetention;
  const period = rule?.days !== undefined ? { Days: rule.days } : { Years: rule?.years };
  return xml('ObjectLockConfiguration', { ObjectLockEnabled: 'Enabled', ...(rule ? { Rule: { DefaultRetention: { Mode: rule.mode, ...period } } } : {}) });
}

function parseLockConfiguration(body: Uint8Array): BucketObjectLock {
  const root = parseXmlBody(body).ObjectLockConfiguration;
  if (typeof root !== 'object' || root === null) throw new SvcError('MalformedXML', 'The body must be <ObjectLockConfiguration>...</ObjectLockConfiguration>.');
  const config = root as Record<string, unknown>;
  if (config.ObjectLockEnabled !== 'Enabled') throw new SvcError('MalformedXML', 'ObjectLockEnabled must be Enabled (object lock cannot be turned off).');
  if (config.Rule === undefined) return { enabled: true };
  const rule = typeof config.Rule === 'object' && config.Rule !== null ? (config.Rule as Record<string, unknown>) : undefined;
  const retention = rule?.DefaultRetention;
  if (typeof retention !== 'object' || retention === null) throw new SvcError('MalformedXML', 'Rule must hold a DefaultRetention with Mode and Days or Years.');
  const { Mode: mode, Days: days, Years: years } = retention as Record<string, unknown>;
  if (!isRetentionMode(mode)) throw new SvcError('MalformedXML', 'DefaultRetention Mode must be GOVERNANCE or COMPLIANCE.');
  const period = (value: unknown): number | undefined => {
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !/^-?\d{1,12}$/.test(value.trim())) throw new SvcError('MalformedXML', 'Days and Years must be integers.');
    return Number(value);
  };
  return { enabled: true, defaultRetention: checkDefaultRetention({ mode, ...optional('days', period(days)), ...optional('years', period(years)) }) };
}

function optional<K extends string>(name: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [name]: value } as Record<K, number>);
}

// --- per-version retention and legal hold --------------------------------------------------

async function requireLockedBucket(context: S3Context, bucket: string): Promise<void> {
  const record = await context.objects.requireBucket(bucket);
  if (!record.objectLock) throw new SvcError('InvalidRequest', 'Bucket is missing Object Lock Configuration', { bucket });
}

export async function putObjectRetention(context: S3Context, request: S3Request, bucket: string, key: string): Promise<S3Response> {
  await requireLockedBucket(context, bucket);
  const next = parseRetention(await readVerifiedBody(request));
  const bypass = await governanceBypass(request, bucket, key);
  const info = await context.objects.updateVersionMetadata(bucket, key, request.query.get('versionId') ?? undefined, (version) => {
    checkRetentionChange(version, next, context.nowMs(), bypass);
    return { systemMetadata: withRetention(version.systemMetadata, next) };
  });
  return { status: 200, headers: versionHeader(info), replicate: [versionChange(info)] };
}

/** `<Retention>` with Mode and RetainUntilDate; both absent (an empty element) removes the retention. */
function parseRetention(body: Uint8Array): Retention | undefined {
  const root = parseXmlBody(body).Retention;
  if (root === '') return undefined;
  if (typeof root !== 'object' || root === null) throw new SvcError('MalformedXML', 'The body must be <Retention><Mode/><RetainUntilDate/></Retention>.');
  const { Mode: mode, RetainUntilDate: until } = root as Record<string, unknown>;
  if (mode === undefined && until === undefined) return undefined;
  if (!isRetentionMode(mode)) throw new SvcError('MalformedXML', 'Retention Mode must be GOVERNANCE or COMPLIANCE.');
  if (typeof until !== 'string') throw new SvcError('MalformedXML', 'Retention needs a RetainUntilDate.');
  return { mode, retainUntilMs: parseDate(until.trim(), 'MalformedXML') };
}

export async function getObjectRetention(context: S3Context, request: S3Request, bucket: string, key: string): Promise<S3Response> {
  await requireLockedBucket(context, bucket);
  const info = await context.objects.headObject(bucket, key, request.query.get('versionId') ?? undefined);
  const retention = versionLock(info).retention;
  if (!retention) throw new SvcError('NoSuchObjectLockConfiguration', undefined, { bucket, key });
  return xml('Retention', { Mode: retention.mode, RetainUntilDate: new Date(retention.retainUntilMs).toISOString() }, versionHeader(info));
}

export async function putObjectLegalHold(context: S3Context, request: S3Request, bucket: string, key: string): Promise<S3Response> {
  await requireLockedBucket(context, bucket);
  const root = parseXmlBody(await readVerifiedBody(request)).LegalHold;
  const status = typeof root === 'object' && root !== null ? (root as Record<string, unknown>).Status : undefined;
  if (status !== 'ON' && status !== 'OFF') throw new SvcError('MalformedXML', 'The body must be <LegalHold><Status>ON|OFF</Status></LegalHold>.');
  const info = await context.objects.updateVersionMetadata(bucket, key, request.query.get('versionId') ?? undefined, (version) => ({
    systemMetadata: withLegalHold(version.systemMetadata, status),
  }));
  return { status: 200, headers: versionHeader(info), replicate: [versionChange(info)] };
}

export async function getObjectLegalHold(context: S3Context, request: S3Request, bucket: string, key: string): Promise<S3Response> {
  await requireLockedBucket(context, bucket);
  const info = await context.objects.headObject(bucket, key, request.query.get('versionId') ?? undefined);
  const status = info.systemMetadata[legalHoldKey];
  if (status === undefined) throw new SvcError('NoSuchObjectLockConfiguration', undefined, { bucket, key });
  return xml('LegalHold', { Status: status === 'ON' ? 'ON' : 'OFF' }, versionHeader(info));
}

/** A version whose lock fields changed, for bucket replication. */
function versionChange(info: { bucket: string; key: string; versionId: string }): ReplicationChange {
  return { bucket: info.bucket, key: info.key, versionId: info.versionId, kind: 'version' };
}
