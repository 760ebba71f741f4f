/**
 * Who may do what: every routed S3 request names the IAM actions and resources it needs, and is
 * allowed only when the caller's permissions (a user's and its groups' policies, cut down by a
 * service account's or session's own policy) or the bucket's policy allow every one of them and
 * none denies (src/iam/principal.ts decides). The root credentials are the super-user and skip
 * the policies; an unsigned request is anonymous and only a bucket policy can let it in. The
 * admin API and the console judge their routes with this same function.
 */
import { isSvcError, SvcError } from '../../errors/index.js';
import { limits } from '../../util/limits.js';
import { decide, isPublicPolicy, normaliseIp, parsePolicy, policiesMentionKey, rootPrincipal, s3ResourcePrefix, userNameOf, type Permission, type Policy, type Principal, type RequestContext } from '../../iam/index.js';
import { parseCopySource, type S3Endpoint, type CopySource } from './router.js';
import { headerValue, type S3Context } from './context.js';
import { decodeTags, tagsMetadataKey } from './handlers/tagging.js';
import type { AuthResult } from './auth/sigv4.js';
import { aclAllowsPermission } from './acl-access.js';

export type { Permission } from '../../iam/index.js';

/** What the access check needs to know about credentials (the IAM store, behind an interface). */
export interface AccessPolicies {
  rootAccessKey: string;
  /** Who an access key (with its session token) acts as; undefined when nothing usable has it. */
  principalOf(accessKey: string, sessionToken?: string): Principal | undefined;
}

/** What the access check reads: bucket policies and object tags, and the time. */
export type AccessContext = Pick<S3Context, 'objects' | 'nowMs' | 'ownerId'>;

export interface Caller {
  /** undefined: anonymous (unsigned). */
  principal: Principal | undefined;
  sourceIp: string;
  query: URLSearchParams;
  /** The request's headers (the `s3:x-amz-*` keys, `x-amz-tagging`, user agent, referer); absent: those keys are absent. */
  headers?: Record<string, string | string[] | undefined>;
  /** Whether the request came over TLS (`aws:SecureTransport`); absent: false. */
  secureTransport?: boolean;
  /** A browser form upload (POST object), signed by its POST policy (`s3:authType` POST). */
  formUpload?: boolean;
}

/** The principal of a request whose signature checked out (root, or what the IAM store says); AccessDenied when none. */
export function principalOf(access: AccessPolicies, accessKeyId: string, sessionToken: string | undefined): Principal {
  if (accessKeyId === access.rootAccessKey && sessionToken === undefined) return rootPrincipal(accessKeyId);
  const principal = access.principalOf(accessKeyId, sessionToken);
  if (!principal) throw new SvcError('AccessDenied', `Access Denied: the credentials of ${accessKeyId} are no longer valid.`);
  return principal;
}

/** No Authorization header and no presigned query: an anonymous request. */
export function isUnsigned(headers: Record<string, string | string[] | undefined>, query: URLSearchParams): boolean {
  return headers.authorization === undefined && !query.has('X-Amz-Signature') && !query.has('X-Amz-Credential') && !query.has('AWSAccessKeyId') && !query.has('Signature');
}

/** The authentication result of an anonymous request: no key, a body taken as sent. */
export function anonymousAuth(): AuthResult {
  return { accessKeyId: '', region: '', scope: '', amzDate: '', signingKey: Buffer.alloc(0), seedSignature: '', payload: { kind: 'unsigned' } };
}

/** The permissions a request needs; `per-key` when its handler checks each key (DeleteObjects). */
export function permissionsOf(endpoint: S3Endpoint, query: URLSearchParams): Permission[] | 'per-key' {
  const versioned = query.has('versionId');
  switch (endpoint.kind) {
    case 'DeleteObjects': return 'per-key';
    case 'ListBuckets': return [{ action: 's3:ListAllMyBuckets' }];
    case 'CopyObject':
    case 'UploadPartCopy':
      return [objectPermission('s3:PutObject', endpoint), readPermission(endpoint.source)];
    case 'GetObject':
    case 'HeadObject':
      return [objectPermission(versioned ? 's3:GetObjectVersion' : 's3:GetObject', endpoint)];
    case 'DeleteObject':
      return [objectPermission(versioned ? 's3:DeleteObjectVersion' : 's3:DeleteObject', endpoint)];
    case 'NotImplemented':
      return [];
    default:
      return 'key' in endpoint ? [objectPermission(objectActions[endpoint.kind], endpoint)] : [{ action: bucketActions[endpoint.kind], bucket: endpoint.bucket }];
  }
}

