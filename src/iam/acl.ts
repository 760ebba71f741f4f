/**
 * Access control lists as S3 keeps them on buckets and objects: an owner and a list of grants,
 * each giving one permission (READ, WRITE, READ_ACP, WRITE_ACP, FULL_CONTROL) to a canonical user
 * (a user's canonical id is its name; the owner's is the root account's) or to one of S3's
 * groups. What each permission allows follows AWS's mapping of ACL permissions to actions.
 * Pure: parsing of headers and XML happens in the S3 layer.
 */
import { SvcError } from '../errors/index.js';

export type AclPermission = 'READ' | 'WRITE' | 'READ_ACP' | 'WRITE_ACP' | 'FULL_CONTROL';
export const aclPermissions: readonly AclPermission[] = ['READ', 'WRITE', 'READ_ACP', 'WRITE_ACP', 'FULL_CONTROL'];

export const allUsersUri = 'http://acs.amazonaws.com/groups/global/AllUsers';
export const authenticatedUsersUri = 'http://acs.amazonaws.com/groups/global/AuthenticatedUsers';
export const logDeliveryUri = 'http://acs.amazonaws.com/groups/s3/LogDelivery';
export const groupUris: readonly string[] = [allUsersUri, authenticatedUsersUri, logDeliveryUri];

export type AclGrantee = { type: 'CanonicalUser'; id: string } | { type: 'Group'; uri: string };

export interface AclGrant {
  grantee: AclGrantee;
  permission: AclPermission;
}

export interface Acl {
  /** The owner's canonical id. */
  owner: string;
  grants: AclGrant[];
}

/** S3 Object Ownership: who owns new objects, and whether ACLs count at all. */
export type ObjectOwnership = 'BucketOwnerEnforced' | 'BucketOwnerPreferred' | 'ObjectWriter';
export const objectOwnerships: readonly ObjectOwnership[] = ['BucketOwnerEnforced', 'BucketOwnerPreferred', 'ObjectWriter'];

export const cannedAcls = ['private', 'public-read', 'public-read-write', 'authenticated-read', 'aws-exec-read', 'bucket-owner-read', 'bucket-owner-full-control', 'log-delivery-write'] as const;
export type CannedAcl = (typeof cannedAcls)[number];

const user = (id: string, permission: AclPermission): AclGrant => ({ grantee: { type: 'CanonicalUser', id }, permission });
const group = (uri: string, permission: AclPermission): AclGrant => ({ grantee: { type: 'Group', uri }, permission });

/** The owner alone, with FULL_CONTROL (what `private` and every fresh bucket or object has). */
export function privateAcl(owner: string): Acl {
  return { owner, grants: [user(owner, 'FULL_CONTROL')] };
}

/** The grants of a canned ACL; `bucketOwner` is the owner of the bucket an object is in. */
export function cannedAcl(name: string, owner: string, bucketOwner: string = owner): Acl {
  const own = user(owner, 'FULL_CONTROL');
  switch (name) {
    case 'private': return { owner, grants: [own] };
    case 'public-read': return { owner, grants: [own, group(allUsersUri, 'READ')] };
    case 'public-read-write': return { owner, grants: [own, group(allUsersUri, 'READ'), group(allUsersUri, 'WRITE')] };
    case 'authenticated-read': return { owner, grants: [own, group(authenticatedUsersUri, 'READ')] };
    // EC2 reads AMI bundles; no such service here, so it is the owner alone.
    case 'aws-exec-read': return { owner, grants: [own] };
    case 'bucket-owner-read': return { owner, grants: bucketOwner === owner ? [own] : [own, user(bucketOwner, 'READ')] };
    case 'bucket-owner-full-control': return { owner, grants: bucketOwner === owner ? [own] : [own, user(bucketOwner, 'FULL_CONTROL')] };
    case 'log-delivery-write': return { owner, grants: [own, group(logDeliveryUri, 'WRITE'), group(logDeliveryUri, 'READ_ACP')] };
    default: throw new SvcError('InvalidArgument', `'${name}' is not a canned ACL: use one of ${cannedAcls.join(', ')}.`, { errorFields: { ArgumentName: 'x-amz-acl', ArgumentValue: name } });
  }
}

/** The permission each `x-amz-grant-*` header gives. */
export const grantHeaders: Readonly<Record<string, AclPermission>> = {
  'x-amz-grant-read': 'READ',
  'x-amz-grant-write': 'WRITE',
  'x-amz-grant-read-acp': 'READ_ACP',
  'x-amz-grant-write-acp': 'WRITE_ACP',
  'x-amz-grant-full-control': 'FULL_CONTROL',
};

/**
 * The grantees of one `x-amz-grant-*` header value: a comma-separated list of `id="..."`,
 * `uri="..."` or `emailAddress="..."` (refused: there are no e-mail identities here).
 */
export function granteesOfHeader(header: string, value: string): AclGrantee[] {
  return value.split(',').map((item) => item.trim()).filter((item) => item !== '').map((item) => {
    const match = /^(id|uri|emailAddress)\s*=\s*"?([^"]*)"?$/i.exec(item);
    if (!match) throw new SvcError('InvalidArgument', `${header}: '${item}' is not id="...", uri="..." or emailAddress="...".`, { errorFields: { ArgumentName: header, ArgumentValue: item } });
    const kind = match[1]!.toLowerCase();
    const name = match[2]!;
    if (kind === 'emailaddress') throw new SvcError('UnresolvableGrantByEmailAddress', `${header}: no user has the e-mail address ${name}.`);
    return checkGrantee(kind === 'id' ? { type: 'CanonicalUser', id: name } : { type: 'Group', uri: name });
  });
}

