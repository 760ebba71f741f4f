/**
 * Browsing objects: a page of keys and folders under a prefix, one object's details with every
 * version and delete marker, a streamed download of any version, deleting a selection (delete
 * markers on versioned buckets, unless a version is named) and share links (presigned GET). Each
 * needs the S3 permission the same S3 request would.
 */
import type { FastifyInstance } from 'fastify';
import { Readable } from 'node:stream';
import { SvcError } from '../errors/index.js';
import { versionLock, type ObjectInfo, type ObjectLayer } from '../object/index.js';
import { limits } from '../util/limits.js';
import type { ConsoleContext } from './context.js';
import { bodyRecord, boundedInteger, bucketParam, optionalVersionId, queryOf, requiredKey } from './input.js';
import { presignGet, shareBaseUrl } from './presign.js';
import { requestAccess, requestOrigin } from './request-state.js';
import type { Session } from './session.js';
import { objectSchemas } from './api-schemas.js';
import { readObject } from '../ops/compression/compressed-objects.js';
import { countEntries, isFolderMarker, isKeyOrder, listViewOf, sortedPage } from './list-view.js';

export async function objectRoutes(app: FastifyInstance, options: { context: ConsoleContext }): Promise<void> {
  const { context } = options;
  app.get('/buckets/:bucket/objects', { schema: objectSchemas.list, config: { access: { actions: ['s3:ListBucket'], on: 'bucket', conditional: { actions: ['s3:ListBucketVersions'], when: 'with deleted=true, instead of s3:ListBucket' } } } }, async (request) => {
    const bucket = bucketParam(request.params);
    const query = queryOf(request);
    const limit = boundedInteger(query.limit, 'limit', 200, 1, limits.consoleListPageMax);
    const prefix = query.prefix ?? '';
    const after = query.after === '' ? undefined : query.after;
    if (query.deleted !== undefined && query.deleted !== 'true' && query.deleted !== 'false') throw new SvcError('InvalidArgument', 'deleted must be true or false', { field: 'deleted' });
    if (query.count !== undefined && query.count !== 'true' && query.count !== 'false') throw new SvcError('InvalidArgument', 'count must be true or false', { field: 'count' });
    const view = listViewOf(query);
    await requestAccess(request).require([{ action: query.deleted === 'true' ? 's3:ListBucketVersions' : 's3:ListBucket', bucket }], { prefix, delimiter: '/' });
    const walk = { prefix, withDeleted: query.deleted === 'true' };
    if (!isKeyOrder(view)) {
      const sorted = await sortedPage(context.objects(), bucket, walk, view, limit);
      return { prefix, folders: sorted.folders, objects: sorted.objects.map(describe), total: sorted.total, totalCapped: false, ...(sorted.more ? { nextOffset: view.offset + limit } : {}) };
    }
    // The total is counted when asked (a page asks once per view, not on every refresh): up to 10,000 entries read.
    if (query.count === 'false') return listPage(context.objects(), bucket, { prefix, after, limit, withDeleted: walk.withDeleted });
    const [page, count] = await Promise.all([listPage(context.objects(), bucket, { prefix, after, limit, withDeleted: walk.withDeleted }), countEntries(context.objects(), bucket, walk)]);
    return { ...page, total: count.total, totalCapped: count.capped };
  });
  app.get('/buckets/:bucket/object', { schema: objectSchemas.details, config: { access: { actions: ['s3:GetObject'], on: 'object', conditional: { actions: ['s3:ListBucketVersions'], when: 'to be shown the older versions too' } } } }, async (request) => {
    const bucket = bucketParam(request.params);
    const key = requiredKey(queryOf(request).key);
    const access = requestAccess(request);
    await access.require([{ action: 's3:GetObject', bucket, key }]);
    const objects = context.objects();
    const versions = await versionsOf(objects, bucket, key);
    if (versions.length === 0) throw new SvcError('NoSuchKey', undefined, { bucket, key });
    // Earlier versions and delete markers are a version listing.
    const shown = (await access.allows([{ action: 's3:ListBucketVersions', bucket }], { prefix: key })) ? versions : versions.filter((version) => version.isLatest);
    return { bucket, key, versioning: (await objects.requireBucket(bucket)).versioning, versions: shown.map(describe) };
  });
  // Stored bytes from the console's origin: sandboxed and never sniffed (console-plugin.ts), always an attachment.
  const downloadAccess = { actions: ['s3:GetObject'], on: 'object', conditional: { actions: ['s3:GetObjectVersion'], when: 'with versionId, instead of s3:GetObject' } } as const;
  app.get('/buckets/:bucket/download', { schema: objectSchemas.download, config: { userContent: true, access: downloadAccess } }, async (request, reply) => {
    const bucket = bucketParam(request.params);
    const query = queryOf(request);
    const key = requiredKey(query.key);
    const versionId = optionalVersionId(query.versionId);
    await requestAccess(request).require([{ action: versionId === undefined ? 's3:GetObject' : 's3:GetObjectVersion', bucket, key }]);
    // SSE-S3 and SSE-KMS objects are opened with the KMS as a GET would open them; an SSE-C one needs its customer key (InvalidRequest).
    const reader = await readObject(context.objects(), context.s3?.().encryption?.kms(), bucket, key, versionId === undefined ? {} : { versionId });
    const name = key.split('/').filter((part) => part !== '').at(-1) ?? 'download';
    reply
      .header('content-type', reader.info.contentType ?? 'application/octet-stream')
      .header('content-length', String(reader.info.sizeBytes))
      .header('etag', `"${reader.info.etag}"`)
      .header('content-disposition', `attachment; filename="${name.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${encodeRfc5987(name)}`);
    return reply.send(Readable.from(reader.body, { objectMode: false }));
  });
  app.post('/buckets/:bucket/delete', { schema: objectSchemas.delete, config: { access: { actions: ['s3:DeleteObject'], on: 'object', conditional: { actions: ['s3:DeleteObjectVersion'], when: 'for an item with a versionId, instead of s3:DeleteObject' } } } }, async (request) => {
    const bucket = bucketParam(request.params);
    const items = deleteItems(bodyRecord(request.body).objects);
    // All or nothing: a selection with one key the session may not delete deletes none.
    await requestAccess(request).require(items.map((item) => ({ action: item.versionId === undefined ? 's3:DeleteObject' : 's3:DeleteObjectVersion', bucket, key: item.key })));
    const objects = context.objects();
    await objects.requireBucket(bucket);
    const results = [];
    for (const item of items) {
      try {
        const result = await objects.deleteObject(bucket, item.key, item.versionId);
        results.push({ key: item.key, versionId: result.versionId, deleteMarker: result.deleteMarker });
      } catch (error) {
        const known = error instanceof SvcError ? error : new SvcError('InternalError', undefined, {}, { cause: error });
        results.push({ key: item.key, ...(item.versionId !== undefined ? { versionId: item.versionId } : {}), error: { Code: known.code, Message: known.message } });
      }
    }
    return { results };
  });
  app.post('/buckets/:bucket/share', { schema: objectSchemas.share, config: { access: { actions: ['s3:GetObject'], on: 'object', conditional: { actions: ['s3:GetObjectVersion'], when: 'with versionId, instead of s3:GetObject' } } } }, async (request) => {
    const bucket = bucketParam(request.params);
    const body = bodyRecord(request.body);
    const key = requiredKey(body.key);
    const versionId = optionalVersionId(body.versionId);
    const expiresSeconds = typeof body.expiresSeconds === 'number' ? body.expiresSeconds : NaN;
    if (!Number.isInteger(expiresSeconds) || expiresSeconds < 1 || expiresSeconds > limits.maxPresignExpirySeconds) {
      throw new SvcError('InvalidArgument', `expiresSeconds must be a whole number from 1 to ${limits.maxPresignExpirySeconds} (7 days)`, { field: 'expiresSeconds' });
    }
    const access = requestAccess(request);
    await access.require([{ action: versionId === undefined ? 's3:GetObject' : 's3:GetObjectVersion', bucket, key }]);
    await context.objects().headObject(bucket, key, versionId);
    const base = shareBaseUrl(context.serverUrl, requestOrigin(request), context.s3Port);
    const nowMs = context.nowMs();
    const url = await presignGet({ base, bucket, key, ...(versionId !== undefined ? { versionId } : {}), expiresSeconds, credentials: signingCredentials(context, access.session), nowMs });
    return { url, expiresAt: new Date(nowMs + expiresSeconds * 1000).toISOString() };
  });
}

