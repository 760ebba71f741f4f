/**
 * The S3 router: a pure function from a request's method, path, query and headers to one of the
 * endpoints this server implements (path-style and virtual-host-style addressing).
 */
import { SvcError } from '../../errors/index.js';
import { limits } from '../../util/limits.js';
import { checkObjectKey } from '../../object/paths.js';
import { bucketNameProblem } from '../../contracts/bucket-name.js';

export type S3Endpoint =
  | { kind: 'ListBuckets' }
  | { kind: 'CreateBucket'; bucket: string }
  | { kind: 'DeleteBucket'; bucket: string }
  | { kind: 'HeadBucket'; bucket: string }
  | { kind: 'GetBucketLocation'; bucket: string }
  | { kind: 'GetBucketVersioning'; bucket: string }
  | { kind: 'PutBucketVersioning'; bucket: string }
  | { kind: 'ListObjectsV1'; bucket: string }
  | { kind: 'ListObjectsV2'; bucket: string }
  | { kind: 'ListObjectVersions'; bucket: string }
  | { kind: 'DeleteObjects'; bucket: string }
  | { kind: 'PutObject'; bucket: string; key: string }
  | { kind: 'CopyObject'; bucket: string; key: string; source: CopySource }
  | { kind: 'GetObject'; bucket: string; key: string }
  | { kind: 'HeadObject'; bucket: string; key: string }
  | { kind: 'DeleteObject'; bucket: string; key: string }
  | { kind: 'CreateMultipartUpload'; bucket: string; key: string }
  | { kind: 'UploadPart'; bucket: string; key: string; uploadId: string; partNumber: number }
  | { kind: 'UploadPartCopy'; bucket: string; key: string; uploadId: string; partNumber: number; source: CopySource }
  | { kind: 'CompleteMultipartUpload'; bucket: string; key: string; uploadId: string }
  | { kind: 'AbortMultipartUpload'; bucket: string; key: string; uploadId: string }
  | { kind: 'ListParts'; bucket: string; key: string; uploadId: string }
  | { kind: 'ListMultipartUploads'; bucket: string }
  | { kind: 'GetBucketAcl'; bucket: string }
  | { kind: 'PutBucketAcl'; bucket: string }
  | { kind: 'GetObjectAcl'; bucket: string; key: string }
  | { kind: 'PutObjectAcl'; bucket: string; key: string }
  | { kind: 'GetObjectTagging'; bucket: string; key: string }
  | { kind: 'PutObjectTagging'; bucket: string; key: string }
  | { kind: 'DeleteObjectTagging'; bucket: string; key: string }
  | { kind: 'GetObjectAttributes'; bucket: string; key: string }
  | { kind: 'GetBucketCors'; bucket: string }
  | { kind: 'GetBucketTagging'; bucket: string }
  | { kind: 'GetPublicAccessBlock'; bucket: string }
  | { kind: 'PutPublicAccessBlock'; bucket: string }
  | { kind: 'DeletePublicAccessBlock'; bucket: string }
  | { kind: 'PutBucketTagging'; bucket: string }
  | { kind: 'DeleteBucketTagging'; bucket: string }
  | { kind: 'PutBucketCors'; bucket: string }
  | { kind: 'DeleteBucketCors'; bucket: string }
  | { kind: 'GetBucketPolicy'; bucket: string }
  | { kind: 'PutBucketPolicy'; bucket: string }
  | { kind: 'DeleteBucketPolicy'; bucket: string }
  | { kind: 'GetBucketPolicyStatus'; bucket: string }
  | { kind: 'GetObjectLockConfiguration'; bucket: string }
  | { kind: 'PutObjectLockConfiguration'; bucket: string }
  | { kind: 'GetObjectRetention'; bucket: string; key: string }
  | { kind: 'PutObjectRetention'; bucket: string; key: string }
  | { kind: 'GetObjectLegalHold'; bucket: string; key: string }
  | { kind: 'PutObjectLegalHold'; bucket: string; key: string }
  | { kind: 'RestoreObject'; bucket: string; key: string }
  | { kind: 'GetBucketLifecycleConfiguration'; bucket: string }
  | { kind: 'PutBucketLifecycleConfiguration'; bucket: string }
  | { kind: 'DeleteBucketLifecycle'; bucket: string }
  | { kind: 'GetBucketNotificationConfiguration'; bucket: string }
  | { kind: 'PutBucketNotificationConfiguration'; bucket: string }
  | { kind: 'GetBucketOwnershipControls'; bucket: string }
  | { kind: 'PutBucketOwnershipControls'; bucket: string }
  | { kind: 'DeleteBucketOwnershipControls'; bucket: string }
  | { kind: 'GetBucketEncryption'; bucket: string }
  | { kind: 'PutBucketEncryption'; bucket: string }
  | { kind: 'DeleteBucketEncryption'; bucket: string }
  | { kind: 'GetBucketLogging'; bucket: string }
  | { kind: 'PutBucketLogging'; bucket: string }
  | { kind: 'GetBucketReplication'; bucket: string }
  | { kind: 'PutBucketReplication'; bucket: string }
  | { kind: 'DeleteBucketReplication'; bucket: string }
  | { kind: 'NotImplemented'; bucket?: string; key?: string; what: string };

