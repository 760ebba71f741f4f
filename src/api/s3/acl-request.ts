/**
 * ACLs as requests carry them (a canned `x-amz-acl`, `x-amz-grant-*` headers, or an
 * AccessControlPolicy body) and as answers show them, checked against the bucket's Object
 * Ownership and public access block. An object's ACL is kept in its version's system metadata;
 * a bucket's in its record. None stored means the owner alone with FULL_CONTROL.
 */
import { SvcError } from '../../errors/index.js';
import {
  aclPermissions, cannedAcl, checkGrantee, decodeAcl, encodeAcl, grantHeaders, granteesOfHeader, isOwnerFullControl, isPublicAcl, privateAcl,
  type Acl, type AclGrant, type AclGrantee, type AclPermission,
} from '../../iam/index.js';
import type { BucketRecord } from '../../object/index.js';
import { headerValue, type S3Context, type S3Request } from './context.js';
import { parseXmlBody, toXml } from './xml.js';

type Headers = Record<string, string | string[] | undefined>;

/** The system metadata entry holding an object version's ACL (JSON); never sent as a header. */
export const objectAclKey = 'x-svc-acl';

/** The canonical id of the bucket owner: the deployment's root account. */
export function ownerIdOf(context: S3Context, request: { auth: Pick<S3Request['auth'], 'accessKeyId'> }): string {
  return context.ownerId ?? request.auth.accessKeyId;
}

/** ACLs count unless the bucket's Object Ownership is BucketOwnerEnforced. */
export function aclsEnabled(record: BucketRecord | undefined): boolean {
  return record?.ownership !== 'BucketOwnerEnforced';
}

/** Whether the request names an ACL in its headers. */
export function hasAclHeaders(headers: Headers): boolean {
  return headers['x-amz-acl'] !== undefined || Object.keys(grantHeaders).some((name) => headers[name] !== undefined);
}

/** The ACL a request's headers ask for (a canned ACL, or grant headers); undefined when it names none. */
export function aclFromHeaders(headers: Headers, owner: string, bucketOwner: string = owner): Acl | undefined {
  const canned = headerValue(headers, 'x-amz-acl');
  const granted = Object.entries(grantHeaders).filter(([name]) => headers[name] !== undefined);
  if (canned !== undefined && granted.length > 0) throw new SvcError('InvalidRequest', 'Specifying both Canned ACLs and Header Grants is not allowed.');
  if (canned !== undefined) return cannedAcl(canned.trim(), owner, bucketOwner);
  if (granted.length === 0) return undefined;
  const grants: AclGrant[] = granted.flatMap(([name, permission]) => granteesOfHeader(name, String(headers[name])).map((grantee) => ({ grantee, permission })));
  return { owner, grants };
}

/** The ACL of an AccessControlPolicy body; MalformedACLError when it is not one. */
export function aclFromBody(body: Uint8Array, owner: string): Acl {
  const policy = parseXmlBody(body, ['Grant']).AccessControlPolicy as Record<string, unknown> | undefined;
  if (typeof policy !== 'object' || policy === null) throw new SvcError('MalformedACLError', 'The body must be an AccessControlPolicy.');
  const sentOwner = (policy.Owner as Record<string, unknown> | undefined)?.ID;
  if (sentOwner !== undefined && sentOwner !== owner) throw new SvcError('AccessDenied', `Access Denied: the ACL names ${String(sentOwner)} as owner; the owner is ${owner}.`);
  const list = policy.AccessControlList;
  if (list === undefined) throw new SvcError('MalformedACLError', 'An AccessControlPolicy needs an AccessControlList.');
  const items = (typeof list === 'object' && list !== null ? (list as Record<string, unknown>).Grant ?? [] : []) as Record<string, unknown>[];
  return { owner, grants: items.map(grantOf) };
}

function grantOf(item: Record<string, unknown>): AclGrant {
  const permission = item.Permission as AclPermission;
  if (!aclPermissions.includes(permission)) throw new SvcError('MalformedACLError', `'${String(item.Permission)}' is not a permission: use ${aclPermissions.join(', ')}.`);
  const grantee = (item.Grantee ?? {}) as Record<string, unknown>;
  if (typeof grantee.EmailAddress === 'string') throw new SvcError('UnresolvableGrantByEmailAddress', `No user has the e-mail address ${grantee.EmailAddress}.`);
  let parsed: AclGrantee;
  if (typeof grantee.ID === 'string') parsed = { type: 'CanonicalUser', id: grantee.ID };
  else if (typeof grantee.URI === 'string') parsed = { type: 'Group', uri: grantee.URI };
  else throw new SvcError('MalformedACLError', 'Every Grant needs a Grantee with an ID or a URI.');
  return { grantee: checkGrantee(parsed), permission };
}

