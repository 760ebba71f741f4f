/** Object operations: PUT, GET, HEAD, DELETE, COPY. */
import { restoreHeader, shownStorageClass } from '../tier-headers.js';
import { SvcError, isSvcError } from '../../../errors/index.js';
import type { BucketEncryption, ObjectInfo, ReceivedBody, WritePrecondition } from '../../../object/index.js';
import type { SseRequest } from '../../../ops/sse/object-keys.js';
import type { StorageClass } from '../../../format/xl-meta-types.js';
import { limits } from '../../../util/limits.js';
import { checksumAlgorithms, expectationsFrom, PayloadVerifier, type ChecksumAlgorithm } from '../auth/checksums.js';
import { objectChecksumFields } from './multipart-checksums.js';
import { headerValue, type S3Context, type S3Request, type S3Response } from '../context.js';
import type { CopySource } from '../router.js';
import { toXml } from '../xml.js';
import { currentExpiration } from '../../../ops/lifecycle-rules.js';
import { tagCountHeader, tagsFromHeader, tagsMetadataKey, withTags } from './tagging.js';
import { objectAclKey, withRequestedAcl } from '../acl-request.js';
import { governanceBypass, lockFieldsFromHeaders, requireIntegrityHeader, withoutHiddenLockHeaders } from './object-lock.js';
import { withoutLockFields } from '../../../object/index.js';
import { removalEvent, versionEvent } from '../../../ops/events/types.js';
import { encryptionHeaders, keyOf } from '../../../ops/sse/encrypted-objects.js';
import { readObject, storeObject, type StoreAs } from '../../../ops/compression/compressed-objects.js';
import { shouldCompress } from '../../../cluster/compression-config.js';
import { customerKeyOf, writeEncryptionOf } from '../sse-headers.js';

/** What a bucket's default encryption asks of a write that asks for none. */
export function bucketDefaultEncryption(encryption: BucketEncryption | undefined): SseRequest | undefined {
  if (!encryption) return undefined;
  return encryption.algorithm === 'AES256' ? { kind: 'SSE-S3' } : { kind: 'SSE-KMS', ...(encryption.kmsKeyId !== undefined ? { keyId: encryption.kmsKeyId } : {}) };
}

/** How a new object is stored: encrypted as `sse` asks, compressed when the settings pick it. */
export function storeAs(context: S3Context, key: string, metadata: { contentType?: string; systemMetadata: Record<string, string> }, sse: SseRequest | undefined): StoreAs {
  const compress = shouldCompress(context.compression, { key, contentType: metadata.contentType, contentEncoding: metadata.systemMetadata['content-encoding'], encrypted: sse !== undefined });
  return { ...(sse ? { sse } : {}), compress };
}

/** How this request may send SSE-C keys, and the KMS. */
export function sseSettings(context: S3Context, request: S3Request) {
  return { secure: request.secureTransport === true, allowInsecure: context.encryption?.allowInsecureSsec === true, kms: context.encryption?.kms() };
}
import { deleteConditionsOf, deletePrecondition } from './delete-conditions.js';
import { checkReplacedLock, replicaPutOptions, replicaWriteOf } from '../replica-request.js';

const storedHeaders = ['content-encoding', 'content-disposition', 'content-language', 'cache-control', 'expires'];

export function storageClassOf(headers: Record<string, string | string[] | undefined>): StorageClass {
  const value = headerValue(headers, 'x-amz-storage-class');
  if (value === undefined || value === 'STANDARD') return 'STANDARD';
  if (value === 'REDUCED_REDUNDANCY') return 'REDUCED_REDUNDANCY';
  throw new SvcError('InvalidStorageClass', `The storage class '${value}' is not valid: only STANDARD and REDUCED_REDUNDANCY are accepted.`, { storageClass: value });
}

