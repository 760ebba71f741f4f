/** Multipart upload operations. */
import { versionEvent } from '../../../ops/events/types.js';
import { SvcError, isSvcError } from '../../../errors/index.js';
import { limits } from '../../../util/limits.js';
import type { UploadedPart } from '../../../object/index.js';
import { expectationsFrom, PayloadVerifier } from '../auth/checksums.js';
import { headerValue, readAll, type S3Context, type S3Request, type S3Response } from '../context.js';
import type { CopySource } from '../router.js';
import { parseXmlBody, toXml, xmlLimits } from '../xml.js';
import { bucketDefaultEncryption, checkConditions, metadataOf, sseSettings, storageClassOf, storeAs, writePreconditionOf } from './objects.js';
import { lockFieldsFromHeaders } from './object-lock.js';
import { checksumField, completionClaimsOf, listedChecksumsOf, objectChecksumFields, partChecksumFields, uploadChecksumHeaders, uploadChecksumOf } from './multipart-checksums.js';
import { withRequestedAcl } from '../acl-request.js';
import { customerKeyOf, writeEncryptionOf } from '../sse-headers.js';
import { encryptionHeaders, getDecrypted } from '../../../ops/sse/encrypted-objects.js';
import { checkUploadSecrets } from '../../../ops/sse/encrypted-multipart.js';
import { newUploadStorage, partUploader } from '../../../ops/compression/compressed-multipart.js';
import type { SseRequest, SseSecrets } from '../../../ops/sse/object-keys.js';

const xml = (root: string, content: Record<string, unknown>): S3Response => ({ status: 200, headers: { 'content-type': 'application/xml' }, body: toXml(root, content) });

export async function createMultipartUpload(context: S3Context, request: S3Request, bucket: string, key: string): Promise<S3Response> {
  const storageClass = storageClassOf(request.headers);
  const metadata = metadataOf(request.headers);
  const checksum = uploadChecksumOf(request.headers);
  const lockFields = await lockFieldsFromHeaders(request, bucket, key, context.nowMs());
  const settings = sseSettings(context, request);
  // The upload's encryption is what the request asks, else the bucket's default; its key is made (and sealed) now.
  const sse: (SseRequest & { customerKeyMd5?: string }) | undefined = writeEncryptionOf(request.headers, settings) ?? bucketDefaultEncryption((await context.objects.requireBucket(bucket)).encryption);
  // Compressed or not is decided now, as for a PutObject of this key and type, and kept with the upload.
  const storage = await newUploadStorage(settings.kms, storeAs(context, key, metadata, sse), bucket, key);
  const encryption = storage.encryption;
  const uploadId = await context.objects.createMultipartUpload(bucket, key, { storageClass, ...metadata, systemMetadata: { ...(await withRequestedAcl(context, request, { bucket, key }, metadata.systemMetadata)), ...lockFields }, ...(checksum ? { checksum } : {}), ...storage });
  const answer = xml('InitiateMultipartUploadResult', { Bucket: bucket, Key: key, UploadId: uploadId });
  return { ...answer, headers: { ...answer.headers, ...uploadChecksumHeaders(checksum), ...encryptionHeaders(encryption, sse?.kind === 'SSE-C' ? sse.customerKeyMd5 : undefined) } };
}

export async function uploadPart(context: S3Context, request: S3Request, bucket: string, key: string, uploadId: string, partNumber: number): Promise<S3Response> {
  const decoded = headerValue(request.headers, 'x-amz-decoded-content-length');
  const length = request.auth.payload.kind.startsWith('streaming') ? decoded : headerValue(request.headers, 'content-length');
  const sizeBytes = length === undefined ? undefined : Number(length);
  if (sizeBytes !== undefined && sizeBytes > limits.maxPartSizeBytes) throw new SvcError('EntityTooLarge');
  const expectations = expectationsFrom(request.headers, request.trailers);
  if (request.auth.payload.kind === 'sha256') expectations.sha256Hex = request.auth.payload.expectedHex;
  const verifier = new PayloadVerifier(expectations);
  let stored: Record<string, string> = {};
  const settings = sseSettings(context, request);
  const customerKey = customerKeyOf(request.headers, settings);
  const record = await context.objects.multipartUpload(bucket, key, uploadId);
  const sealer = await partUploader(context.objects, settings.kms, record, secretsOf(customerKey));
  const part = await sealer.upload(partNumber, request.body, {
    digests: verifier.algorithms,
    sentChecksums: [...expectations.checksums.keys()],
    ...(sizeBytes !== undefined && Number.isSafeInteger(sizeBytes) ? { sizeBytes } : {}),
    beforeCommit: (received) => (stored = verifier.verify(received)),
  });
  return { status: 200, headers: { etag: `"${part.etag}"`, ...stored, ...partChecksumHeader(part), ...encryptionHeaders(record.encryption, customerKey?.keyMd5) } };
}