type Special = 'ListBuckets' | 'CopyObject' | 'UploadPartCopy' | 'GetObject' | 'HeadObject' | 'DeleteObject' | 'NotImplemented' | 'DeleteObjects';
type ObjectKind = Exclude<Extract<S3Endpoint, { key: string }>['kind'], Special>;
type BucketKind = Exclude<S3Endpoint['kind'], ObjectKind | Special>;

// Total over the router's endpoints: a new endpoint does not compile until it names its action.
const objectActions: Record<ObjectKind, string> = {
  PutObject: 's3:PutObject',
  CreateMultipartUpload: 's3:PutObject',
  UploadPart: 's3:PutObject',
  CompleteMultipartUpload: 's3:PutObject',
  AbortMultipartUpload: 's3:AbortMultipartUpload',
  ListParts: 's3:ListMultipartUploadParts',
  GetObjectAcl: 's3:GetObjectAcl',
  PutObjectAcl: 's3:PutObjectAcl',
  GetObjectTagging: 's3:GetObjectTagging',
  PutObjectTagging: 's3:PutObjectTagging',
  DeleteObjectTagging: 's3:DeleteObjectTagging',
  GetObjectAttributes: 's3:GetObjectAttributes',
  GetObjectRetention: 's3:GetObjectRetention',
  PutObjectRetention: 's3:PutObjectRetention',
  GetObjectLegalHold: 's3:GetObjectLegalHold',
  PutObjectLegalHold: 's3:PutObjectLegalHold',
  RestoreObject: 's3:RestoreObject',
};

const bucketActions: Record<BucketKind, string> = {
  CreateBucket: 's3:CreateBucket',
  DeleteBucket: 's3:DeleteBucket',
  HeadBucket: 's3:ListBucket',
  GetBucketLocation: 's3:GetBucketLocation',
  GetBucketVersioning: 's3:GetBucketVersioning',
  PutBucketVersioning: 's3:PutBucketVersioning',
  ListObjectsV1: 's3:ListBucket',
  ListObjectsV2: 's3:ListBucket',
  ListObjectVersions: 's3:ListBucketVersions',
  ListMultipartUploads: 's3:ListBucketMultipartUploads',
  GetBucketAcl: 's3:GetBucketAcl',
  PutBucketAcl: 's3:PutBucketAcl',
  GetBucketCors: 's3:GetBucketCORS',
  PutBucketCors: 's3:PutBucketCORS',
  DeleteBucketCors: 's3:PutBucketCORS',
  GetBucketTagging: 's3:GetBucketTagging',
  PutBucketTagging: 's3:PutBucketTagging',
  DeleteBucketTagging: 's3:PutBucketTagging',
  GetPublicAccessBlock: 's3:GetBucketPublicAccessBlock',
  PutPublicAccessBlock: 's3:PutBucketPublicAccessBlock',
  DeletePublicAccessBlock: 's3:PutBucketPublicAccessBlock',
  GetBucketNotificationConfiguration: 's3:GetBucketNotification',
  PutBucketNotificationConfiguration: 's3:PutBucketNotification',
  GetBucketEncryption: 's3:GetEncryptionConfiguration',
  PutBucketEncryption: 's3:PutEncryptionConfiguration',
  DeleteBucketEncryption: 's3:PutEncryptionConfiguration',
  GetBucketPolicy: 's3:GetBucketPolicy',
  PutBucketPolicy: 's3:PutBucketPolicy',
  DeleteBucketPolicy: 's3:DeleteBucketPolicy',
  GetBucketPolicyStatus: 's3:GetBucketPolicyStatus',
  GetObjectLockConfiguration: 's3:GetBucketObjectLockConfiguration',
  PutObjectLockConfiguration: 's3:PutBucketObjectLockConfiguration',
  // AWS has no separate action for deleting a lifecycle configuration: it is a put.
  GetBucketLifecycleConfiguration: 's3:GetLifecycleConfiguration',
  PutBucketLifecycleConfiguration: 's3:PutLifecycleConfiguration',
  DeleteBucketLifecycle: 's3:PutLifecycleConfiguration',
  GetBucketOwnershipControls: 's3:GetBucketOwnershipControls',
  PutBucketOwnershipControls: 's3:PutBucketOwnershipControls',
  // AWS has no separate action for deleting ownership controls: it is a put.
  DeleteBucketOwnershipControls: 's3:PutBucketOwnershipControls',
  GetBucketLogging: 's3:GetBucketLogging',
  PutBucketLogging: 's3:PutBucketLogging',
  GetBucketReplication: 's3:GetReplicationConfiguration',
  PutBucketReplication: 's3:PutReplicationConfiguration',
  // AWS has no separate action for deleting a replication configuration: it is a put.
  DeleteBucketReplication: 's3:PutReplicationConfiguration',
};

