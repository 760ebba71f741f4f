/**
 * Bucket and object ACLs. There is one user, the owner, and it holds FULL_CONTROL of everything:
 * reading an ACL says so, writing one that keeps it that way (the canned `private`, or a policy
 * granting only the owner) is accepted, and anything granting access to others is refused with
 * AccessControlListNotSupported (canned ACL and grant headers are refused by the request guards).
 */
import { SvcError } from '../../../errors/index.js';
import { limits } from '../../../util/limits.js';
import { readAll, type S3Context, type S3Request, type S3Response } from '../context.js';
import { parseXmlBody, toXml } from '../xml.js';

const xsi = 'http://www.w3.org/2001/XMLSchema-instance';

function ownerPolicy(ownerId: string): S3Response {
  const owner = { ID: ownerId, DisplayName: ownerId };
  const grantee = { '@_xmlns:xsi': xsi, '@_xsi:type': 'CanonicalUser', ...owner };
  return { status: 200, headers: { 'content-type': 'application/xml' }, body: toXml('AccessControlPolicy', { Owner: owner, AccessControlList: { Grant: [{ Grantee: grantee, Permission: 'FULL_CONTROL' }] } }) };
}

export async function getBucketAcl(context: S3Context, request: S3Request, bucket: string): Promise<S3Response> {
  await context.objects.requireBucket(bucket);
  return ownerPolicy(request.auth.accessKeyId);
}

export async function getObjectAcl(context: S3Context, request: S3Request, bucket: string, key: string): Promise<S3Response> {
  await context.objects.headObject(bucket, key, request.query.get('versionId') ?? undefined);
  return ownerPolicy(request.auth.accessKeyId);
}

export async function putBucketAcl(context: S3Context, request: S3Request, bucket: string): Promise<S3Response> {
  await context.objects.requireBucket(bucket);
  await checkAclBody(request);
  return { status: 200, headers: {} };
}

export async function putObjectAcl(context: S3Context, request: S3Request, bucket: string, key: string): Promise<S3Response> {
  const info = await context.objects.headObject(bucket, key, request.query.get('versionId') ?? undefined);
  await checkAclBody(request);
  return { status: 200, headers: info.versionId !== 'null' ? { 'x-amz-version-id': info.versionId } : {} };
}

/** An AccessControlPolicy body may grant only the owner; an empty body needs an ACL header. */
async function checkAclBody(request: S3Request): Promise<void> {
  const body = await readAll(request.body, limits.maxXmlConfigBodyBytes);
  const hasHeaders = request.headers['x-amz-acl'] !== undefined || Object.keys(request.headers).some((name) => name.startsWith('x-amz-grant-'));
  if (body.length === 0) {
    if (!hasHeaders) throw new SvcError('MalformedXML', 'Give an AccessControlPolicy body, x-amz-acl or an x-amz-grant-* header.');
    return;
  }
  if (hasHeaders) throw new SvcError('InvalidRequest', 'Give either an ACL body or ACL headers, not both.');
  const policy = parseXmlBody(body, ['Grant']).AccessControlPolicy as Record<string, unknown> | undefined;
  const grants = ((policy?.AccessControlList as Record<string, unknown> | undefined)?.Grant ?? []) as Record<string, unknown>[];
  if (!policy || !Array.isArray(grants)) throw new SvcError('MalformedXML', 'The body must be an AccessControlPolicy.');
  const ownerId = request.auth.accessKeyId;
  for (const grant of grants) {
    const grantee = (grant.Grantee ?? {}) as Record<string, unknown>;
    if (grantee.ID !== ownerId) {
      const who = String(grantee.URI ?? grantee.EmailAddress ?? grantee.ID ?? 'an unnamed grantee');
      throw new SvcError('AccessControlListNotSupported', `The ACL grants ${String(grant.Permission)} to ${who}; only the owner can hold access here.`);
    }
  }
}
