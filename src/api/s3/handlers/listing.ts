/** ListObjects (v1), ListObjectsV2 and ListObjectVersions, paged over the merged object layer listing. */
import { shownStorageClass } from '../tier-headers.js';
import { SvcError } from '../../../errors/index.js';
import type { ObjectInfo, ListEntry } from '../../../object/index.js';
import { limits } from '../../../util/limits.js';
import { compareKeys } from '../../../util/merge.js';
import { uriEncode } from '../auth/sigv4.js';
import { toXml } from '../xml.js';
import type { S3Context, S3Request, S3Response } from '../context.js';

interface ListParams {
  prefix: string;
  delimiter: string;
  maxKeys: number;
  encode: (text: string) => string;
  encodingType?: 'url';
}

function paramsOf(query: URLSearchParams): ListParams {
  const maxKeysText = query.get('max-keys');
  const maxKeys = maxKeysText === null ? limits.maxListKeys : Number(maxKeysText);
  if (!Number.isInteger(maxKeys) || maxKeys < 0) throw new SvcError('InvalidArgument', 'max-keys must be a non-negative integer');
  const encodingType = query.get('encoding-type');
  if (encodingType !== null && encodingType !== 'url') throw new SvcError('InvalidArgument', "encoding-type must be 'url'");
  return {
    prefix: query.get('prefix') ?? '',
    delimiter: query.get('delimiter') ?? '',
    maxKeys: Math.min(maxKeys, limits.maxListKeys),
    encode: encodingType === 'url' ? (text) => uriEncode(text, true) : (text) => text,
    ...(encodingType === 'url' ? { encodingType: 'url' as const } : {}),
  };
}

const latestLive = (entry: ListEntry): ObjectInfo | undefined => (entry.kind === 'object' && !entry.versions[0]!.deleteMarker ? entry.versions[0] : undefined);

/**
 * Entries after `startAfter`, with common prefixes rolled up for any delimiter. With `livePrefixesOnly`
 * (ListObjects), a common prefix stands only for keys whose current version is not a delete
 * marker, as in AWS S3: a "folder" whose keys were all deleted is not listed.
 */
async function* entries(context: S3Context, bucket: string, params: ListParams, startAfter: string | undefined, livePrefixesOnly = false): AsyncGenerator<ListEntry> {
  const walkDelimiter = params.delimiter === '/' ? '/' : undefined;
  let lastPrefix: string | undefined;
  const options = { prefix: params.prefix, ...(startAfter !== undefined ? { startAfter } : {}), ...(walkDelimiter ? { delimiter: walkDelimiter } : {}), livePrefixesOnly };
  for await (const entry of context.objects.list(bucket, options)) {
    if (entry.kind === 'object' && params.delimiter !== '' && params.delimiter !== '/') {
      if (livePrefixesOnly && !latestLive(entry)) continue;
      const at = entry.key.indexOf(params.delimiter, params.prefix.length);
      if (at >= 0) {
        const prefix = entry.key.slice(0, at + params.delimiter.length);
        if (prefix !== lastPrefix && (startAfter === undefined || compareKeys(prefix, startAfter) > 0)) yield { kind: 'prefix', key: prefix };
        lastPrefix = prefix;
        continue;
      }
    }
    yield entry;
  }
}

function contents(info: ObjectInfo, params: ListParams, owner?: string): Record<string, unknown> {
  return {
    Key: params.encode(info.key),
    LastModified: new Date(info.modTimeMs).toISOString(),
    ETag: `"${info.etag}"`,
    Size: info.sizeBytes,
    StorageClass: shownStorageClass(info),
    ...(owner ? { Owner: { ID: owner, DisplayName: owner } } : {}),
  };
}

interface Page {
  objects: ObjectInfo[];
  prefixes: string[];
  truncated: boolean;
  last?: string;
}

async function collectPage(context: S3Context, bucket: string, params: ListParams, startAfter: string | undefined): Promise<Page> {
  const page: Page = { objects: [], prefixes: [], truncated: false };
  if (params.maxKeys === 0) return page;
  for await (const entry of entries(context, bucket, params, startAfter, true)) {
    const live = latestLive(entry);
    if (entry.kind === 'object' && !live) continue;
    if (page.objects.length + page.prefixes.length >= params.maxKeys) {
      page.truncated = true;
      break;
    }
    if (entry.kind === 'prefix') page.prefixes.push(entry.key);
    else page.objects.push(live!);
    page.last = entry.key;
  }
  return page;
}

export async function listObjectsV2(context: S3Context, request: S3Request, bucket: string): Promise<S3Response> {
  const params = paramsOf(request.query);
  const token = request.query.get('continuation-token');
  const startAfterParam = request.query.get('start-after') ?? undefined;
  // An empty token is no token (clients send it on the first page); it is echoed back empty.
  const startAfter = token !== null && token !== '' ? decodeToken(token) : startAfterParam;
  const page = await collectPage(context, bucket, params, startAfter);
  const owner = request.query.get('fetch-owner') === 'true' ? request.auth.accessKeyId : undefined;
  return xmlResponse('ListBucketResult', {
    Name: bucket,
    Prefix: params.encode(params.prefix),
    ...(startAfterParam !== undefined ? { StartAfter: params.encode(startAfterParam) } : {}),
    ...(token !== null ? { ContinuationToken: token } : {}),
    ...(page.truncated && page.last !== undefined ? { NextContinuationToken: Buffer.from(page.last).toString('base64url') } : {}),
    KeyCount: page.objects.length + page.prefixes.length,
    MaxKeys: params.maxKeys,
    ...(params.delimiter !== '' ? { Delimiter: params.encode(params.delimiter) } : {}),
    IsTruncated: page.truncated,
    ...(params.encodingType ? { EncodingType: params.encodingType } : {}),
    Contents: page.objects.map((info) => contents(info, params, owner)),
    CommonPrefixes: page.prefixes.map((prefix) => ({ Prefix: params.encode(prefix) })),
  });
}

