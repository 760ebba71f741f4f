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
import { bucketNameProblem } from '../contracts/bucket-name.js';

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
  app.post('/buckets', { schema: bucketSchemas.create, config: { access: { actions: ['s3:CreateBucket'], on: 'bucket', conditional: { actions: ['s3:PutBucketObjectLockConfiguration', 's3:PutBucketVersioning'], when: 'with objectLock: true' } } } }, async (request) => {
    const body = bodyRecord(request.body);
    const name = typeof body.name === 'string' ? body.name : '';
    checkNewBucketName(name);
    const objectLock = body.objectLock === true;
    // Object lock at creation needs what S3's CreateBucket with x-amz-bucket-object-lock-enabled needs.
    const lockPermissions = objectLock ? [{ action: 's3:PutBucketObjectLockConfiguration', bucket: name }, { action: 's3:PutBucketVersioning', bucket: name }] : [];
    await requestAccess(request).require([{ action: 's3:CreateBucket', bucket: name }, ...lockPermissions]);
    await context.objects().makeBucket(name, objectLock ? { objectLock } : {});
    return { name, objectLock };
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
    let removed = { versions: 0, uploads: 0 };
    if (query.force === 'true') {
      if (query.confirm !== bucket) throw new SvcError('ConfirmationRequired', `type the bucket's name '${bucket}' to delete it with everything in it`, { bucket });
      removed = await emptyBucket(objects, bucket);
      context.logger.info({ bucket, versionsRemoved: removed.versions, uploadsAborted: removed.uploads }, 'console deleted a bucket and its objects');
    }
    await objects.deleteBucket(bucket);
    return { deleted: bucket, versionsRemoved: removed.versions, uploadsAborted: removed.uploads };
  });
}

/** Removes every version, delete marker and unfinished upload of the bucket. */
async function emptyBucket(objects: ObjectLayer, bucket: string): Promise<{ versions: number; uploads: number }> {
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
  const uploads = await objects.listMultipartUploads(bucket);
  for (const upload of uploads) await objects.abortMultipartUpload(bucket, upload.key, upload.uploadId);
  return { versions: removed, uploads: uploads.length };
}

/** S3's bucket naming rule (src/contracts/bucket-name.ts, which the browser shows as the name is typed), each broken rule with its own message. */
export function checkNewBucketName(name: string): void {
  const problem = bucketNameProblem(name);
  if (problem !== undefined) throw new SvcError('InvalidBucketName', problem, { bucket: name, field: 'name' });
}