/** A grantee is a non-empty canonical id or one of S3's three groups. */
export function checkGrantee(grantee: AclGrantee): AclGrantee {
  if (grantee.type === 'Group' && !groupUris.includes(grantee.uri)) throw new SvcError('InvalidArgument', `'${grantee.uri}' is not a group: use ${groupUris.join(', ')}.`, { errorFields: { ArgumentName: 'uri', ArgumentValue: grantee.uri } });
  if (grantee.type === 'CanonicalUser' && grantee.id === '') throw new SvcError('InvalidArgument', 'A grantee ID cannot be empty.');
  return grantee;
}

const sameGrantee = (a: AclGrantee, b: AclGrantee): boolean => (a.type === 'CanonicalUser' ? b.type === 'CanonicalUser' && a.id === b.id : b.type === 'Group' && a.uri === b.uri);

/** Whether the ACL gives anyone but its owner (and the bucket owner) any access. */
export function grantsOthers(acl: Acl, bucketOwner: string = acl.owner): boolean {
  return acl.grants.some((grant) => !(grant.grantee.type === 'CanonicalUser' && (grant.grantee.id === acl.owner || grant.grantee.id === bucketOwner)));
}

/** Under BucketOwnerEnforced an ACL is accepted only when it gives the bucket owner full control and nobody anything. */
export function isOwnerFullControl(acl: Acl, bucketOwner: string): boolean {
  return !grantsOthers(acl, bucketOwner) && acl.grants.some((grant) => sameGrantee(grant.grantee, { type: 'CanonicalUser', id: bucketOwner }) && grant.permission === 'FULL_CONTROL');
}

/** Public in AWS's sense: some grant reaches AllUsers or AuthenticatedUsers. */
export function isPublicAcl(acl: Acl): boolean {
  return acl.grants.some((grant) => grant.grantee.type === 'Group' && (grant.grantee.uri === allUsersUri || grant.grantee.uri === authenticatedUsersUri));
}

/** What an ACL permission allows on a bucket (WRITE on a bucket lets one create and delete its objects). */
const bucketPermissionActions: Record<AclPermission, readonly string[]> = {
  READ: ['s3:ListBucket', 's3:ListBucketVersions', 's3:ListBucketMultipartUploads'],
  WRITE: ['s3:PutObject', 's3:DeleteObject', 's3:DeleteObjectVersion', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'],
  READ_ACP: ['s3:GetBucketAcl'],
  WRITE_ACP: ['s3:PutBucketAcl'],
  FULL_CONTROL: [],
};

const objectPermissionActions: Record<AclPermission, readonly string[]> = {
  READ: ['s3:GetObject', 's3:GetObjectVersion', 's3:GetObjectTorrent', 's3:GetObjectVersionTorrent'],
  WRITE: [],
  READ_ACP: ['s3:GetObjectAcl', 's3:GetObjectVersionAcl'],
  WRITE_ACP: ['s3:PutObjectAcl', 's3:PutObjectVersionAcl'],
  FULL_CONTROL: [],
};

/** Actions on objects that a bucket's ACL decides (the object itself may not exist yet). */
export const bucketAclObjectActions: ReadonlySet<string> = new Set(bucketPermissionActions.WRITE);

function permissionAllows(permission: AclPermission, action: string, on: 'bucket' | 'object'): boolean {
  const table = on === 'bucket' ? bucketPermissionActions : objectPermissionActions;
  if (permission === 'FULL_CONTROL') return aclPermissions.some((each) => each !== 'FULL_CONTROL' && table[each].includes(action));
  return table[permission].includes(action);
}

/** Who is asking: a canonical id, or undefined for an anonymous request. */
export interface AclRequester {
  id: string | undefined;
}

/**
 * Whether an ACL allows one action to the requester. With `ignorePublic` (IgnorePublicAcls)
 * grants to AllUsers and AuthenticatedUsers count for nothing.
 */
export function aclAllows(acl: Acl, requester: AclRequester, action: string, on: 'bucket' | 'object', ignorePublic: boolean): boolean {
  return acl.grants.some((grant) => {
    if (!permissionAllows(grant.permission, action, on)) return false;
    const grantee = grant.grantee;
    if (grantee.type === 'CanonicalUser') return requester.id !== undefined && grantee.id === requester.id;
    if (ignorePublic) return false;
    if (grantee.uri === allUsersUri) return true;
    return grantee.uri === authenticatedUsersUri && requester.id !== undefined;
  });
}

/** The ACL as stored (JSON); checked when read back. */
export function encodeAcl(acl: Acl): string {
  return JSON.stringify(acl);
}

export function decodeAcl(text: string): Acl {
  const value = JSON.parse(text) as Partial<Acl>;
  if (!isAcl(value)) throw new SvcError('CorruptFormat', 'a stored ACL has invalid fields');
  return value;
}

export function isAcl(value: unknown): value is Acl {
  const acl = value as Partial<Acl> | null;
  return typeof acl === 'object' && acl !== null && typeof acl.owner === 'string' && Array.isArray(acl.grants) && acl.grants.every((grant: Partial<AclGrant>) =>
    typeof grant === 'object' && grant !== null && aclPermissions.includes(grant.permission as AclPermission) && typeof grant.grantee === 'object' && grant.grantee !== null &&
    ((grant.grantee.type === 'CanonicalUser' && typeof grant.grantee.id === 'string') || (grant.grantee.type === 'Group' && typeof grant.grantee.uri === 'string')));
}
