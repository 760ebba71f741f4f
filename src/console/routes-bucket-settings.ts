/**
 * A bucket's settings page: each setting read, replaced or removed as its S3 document (a policy's
 * JSON, a lifecycle, CORS, tagging, encryption, object lock, public access block, notification or
 * replication XML) through the S3 API's own handler (s3-bridge.ts), so a document is judged by the parser S3
 * uses and refused with S3's error; each route needs the S3 action the same S3 request would.
 * Also: whether the bucket is public (GetBucketPolicyStatus), and what deleting the bucket would
 * remove (its versions, delete markers and unfinished uploads, counted).
 */
import type { FastifyInstance } from 'fastify';
import { SvcError, isSvcError, type ErrorCode } from '../errors/index.js';
import { limits } from '../util/limits.js';
import type { S3Context } from '../api/s3/context.js';
import * as policy from '../api/s3/handlers/bucket-policy.js';
import * as lifecycle from '../api/s3/handlers/bucket-lifecycle.js';
import * as cors from '../api/s3/handlers/bucket-cors.js';
import * as tagging from '../api/s3/handlers/tagging.js';
import * as encryption from '../api/s3/handlers/bucket-encryption.js';
import * as objectLock from '../api/s3/handlers/object-lock.js';
import * as publicAccessBlock from '../api/s3/handlers/public-access-block.js';
import * as notification from '../api/s3/handlers/bucket-notification.js';
import * as replication from '../api/s3/handlers/bucket-replication.js';
import type { ConsoleContext } from './context.js';
import { bodyRecord, bucketParam } from './input.js';
import { requestAccess } from './request-state.js';
import { runBucketHandler, type BucketHandler } from './s3-bridge.js';
import { settingsSchemas } from './schemas-bucket-settings.js';

interface Setting {
  /** The URL segment (`/buckets/<bucket>/settings/<name>`). */
  name: string;
  get: { handler: BucketHandler; action: string; absent?: ErrorCode };
  put?: { handler: BucketHandler; action: string };
  remove?: { handler: BucketHandler; action: string };
}

/** Each setting with S3's handlers and the actions S3 declares for them (api/s3/access.ts). */
export const bucketSettings: Setting[] = [
  { name: 'policy', get: { handler: policy.getBucketPolicy, action: 's3:GetBucketPolicy', absent: 'NoSuchBucketPolicy' }, put: { handler: policy.putBucketPolicy, action: 's3:PutBucketPolicy' }, remove: { handler: policy.deleteBucketPolicy, action: 's3:DeleteBucketPolicy' } },
  { name: 'lifecycle', get: { handler: lifecycle.getBucketLifecycle, action: 's3:GetLifecycleConfiguration', absent: 'NoSuchLifecycleConfiguration' }, put: { handler: lifecycle.putBucketLifecycle, action: 's3:PutLifecycleConfiguration' }, remove: { handler: lifecycle.deleteBucketLifecycle, action: 's3:PutLifecycleConfiguration' } },
  { name: 'cors', get: { handler: cors.getBucketCors, action: 's3:GetBucketCORS', absent: 'NoSuchCORSConfiguration' }, put: { handler: cors.putBucketCors, action: 's3:PutBucketCORS' }, remove: { handler: cors.deleteBucketCors, action: 's3:PutBucketCORS' } },
  { name: 'tagging', get: { handler: tagging.getBucketTagging, action: 's3:GetBucketTagging', absent: 'NoSuchTagSet' }, put: { handler: tagging.putBucketTagging, action: 's3:PutBucketTagging' }, remove: { handler: tagging.deleteBucketTagging, action: 's3:PutBucketTagging' } },
  { name: 'encryption', get: { handler: encryption.getBucketEncryption, action: 's3:GetEncryptionConfiguration', absent: 'ServerSideEncryptionConfigurationNotFoundError' }, put: { handler: encryption.putBucketEncryption, action: 's3:PutEncryptionConfiguration' }, remove: { handler: encryption.deleteBucketEncryption, action: 's3:PutEncryptionConfiguration' } },
  { name: 'object-lock', get: { handler: objectLock.getObjectLockConfiguration, action: 's3:GetBucketObjectLockConfiguration', absent: 'ObjectLockConfigurationNotFoundError' }, put: { handler: objectLock.putObjectLockConfiguration, action: 's3:PutBucketObjectLockConfiguration' } },
  { name: 'public-access-block', get: { handler: publicAccessBlock.getPublicAccessBlock, action: 's3:GetBucketPublicAccessBlock', absent: 'NoSuchPublicAccessBlockConfiguration' }, put: { handler: publicAccessBlock.putPublicAccessBlock, action: 's3:PutBucketPublicAccessBlock' }, remove: { handler: publicAccessBlock.deletePublicAccessBlock, action: 's3:PutBucketPublicAccessBlock' } },
  { name: 'notification', get: { handler: notification.getBucketNotification, action: 's3:GetBucketNotification' } },
  { name: 'replication', get: { handler: replication.getBucketReplication, action: 's3:GetReplicationConfiguration', absent: 'ReplicationConfigurationNotFoundError' }, put: { handler: replication.putBucketReplication, action: 's3:PutReplicationConfiguration' }, remove: { handler: replication.deleteBucketReplication, action: 's3:PutReplicationConfiguration' } },
];