/** Every S3 endpoint kind with each action it may need (the reference's table; permissionsOf picks per request). */
export function s3EndpointActions(): [kind: string, actions: string[]][] {
  const read = ['s3:GetObject', 's3:GetObjectVersion'];
  const special: [Special, string[]][] = [
    ['ListBuckets', ['s3:ListAllMyBuckets']],
    ['CopyObject', ['s3:PutObject', ...read]],
    ['UploadPartCopy', ['s3:PutObject', ...read]],
    ['GetObject', read],
    ['HeadObject', read],
    ['DeleteObject', ['s3:DeleteObject', 's3:DeleteObjectVersion']],
    ['DeleteObjects', ['s3:DeleteObject', 's3:DeleteObjectVersion']],
  ];
  return [...special, ...Object.entries(objectActions).map(([kind, action]): [string, string[]] => [kind, [action]]), ...Object.entries(bucketActions).map(([kind, action]): [string, string[]] => [kind, [action]])];
}

function objectPermission(action: string, endpoint: { bucket: string; key: string }): Permission {
  return { action, bucket: endpoint.bucket, key: endpoint.key };
}

function readPermission(source: CopySource): Permission {
  return { action: source.versionId === undefined ? 's3:GetObject' : 's3:GetObjectVersion', bucket: source.bucket, key: source.key };
}

export function resourceOf(permission: Permission): string {
  if (permission.bucket === undefined) return `${s3ResourcePrefix}*`;
  return `${s3ResourcePrefix}${permission.bucket}${permission.key === undefined ? '' : `/${permission.key}`}`;
}

/**
 * Throws AccessDenied unless the caller holds every permission. `aclRequired`: some permission
 * was allowed by an ACL grant alone (the access log's `aclRequired` field).
 */
export async function authorize(context: AccessContext, caller: Caller, permissions: Permission[]): Promise<{ aclRequired: boolean }> {
  const principal = caller.principal;
  let aclRequired = false;
  if (principal?.kind === 'root') return { aclRequired };
  if (principal === undefined && permissions.length === 0) deny(caller, undefined);
  for (const permission of permissions) {
    const bucketPolicy = permission.bucket === undefined ? undefined : await bucketPolicyOf(context, permission.bucket, principal === undefined);
    const request = {
      action: permission.action,
      resource: resourceOf(permission),
      ...(principal === undefined ? {} : { principal: principal.accessKey }),
      context: await conditionContext(context, caller, permission, policiesInPlay(principal, bucketPolicy)),
    };
    const decision = decide(principal, bucketPolicy, request);
    // Where no policy allows or denies, an ACL grant may allow (src/api/s3/acl-access.ts).
    if (decision === 'NoMatch' && (await aclAllowsPermission(context, caller, permission, request))) {
      aclRequired = true;
      continue;
    }
    if (decision !== 'Allow') deny(caller, permission);
  }
  return { aclRequired };
}

/** Whether the caller holds every permission (authorize's answer without the error). */
export async function holds(context: AccessContext, caller: Caller, permissions: Permission[]): Promise<boolean> {
  try {
    await authorize(context, caller, permissions);
    return true;
  } catch (error) {
    if (error instanceof SvcError && error.code === 'AccessDenied') return false;
    throw error;
  }
}

/** Every policy that may judge the request: the principal's grants and limits, the bucket's policy. */
function policiesInPlay(principal: Principal | undefined, bucketPolicy: Policy | undefined): Policy[] {
  return [...(principal?.grants ?? []), ...(principal?.limits ?? []), ...(bucketPolicy ? [bucketPolicy] : [])];
}

const principalTypes: Record<Principal['kind'], string> = { root: 'Account', user: 'User', serviceAccount: 'User', session: 'AssumedRole', sso: 'FederatedUser' };

