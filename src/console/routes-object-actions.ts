/**
 * Changing objects from the object page, each through the S3 API's own handler (s3-bridge.ts) so
 * it is judged, stored, notified and replicated as the same S3 request would be: restoring an
 * older version as the latest (CopyObject of that version onto its key), replacing the latest
 * version's tags (Put/DeleteObjectTagging), its metadata and content type (CopyObject onto itself
 * with `x-amz-metadata-directive: REPLACE`), creating a folder (an empty `<prefix>/` object, as
 * other consoles do), and deleting everything under a folder in batches, each key judged on its
 * own: a key the session may not delete is reported and the rest go on.
 */
import type { FastifyInstance } from 'fastify';
import { SvcError, isSvcError } from '../errors/index.js';
import type { ObjectInfo } from '../object/index.js';
import type { S3Context } from '../api/s3/context.js';
import { copyObject, deleteObject, putObject } from '../api/s3/handlers/objects.js';
import { deleteObjectTagging, putObjectTagging } from '../api/s3/handlers/tagging.js';
import { limits } from '../util/limits.js';
import type { ConsoleContext } from './context.js';
import type { ConsoleAccess } from './access.js';
import { bodyRecord, bucketParam, optionalVersionId, queryOf, requiredKey } from './input.js';
import { requestAccess } from './request-state.js';
import { runObjectHandler, type ObjectHandler } from './s3-bridge.js';
import { escapeXmlText, metadataChange, tagsOf } from './object-edit-input.js';
import { objectActionSchemas } from './schemas-object-actions.js';
import { contentsOf } from './routes-bucket-settings.js';