export interface CopySource {
  bucket: string;
  key: string;
  versionId?: string;
}

export interface RoutableRequest {
  method: string;
  rawPath: string;
  query: URLSearchParams;
  host?: string;
  headers: Record<string, string | string[] | undefined>;
}

const bucketSubresources = ['acl', 'policy', 'cors', 'lifecycle', 'tagging', 'website', 'logging', 'notification', 'replication', 'encryption', 'object-lock', 'requestPayment', 'accelerate', 'analytics', 'metrics', 'inventory', 'intelligent-tiering', 'ownershipControls', 'publicAccessBlock', 'policyStatus'];
const objectSubresources = ['acl', 'tagging', 'retention', 'legal-hold', 'torrent', 'restore', 'select', 'attributes'];

export function routeS3Request(request: RoutableRequest, options: { virtualHostSuffixes?: string[] } = {}): S3Endpoint {
  const { bucket, key } = addressOf(request, options.virtualHostSuffixes ?? []);
  const method = request.method.toUpperCase();
  if (bucket === undefined) {
    if (method === 'GET') return { kind: 'ListBuckets' };
    throw new SvcError('MethodNotAllowed');
  }
  if (key === undefined) return routeBucket(method, bucket, request.query);
  // A name that can never be a key is refused here, before any handler or drive sees it.
  checkObjectKey(key);
  return routeObject(method, bucket, key, request);
}

function routeBucket(method: string, bucket: string, query: URLSearchParams): S3Endpoint {
  const has = (name: string): boolean => query.has(name);
  if (has('versioning')) return method === 'GET' ? { kind: 'GetBucketVersioning', bucket } : method === 'PUT' ? { kind: 'PutBucketVersioning', bucket } : notAllowed();
  if (has('location') && method === 'GET') return { kind: 'GetBucketLocation', bucket };
  if (has('versions') && method === 'GET') return { kind: 'ListObjectVersions', bucket };
  if (has('delete') && method === 'POST') return { kind: 'DeleteObjects', bucket };
  if (has('uploads') && method === 'GET') return { kind: 'ListMultipartUploads', bucket };
  if (has('cors')) return routeCors(method, bucket);
  if (has('publicAccessBlock')) return method === 'GET' ? { kind: 'GetPublicAccessBlock', bucket } : method === 'PUT' ? { kind: 'PutPublicAccessBlock', bucket } : method === 'DELETE' ? { kind: 'DeletePublicAccessBlock', bucket } : notAllowed();
  if (has('tagging')) return method === 'GET' ? { kind: 'GetBucketTagging', bucket } : method === 'PUT' ? { kind: 'PutBucketTagging', bucket } : method === 'DELETE' ? { kind: 'DeleteBucketTagging', bucket } : notAllowed();
  if (has('encryption')) return method === 'GET' ? { kind: 'GetBucketEncryption', bucket } : method === 'PUT' ? { kind: 'PutBucketEncryption', bucket } : method === 'DELETE' ? { kind: 'DeleteBucketEncryption', bucket } : notAllowed();
  if (has('policy')) return routePolicy(method, bucket);
  if (has('lifecycle')) return routeLifecycle(method, bucket);
  if (has('notification')) return method === 'GET' ? { kind: 'GetBucketNotificationConfiguration', bucket } : method === 'PUT' ? { kind: 'PutBucketNotificationConfiguration', bucket } : notAllowed();
  if (has('policyStatus')) return method === 'GET' ? { kind: 'GetBucketPolicyStatus', bucket } : notAllowed();
  if (has('acl')) return method === 'GET' ? { kind: 'GetBucketAcl', bucket } : method === 'PUT' ? { kind: 'PutBucketAcl', bucket } : notAllowed();
  if (has('ownershipControls')) return method === 'GET' ? { kind: 'GetBucketOwnershipControls', bucket } : method === 'PUT' ? { kind: 'PutBucketOwnershipControls', bucket } : method === 'DELETE' ? { kind: 'DeleteBucketOwnershipControls', bucket } : notAllowed();
  if (has('logging')) return method === 'GET' ? { kind: 'GetBucketLogging', bucket } : method === 'PUT' ? { kind: 'PutBucketLogging', bucket } : notAllowed();
  if (has('replication')) return method === 'GET' ? { kind: 'GetBucketReplication', bucket } : method === 'PUT' ? { kind: 'PutBucketReplication', bucket } : method === 'DELETE' ? { kind: 'DeleteBucketReplication', bucket } : notAllowed();
  if (has('object-lock')) return method === 'GET' ? { kind: 'GetObjectLockConfiguration', bucket } : method === 'PUT' ? { kind: 'PutObjectLockConfiguration', bucket } : notAllowed();
  const sub = bucketSubresources.find(has);
  if (sub) return { kind: 'NotImplemented', bucket, what: `bucket ?${sub}` };
  switch (method) {
    case 'PUT':
      return { kind: 'CreateBucket', bucket };
    case 'DELETE':
      return { kind: 'DeleteBucket', bucket };
    case 'HEAD':
      return { kind: 'HeadBucket', bucket };
    case 'GET':
      return query.get('list-type') === '2' ? { kind: 'ListObjectsV2', bucket } : { kind: 'ListObjectsV1', bucket };
    default:
      return notAllowed();
  }
}