/** The condition keys of one permission of a request (src/iam/condition-keys.ts names them all). */
async function conditionContext(context: AccessContext, caller: Caller, permission: Permission, policies: readonly Policy[]): Promise<RequestContext> {
  const param = (name: string): string | undefined => caller.query.get(name) ?? undefined;
  const header = (name: string): string | undefined => (caller.headers === undefined ? undefined : headerValue(caller.headers, name));
  const nowMs = context.nowMs();
  const principal = caller.principal;
  const user = principal === undefined ? undefined : userNameOf(principal);
  // Signature keys belong to S3 requests (which carry their headers), not to console calls.
  const signed = principal !== undefined && caller.headers !== undefined;
  return {
    'aws:SourceIp': normaliseIp(caller.sourceIp),
    'aws:SecureTransport': String(caller.secureTransport ?? false),
    'aws:CurrentTime': new Date(nowMs).toISOString(),
    'aws:EpochTime': String(Math.floor(nowMs / 1000)),
    'aws:username': user,
    'aws:userid': user,
    'aws:PrincipalType': principal === undefined ? 'Anonymous' : principalTypes[principal.kind],
    'aws:UserAgent': header('user-agent'),
    'aws:Referer': header('referer'),
    's3:prefix': param('prefix'),
    's3:delimiter': param('delimiter'),
    's3:max-keys': param('max-keys'),
    's3:versionid': param('versionId'),
    's3:x-amz-acl': header('x-amz-acl'),
    's3:x-amz-storage-class': header('x-amz-storage-class'),
    's3:x-amz-server-side-encryption': header('x-amz-server-side-encryption'),
    's3:object-lock-mode': header('x-amz-object-lock-mode'),
    's3:object-lock-retain-until-date': header('x-amz-object-lock-retain-until-date'),
    's3:object-lock-legal-hold': header('x-amz-object-lock-legal-hold'),
    'aws:RequestedRegion': 'us-east-1',
    'aws:PrincipalIsAWSService': principal === undefined ? undefined : 'false',
    's3:x-amz-server-side-encryption-aws-kms-key-id': header('x-amz-server-side-encryption-aws-kms-key-id'),
    's3:x-amz-server-side-encryption-customer-algorithm': header('x-amz-server-side-encryption-customer-algorithm'),
    's3:x-amz-copy-source': header('x-amz-copy-source'),
    's3:x-amz-metadata-directive': header('x-amz-metadata-directive'),
    's3:x-amz-grant-read': header('x-amz-grant-read'),
    's3:x-amz-grant-write': header('x-amz-grant-write'),
    's3:x-amz-grant-read-acp': header('x-amz-grant-read-acp'),
    's3:x-amz-grant-write-acp': header('x-amz-grant-write-acp'),
    's3:x-amz-grant-full-control': header('x-amz-grant-full-control'),
    's3:x-amz-content-sha256': header('x-amz-content-sha256'),
    's3:x-amz-object-ownership': header('x-amz-object-ownership'),
    's3:if-match': header('if-match'),
    's3:if-none-match': header('if-none-match'),
    's3:object-lock-remaining-retention-days': remainingRetentionDays(header('x-amz-object-lock-retain-until-date'), nowMs),
    's3:signatureversion': !signed ? undefined : /^AWS /.test(header('authorization') ?? '') || caller.query.has('AWSAccessKeyId') ? 'AWS' : 'AWS4-HMAC-SHA256',
    's3:authType': !signed ? undefined : caller.formUpload ? 'POST' : header('authorization') !== undefined ? 'REST-HEADER' : 'REST-QUERY-STRING',
    ...Object.fromEntries(Object.entries(principal?.claims ?? {}).map(([claim, value]) => [`jwt:${claim}`, value])),
    ...(permission.action === 's3:PutObject' ? requestTagKeys(header('x-amz-tagging')) : {}),
    ...(await existingTagKeys(context, caller, permission, policies)),
  };
}

/** `s3:object-lock-remaining-retention-days`: whole days from now to the retain-until date a request asks for. */
function remainingRetentionDays(retainUntil: string | undefined, nowMs: number): string | undefined {
  const untilMs = retainUntil === undefined ? NaN : Date.parse(retainUntil);
  return Number.isNaN(untilMs) ? undefined : String(Math.max(0, Math.ceil((untilMs - nowMs) / 86_400_000)));
}

