/**
 * Buckets: list, create, versioning, delete. Deleting a bucket that still holds objects needs
 * `?force=true` and the bucket's name typed again (`&confirm=<name>`); then every version and unfinished
 * upload is removed first, through the object layer, and the bucket last. A session without
 * `s3:ListAllMyBuckets` sees the buckets it may list (`s3:ListBucket`).
 */
import type { FastifyInstance } from 'fastify';
import { SvcError } from '../errors/index.js';
import type { ObjectLayer } from '../object/index.js';
import type { ConsoleContext } from './context.js';
import { bodyRecord, bucketParam } from './input.js';
import { requestAccess } from './request-state.js';
import { bucketSchemas } from './api-schemas.js';

export async function bucketRoutes(app: FastifyInstance, options: { context: ConsoleContext }): Promise<void> {
  const { context } = options;
  app.get('/buckets', { schema: bucketSchemas.list, config: { access: { session: 'only the buckets the session may list (s3:ListAllMyBuckets, or s3:ListBucket per bucket)' } } }, async (request) => {
    const access = requestAccess(request);
    const records = await context.objects().listBuckets();
    const all = await access.allows([{ action: 's3:ListAllMyBuckets' }]);
    const shown = [];
    for (const record of records) if (all || (await access.allows([{ action: 's3:ListBucket', bucket: record.name }]))) shown.push(record);
    return { buckets: shown.map((record) => ({ name: record.name, createdAt: new Date(record.createdMs).toISOString(), versioning: record.versioning, objectLock: record.objectLock?.enabled === true })) };
  });
  app.post('/buckets', { schema: bucketSchemas.create, config: { access: { actions: ['s3:CreateBucket'], on: 'bucket' } } }, async (request) => {
    const body = bodyRecord(request.body);
    const name = typeof body.name === 'string' ? body.name : '';
    checkNewBucketName(name);
    await requestAccess(request).require([{ action: 's3:CreateBucket', bucket: name }]);
    await context.objects().makeBucket(name);
    return { name };
  });
  app.put('/buckets/:bucket/versioning', { schema: bucketSchemas.versioning, config: { access: { actions: ['s3:PutBucketVersioning'], on: 'bucket' } } }, async (request) => {
    const bucket = bucketParam(request.params);
    const status = bodyRecord(request.body).status;
    if (status !== 'enabled' && status !== 'suspended') throw new SvcError('InvalidArgument', "status must be 'enabled' or 'suspended'", { field: 'status' });
    await requestAccess(request).require([{ action: 's3:PutBucketVersioning', bucket }]);
    await context.objects().setBucketVersioning(bucket, status);
    return { name: bucket, versioning: status };
  });
  app.delete('/buckets/:bucket', { schema: bucketSchemas.delete, config: { access: { actions: ['s3:DeleteBucket'], on: 'bucket', conditional: { actions: ['s3:DeleteObjectVersion', 's3:AbortMultipartUpload'], when: 'with force=true, on every key' } } } }, async (request) => {
    const bucket = bucketParam(request.params);
    const query = request.query as Record<string, string | undefined>;
    const objects = context.objects();
    if (query.force !== undefined && query.force !== 'true' && query.force !== 'false') throw new SvcError('InvalidArgument', 'force must be true or false', { field: 'force' });
    const emptying = query.force === 'true' ? [{ action: 's3:DeleteObjectVersion', bucket, key: '*' }, { action: 's3:AbortMultipartUpload', bucket, key: '*' }] : [];
    // The permission before the bucket's existence: a caller without it learns nothing.
    await requestAccess(request).require([{ action: 's3:DeleteBucket', bucket }, ...emptying]);
    await objects.requireBucket(bucket);
    if (query.force === 'true') {
      if (query.confirm !== bucket) throw new SvcError('ConfirmationRequired', `type the bucket's name '${bucket}' to delete it with everything in it`, { bucket });
      const removed = await emptyBucket(objects, bucket);
      context.logger.info({ bucket, versionsRemoved: removed }, 'console deleted a bucket and its objects');
    }
    await objects.deleteBucket(bucket);
    return { deleted: bucket };
  });
}

/** Removes every version, delete marker and unfinished upload of the bucket. */
async function emptyBucket(objects: ObjectLayer, bucket: string): Promise<number> {
  let removed = 0;
  for (;;) {
    const batch: { key: string; versionId: string }[] = [];
    for await (const entry of objects.list(bucket, { prefix: '' })) {
      if (entry.kind === 'object') for (const version of entry.versions) batch.push({ key: entry.key, versionId: version.versionId });
      if (batch.length >= 1000) break;
    }
    if (batch.length === 0) break;
    for (const item of batch) await objects.deleteObject(bucket, item.key, item.versionId);
    removed += batch.length;
  }
  for (const upload of await objects.listMultipartUploads(bucket)) await objects.abortMultipartUpload(bucket, upload.key, upload.uploadId);
  return removed;
}

/** S3's bucket naming rules, each with its own message (shown next to the name field). */
export function checkNewBucketName(name: string): void {
  const refuse = (reason: string) => {
    throw new SvcError('InvalidBucketName', `Bucket names ${reason}.`, { bucket: name, field: 'name' });
  };
  if (name.length < 3 || name.length > 63) refuse('are 3 to 63 characters long');
  if (!/^[a-z0-9.-]+$/.test(name)) refuse('use only lowercase letters, digits, dots and hyphens');
  if (!/^[a-z0-9]/.test(name) || !/[a-z0-9]$/.test(name)) refuse('begin and end with a letter or digit');
  if (name.includes('..')) refuse('have no two dots in a row');
  if (/^\d+\.\d+\.\d+\.\d+$/.test(name)) refuse('are not formatted as an IP address');
  if (name.startsWith('xn--') || name.endsWith('-s3alias')) refuse("do not begin with 'xn--' or end with '-s3alias'");
}