export async function listObjectsV1(context: S3Context, request: S3Request, bucket: string): Promise<S3Response> {
  const params = paramsOf(request.query);
  const marker = request.query.get('marker') ?? '';
  const page = await collectPage(context, bucket, params, marker === '' ? undefined : marker);
  return xmlResponse('ListBucketResult', {
    Name: bucket,
    Prefix: params.encode(params.prefix),
    Marker: params.encode(marker),
    ...(page.truncated && page.last !== undefined ? { NextMarker: params.encode(page.last) } : {}),
    MaxKeys: params.maxKeys,
    ...(params.delimiter !== '' ? { Delimiter: params.encode(params.delimiter) } : {}),
    IsTruncated: page.truncated,
    ...(params.encodingType ? { EncodingType: params.encodingType } : {}),
    Contents: page.objects.map((info) => contents(info, params, request.auth.accessKeyId)),
    CommonPrefixes: page.prefixes.map((prefix) => ({ Prefix: params.encode(prefix) })),
  });
}

export async function listObjectVersions(context: S3Context, request: S3Request, bucket: string): Promise<S3Response> {
  const params = paramsOf(request.query);
  const keyMarker = request.query.get('key-marker') ?? '';
  const versionMarker = request.query.get('version-id-marker') ?? '';
  // With a version marker the marker key itself is listed again, from after that version.
  const startAfter = keyMarker === '' ? undefined : versionMarker !== '' ? beforeKey(keyMarker) : keyMarker;
  const versions: ObjectInfo[] = [];
  const prefixes: string[] = [];
  let truncated = false;
  let next: { key: string; versionId?: string } | undefined;
  outer: for await (const entry of entries(context, bucket, params, startAfter)) {
    if (entry.kind === 'prefix') {
      if (versions.length + prefixes.length >= params.maxKeys) { truncated = true; break; }
      prefixes.push(entry.key);
      next = { key: entry.key };
      continue;
    }
    let list = entry.versions;
    if (entry.key === keyMarker && versionMarker !== '') {
      const index = list.findIndex((version) => version.versionId === versionMarker);
      list = index >= 0 ? list.slice(index + 1) : [];
    }
    for (const version of list) {
      if (versions.length + prefixes.length >= params.maxKeys) { truncated = true; break outer; }
      versions.push(version);
      next = { key: version.key, versionId: version.versionId };
    }
  }
  const item = (info: ObjectInfo) => ({
    Key: params.encode(info.key), VersionId: info.versionId, IsLatest: info.isLatest, LastModified: new Date(info.modTimeMs).toISOString(),
    ...(info.deleteMarker ? {} : { ETag: `"${info.etag}"`, Size: info.sizeBytes, StorageClass: shownStorageClass(info) }),
    Owner: { ID: request.auth.accessKeyId, DisplayName: request.auth.accessKeyId },
  });
  return xmlResponse('ListVersionsResult', {
    Name: bucket, Prefix: params.encode(params.prefix), KeyMarker: params.encode(keyMarker), VersionIdMarker: versionMarker,
    ...(truncated && next ? { NextKeyMarker: params.encode(next.key), ...(next.versionId ? { NextVersionIdMarker: next.versionId } : {}) } : {}),
    MaxKeys: params.maxKeys, ...(params.delimiter !== '' ? { Delimiter: params.encode(params.delimiter) } : {}), IsTruncated: truncated,
    ...(params.encodingType ? { EncodingType: params.encodingType } : {}),
    Version: versions.filter((v) => !v.deleteMarker).map(item),
    DeleteMarker: versions.filter((v) => v.deleteMarker).map(item),
    CommonPrefixes: prefixes.map((prefix) => ({ Prefix: params.encode(prefix) })),
  });
}

/** The greatest string that sorts before `key` closely enough to list `key` itself again. */
function beforeKey(key: string): string | undefined {
  if (key.length === 0) return undefined;
  const last = key.charCodeAt(key.length - 1);
  return last === 0 ? key.slice(0, -1) : `${key.slice(0, -1)}${String.fromCharCode(last - 1)}\u{10FFFF}`;
}

function decodeToken(token: string): string {
  const decoded = Buffer.from(token, 'base64url').toString('utf8');
  if (token === '' || Buffer.from(decoded).toString('base64url') !== token) throw new SvcError('InvalidArgument', 'The continuation token provided is incorrect');
  return decoded;
}

function xmlResponse(root: string, content: Record<string, unknown>): S3Response {
  return { status: 200, headers: { 'content-type': 'application/xml' }, body: toXml(root, content) };
}
