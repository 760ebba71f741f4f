/**
 * Talks to a remote target through the AWS SDK's S3 client: the check when a target is added
 * (reachable, credentials accepted, versioning enabled on its bucket), and the replica writes (a
 * version with its data, metadata, tags, retention and legal hold; a delete marker), each with the
 * replica headers that make the target keep the source's version id and modification time.
 */
import type { Readable } from 'node:stream';
import type { PutObjectCommandInput, S3Client } from '@aws-sdk/client-s3';
import { s3Sdk, type S3Sdk } from '../s3-sdk.js';
import { SvcError } from '../../errors/index.js';
import { legalHoldKey, lockModeKey, lockRetainUntilKey, type ObjectInfo } from '../../object/index.js';
import { limits } from '../../util/limits.js';
import type { ResolvedTarget } from './remote-targets.js';
import { replicaHeaders } from './types.js';

/** The client of a target; `timeoutMs` bounds each request. */
export async function targetClient(target: Pick<ResolvedTarget, 'endpoint' | 'region' | 'accessKey' | 'secretKey'>): Promise<S3Client> {
  const { S3Client } = await s3Sdk();
  return new S3Client({
    endpoint: target.endpoint,
    region: target.region,
    forcePathStyle: true,
    credentials: { accessKeyId: target.accessKey, secretAccessKey: target.secretKey },
    maxAttempts: 1,
  });
}

/**
 * Checks a target before it is stored: RemoteTargetUnreachable, RemoteTargetCredentialsRefused or
 * RemoteTargetNotVersioned by name when it fails.
 */
export async function checkTarget(target: Pick<ResolvedTarget, 'endpoint' | 'region' | 'accessKey' | 'secretKey' | 'targetBucket'>): Promise<void> {
  const sdk = await s3Sdk();
  const client = await targetClient(target);
  try {
    const answer = await client.send(new sdk.GetBucketVersioningCommand({ Bucket: target.targetBucket }), { abortSignal: AbortSignal.timeout(limits.replicationTargetCheckTimeoutMs) });
    if (answer.Status !== 'Enabled') throw new SvcError('RemoteTargetNotVersioned', `versioning is not enabled on bucket ${target.targetBucket} at ${target.endpoint}`, { bucket: target.targetBucket });
  } catch (error) {
    if (error instanceof SvcError) throw error;
    throw checkError(sdk, error, target);
  } finally {
    client.destroy();
  }
}

function checkError(sdk: S3Sdk, error: unknown, target: Pick<ResolvedTarget, 'endpoint' | 'targetBucket'>): SvcError {
  if (error instanceof sdk.S3ServiceException) {
    const status = error.$metadata.httpStatusCode;
    if (error.name === 'NoSuchBucket') return new SvcError('RemoteTargetNotVersioned', `bucket ${target.targetBucket} does not exist at ${target.endpoint}`, { bucket: target.targetBucket });
    if (status === 403 || ['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied'].includes(error.name)) {
      return new SvcError('RemoteTargetCredentialsRefused', `${target.endpoint} refused the credentials (${error.name})`, { bucket: target.targetBucket });
    }
    return new SvcError('RemoteTargetUnreachable', `${target.endpoint} answered ${status ?? '?'} ${error.name}`, { bucket: target.targetBucket });
  }
  return new SvcError('RemoteTargetUnreachable', `${target.endpoint} did not answer: ${error instanceof Error ? error.message : String(error)}`, { bucket: target.targetBucket });
}

/** Sets the replica headers on a request being built (they are signed with it). */
function addHeaders(request: unknown, headers: Record<string, string>): void {
  const built = request as { headers?: Record<string, string> };
  if (built.headers) Object.assign(built.headers, headers);
}

const storedHeaderFields: [string, keyof PutObjectCommandInput][] = [
  ['cache-control', 'CacheControl'],
  ['content-disposition', 'ContentDisposition'],
  ['content-encoding', 'ContentEncoding'],
  ['content-language', 'ContentLanguage'],
];

/** How a replica is encrypted on the target: as the source was (SSE-S3), or under the rule's key of the target's KMS (SSE-KMS). */
export type ReplicaEncryption = { kind: 'SSE-S3' } | { kind: 'SSE-KMS'; keyId: string };

/** Writes one version on the target, with the source's version id, time and ETag. */
export async function putReplica(client: S3Client, targetBucket: string, info: ObjectInfo, body: Uint8Array | Readable, storageClass: string | undefined, signal: AbortSignal, encryption?: ReplicaEncryption): Promise<void> {
  const meta = info.systemMetadata;
  const input: PutObjectCommandInput = {
    ...(encryption?.kind === 'SSE-S3' ? { ServerSideEncryption: 'AES256' as const } : {}),
    ...(encryption?.kind === 'SSE-KMS' ? { ServerSideEncryption: 'aws:kms' as const, SSEKMSKeyId: encryption.keyId } : {}),
    Bucket: targetBucket,
    Key: info.key,
    Body: body,
    ContentLength: info.sizeBytes,
    ContentType: info.contentType ?? 'application/octet-stream',
    Metadata: info.userMetadata,
    StorageClass: (storageClass ?? info.storageClass) as PutObjectCommandInput['StorageClass'],
  };
  for (const [name, field] of storedHeaderFields) if (meta[name] !== undefined) (input as unknown as Record<string, unknown>)[field] = meta[name];
  if (meta.expires !== undefined && Number.isFinite(Date.parse(meta.expires))) input.Expires = new Date(meta.expires);
  if (meta['x-amz-tagging'] !== undefined) input.Tagging = meta['x-amz-tagging'];
  if (meta[lockModeKey] !== undefined && meta[lockRetainUntilKey] !== undefined && Date.parse(meta[lockRetainUntilKey]) > Date.now()) {
    input.ObjectLockMode = meta[lockModeKey] as PutObjectCommandInput['ObjectLockMode'];
    input.ObjectLockRetainUntilDate = new Date(meta[lockRetainUntilKey]);
  }
  if (meta[legalHoldKey] !== undefined) input.ObjectLockLegalHoldStatus = meta[legalHoldKey] as PutObjectCommandInput['ObjectLockLegalHoldStatus'];
  const headers = { [replicaHeaders.versionId]: info.versionId, [replicaHeaders.modTimeMs]: String(info.modTimeMs), ...(/^[0-9a-f]{32}(-\d+)?$/.test(info.etag) ? { [replicaHeaders.etag]: info.etag } : {}) };
  const { PutObjectCommand } = await s3Sdk();
  const command = new PutObjectCommand(input);
  command.middlewareStack.add((next) => async (args) => {
    addHeaders(args.request, headers);
    return next(args);
  }, { step: 'build', name: 'svcReplicaHeaders' });
  await client.send(command, { abortSignal: signal });
}

/** Writes a delete marker on the target with the source marker's id and time. */
export async function putReplicaMarker(client: S3Client, targetBucket: string, key: string, versionId: string, modTimeMs: number, signal: AbortSignal): Promise<void> {
  const headers = { [replicaHeaders.versionId]: versionId, [replicaHeaders.modTimeMs]: String(modTimeMs) };
  const { DeleteObjectCommand } = await s3Sdk();
  const command = new DeleteObjectCommand({ Bucket: targetBucket, Key: key });
  command.middlewareStack.add((next) => async (args) => {
    addHeaders(args.request, headers);
    return next(args);
  }, { step: 'build', name: 'svcReplicaHeaders' });
  await client.send(command, { abortSignal: signal });
}