export function metadataOf(headers: Record<string, string | string[] | undefined>): { userMetadata: Record<string, string>; systemMetadata: Record<string, string>; contentType?: string } {
  const userMetadata: Record<string, string> = {};
  const systemMetadata: Record<string, string> = {};
  let size = 0;
  for (const [name, raw] of Object.entries(headers)) {
    const value = Array.isArray(raw) ? raw.join(',') : raw;
    if (value === undefined) continue;
    if (name.startsWith('x-amz-meta-')) {
      userMetadata[name.slice('x-amz-meta-'.length)] = value;
      size += name.length + value.length;
    } else if (storedHeaders.includes(name)) {
      const cleaned = name === 'content-encoding' ? withoutAwsChunked(value) : value;
      if (cleaned !== '') systemMetadata[name] = cleaned;
    }
  }
  if (size > limits.maxUserMetadataBytes) throw new SvcError('InvalidArgument', `user metadata exceeds ${limits.maxUserMetadataBytes} bytes`);
  const tags = tagsFromHeader(headers);
  if (tags !== undefined) systemMetadata[tagsMetadataKey] = tags;
  const contentType = headerValue(headers, 'content-type');
  return { userMetadata, systemMetadata, ...(contentType !== undefined ? { contentType } : {}) };
}

/**
 * Content-Encoding as stored: the `aws-chunked` token (how this request's body was framed) is
 * removed; anything else is kept exactly as sent, spaces included.
 */
function withoutAwsChunked(value: string): string {
  const tokens = value.split(',');
  if (!tokens.some((token) => token.trim().toLowerCase() === 'aws-chunked')) return value;
  return tokens.filter((token) => token.trim().toLowerCase() !== 'aws-chunked').join(',').trim();
}

export async function putObject(context: S3Context, request: S3Request, bucket: string, key: string): Promise<S3Response> {
  const storageClass = storageClassOf(request.headers);
  const metadata = metadataOf(request.headers);
  const sizeBytes = declaredSize(request);
  const expectations = expectationsFrom(request.headers, request.trailers);
  if (request.auth.payload.kind === 'sha256') expectations.sha256Hex = request.auth.payload.expectedHex;
  const verifier = new PayloadVerifier(expectations);
  const precondition = writePreconditionOf(request.headers);
  const lockFields = await lockFieldsFromHeaders(request, bucket, key, context.nowMs());
  const record = await context.objects.bucketRecord(bucket);
  if (Object.keys(lockFields).length > 0 || record?.objectLock?.defaultRetention) requireIntegrityHeader(request.headers);
  const settings = sseSettings(context, request);
  const sse: (SseRequest & { customerKeyMd5?: string }) | undefined = writeEncryptionOf(request.headers, settings) ?? bucketDefaultEncryption(record?.encryption);
  const replica = await replicaWriteOf(request, bucket, key, 's3:ReplicateObject');
  const systemMetadata = { ...(await withRequestedAcl(context, request, { bucket, key }, metadata.systemMetadata)), ...lockFields };
  if (replica) await checkReplacedLock(context, bucket, key, replica, systemMetadata);
  const options = {
    digests: verifier.algorithms,
    storageClass,
    ...metadata,
    systemMetadata,
    ...(replica ? replicaPutOptions(replica, systemMetadata) : {}),
    ...(precondition ? { precondition } : {}),
    sizeBytes,
    beforeCommit: (received: ReceivedBody) => withFullObjectType(verifier.verify(received)),
  };
  const info = await storeObject(context.objects, settings.kms, storeAs(context, key, metadata, sse), bucket, key, request.body, options);
  const encryption = encryptionHeaders(info.encryption, sse?.kind === 'SSE-C' ? sse.customerKeyMd5 : undefined);
  return { status: 200, headers: { etag: `"${info.etag}"`, ...versionHeader(info), ...checksumHeaders(info), ...encryption, ...(await expirationHeader(context, bucket, key, info)) }, events: [versionEvent('ObjectCreated:Put', info)], ...(replica ? { replica: true } : {}) };
}

/**
 * `x-amz-expiration` on PUT, and GET/HEAD of the current version: when the bucket's lifecycle
 * rules expire it and which rule does, as AWS sends it.
 */
async function expirationHeader(context: S3Context, bucket: string, key: string, info: ObjectInfo): Promise<Record<string, string>> {
  const record = await context.objects.bucketRecord(bucket).catch(() => undefined);
  const expiration = currentExpiration(record?.lifecycle, key, info);
  if (!expiration) return {};
  return { 'x-amz-expiration': `expiry-date="${new Date(expiration.dueMs).toUTCString()}", rule-id="${headerSafe(expiration.ruleId)}"` };
}