function routeObject(method: string, bucket: string, key: string, request: RoutableRequest): S3Endpoint {
  const multipart = routeMultipart(method, bucket, key, request);
  if (multipart) return multipart;
  if (request.query.has('tagging')) return routeTagging(method, bucket, key);
  if (request.query.has('attributes')) return method === 'GET' ? { kind: 'GetObjectAttributes', bucket, key } : notAllowed();
  if (request.query.has('acl')) return method === 'GET' ? { kind: 'GetObjectAcl', bucket, key } : method === 'PUT' ? { kind: 'PutObjectAcl', bucket, key } : notAllowed();
  if (request.query.has('retention')) return method === 'GET' ? { kind: 'GetObjectRetention', bucket, key } : method === 'PUT' ? { kind: 'PutObjectRetention', bucket, key } : notAllowed();
  if (request.query.has('legal-hold')) return method === 'GET' ? { kind: 'GetObjectLegalHold', bucket, key } : method === 'PUT' ? { kind: 'PutObjectLegalHold', bucket, key } : notAllowed();
  if (request.query.has('restore')) return method === 'POST' ? { kind: 'RestoreObject', bucket, key } : notAllowed();
  const sub = objectSubresources.find((name) => request.query.has(name));
  if (sub) return { kind: 'NotImplemented', bucket, key, what: `object ?${sub}` };
  switch (method) {
    case 'PUT': {
      const copy = request.headers['x-amz-copy-source'];
      if (copy !== undefined) return { kind: 'CopyObject', bucket, key, source: parseCopySource(Array.isArray(copy) ? copy[0]! : copy) };
      return { kind: 'PutObject', bucket, key };
    }
    case 'GET':
      return { kind: 'GetObject', bucket, key };
    case 'HEAD':
      return { kind: 'HeadObject', bucket, key };
    case 'DELETE':
      return { kind: 'DeleteObject', bucket, key };
    default:
      return notAllowed();
  }
}

function routeCors(method: string, bucket: string): S3Endpoint {
  if (method === 'GET') return { kind: 'GetBucketCors', bucket };
  if (method === 'PUT') return { kind: 'PutBucketCors', bucket };
  if (method === 'DELETE') return { kind: 'DeleteBucketCors', bucket };
  return notAllowed();
}

function routePolicy(method: string, bucket: string): S3Endpoint {
  if (method === 'GET') return { kind: 'GetBucketPolicy', bucket };
  if (method === 'PUT') return { kind: 'PutBucketPolicy', bucket };
  if (method === 'DELETE') return { kind: 'DeleteBucketPolicy', bucket };
  return notAllowed();
}