export async function uploadPartCopy(context: S3Context, request: S3Request, bucket: string, key: string, uploadId: string, partNumber: number, source: CopySource): Promise<S3Response> {
  const settings = sseSettings(context, request);
  const sourceKey = customerKeyOf(request.headers, settings, 'x-amz-copy-source-');
  const targetKey = customerKeyOf(request.headers, settings);
  const record = await context.objects.multipartUpload(bucket, key, uploadId);
  // The target's key is checked and opened before the source is read.
  const sealer = await partUploader(context.objects, settings.kms, record, secretsOf(targetKey));
  const sourceInfo = await context.objects.headObject(source.bucket, source.key, source.versionId);
  checkConditions(request.headers, sourceInfo, 'x-amz-copy-source-');
  const rangeHeader = headerValue(request.headers, 'x-amz-copy-source-range');
  let range: { offset: number; length: number } | undefined;
  if (rangeHeader !== undefined) {
    const match = /^bytes=(\d+)-(\d+)$/.exec(rangeHeader);
    if (!match || Number(match[2]) < Number(match[1]) || Number(match[2]) >= sourceInfo.sizeBytes) throw new SvcError('InvalidRange', undefined, { sizeBytes: sourceInfo.sizeBytes });
    range = { offset: Number(match[1]), length: Number(match[2]) - Number(match[1]) + 1 };
  }
  // An encrypted source is opened with its own key (the copy-source SSE-C key for SSE-C): the part holds its plaintext, sealed as the upload says.
  const reader = await getDecrypted(context.objects, settings.kms, source.bucket, source.key, { versionId: sourceInfo.versionId, ...(range ? { range } : {}), ...(sourceKey ? { secrets: { customerKey: sourceKey.key } } : {}) });
  const part = await sealer.upload(partNumber, reader.body, { sizeBytes: range?.length ?? sourceInfo.sizeBytes });
  const answer = xml('CopyPartResult', { LastModified: new Date(part.modTimeMs).toISOString(), ETag: `"${part.etag}"`, ...(part.checksumAlgorithm && part.checksum ? { [checksumField(part.checksumAlgorithm)]: part.checksum } : {}) });
  return { ...answer, headers: { ...answer.headers, ...encryptionHeaders(record.encryption, targetKey?.keyMd5) } };
}

export async function completeMultipartUpload(context: S3Context, request: S3Request, bucket: string, key: string, uploadId: string): Promise<S3Response> {
  const parsed = parseXmlBody(await readAll(request.body, xmlLimits.maxXmlBodyBytes), ['Part']);
  const parts = (parsed.CompleteMultipartUpload as Record<string, unknown> | undefined)?.Part as Record<string, unknown>[] | undefined;
  if (!Array.isArray(parts) || parts.length === 0) throw new SvcError('MalformedXML', 'CompleteMultipartUpload must list at least one Part');
  const requested = parts.map((part) => {
    const number = Number(part.PartNumber);
    if (!Number.isInteger(number) || typeof part.ETag !== 'string') throw new SvcError('MalformedXML', 'every Part needs a PartNumber and an ETag');
    return { number, etag: part.ETag, checksums: listedChecksumsOf(part) };
  });
  const customerKey = customerKeyOf(request.headers, sseSettings(context, request));
  if (customerKey) await checkCompletionKey(context, bucket, key, uploadId, customerKey.key);
  const info = await context.objects.completeMultipartUpload(bucket, key, uploadId, requested, writePreconditionOf(request.headers), completionClaimsOf(request.headers));
  return {
    status: 200,
    headers: { 'content-type': 'application/xml', ...(info.versionId !== 'null' ? { 'x-amz-version-id': info.versionId } : {}), ...encryptionHeaders(info.encryption, customerKey?.keyMd5) },
    body: toXml('CompleteMultipartUploadResult', { Location: `/${bucket}/${key}`, Bucket: bucket, Key: key, ETag: `"${info.etag}"`, ...objectChecksumFields(info.systemMetadata) }),
    events: [versionEvent('ObjectCreated:CompleteMultipartUpload', info)],
  };
}

/**
 * A customer key sent with CompleteMultipartUpload must be the upload's (AWS takes it there and
 * does not require it). A completion sent again finds no upload: the object layer answers it.
 */
async function checkCompletionKey(context: S3Context, bucket: string, key: string, uploadId: string, customerKey: Buffer): Promise<void> {
  const record = await context.objects.multipartUpload(bucket, key, uploadId).catch((error: unknown) => {
    if (isSvcError(error, 'NoSuchUpload')) return undefined;
    throw error;
  });
  if (record) checkUploadSecrets(record, { customerKey }, { keyRequired: false });
}

const secretsOf = (customerKey: { key: Buffer } | undefined): SseSecrets => (customerKey ? { customerKey: customerKey.key } : {});

export async function abortMultipartUpload(context: S3Context, _request: S3Request, bucket: string, key: string, uploadId: string): Promise<S3Response> {
  await context.objects.abortMultipartUpload(bucket, key, uploadId);
  return { status: 204, headers: {} };
}