/** A rule id as a quoted-string in a header: quotes and backslashes escaped, anything outside printable ASCII percent-encoded. */
function headerSafe(text: string): string {
  return text.replace(/["\\]/g, '\\$&').replace(/[^\x20-\x7e]/gu, (character) => [...Buffer.from(character)].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join(''));
}

/**
 * If-None-Match: * (only if no object is there) and If-Match: <etag> (only if the current
 * version has it) on a write, checked under the object's write lock before it is published.
 */
export function writePreconditionOf(headers: Record<string, string | string[] | undefined>): WritePrecondition | undefined {
  const ifNoneMatch = headerValue(headers, 'if-none-match')?.trim();
  const ifMatch = headerValue(headers, 'if-match')?.trim();
  if (ifNoneMatch === undefined && ifMatch === undefined) return undefined;
  if (ifNoneMatch !== undefined && ifNoneMatch !== '*') throw new SvcError('NotImplemented', 'If-None-Match on a write accepts only *.');
  return (current) => {
    if (ifNoneMatch !== undefined && current) throw new SvcError('PreconditionFailed', 'An object already exists under this key (If-None-Match: *).', { condition: 'If-None-Match' });
    if (ifMatch === undefined) return;
    if (!current) throw new SvcError('NoSuchKey', 'No object exists under this key to match If-Match.');
    const wanted = ifMatch.split(',').map((item) => item.trim().replace(/^W\//, '').replace(/"/g, ''));
    if (!wanted.includes('*') && !wanted.includes(current.etag)) throw new SvcError('PreconditionFailed', 'The object\'s ETag does not match If-Match.', { condition: 'If-Match' });
  };
}

function declaredSize(request: S3Request): number {
  const decoded = headerValue(request.headers, 'x-amz-decoded-content-length');
  const length = request.auth.payload.kind.startsWith('streaming') ? decoded : headerValue(request.headers, 'content-length');
  // A body of unknown length (Transfer-Encoding: chunked, or aws-chunked without its decoded length) is refused as AWS refuses it.
  if (length === undefined) throw new SvcError('MissingContentLength');
  const size = Number(length);
  if (!Number.isSafeInteger(size) || size < 0) throw new SvcError('InvalidArgument', 'invalid content length');
  if (size > limits.maxPutObjectSizeBytes) throw new SvcError('EntityTooLarge');
  return size;
}

/** A single PUT's checksum is of the whole body: its type is stored beside it, as AWS reports it. */
function withFullObjectType(checksums: Record<string, string>): Record<string, string> {
  return Object.keys(checksums).length > 0 ? { ...checksums, 'x-amz-checksum-type': 'FULL_OBJECT' } : checksums;
}

function versionHeader(info: ObjectInfo): Record<string, string> {
  return info.versionId !== 'null' ? { 'x-amz-version-id': info.versionId } : {};
}

function checksumHeaders(info: ObjectInfo): Record<string, string> {
  return Object.fromEntries(Object.entries(info.systemMetadata).filter(([name]) => name.startsWith('x-amz-checksum-')));
}

/**
 * The stored x-amz-checksum-* of the whole object, for a GET or HEAD that asks for them
 * (`x-amz-checksum-mode: ENABLED`, which AWS SDKs send by default and then check the body against)
 * and reads the whole object: a range has no checksum of its own.
 */
function requestedChecksums(request: S3Request, info: ObjectInfo, range: ReadRange | undefined): Record<string, string> {
  if (headerValue(request.headers, 'x-amz-checksum-mode')?.toUpperCase() !== 'ENABLED') return {};
  if (range?.partNumber !== undefined) return partChecksumHeader(info, range.partNumber);
  return range ? {} : checksumHeaders(info);
}

/** Part N of a multipart object read alone (`partNumber`) has the checksum its upload kept for it. */
function partChecksumHeader(info: ObjectInfo, partNumber: number): Record<string, string> {
  const checksum = info.parts.find((part) => part.number === partNumber)?.checksum;
  const algorithm = checksumAlgorithms.find((candidate) => info.systemMetadata[`x-amz-checksum-${candidate}`] !== undefined);
  return checksum !== undefined && algorithm !== undefined ? { [`x-amz-checksum-${algorithm}`]: checksum } : {};
}

export function objectHeaders(info: ObjectInfo): Record<string, string | number> {
  const headers: Record<string, string | number> = {
    etag: `"${info.etag}"`,
    'last-modified': new Date(info.modTimeMs).toUTCString(),
    'accept-ranges': 'bytes',
    'content-type': info.contentType ?? 'application/octet-stream',
    'x-amz-storage-class': shownStorageClass(info),
    ...restoreHeader(info),
    ...versionHeader(info),
  };
  for (const [name, value] of Object.entries(info.systemMetadata)) if (!name.startsWith('x-amz-checksum-') && name !== tagsMetadataKey && name !== objectAclKey) headers[name] = value;
  Object.assign(headers, tagCountHeader(info));
  for (const [name, value] of Object.entries(info.userMetadata)) headers[`x-amz-meta-${name}`] = value;
  return headers;
}

/** A single byte range from a Range header, resolved against the size (416 when unsatisfiable). */
export function parseRange(header: string | undefined, sizeBytes: number): { offset: number; length: number } | undefined {
  if (header === undefined) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return undefined; // unsupported forms: serve the whole object
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) throw new SvcError('InvalidRange', undefined, { sizeBytes });
    const length = Math.min(suffix, sizeBytes);
    if (length === 0) throw new SvcError('InvalidRange', undefined, { sizeBytes });
    return { offset: sizeBytes - length, length };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? sizeBytes - 1 : Math.min(Number(match[2]), sizeBytes - 1);
  if (start >= sizeBytes || end < start) throw new SvcError('InvalidRange', undefined, { sizeBytes });
  return { offset: start, length: end - start + 1 };
}

/** If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since (with the copy-source prefix for copies). */
export function checkConditions(headers: Record<string, string | string[] | undefined>, info: ObjectInfo, prefix = ''): void {
  const etag = `"${info.etag}"`;
  const matches = (list: string): boolean => list.split(',').some((item) => {
    const candidate = item.trim().replace(/^W\//, '');
    return candidate === '*' || candidate === etag || candidate === info.etag;
  });
  const seconds = Math.floor(info.modTimeMs / 1000) * 1000;
  const ifMatch = headerValue(headers, `${prefix}if-match`);
  const ifNoneMatch = headerValue(headers, `${prefix}if-none-match`);
  const ifModifiedSince = headerValue(headers, `${prefix}if-modified-since`);
  const ifUnmodifiedSince = headerValue(headers, `${prefix}if-unmodified-since`);
  const notModified = prefix === '' ? 'NotModified' : 'PreconditionFailed';
  if (ifMatch !== undefined && !matches(ifMatch)) throw new SvcError('PreconditionFailed');
  if (ifMatch === undefined && ifUnmodifiedSince !== undefined && seconds > Date.parse(ifUnmodifiedSince)) throw new SvcError('PreconditionFailed');
  // A 304 names the version the client already has (RFC 9110 §15.4.5).
  const answer = prefix === '' ? { responseHeaders: { etag, 'last-modified': new Date(info.modTimeMs).toUTCString() } } : {};
  if (ifNoneMatch !== undefined && matches(ifNoneMatch)) throw new SvcError(notModified, undefined, answer);
  if (ifNoneMatch === undefined && ifModifiedSince !== undefined && seconds <= Date.parse(ifModifiedSince)) throw new SvcError(notModified, undefined, answer);
}

interface ReadRange {
  offset: number;
  length: number;
  /** Set when the range is one part of a multipart object, asked for by partNumber. */
  partsCount?: number;
  partNumber?: number;
}

/** The range a GET or HEAD reads: a `partNumber` query or a Range header (not both). */
function readRangeOf(request: S3Request, info: ObjectInfo): ReadRange | undefined {
  const partText = request.query.get('partNumber');
  const rangeHeader = headerValue(request.headers, 'range');
  if (partText === null) return parseRange(rangeHeader, info.sizeBytes);
  if (rangeHeader !== undefined) throw new SvcError('InvalidRequest', 'Cannot specify both Range header and partNumber query parameter.');
  const partNumber = /^\d{1,5}$/.test(partText) ? Number(partText) : NaN;
  if (!(partNumber >= 1 && partNumber <= limits.maxPartNumber)) throw new SvcError('InvalidArgument', `Part number must be an integer between 1 and ${limits.maxPartNumber}, inclusive`);
  return partRange(info, partNumber);
}

/**
 * Part N of a multipart object (its bytes and the parts count); an object uploaded in one piece
 * has one part, the whole object. Any other part number is InvalidPartNumber.
 */
export function partRange(info: ObjectInfo, partNumber: number): ReadRange {
  const multipart = /-\d+$/.test(info.etag);
  const index = info.parts.findIndex((part) => part.number === partNumber);
  if (!multipart) {
    if (partNumber !== 1) throw new SvcError('InvalidPartNumber', undefined, { partNumber });
    return { offset: 0, length: info.sizeBytes };
  }
  if (index < 0) throw new SvcError('InvalidPartNumber', undefined, { partNumber, partsCount: info.parts.length });
  const offset = info.parts.slice(0, index).reduce((sum, part) => sum + part.sizeBytes, 0);
  return { offset, length: info.parts[index]!.sizeBytes, partsCount: info.parts.length, partNumber };
}

/** Length, Content-Range and parts count of a (possibly ranged) read: its status and headers. */
function rangeHeaders(info: ObjectInfo, range: ReadRange | undefined): { status: number; headers: Record<string, string | number> } {
  if (!range) return { status: 200, headers: { 'content-length': info.sizeBytes } };
  const headers: Record<string, string | number> = { 'content-length': range.length };
  if (range.partsCount !== undefined) headers['x-amz-mp-parts-count'] = range.partsCount;
  if (info.sizeBytes === 0) return { status: 200, headers };
  headers['content-range'] = `bytes ${range.offset}-${range.offset + range.length - 1}/${info.sizeBytes}`;
  return { status: 206, headers };
}

export async function headObject(context: S3Context, request: S3Request, bucket: string, key: string): Promise<S3Response> {
  const settings = sseSettings(context, request);
  const customerKey = customerKeyOf(request.headers, settings);
  const info = await withDeleteMarker(() => context.objects.headObject(bucket, key, request.query.get('versionId') ?? undefined));
  // SSE-C: HEAD needs the key too (AWS); SSE-S3 and SSE-KMS answer without unsealing anything.
  if (customerKey || info.encryption?.kind === 'SSE-C') await keyOf(settings.kms, info, customerKey ? { customerKey: customerKey.key } : {});
  checkConditions(request.headers, info);
  const range = readRangeOf(request, info);
  const answer = rangeHeaders(info, range);
  const headers = await withoutHiddenLockHeaders(request, bucket, key, objectHeaders(info));
  const expiration = request.query.has('versionId') ? {} : await expirationHeader(context, bucket, key, info);
  return { status: answer.status, headers: { ...headers, ...requestedChecksums(request, info, range), ...encryptionHeaders(info.encryption, customerKey?.keyMd5), ...expiration, ...answer.headers } };
}

export async function getObject(context: S3Context, request: S3Request, bucket: string, key: string): Promise<S3Response> {
  const versionId = request.query.get('versionId') ?? undefined;
  let range: ReadRange | undefined;
  const settings = sseSettings(context, request);
  const customerKey = customerKeyOf(request.headers, settings);
  const reader = await withDeleteMarker(() =>
    readObject(context.objects, settings.kms, bucket, key, {
      ...(versionId !== undefined ? { versionId } : {}),
      ...(customerKey ? { secrets: { customerKey: customerKey.key } } : {}),
      prepare: (info) => {
        checkConditions(request.headers, info);
        range = readRangeOf(request, info);
        return range;
      },
    }),
  );
  const info = reader.info;
  const answer = rangeHeaders(info, range);
  const noExpiration: Record<string, string> = {};
  const [shown, expiration] = await Promise.all([withoutHiddenLockHeaders(request, bucket, key, objectHeaders(info)), versionId !== undefined ? noExpiration : expirationHeader(context, bucket, key, info)]).catch(async (error: unknown) => {
    await reader.body[Symbol.asyncIterator]().return?.(); // releases the read lock
    throw error;
  });
  const headers: Record<string, string | number> = { ...shown, ...requestedChecksums(request, info, range), ...encryptionHeaders(info.encryption, customerKey?.keyMd5), ...expiration, ...answer.headers };
  for (const [name, value] of request.query) if (name.startsWith('response-')) headers[name.slice('response-'.length)] = value;
  return { status: answer.status, headers, body: { chunks: reader.body, release: (chunk) => reader.release(chunk) } };
}

export async function deleteObject(context: S3Context, request: S3Request, bucket: string, key: string): Promise<S3Response> {
  const versionId = request.query.get('versionId') ?? undefined;
  const conditions = deleteConditionsOf(request.headers);
  const precondition = deletePrecondition(conditions);
  // A delete on the object's ETag reads it: AWS asks for s3:GetObject as well.
  if (conditions.ifMatch !== undefined) await request.authorize?.('s3:GetObject', bucket, key);
  const bypassGovernance = versionId !== undefined && (await governanceBypass(request, bucket, key));
  // A replica of another deployment's delete marker keeps that marker's id and time.
  const replica = versionId === undefined ? await replicaWriteOf(request, bucket, key, 's3:ReplicateDelete') : undefined;
  const marker = replica ? { marker: { versionId: replica.versionId, modTimeMs: replica.modTimeMs } } : {};
  const result = await context.objects.deleteObject(bucket, key, versionId, { bypassGovernance, ...marker, ...(precondition ? { precondition } : {}) });
  const headers: Record<string, string> = {};
  // A delete marker (versioned or suspended bucket) is named with its id, `null` in a suspended bucket.
  if (result.deleteMarker) headers['x-amz-delete-marker'] = 'true';
  if (result.deleteMarker || result.versionId !== 'null' || versionId !== undefined) headers['x-amz-version-id'] = result.versionId;
  return { status: 204, headers, events: [removalEvent(bucket, key, result, versionId !== undefined)], ...(replica ? { replica: true } : {}) };
}

export async function copyObject(context: S3Context, request: S3Request, bucket: string, key: string, source: CopySource): Promise<S3Response> {
  const storageClass = storageClassOf(request.headers);
  const directive = headerValue(request.headers, 'x-amz-metadata-directive') ?? 'COPY';
  if (directive !== 'COPY' && directive !== 'REPLACE') throw new SvcError('InvalidArgument', 'x-amz-metadata-directive must be COPY or REPLACE');
  const settings = sseSettings(context, request);
  const sourceKey = customerKeyOf(request.headers, settings, 'x-amz-copy-source-');
  const targetSse: (SseRequest & { customerKeyMd5?: string }) | undefined = writeEncryptionOf(request.headers, settings);
  const sourceInfo = await context.objects.headObject(source.bucket, source.key, source.versionId);
  checkConditions(request.headers, sourceInfo, 'x-amz-copy-source-');
  const sameObject = source.bucket === bucket && source.key === key && source.versionId === undefined;
  if (sameObject && directive === 'COPY' && headerValue(request.headers, 'x-amz-storage-class') === undefined && targetSse === undefined) {
    throw new SvcError('InvalidRequest', 'This copy request is illegal because it is trying to copy an object to itself without changing the object\'s metadata, storage class, or encryption attributes.');
  }
  // An encrypted source is opened with its key (the copy-source SSE-C key for SSE-C) before anything is written.
  const reader = await readObject(context.objects, settings.kms, source.bucket, source.key, { versionId: sourceInfo.versionId, ...(sourceKey ? { secrets: { customerKey: sourceKey.key } } : {}) });
  const metadata = directive === 'REPLACE'
    ? metadataOf(request.headers)
    : { userMetadata: sourceInfo.userMetadata, systemMetadata: stripChecksums(sourceInfo.systemMetadata), ...(sourceInfo.contentType !== undefined ? { contentType: sourceInfo.contentType } : {}) };
  // A copy is a new version: it takes the locks its request asks for (or the bucket's default), never its source's.
  const lockFields = await lockFieldsFromHeaders(request, bucket, key, context.nowMs());
  metadata.systemMetadata = { ...withoutLockFields(withTags(await withRequestedAcl(context, request, { bucket, key }, metadata.systemMetadata), copiedTags(request, sourceInfo))), ...lockFields };
  // The target's encryption is what the request asks, else the target bucket's default: never the source's.
  const sse = targetSse ?? bucketDefaultEncryption((await context.objects.bucketRecord(bucket))?.encryption);
  const algorithm = copyChecksumAlgorithm(request, sourceInfo);
  const options = {
    storageClass, ...metadata, sizeBytes: sourceInfo.sizeBytes,
    ...(algorithm ? { digests: [algorithm], beforeCommit: (received: ReceivedBody) => copiedChecksum(algorithm, received.digests[algorithm]!) } : {}),
  };
  const info = await storeObject(context.objects, settings.kms, storeAs(context, key, metadata, sse), bucket, key, reader.body, options);
  const headers: Record<string, string> = { 'content-type': 'application/xml', ...versionHeader(info), ...encryptionHeaders(info.encryption, targetSse?.customerKeyMd5) };
  if (sourceInfo.versionId !== 'null') headers['x-amz-copy-source-version-id'] = sourceInfo.versionId;
  return { status: 200, headers, body: toXml('CopyObjectResult', { LastModified: new Date(info.modTimeMs).toISOString(), ETag: `"${info.etag}"`, ...objectChecksumFields(info.systemMetadata) }), events: [versionEvent('ObjectCreated:Copy', info)] };
}

/**
 * The checksum a copy keeps: of the algorithm `x-amz-checksum-algorithm` names, else of its
 * source's; computed over the copied bytes, so it is of the whole object (FULL_OBJECT).
 */
function copyChecksumAlgorithm(request: S3Request, sourceInfo: ObjectInfo): ChecksumAlgorithm | undefined {
  const named = headerValue(request.headers, 'x-amz-checksum-algorithm');
  if (named !== undefined) {
    const algorithm = named.toLowerCase() as ChecksumAlgorithm;
    if (!checksumAlgorithms.includes(algorithm)) throw new SvcError('InvalidRequest', `Checksum algorithm '${named}' is not supported: use CRC32, CRC32C, CRC64NVME, SHA1 or SHA256.`);
    return algorithm;
  }
  return checksumAlgorithms.find((algorithm) => sourceInfo.systemMetadata[`x-amz-checksum-${algorithm}`] !== undefined);
}

function copiedChecksum(algorithm: ChecksumAlgorithm, hex: string): Record<string, string> {
  return { [`x-amz-checksum-${algorithm}`]: Buffer.from(hex, 'hex').toString('base64'), 'x-amz-checksum-type': 'FULL_OBJECT' };
}

/** x-amz-tagging-directive: COPY (the default) keeps the source's tags, REPLACE takes x-amz-tagging. */
function copiedTags(request: S3Request, sourceInfo: ObjectInfo): string | undefined {
  const directive = headerValue(request.headers, 'x-amz-tagging-directive') ?? 'COPY';
  if (directive !== 'COPY' && directive !== 'REPLACE') throw new SvcError('InvalidArgument', 'x-amz-tagging-directive must be COPY or REPLACE');
  return directive === 'COPY' ? sourceInfo.systemMetadata[tagsMetadataKey] : tagsFromHeader(request.headers);
}

function stripChecksums(map: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(map).filter(([name]) => !name.startsWith('x-amz-checksum-')));
}

/** Adds the x-amz-delete-marker header to a NoSuchKey caused by a delete marker. */
export async function withDeleteMarker<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (isSvcError(error) && error.details.deleteMarker === true) {
      throw new SvcError(error.code, error.message, { ...error.details, responseHeaders: { 'x-amz-delete-marker': 'true', ...(error.details.versionId ? { 'x-amz-version-id': String(error.details.versionId) } : {}) } });
    }
    throw error;
  }
}