/** `s3:RequestObjectTag/<key>` and `s3:RequestObjectTagKeys` from the `x-amz-tagging` header of a PUT, copy or multipart create. */
function requestTagKeys(tagging: string | undefined): Record<string, string | string[]> {
  if (tagging === undefined) return {};
  const tags = [...new URLSearchParams(tagging)];
  return { ...Object.fromEntries(tags.map(([key, value]) => [`s3:RequestObjectTag/${key}`, value])), 's3:RequestObjectTagKeys': tags.map(([key]) => key) };
}

/** The object actions AWS judges by `s3:ExistingObjectTag/<key>` (a write that replaces or deletes the object is not one). */
const existingTagActions = new Set([
  'GetObject', 'GetObjectVersion', 'GetObjectAcl', 'GetObjectVersionAcl', 'GetObjectTagging', 'GetObjectVersionTagging', 'GetObjectAttributes',
  'GetObjectVersionAttributes', 'GetObjectTorrent', 'GetObjectVersionTorrent', 'GetObjectRetention', 'GetObjectLegalHold', 'PutObjectAcl',
  'PutObjectVersionAcl', 'PutObjectTagging', 'PutObjectVersionTagging', 'DeleteObjectTagging', 'DeleteObjectVersionTagging',
  'PutObjectRetention', 'PutObjectLegalHold',
].map((name) => `s3:${name}`));

const objectAbsent = ['NoSuchBucket', 'NoSuchKey', 'NoSuchVersion', 'MethodNotAllowed'] as const;

/** `s3:ExistingObjectTag/<key>`: the object's tags, read only when a policy in play names such a key; none when there is no such object. */
async function existingTagKeys(context: AccessContext, caller: Caller, permission: Permission, policies: readonly Policy[]): Promise<Record<string, string>> {
  if (permission.bucket === undefined || permission.key === undefined || !existingTagActions.has(permission.action)) return {};
  if (!policiesMentionKey(policies, 's3:ExistingObjectTag/')) return {};
  const copySource = caller.headers === undefined ? undefined : headerValue(caller.headers, 'x-amz-copy-source');
  const source = copySource === undefined ? undefined : parseCopySource(copySource);
  const isSource = source !== undefined && source.bucket === permission.bucket && source.key === permission.key;
  const versionId = isSource ? source.versionId : caller.query.get('versionId') ?? undefined;
  const info = await context.objects.headObject(permission.bucket, permission.key, versionId).catch((error: unknown) => {
    if (objectAbsent.some((code) => isSvcError(error, code))) return undefined;
    throw error;
  });
  const tags = decodeTags(info?.systemMetadata[tagsMetadataKey]);
  return Object.fromEntries(tags.map(([key, value]) => [`s3:ExistingObjectTag/${key}`, value]));
}

function deny(caller: Caller, permission: Permission | undefined): never {
  const principal = caller.principal;
  const who = principal === undefined ? 'anonymous requests' : `${principalLabels[principal.kind]} ${principal.accessKey}`;
  const what = permission === undefined ? 'this request' : permission.bucket === undefined && !permission.action.startsWith('s3:') ? permission.action : `${permission.action} on ${resourceOf(permission)}`;
  throw new SvcError('AccessDenied', `Access Denied: no policy allows ${who} ${what}.`, { action: permission?.action });
}

const principalLabels: Record<Principal['kind'], string> = { root: 'root', user: 'user', serviceAccount: 'service account', session: 'session', sso: 'user' };

/** Parsed bucket policies by bucket and text (they were validated when stored). */
const parsedPolicies = new Map<string, Policy>();

async function bucketPolicyOf(context: AccessContext, bucket: string, anonymous: boolean): Promise<Policy | undefined> {
  const record = await context.objects.bucketRecord(bucket).catch(() => undefined);
  const text = record?.policy;
  if (text === undefined) return undefined;
  const policy = parsedBucketPolicy(bucket, text);
  // RestrictPublicBuckets: a public policy grants nothing to callers outside the deployment's accounts.
  if (anonymous && record?.publicAccessBlock?.restrictPublicBuckets === true && isPublicPolicy(policy)) return undefined;
  return policy;
}

function parsedBucketPolicy(bucket: string, text: string): Policy {
  const cacheKey = `${bucket}\n${text}`;
  let policy = parsedPolicies.get(cacheKey);
  if (!policy) {
    policy = parsePolicy(text, { bucket });
    if (parsedPolicies.size >= limits.maxCachedBucketPolicies) parsedPolicies.clear();
    parsedPolicies.set(cacheKey, policy);
  }
  return policy;
}