/** A user's share link is signed with its own keys, so it stops working when the user is disabled; root and SSO links with the root keys. */
function signingCredentials(context: ConsoleContext, session: Session): { accessKey: string; secretKey: string } {
  const secretKey = session.kind === 'user' ? context.iam().secretFor(session.accessKey) : undefined;
  if (session.kind !== 'user') return context.credentials;
  if (secretKey === undefined) throw new SvcError('ConsoleSignInRequired', `the user ${session.accessKey} is disabled or removed`);
  return { accessKey: session.accessKey, secretKey };
}

interface ListPage {
  prefix: string;
  folders: string[];
  objects: ReturnType<typeof describe>[];
  /** Pass as `after` for the next page; absent on the last page. */
  next?: string;
}

/** Keys whose newest version is a delete marker, and folders holding only such keys, are left out unless `withDeleted`. */
async function listPage(objects: ObjectLayer, bucket: string, options: { prefix: string; after: string | undefined; limit: number; withDeleted: boolean }): Promise<ListPage> {
  const { prefix, after, limit } = options;
  const page: ListPage = { prefix, folders: [], objects: [] };
  let last: string | undefined;
  const walk = { prefix, delimiter: '/', ...(after !== undefined ? { startAfter: after } : {}), livePrefixesOnly: !options.withDeleted };
  for await (const entry of objects.list(bucket, walk)) {
    if (entry.kind === 'object' && entry.versions[0]!.deleteMarker && !options.withDeleted) continue;
    if (isFolderMarker(entry, prefix)) continue;
    if (page.folders.length + page.objects.length >= limit) {
      if (last !== undefined) page.next = last;
      break;
    }
    if (entry.kind === 'prefix') page.folders.push(entry.key);
    else page.objects.push(describe(entry.versions[0]!));
    last = entry.key;
  }
  return page;
}

