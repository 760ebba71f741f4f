/**
 * Uploads. Small files: one PUT whose body streams into the object layer's putObject. Large files:
 * a multipart upload whose parts (one PUT each) stream into uploadPart, then complete or abort.
 * No body is ever gathered in memory; a client that goes away mid-body, or stops sending for the
 * body idle timeout (RequestTimeout), leaves nothing committed.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SvcError } from '../errors/index.js';
import { limits } from '../util/limits.js';
import type { ConsoleContext } from './context.js';
import { bodyRecord, bucketParam, queryOf, requiredKey, storageClassOf } from './input.js';
import { requestAccess, requestBody } from './request-state.js';
import { uploadSchemas } from './api-schemas.js';

export async function uploadRoutes(app: FastifyInstance, options: { context: ConsoleContext }): Promise<void> {
  const { context } = options;
  app.put('/buckets/:bucket/objects', { schema: uploadSchemas.put, config: { access: { actions: ['s3:PutObject'], on: 'object' } } }, async (request) => {
    const bucket = bucketParam(request.params);
    const query = queryOf(request);
    const key = requiredKey(query.key);
    const sizeBytes = contentLength(request, limits.maxPutObjectSizeBytes);
    await requestAccess(request).require([{ action: 's3:PutObject', bucket, key }]);
    const info = await context.objects().putObject(bucket, key, requestBody(request), {
      storageClass: storageClassOf(query.storageClass),
      sizeBytes,
      ...contentTypeOf(query.contentType),
    });
    return { key: info.key, versionId: info.versionId, etag: info.etag, sizeBytes: info.sizeBytes };
  });
  app.post('/buckets/:bucket/uploads', { schema: uploadSchemas.create, config: { access: { actions: ['s3:PutObject'], on: 'object' } } }, async (request) => {
    const bucket = bucketParam(request.params);
    const body = bodyRecord(request.body);
    const key = requiredKey(body.key);
    await requestAccess(request).require([{ action: 's3:PutObject', bucket, key }]);
    const uploadId = await context.objects().createMultipartUpload(bucket, key, { storageClass: storageClassOf(body.storageClass), ...contentTypeOf(body.contentType) });
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
    const part = await context.objects().uploadPart(bucket, key, uploadId, partNumber, requestBody(request), { sizeBytes });
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
