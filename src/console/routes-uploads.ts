/**
 * Uploads. Small files: one PUT whose body streams into the object layer's putObject. Large files:
 * a multipart upload whose parts (one PUT each) stream into uploadPart, then complete or abort.
 * No body is ever gathered in memory; a client that goes away mid-body, or stops sending for the
 * body idle timeout (RequestTimeout), leaves nothing committed. An upload is stored as an S3 write
 * that sends no encryption headers would be, by the same code: encrypted by the bucket's default
 * encryption, compressed when the compression settings pick its key or type.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SvcError } from '../errors/index.js';
import { limits } from '../util/limits.js';
import type { ConsoleContext } from './context.js';
import { bodyRecord, bucketParam, queryOf, requiredKey, storageClassOf } from './input.js';
import { requestAccess, requestBody } from './request-state.js';
import { uploadSchemas } from './api-schemas.js';
import { bucketDefaultEncryption, storeAs } from '../api/s3/handlers/objects.js';
import { storeObject, type StoreAs } from '../ops/compression/compressed-objects.js';
import { newUploadStorage, partUploader } from '../ops/compression/compressed-multipart.js';
import type { Kms } from '../ops/kms/kms.js';

export async function uploadRoutes(app: FastifyInstance, options: { context: ConsoleContext }): Promise<void> {
  const { context } = options;
  app.put('/buckets/:bucket/objects', { schema: uploadSchemas.put, config: { access: { actions: ['s3:PutObject'], on: 'object' } } }, async (request) => {
    const bucket = bucketParam(request.params);
    const query = queryOf(request);
    const key = requiredKey(query.key);
    const sizeBytes = contentLength(request, limits.maxPutObjectSizeBytes);
    await requestAccess(request).require([{ action: 's3:PutObject', bucket, key }]);
    const contentType = contentTypeOf(query.contentType);
    const { kms, as } = await storageFor(context, bucket, key, contentType);
    const info = await storeObject(context.objects(), kms, as, bucket, key, requestBody(request), { storageClass: storageClassOf(query.storageClass), sizeBytes, ...contentType });
    return { key: info.key, versionId: info.versionId, etag: info.etag, sizeBytes: info.sizeBytes };
  });
  app.post('/buckets/:bucket/uploads', { schema: uploadSchemas.create, config: { access: { actions: ['s3:PutObject'], on: 'object' } } }, async (request) => {
    const bucket = bucketParam(request.params);
    const body = bodyRecord(request.body);
    const key = requiredKey(body.key);
    await requestAccess(request).require([{ action: 's3:PutObject', bucket, key }]);
    const contentType = contentTypeOf(body.contentType);
    const { kms, as } = await storageFor(context, bucket, key, contentType);
    const storage = await newUploadStorage(kms, as, bucket, key);
    const uploadId = await context.objects().createMultipartUpload(bucket, key, { storageClass: storageClassOf(body.storageClass), ...contentType, ...storage });
    return { key, uploadId, partSizeBytes: limits.consoleUploadPartSizeBytes };
  });
  app.put('/buckets/:bucket/uploads/:uploadId/parts/:partNumber', { schema: uploadSchemas.part, config: { access: { actions: ['s3:PutObject'], on: 'object' } } }, async (request) => {
    const bucket = bucketParam(request.params);
    const { uploadId, partNumber: partText } = request.params as { uploadId: string; partNumber: string };
    const key = requiredKey(queryOf(request).key);
    const partNumber = Number(partText);
    if (!/^\d+$/.test(partText) || partNumber < 1 || partNumber > limits.maxPartNumber) throw new SvcError('InvalidArgument', `the part number must be from 1 to ${limits.maxPartNumber}`, { field: 'partNumber' });
    const sizeBytes = contentLength(request, limits.maxPartSizeBytes);
    await requestAccess(request).require([{ action: 's3:PutObject', bucket, key }]);
    const record = await context.objects().multipartUpload(bucket, key, uploadId);
    const uploader = await partUploader(context.objects(), context.s3?.().encryption?.kms(), record, {});
    const part = await uploader.upload(partNumber, requestBody(request), { sizeBytes });
    return { partNumber, etag: part.etag };
  });
  app.post('/buckets/:bucket/uploads/:uploadId/complete', { schema: uploadSchemas.complete, config: { access: { actions: ['s3:PutObject'], on: 'object' } } }, async (request) => {
    const bucket = bucketParam(request.params);
    const { uploadId } = request.params as { uploadId: string };
    const body = bodyRecord(request.body);
    const key = requiredKey(body.key);
    const parts = partsOf(body.parts);
    await requestAccess(request).require([{ action: 's3:PutObject', bucket, key }]);
    const info = await context.objects().completeMultipartUpload(bucket, key, uploadId, parts);
    return { key: info.key, versionId: info.versionId, etag: info.etag, sizeBytes: info.sizeBytes };
  });
  app.delete('/buckets/:bucket/uploads/:uploadId', { schema: uploadSchemas.abort, config: { access: { actions: ['s3:AbortMultipartUpload'], on: 'object' } } }, async (request) => {
    const bucket = bucketParam(request.params);
    const { uploadId } = request.params as { uploadId: string };
    const key = requiredKey(queryOf(request).key);
    await requestAccess(request).require([{ action: 's3:AbortMultipartUpload', bucket, key }]);
    await context.objects().abortMultipartUpload(bucket, key, uploadId);
    return { aborted: uploadId };
  });
}

/**
 * How an upload to bucket/key is stored: as an S3 write without encryption headers (the bucket's
 * default encryption; compression as the settings pick), and the KMS that seals its key.
 */
async function storageFor(context: ConsoleContext, bucket: string, key: string, contentType: { contentType?: string }): Promise<{ kms: Kms | undefined; as: StoreAs }> {
  const s3 = context.s3?.();
  const sse = bucketDefaultEncryption((await context.objects().requireBucket(bucket)).encryption);
  if (!s3) return { kms: undefined, as: { ...(sse ? { sse } : {}), compress: false } };
  return { kms: s3.encryption?.kms(), as: storeAs(s3, key, { ...contentType, systemMetadata: {} }, sse) };
}

function contentLength(request: FastifyRequest, maxBytes: number): number {
  const text = request.headers['content-length'];
  if (text === undefined) throw new SvcError('MissingContentLength');
  const sizeBytes = Number(text);
  if (!/^\d+$/.test(text) || sizeBytes > maxBytes) throw new SvcError('EntityTooLarge', `a single upload request carries at most ${maxBytes} bytes`, { sizeBytes: text });
  return sizeBytes;
}

function contentTypeOf(value: unknown): { contentType?: string } {
  if (value === undefined || value === '') return {};
  if (typeof value !== 'string' || value.length > 256 || !/^[\x20-\x7e]+$/.test(value)) throw new SvcError('InvalidArgument', 'contentType must be a printable media type', { field: 'contentType' });
  return { contentType: value };
}

function partsOf(value: unknown): { number: number; etag: string }[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > limits.maxPartNumber) throw new SvcError('InvalidArgument', 'parts must be a non-empty list of { partNumber, etag }', { field: 'parts' });
  return value.map((item) => {
    const record = bodyRecord(item);
    if (!Number.isInteger(record.partNumber) || typeof record.etag !== 'string') throw new SvcError('InvalidArgument', 'each part needs a partNumber and an etag', { field: 'parts' });
    return { number: record.partNumber as number, etag: record.etag };
  });
}