export async function listParts(context: S3Context, request: S3Request, bucket: string, key: string, uploadId: string): Promise<S3Response> {
  const { record, parts } = await context.objects.listParts(bucket, key, uploadId);
  const marker = Number(request.query.get('part-number-marker') ?? '0');
  const maxParts = Math.min(Number(request.query.get('max-parts') ?? '1000'), 1000);
  if (!Number.isInteger(marker) || marker < 0 || !Number.isInteger(maxParts) || maxParts < 0) throw new SvcError('InvalidArgument', 'part-number-marker and max-parts must be non-negative integers');
  const after = parts.filter((part) => part.number > marker);
  const page = after.slice(0, maxParts);
  const truncated = after.length > page.length;
  const owner = { ID: request.auth.accessKeyId, DisplayName: request.auth.accessKeyId };
  return xml('ListPartsResult', {
    Bucket: bucket, Key: key, UploadId: uploadId, Initiator: owner, Owner: owner, StorageClass: record.storageClass,
    ...(record.checksum ? { ChecksumAlgorithm: record.checksum.algorithm.toUpperCase(), ChecksumType: record.checksum.type } : {}),
    PartNumberMarker: marker, ...(truncated ? { NextPartNumberMarker: page.at(-1)!.number } : {}), MaxParts: maxParts, IsTruncated: truncated,
    Part: page.map((part) => ({ PartNumber: part.number, LastModified: new Date(part.modTimeMs).toISOString(), ETag: `"${part.etag}"`, Size: part.sizeBytes, ...partChecksumFields(record.checksum, part.checksum) })),
  });
}

export async function listMultipartUploads(context: S3Context, request: S3Request, bucket: string): Promise<S3Response> {
  const prefix = request.query.get('prefix') ?? '';
  const delimiter = request.query.get('delimiter') ?? '';
  const keyMarker = request.query.get('key-marker') ?? '';
  const uploadIdMarker = request.query.get('upload-id-marker') ?? '';
  const maxText = request.query.get('max-uploads');
  const maxUploads = maxText === null ? 1000 : Number(maxText);
  if (!Number.isInteger(maxUploads) || maxUploads < 0 || (maxText !== null && !/^\d+$/.test(maxText))) throw new SvcError('InvalidArgument', 'max-uploads must be a whole number', { 'max-uploads': maxText });
  const limit = Math.min(maxUploads, 1000);
  // Sorted by key, then by initiation: markers continue after (key-marker, upload-id-marker).
  const all = (await context.objects.listMultipartUploads(bucket)).filter((upload) => upload.key.startsWith(prefix));
  let start = 0;
  if (keyMarker !== '') {
    const markerAt = uploadIdMarker === '' ? -1 : all.findIndex((upload) => upload.key === keyMarker && upload.uploadId === uploadIdMarker);
    start = markerAt >= 0 ? markerAt + 1 : all.findIndex((upload) => upload.key > keyMarker);
    if (start < 0) start = all.length;
  }
  const uploads: typeof all = [];
  const prefixes: string[] = [];
  let index = start;
  for (; index < all.length && uploads.length + prefixes.length < limit; index += 1) {
    const upload = all[index]!;
    const rest = upload.key.slice(prefix.length);
    const cut = delimiter === '' ? -1 : rest.indexOf(delimiter);
    if (cut >= 0) {
      const common = prefix + rest.slice(0, cut + delimiter.length);
      if (prefixes.at(-1) !== common) prefixes.push(common);
      while (index + 1 < all.length && all[index + 1]!.key.startsWith(common)) index += 1;
      continue;
    }
    uploads.push(upload);
  }
  const truncated = index < all.length;
  const last = uploads.at(-1);
  const owner = { ID: request.auth.accessKeyId, DisplayName: request.auth.accessKeyId };
  return xml('ListMultipartUploadsResult', {
    Bucket: bucket,
    KeyMarker: keyMarker,
    UploadIdMarker: uploadIdMarker,
    ...(truncated && last ? { NextKeyMarker: last.key, NextUploadIdMarker: last.uploadId } : truncated && prefixes.length > 0 ? { NextKeyMarker: prefixes.at(-1)! } : {}),
    Prefix: prefix,
    ...(delimiter ? { Delimiter: delimiter } : {}),
    MaxUploads: limit,
    IsTruncated: truncated,
    Upload: uploads.map((upload) => ({ Key: upload.key, UploadId: upload.uploadId, Initiator: owner, Owner: owner, StorageClass: upload.storageClass, Initiated: new Date(upload.initiatedMs).toISOString() })),
    ...(prefixes.length > 0 ? { CommonPrefixes: prefixes.map((Prefix) => ({ Prefix })) } : {}),
  });
}

/** The part's checksum in its upload's algorithm, which the answer carries even when the request sent none. */
function partChecksumHeader(part: UploadedPart): Record<string, string> {
  return part.checksumAlgorithm && part.checksum ? { [`x-amz-checksum-${part.checksumAlgorithm}`]: part.checksum } : {};
}