function routeLifecycle(method: string, bucket: string): S3Endpoint {
  if (method === 'GET') return { kind: 'GetBucketLifecycleConfiguration', bucket };
  if (method === 'PUT') return { kind: 'PutBucketLifecycleConfiguration', bucket };
  if (method === 'DELETE') return { kind: 'DeleteBucketLifecycle', bucket };
  return notAllowed();
}

function routeTagging(method: string, bucket: string, key: string): S3Endpoint {
  if (method === 'GET') return { kind: 'GetObjectTagging', bucket, key };
  if (method === 'PUT') return { kind: 'PutObjectTagging', bucket, key };
  if (method === 'DELETE') return { kind: 'DeleteObjectTagging', bucket, key };
  return notAllowed();
}

function routeMultipart(method: string, bucket: string, key: string, request: RoutableRequest): S3Endpoint | undefined {
  const { query } = request;
  if (query.has('uploads') && method === 'POST') return { kind: 'CreateMultipartUpload', bucket, key };
  const uploadId = query.get('uploadId');
  if (uploadId === null) return undefined;
  if (method === 'POST') return { kind: 'CompleteMultipartUpload', bucket, key, uploadId };
  if (method === 'DELETE') return { kind: 'AbortMultipartUpload', bucket, key, uploadId };
  if (method === 'GET') return { kind: 'ListParts', bucket, key, uploadId };
  if (method !== 'PUT') return notAllowed();
  const partText = query.get('partNumber') ?? '';
  const partNumber = /^\d{1,5}$/.test(partText) ? Number(partText) : NaN;
  if (!(partNumber >= 1 && partNumber <= limits.maxPartNumber)) throw new SvcError('InvalidArgument', `Part number must be an integer between 1 and ${limits.maxPartNumber}, inclusive`);
  const copy = request.headers['x-amz-copy-source'];
  if (copy !== undefined) return { kind: 'UploadPartCopy', bucket, key, uploadId, partNumber, source: parseCopySource(Array.isArray(copy) ? copy[0]! : copy) };
  return { kind: 'UploadPart', bucket, key, uploadId, partNumber };
}

function notAllowed(): never {
  throw new SvcError('MethodNotAllowed');
}

/** The bucket and key a request addresses (path-style, or virtual-host-style under a suffix). */
export function addressOf(request: Pick<RoutableRequest, 'host' | 'rawPath'>, suffixes: string[]): { bucket?: string; key?: string } {
  const host = (request.host ?? '').toLowerCase().replace(/:\d+$/, '');
  const suffix = suffixes.find((candidate) => host.endsWith(`.${candidate.toLowerCase()}`));
  const segments = request.rawPath.replace(/^\//, '');
  if (suffix) {
    const bucket = host.slice(0, -(suffix.length + 1));
    return segments === '' ? { bucket } : { bucket, key: decodeKey(segments) };
  }
  if (segments === '') return {};
  const slash = segments.indexOf('/');
  if (slash < 0) return { bucket: decodeKey(segments) };
  const bucket = decodeKey(segments.slice(0, slash));
  const rest = segments.slice(slash + 1);
  return rest === '' ? { bucket } : { bucket, key: decodeKey(rest) };
}

function decodeKey(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new SvcError('InvalidArgument', 'the request path is not valid percent-encoding');
  }
}

/** `x-amz-copy-source: /bucket/key?versionId=...` (URL-encoded, leading slash optional). */
export function parseCopySource(value: string): CopySource {
  const [path, query] = value.split('?', 2) as [string, string | undefined];
  const decoded = decodeKey(path.replace(/^\//, ''));
  const slash = decoded.indexOf('/');
  if (slash <= 0 || slash === decoded.length - 1) throw new SvcError('InvalidArgument', 'x-amz-copy-source must be /<bucket>/<key>');
  const versionId = query ? new URLSearchParams(query).get('versionId') ?? undefined : undefined;
  checkObjectKey(decoded.slice(slash + 1));
  return { bucket: decoded.slice(0, slash), key: decoded.slice(slash + 1), ...(versionId ? { versionId } : {}) };
}

/** AWS bucket naming rules. */
export function isValidBucketName(name: string): boolean {
  return bucketNameProblem(name) === undefined;
}