/**
 * Refuses an ACL the bucket does not take: under BucketOwnerEnforced anything but the bucket
 * owner's full control (AccessControlListNotSupported, or InvalidBucketAclWithObjectOwnership
 * when creating the bucket); with BlockPublicAcls a public one (AccessDenied).
 */
export function checkAclAccepted(record: Pick<BucketRecord, 'ownership' | 'publicAccessBlock'> | undefined, acl: Acl, bucketOwner: string, creating = false): void {
  if (!aclsEnabled(record as BucketRecord | undefined) && !isOwnerFullControl(acl, bucketOwner)) {
    if (creating) throw new SvcError('InvalidBucketAclWithObjectOwnership');
    throw new SvcError('AccessControlListNotSupported');
  }
  if (record?.publicAccessBlock?.blockPublicAcls === true && isPublicAcl(acl)) {
    throw new SvcError('AccessDenied', 'Access Denied: the bucket\'s public access block (BlockPublicAcls) refuses a public ACL.');
  }
}

/** The AccessControlPolicy answer of GetBucketAcl and GetObjectAcl. */
export function aclXml(acl: Acl): string {
  return toXml('AccessControlPolicy', { Owner: { ID: acl.owner, DisplayName: acl.owner }, AccessControlList: { Grant: acl.grants.map(grantElement) } });
}

/** One Grant element (of an AccessControlList, or of a logging configuration's TargetGrants). */
export function grantElement({ grantee, permission }: AclGrant): Record<string, unknown> {
  const xsi = 'http://www.w3.org/2001/XMLSchema-instance';
  return {
    Grantee: grantee.type === 'CanonicalUser'
      ? { '@_xmlns:xsi': xsi, '@_xsi:type': 'CanonicalUser', ID: grantee.id, DisplayName: grantee.id }
      : { '@_xmlns:xsi': xsi, '@_xsi:type': 'Group', URI: grantee.uri },
    Permission: permission,
  };
}

/** A bucket's ACL as it counts: the owner alone when ACLs are disabled or none was set. */
export function bucketAclOf(record: BucketRecord, owner: string): Acl {
  return aclsEnabled(record) && record.acl ? record.acl : privateAcl(owner);
}

/** An object version's ACL as it counts (the bucket's Object Ownership decides whether it does). */
export function objectAclOf(record: BucketRecord | undefined, systemMetadata: Record<string, string>, owner: string): Acl {
  const stored = systemMetadata[objectAclKey];
  return aclsEnabled(record) && stored !== undefined ? decodeAcl(stored) : privateAcl(owner);
}

/**
 * System metadata with the ACL a write asks for (PutObject, CopyObject, CreateMultipartUpload,
 * a POST form's `acl` field): it needs s3:PutObjectAcl besides the write's own action, is checked
 * against the bucket, and is kept only when it says more than `private`. A copy never takes its
 * source's ACL.
 */
export async function withRequestedAcl(context: S3Context, request: Pick<S3Request, 'authorize'> & { auth: Pick<S3Request['auth'], 'accessKeyId'>; headers: Headers }, target: { bucket: string; key: string }, systemMetadata: Record<string, string>): Promise<Record<string, string>> {
  const { [objectAclKey]: _source, ...rest } = systemMetadata;
  const owner = ownerIdOf(context, request);
  const acl = aclFromHeaders(request.headers, owner);
  if (acl === undefined) return rest;
  await request.authorize?.('s3:PutObjectAcl', target.bucket, target.key);
  const record = await context.objects.requireBucket(target.bucket);
  checkAclAccepted(record, acl, owner);
  const ownerOnly = acl.grants.length === 1 && isOwnerFullControl(acl, owner);
  return !aclsEnabled(record) || ownerOnly ? rest : { ...rest, [objectAclKey]: encodeAcl(acl) };
}
