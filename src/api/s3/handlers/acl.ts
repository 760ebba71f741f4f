/**
 * Get/PutBucketAcl and Get/PutObjectAcl. An ACL is set by a canned `x-amz-acl`, by
 * `x-amz-grant-*` headers or by an AccessControlPolicy body (one of them); under the bucket's
 * Object Ownership BucketOwnerEnforced only the owner's full control is accepted and reading
 * answers it. The grants are judged with the policies (src/api/s3/access.ts).
 */
import { SvcError } from '../../../errors/index.js';
import { encodeAcl, type Acl } from '../../../iam/index.js';
import { limits } from '../../../util/limits.js';
import { readAll, type S3Context, type S3Request, type S3Response } from '../context.js';
import { aclFromBody, aclFromHeaders, aclsEnabled, aclXml, bucketAclOf, checkAclAccepted, hasAclHeaders, objectAclKey, objectAclOf, ownerIdOf } from '../acl-request.js';

const xmlAnswer = (acl: Acl, headers: Record<string, string> = {}): S3Response => ({ status: 200, headers: { 'content-type': 'application/xml', ...headers }, body: aclXml(acl) });
const versionHeader = (versionId: string): Record<string, string> => (versionId !== 'null' ? { 'x-amz-version-id': versionId } : {});

export async function getBucketAcl(context: S3Context, request: S3Request, bucket: string): Promise<S3Response> {
  const record = await context.objects.requireBucket(bucket);
  return xmlAnswer(bucketAclOf(record, ownerIdOf(context, request)));
}

export async function getObjectAcl(context: S3Context, request: S3Request, bucket: string, key: string): Promise<S3Response> {
  const info = await context.objects.headObject(bucket, key, request.query.get('versionId') ?? undefined);
  const record = await context.objects.bucketRecord(bucket);
  return xmlAnswer(objectAclOf(record, info.systemMetadata, ownerIdOf(context, request)), versionHeader(info.versionId));
}

export async function putBucketAcl(context: S3Context, request: S3Request, bucket: string): Promise<S3Response> {
  const record = await context.objects.requireBucket(bucket);
  const owner = ownerIdOf(context, request);
  const acl = await requestedAcl(request, owner);
  checkAclAccepted(record, acl, owner);
  if (aclsEnabled(record)) await context.objects.setBucketAcl(bucket, acl);
  return { status: 200, headers: {} };
}

export async function putObjectAcl(context: S3Context, request: S3Request, bucket: string, key: string): Promise<S3Response> {
  const record = await context.objects.requireBucket(bucket);
  const owner = ownerIdOf(context, request);
  const acl = await requestedAcl(request, owner);
  checkAclAccepted(record, acl, owner);
  const versionId = request.query.get('versionId') ?? undefined;
  const info = aclsEnabled(record)
    ? await context.objects.updateVersionMetadata(bucket, key, versionId, (version) => ({ systemMetadata: { ...version.systemMetadata, [objectAclKey]: encodeAcl(acl) } }))
    : await context.objects.headObject(bucket, key, versionId);
  return { status: 200, headers: versionHeader(info.versionId) };
}

/** The ACL a Put*Acl request sets: from its body or from its headers, never both, never neither. */
async function requestedAcl(request: S3Request, owner: string): Promise<Acl> {
  const body = await readAll(request.body, limits.maxXmlConfigBodyBytes);
  const fromHeaders = hasAclHeaders(request.headers);
  if (body.length > 0 && fromHeaders) throw new SvcError('InvalidRequest', 'Give either an ACL body or ACL headers, not both.');
  if (body.length > 0) return aclFromBody(body, owner);
  const acl = aclFromHeaders(request.headers, owner);
  if (acl === undefined) throw new SvcError('MalformedACLError', 'Give an AccessControlPolicy body, x-amz-acl or an x-amz-grant-* header.');
  return acl;
}