export async function objectActionRoutes(app: FastifyInstance, options: { context: ConsoleContext }): Promise<void> {
  const { context } = options;
  const s3 = (): S3Context => {
    const made = context.s3?.();
    if (!made) throw new SvcError('NotImplemented', 'changing objects is not offered by this console');
    return made;
  };
  app.post('/buckets/:bucket/restore', { schema: objectActionSchemas.restore, config: { access: { actions: ['s3:GetObjectVersion', 's3:PutObject'], on: 'object' } } }, async (request) => {
    const bucket = bucketParam(request.params);
    const body = bodyRecord(request.body);
    const key = requiredKey(body.key);
    const versionId = optionalVersionId(body.versionId);
    if (versionId === undefined) throw new SvcError('InvalidArgument', 'versionId (the version to restore) is required', { field: 'versionId' });
    const access = requestAccess(request);
    await access.require([{ action: 's3:GetObjectVersion', bucket, key }, { action: 's3:PutObject', bucket, key }]);
    const objects = context.objects();
    const source = await objects.headObject(bucket, key, versionId);
    // The latest may be a delete marker (NoSuchKey): any version is then older than it.
    const latest = await objects.headObject(bucket, key).catch((error: unknown) => {
      if (isSvcError(error, 'NoSuchKey')) return undefined;
      throw error;
    });
    if (latest?.versionId === source.versionId) throw new SvcError('InvalidArgument', 'this version is the latest already: there is nothing to restore', { field: 'versionId' });
    const answer = await runObjectHandler(s3(), access, copyFrom({ bucket, key, versionId }), { bucket, key }, { method: 'PUT', headers: { ...keptEncryption(source), ...keptClass(source) } });
    return { key, versionId: versionOf(answer.headers), restoredFrom: versionId };
  });
  app.put('/buckets/:bucket/tags', { schema: objectActionSchemas.tags, config: { access: { actions: ['s3:PutObjectTagging'], on: 'object', conditional: { actions: ['s3:DeleteObjectTagging'], when: 'an empty tag set, instead of s3:PutObjectTagging' } } } }, async (request) => {
    const bucket = bucketParam(request.params);
    const body = bodyRecord(request.body);
    const key = requiredKey(body.key);
    const tags = tagsOf(body.tags);
    const access = requestAccess(request);
    await access.require([{ action: tags.length === 0 ? 's3:DeleteObjectTagging' : 's3:PutObjectTagging', bucket, key }]);
    if (tags.length === 0) {
      await runObjectHandler(s3(), access, deleteObjectTagging, { bucket, key }, { method: 'DELETE' });
    } else {
      const document = `<Tagging><TagSet>${tags.map((tag) => `<Tag><Key>${escapeXmlText(tag.key)}</Key><Value>${escapeXmlText(tag.value)}</Value></Tag>`).join('')}</TagSet></Tagging>`;
      await runObjectHandler(s3(), access, putObjectTagging, { bucket, key }, { method: 'PUT', document });
    }
    return { key, tags };
  });
  app.put('/buckets/:bucket/metadata', { schema: objectActionSchemas.metadata, config: { access: { actions: ['s3:GetObject', 's3:PutObject'], on: 'object' } } }, async (request) => {
    const bucket = bucketParam(request.params);
    const body = bodyRecord(request.body);
    const key = requiredKey(body.key);
    const access = requestAccess(request);
    await access.require([{ action: 's3:GetObject', bucket, key }, { action: 's3:PutObject', bucket, key }]);
    const source = await context.objects().headObject(bucket, key);
    // Its headers as the form sent them (a header left out is kept as stored); encryption, storage class and tags kept.
    const change = metadataChange(body, source);
    const headers = { ...change, ...keptEncryption(source), ...keptClass(source), 'x-amz-metadata-directive': 'REPLACE' };
    const answer = await runObjectHandler(s3(), access, copyFrom({ bucket, key }), { bucket, key }, { method: 'PUT', headers });
    return { key, versionId: versionOf(answer.headers) };
  });
  app.post('/buckets/:bucket/folder', { schema: objectActionSchemas.folder, config: { access: { actions: ['s3:PutObject'], on: 'object' } } }, async (request) => {
    const bucket = bucketParam(request.params);
    const key = requiredKey(bodyRecord(request.body).key);
    if (!key.endsWith('/') || key.startsWith('/') || key.includes('//')) throw new SvcError('InvalidArgument', 'a folder is a key ending with one / (such as reports/2026/), with no empty part', { field: 'key' });
    const access = requestAccess(request);
    await access.require([{ action: 's3:PutObject', bucket, key }]);
    const answer = await runObjectHandler(s3(), access, putObject, { bucket, key }, { method: 'PUT', document: '' });
    return { key, versionId: versionOf(answer.headers) };
  });
  app.get('/buckets/:bucket/prefix-summary', { schema: objectActionSchemas.summary, config: { access: { actions: ['s3:ListBucket'], on: 'bucket', conditional: { actions: ['s3:ListBucketVersions'], when: 'to count older versions and delete markers too' } } } }, async (request) => {
    const bucket = bucketParam(request.params);
    const prefix = folderPrefix(queryOf(request).prefix);
    const access = requestAccess(request);
    await access.require([{ action: 's3:ListBucket', bucket }], { prefix });
    const withVersions = await access.allows([{ action: 's3:ListBucketVersions', bucket }], { prefix });
    const versioning = (await context.objects().requireBucket(bucket)).versioning;
    return { bucket, prefix, versioning, ...(await summaryOf(context, bucket, prefix, withVersions)) };
  });
  const deleteAccess = {
    actions: ['s3:ListBucket'],
    on: 'bucket',
    conditional: { actions: ['s3:DeleteObject', 's3:ListBucketVersions', 's3:DeleteObjectVersion'], when: 'each key judged on its own (s3:DeleteObject; with allVersions s3:ListBucketVersions for the walk and s3:DeleteObjectVersion per key); a key refused is reported, the rest go on' },
  } as const;
  app.post('/buckets/:bucket/delete-prefix', { schema: objectActionSchemas.deletePrefix, config: { access: deleteAccess } }, async (request) => {
    const bucket = bucketParam(request.params);
    const body = bodyRecord(request.body);
    const prefix = folderPrefix(body.prefix);
    const allVersions = body.allVersions === true;
    const after = body.after === undefined || body.after === '' ? undefined : requiredKey(body.after, 'after');
    const access = requestAccess(request);
    await access.require([{ action: allVersions ? 's3:ListBucketVersions' : 's3:ListBucket', bucket }], { prefix });
    await context.objects().requireBucket(bucket);
    return { bucket, prefix, ...(await deleteBatch(s3(), access, { bucket, prefix, allVersions, after })) };
  });
}

/** A folder to count or delete: a non-empty prefix ending with `/` (deleting a whole bucket is the bucket's own delete). */
function folderPrefix(value: unknown): string {
  if (typeof value !== 'string' || value === '' || !value.endsWith('/')) throw new SvcError('InvalidArgument', 'prefix must name a folder: a prefix ending with / (to empty the whole bucket, delete the bucket)', { field: 'prefix' });
  return requiredKey(value, 'prefix');
}

