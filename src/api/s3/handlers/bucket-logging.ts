/**
 * Put/GetBucketLogging: a bucket's server access logging, kept in its record (BucketLoggingStatus
 * with LoggingEnabled: TargetBucket, TargetPrefix, TargetGrants, TargetObjectKeyFormat). The
 * target must be a bucket of this deployment (one account, one region) whose policy does not deny
 * the logging service (`logging.s3.amazonaws.com`) s3:PutObject under the prefix; target grants
 * are not taken by a target under BucketOwnerEnforced. Delivery: src/ops/access-log/.
 */
import { SvcError } from '../../../errors/index.js';
import { evaluatePolicies, parsePolicy, type AclGrant } from '../../../iam/index.js';
import type { BucketLogging, BucketRecord } from '../../../object/index.js';
import { limits } from '../../../util/limits.js';
import { readAll, type S3Context, type S3Request, type S3Response } from '../context.js';
import { aclFromBody, aclsEnabled, grantElement } from '../acl-request.js';
import { parseXmlBody, toXml } from '../xml.js';

/** The principal S3 delivers server access logs as. */
export const loggingServicePrincipal = 'service:logging.s3.amazonaws.com';

/** Whether the target bucket's policy lets the logging service write logs under the prefix (no explicit Deny). */
export function targetRefusesDelivery(target: BucketRecord, prefix: string): boolean {
  if (target.policy === undefined) return false;
  const policy = parsePolicy(target.policy, { bucket: target.name });
  const request = { action: 's3:PutObject', resource: `arn:aws:s3:::${target.name}/${prefix}`, principal: loggingServicePrincipal, context: {} };
  return evaluatePolicies([policy], request) === 'Deny';
}

function keyFormatOf(element: unknown): BucketLogging['keyFormat'] {
  if (element === undefined || element === '') return { kind: 'simple' };
  const format = element as Record<string, unknown>;
  if (format.PartitionedPrefix !== undefined) {
    const source = (format.PartitionedPrefix as Record<string, unknown> | '').valueOf() === '' ? undefined : (format.PartitionedPrefix as Record<string, unknown>).PartitionDateSource;
    if (source !== undefined && source !== 'EventTime' && source !== 'DeliveryTime') throw new SvcError('MalformedXML', 'PartitionDateSource must be EventTime or DeliveryTime.');
    return { kind: 'partitioned', dateSource: source === 'DeliveryTime' ? 'DeliveryTime' : 'EventTime' };
  }
  if (format.SimplePrefix !== undefined) return { kind: 'simple' };
  throw new SvcError('MalformedXML', 'TargetObjectKeyFormat holds SimplePrefix or PartitionedPrefix.');
}

/** The grants of a TargetGrants element, read as an ACL's. */
function targetGrantsOf(element: unknown, owner: string): AclGrant[] | undefined {
  if (element === undefined) return undefined;
  const grants = typeof element === 'object' && element !== null ? (element as Record<string, unknown>).Grant ?? [] : [];
  const asPolicy = toXml('AccessControlPolicy', { AccessControlList: { Grant: grants } });
  return aclFromBody(Buffer.from(asPolicy), owner).grants;
}

/** A BucketLoggingStatus body: the logging it turns on, or undefined (an empty status turns it off). */
export function parseBucketLogging(body: Uint8Array, owner: string): BucketLogging | undefined {
  const status = parseXmlBody(body, ['Grant']).BucketLoggingStatus;
  if (status === undefined) throw new SvcError('MalformedXML', 'The body must be a BucketLoggingStatus.');
  const enabled = typeof status === 'object' && status !== null ? (status as Record<string, unknown>).LoggingEnabled : undefined;
  if (enabled === undefined) return undefined;
  const fields = (typeof enabled === 'object' && enabled !== null ? enabled : {}) as Record<string, unknown>;
  if (typeof fields.TargetBucket !== 'string' || fields.TargetBucket === '') throw new SvcError('MalformedXML', 'LoggingEnabled needs a TargetBucket.');
  if (fields.TargetPrefix !== undefined && typeof fields.TargetPrefix !== 'string') throw new SvcError('MalformedXML', 'TargetPrefix must be text.');
  const grants = targetGrantsOf(fields.TargetGrants, owner);
  return { targetBucket: fields.TargetBucket, targetPrefix: (fields.TargetPrefix as string | undefined) ?? '', keyFormat: keyFormatOf(fields.TargetObjectKeyFormat), ...(grants ? { targetGrants: grants } : {}) };
}

export async function putBucketLogging(context: S3Context, request: S3Request, bucket: string): Promise<S3Response> {
  await context.objects.requireBucket(bucket);
  const owner = context.ownerId ?? request.auth.accessKeyId;
  const logging = parseBucketLogging(await readAll(request.body, limits.maxXmlConfigBodyBytes), owner);
  if (logging !== undefined) {
    const target = await context.objects.bucketRecord(logging.targetBucket);
    if (!target) throw new SvcError('InvalidTargetBucketForLogging', `The target bucket ${logging.targetBucket} does not exist.`, { errorFields: { TargetBucket: logging.targetBucket } });
    if (logging.targetGrants !== undefined && logging.targetGrants.length > 0 && !aclsEnabled(target)) {
      throw new SvcError('InvalidTargetBucketForLogging', `The target bucket ${logging.targetBucket} has Object Ownership BucketOwnerEnforced, which takes no target grants.`, { errorFields: { TargetBucket: logging.targetBucket } });
    }
    if (targetRefusesDelivery(target, logging.targetPrefix)) {
      throw new SvcError('InvalidTargetBucketForLogging', `The policy of ${logging.targetBucket} denies the logging service (logging.s3.amazonaws.com) s3:PutObject.`, { errorFields: { TargetBucket: logging.targetBucket } });
    }
  }
  await context.objects.setBucketLogging(bucket, logging);
  return { status: 200, headers: {} };
}

export async function getBucketLogging(context: S3Context, _request: S3Request, bucket: string): Promise<S3Response> {
  const record = await context.objects.requireBucket(bucket);
  const logging = record.logging;
  if (logging === undefined) return { status: 200, headers: { 'content-type': 'application/xml' }, body: toXml('BucketLoggingStatus', {}) };
  const format = logging.keyFormat.kind === 'simple' ? { SimplePrefix: '' } : { PartitionedPrefix: { PartitionDateSource: logging.keyFormat.dateSource } };
  const grants = logging.targetGrants === undefined ? {} : { TargetGrants: { Grant: logging.targetGrants.map(grantElement) } };
  return { status: 200, headers: { 'content-type': 'application/xml' }, body: toXml('BucketLoggingStatus', { LoggingEnabled: { TargetBucket: logging.targetBucket, TargetPrefix: logging.targetPrefix, ...grants, TargetObjectKeyFormat: format } }) };
}
