/**
 * The ACL part of the one authorization decision: where no policy allows or denies an action,
 * the bucket's ACL (bucket actions, and WRITE's object writes) or the object's ACL (reads and
 * ACL access of an object) may allow it, as AWS maps ACL permissions to actions. Nothing here
 * ever overrides an explicit Deny, and a service account's or session's own policy still limits.
 * ACLs count for nothing under BucketOwnerEnforced; IgnorePublicAcls drops the public grants.
 */
import { isSvcError } from '../../errors/index.js';
import { aclAllows, bucketAclObjectActions, evaluatePolicies, userNameOf, type AccessRequest, type AclRequester, type Permission, type Principal } from '../../iam/index.js';
import { aclsEnabled, bucketAclOf, objectAclOf } from './acl-request.js';
import { headerValue, type S3Context } from './context.js';
import { parseCopySource } from './router.js';

/** Object actions an object's own ACL decides. */
const objectAclActions = new Set(['s3:GetObject', 's3:GetObjectVersion', 's3:GetObjectAcl', 's3:GetObjectVersionAcl', 's3:PutObjectAcl', 's3:PutObjectVersionAcl']);
const bucketAclActions = new Set(['s3:ListBucket', 's3:ListBucketVersions', 's3:ListBucketMultipartUploads', 's3:GetBucketAcl', 's3:PutBucketAcl']);

export interface AclCaller {
  principal: Principal | undefined;
  query: URLSearchParams;
  headers?: Record<string, string | string[] | undefined>;
}

/** Whether an ACL allows the permission (judged after the policies found no match). */
export async function aclAllowsPermission(context: Pick<S3Context, 'objects' | 'ownerId'>, caller: AclCaller, permission: Permission, request: AccessRequest): Promise<boolean> {
  const { bucket, key, action } = permission;
  if (bucket === undefined) return false;
  const onObject = key !== undefined;
  if (onObject ? !objectAclActions.has(action) && !bucketAclObjectActions.has(action) : !bucketAclActions.has(action)) return false;
  if (!withinLimits(caller.principal, request)) return false;
  const record = await context.objects.bucketRecord(bucket).catch(() => undefined);
  if (!record || !aclsEnabled(record)) return false;
  const owner = context.ownerId ?? '';
  const requester: AclRequester = { id: caller.principal === undefined ? undefined : userNameOf(caller.principal) };
  const ignorePublic = record.publicAccessBlock?.ignorePublicAcls === true;
  if (!onObject || bucketAclObjectActions.has(action)) return aclAllows(bucketAclOf(record, owner), requester, action, 'bucket', ignorePublic);
  const info = await context.objects.headObject(bucket, key, versionOf(caller, bucket, key)).catch((error: unknown) => {
    if ((['NoSuchKey', 'NoSuchVersion', 'MethodNotAllowed', 'NoSuchBucket'] as const).some((code) => isSvcError(error, code))) return undefined;
    throw error;
  });
  return info !== undefined && aclAllows(objectAclOf(record, info.systemMetadata, owner), requester, action, 'object', ignorePublic);
}

/** A service account's or session's own policies limit what ACLs give it, as they limit what policies give. */
function withinLimits(principal: Principal | undefined, request: AccessRequest): boolean {
  return (principal?.limits ?? []).every((limit) => evaluatePolicies([limit], request) === 'Allow');
}

/** The version a permission is about: the copy source's for a copy's read, else the request's `versionId`. */
function versionOf(caller: AclCaller, bucket: string, key: string): string | undefined {
  const copySource = caller.headers === undefined ? undefined : headerValue(caller.headers, 'x-amz-copy-source');
  const source = copySource === undefined ? undefined : parseCopySource(copySource);
  if (source !== undefined && source.bucket === bucket && source.key === key) return source.versionId;
  return caller.query.get('versionId') ?? undefined;
}