/** The copy keeps the version's encryption as a client copying it would ask: SSE-S3 or SSE-KMS with its key; SSE-C needs the customer's key, which the console never has. */
function keptEncryption(info: ObjectInfo): Record<string, string> {
  const encryption = info.encryption;
  if (!encryption) return {};
  if (encryption.kind === 'SSE-C') throw new SvcError('InvalidRequest', 'this version is encrypted with a customer-provided key (SSE-C): only a client holding that key can copy it, so the console cannot change it');
  if (encryption.kind === 'SSE-S3') return { 'x-amz-server-side-encryption': 'AES256' };
  const kmsContext: Record<string, string> = encryption.context ? { 'x-amz-server-side-encryption-context': Buffer.from(JSON.stringify(encryption.context)).toString('base64') } : {};
  return { 'x-amz-server-side-encryption': 'aws:kms', 'x-amz-server-side-encryption-aws-kms-key-id': encryption.keyId, ...kmsContext };
}

/** S3's CopyObject from `source` onto the handler's key. */
function copyFrom(source: Parameters<typeof copyObject>[4]): ObjectHandler {
  return (context, request, bucket, key) => copyObject(context, request, bucket, key, source);
}

/** A copy is STANDARD unless it asks: a reduced-redundancy version asks to stay so. */
function keptClass(info: ObjectInfo): Record<string, string> {
  return info.storageClass === 'REDUCED_REDUNDANCY' ? { 'x-amz-storage-class': 'REDUCED_REDUNDANCY' } : {};
}

function versionOf(headers: Record<string, string | number>): string {
  const value = headers['x-amz-version-id'];
  return value === undefined ? 'null' : String(value);
}

/** What deleting the folder would remove: keys with a live latest version, and (when the session may list them) every version and delete marker; counted up to the cap. */
async function summaryOf(context: ConsoleContext, bucket: string, prefix: string, withVersions: boolean): Promise<{ objects: number; versions: number | null; deleteMarkers: number | null; capped: boolean }> {
  const counts = await contentsOf(context, bucket, prefix);
  return withVersions ? counts : { objects: counts.objects, versions: null, deleteMarkers: null, capped: counts.capped };
}

interface BatchOutcome {
  /** Keys given a delete marker or removed (allVersions: versions and markers removed). */
  deleted: number;
  /** Keys looked at in this batch. */
  keys: number;
  refused: { key: string; Code: string; Message: string }[];
  failed: { key: string; versionId?: string; Code: string; Message: string }[];
  /** Pass as `after` for the next batch; absent when the folder is done. */
  next?: string;
}

/**
 * One batch of a folder's delete: up to the batch size of keys after `after`, each judged on its
 * own. Without allVersions a key whose latest version is live is deleted as S3's DeleteObject
 * does (a delete marker on a versioned bucket); with it every version and marker goes.
 */
async function deleteBatch(s3: S3Context, access: ConsoleAccess, batch: { bucket: string; prefix: string; allVersions: boolean; after: string | undefined }): Promise<BatchOutcome> {
  const { bucket, allVersions } = batch;
  const outcome: BatchOutcome = { deleted: 0, keys: 0, refused: [], failed: [] };
  const action = allVersions ? 's3:DeleteObjectVersion' : 's3:DeleteObject';
  for await (const entry of s3.objects.list(bucket, { prefix: batch.prefix, ...(batch.after !== undefined ? { startAfter: batch.after } : {}) })) {
    if (entry.kind !== 'object') continue;
    if (outcome.keys >= limits.consolePrefixDeleteBatchKeys) return outcome;
    outcome.keys += 1;
    outcome.next = entry.key;
    const versions = allVersions ? entry.versions : entry.versions[0]!.deleteMarker ? [] : [entry.versions[0]!];
    if (versions.length === 0) continue;
    const judged = await access.judge([{ action, bucket, key: entry.key }]);
    if (!judged.allowed) {
      outcome.refused.push({ key: entry.key, Code: 'AccessDenied', Message: judged.reason ?? 'not allowed' });
      continue;
    }
    for (const version of versions) {
      try {
        await runObjectHandler(s3, access, deleteObject, { bucket, key: entry.key }, { method: 'DELETE', ...(allVersions ? { query: { versionId: version.versionId } } : {}) });
        outcome.deleted += 1;
      } catch (error) {
        const known = error instanceof SvcError ? error : new SvcError('InternalError', undefined, {}, { cause: error });
        outcome.failed.push({ key: entry.key, ...(allVersions ? { versionId: version.versionId } : {}), Code: known.code, Message: known.message });
      }
    }
  }
  delete outcome.next;
  return outcome;
}