export async function bucketSettingsRoutes(app: FastifyInstance, options: { context: ConsoleContext }): Promise<void> {
  const { context } = options;
  const s3 = (): S3Context => {
    const made = context.s3?.();
    if (!made) throw new SvcError('NotImplemented', 'bucket settings are not offered by this console');
    return made;
  };
  for (const setting of bucketSettings) {
    const url = `/buckets/:bucket/settings/${setting.name}`;
    const { get, put, remove } = setting;
    app.get(url, { schema: settingsSchemas.get(setting.name), config: { access: { actions: [get.action], on: 'bucket' } } }, async (request) => {
      const bucket = bucketParam(request.params);
      const access = requestAccess(request);
      await access.require([{ action: get.action, bucket }]);
      try {
        return { document: (await runBucketHandler(s3(), access, get.handler, bucket, { method: 'GET' })).text };
      } catch (error) {
        if (get.absent !== undefined && isSvcError(error, get.absent)) return { document: null };
        throw error;
      }
    });
    if (put) {
      app.put(url, { schema: settingsSchemas.put(setting.name), config: { access: { actions: [put.action], on: 'bucket' } } }, async (request) => {
        const bucket = bucketParam(request.params);
        const document = bodyRecord(request.body).document;
        if (typeof document !== 'string' || document.trim() === '') throw new SvcError('InvalidArgument', 'document (the setting as S3 takes it) is required', { field: 'document' });
        const access = requestAccess(request);
        await access.require([{ action: put.action, bucket }]);
        await runBucketHandler(s3(), access, put.handler, bucket, { method: 'PUT', document });
        return { bucket, setting: setting.name, saved: true };
      });
    }
    if (remove) {
      app.delete(url, { schema: settingsSchemas.remove(setting.name), config: { access: { actions: [remove.action], on: 'bucket' } } }, async (request) => {
        const bucket = bucketParam(request.params);
        const access = requestAccess(request);
        await access.require([{ action: remove.action, bucket }]);
        await runBucketHandler(s3(), access, remove.handler, bucket, { method: 'DELETE' });
        return { bucket, setting: setting.name, saved: true };
      });
    }
  }
  app.get('/buckets/:bucket/policy-status', { schema: settingsSchemas.policyStatus, config: { access: { actions: ['s3:GetBucketPolicyStatus'], on: 'bucket' } } }, async (request) => {
    const bucket = bucketParam(request.params);
    const access = requestAccess(request);
    await access.require([{ action: 's3:GetBucketPolicyStatus', bucket }]);
    const answer = await runBucketHandler(s3(), access, policy.getBucketPolicyStatus, bucket, { method: 'GET' });
    return { bucket, isPublic: /<IsPublic>\s*true\s*<\/IsPublic>/.test(answer.text) };
  });
  app.get('/buckets/:bucket/contents', { schema: settingsSchemas.contents, config: { access: { actions: ['s3:ListBucketVersions'], on: 'bucket', conditional: { actions: ['s3:ListBucketMultipartUploads'], when: 'to count unfinished uploads too' } } } }, async (request) => {
    const bucket = bucketParam(request.params);
    const access = requestAccess(request);
    await access.require([{ action: 's3:ListBucketVersions', bucket }]);
    const counts = await contentsOf(context, bucket);
    const uploads = (await access.allows([{ action: 's3:ListBucketMultipartUploads', bucket }])) ? (await context.objects().listMultipartUploads(bucket)).length : null;
    return { bucket, ...counts, uploads };
  });
}

/** The bucket's keys (under `prefix`) with a live newest version, every version (delete markers among them), counted up to the cap. */
export async function contentsOf(context: ConsoleContext, bucket: string, prefix = ''): Promise<{ objects: number; versions: number; deleteMarkers: number; capped: boolean }> {
  const counts = { objects: 0, versions: 0, deleteMarkers: 0, capped: false };
  for await (const entry of context.objects().list(bucket, { prefix })) {
    if (entry.kind !== 'object') continue;
    if (counts.versions >= limits.consoleListSortMax) {
      counts.capped = true;
      break;
    }
    if (!entry.versions[0]!.deleteMarker) counts.objects += 1;
    counts.versions += entry.versions.length;
    counts.deleteMarkers += entry.versions.filter((version) => version.deleteMarker).length;
  }
  return counts;
}