/** Every version of exactly this key, newest first. */
async function versionsOf(objects: ObjectLayer, bucket: string, key: string): Promise<ObjectInfo[]> {
  for await (const entry of objects.list(bucket, { prefix: key })) {
    if (entry.kind === 'object' && entry.key === key) return entry.versions;
    if (entry.key !== key) break;
  }
  return [];
}

/** Stored headers shown with a version (what a GET answers with). */
const shownHeaders = ['cache-control', 'content-encoding', 'content-disposition', 'content-language', 'expires'];

/** A version's tags, stored headers and object lock (the details pane shows them; a listing row carries them too). */
function extrasOf(info: ObjectInfo) {
  const headers: Record<string, string> = {};
  for (const name of shownHeaders) if (info.systemMetadata[name] !== undefined) headers[name] = info.systemMetadata[name]!;
  const lock = versionLock(info);
  return {
    // Tags are stored in the URL query form under x-amz-tagging, as the S3 handlers keep them.
    tags: [...new URLSearchParams(info.systemMetadata['x-amz-tagging'] ?? '')].map(([key, value]) => ({ key, value })),
    headers,
    lock: { legalHold: lock.legalHold, ...(lock.retention ? { mode: lock.retention.mode, retainUntil: new Date(lock.retention.retainUntilMs).toISOString() } : {}) },
    ...(info.encryption ? { encryption: { type: info.encryption.kind, ...(info.encryption.kind === 'SSE-KMS' ? { kmsKeyId: info.encryption.keyId } : {}) } } : {}),
  };
}

function describe(info: ObjectInfo) {
  return {
    ...extrasOf(info),
    key: info.key,
    versionId: info.versionId,
    isLatest: info.isLatest,
    deleteMarker: info.deleteMarker,
    sizeBytes: info.sizeBytes,
    etag: info.etag,
    lastModified: new Date(info.modTimeMs).toISOString(),
    storageClass: info.storageClass,
    contentType: info.contentType ?? null,
    userMetadata: info.userMetadata,
    // Stored compressed (docs/compression.md): the block format and what the drives hold; S3 never says so.
    ...(info.compression ? { compression: { algorithm: info.compression.algorithm, storedSizeBytes: info.compression.storedSizeBytes } } : {}),
  };
}

function deleteItems(value: unknown): { key: string; versionId?: string }[] {
  if (!Array.isArray(value) || value.length === 0) throw new SvcError('InvalidArgument', 'objects must be a non-empty list of { key, versionId? }', { field: 'objects' });
  if (value.length > limits.consoleDeleteBatchMax) throw new SvcError('InvalidArgument', `at most ${limits.consoleDeleteBatchMax} objects per request`, { field: 'objects' });
  return value.map((item) => {
    const record = bodyRecord(item);
    const versionId = optionalVersionId(record.versionId);
    return { key: requiredKey(record.key), ...(versionId !== undefined ? { versionId } : {}) };
  });
}

function encodeRfc5987(text: string): string {
  return encodeURIComponent(text).replace(/['()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
}
