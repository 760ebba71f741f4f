/**
 * GetObjectAttributes: the attributes named in `x-amz-object-attributes` (ETag, Checksum,
 * ObjectParts, StorageClass, ObjectSize) of one version, without its body. Parts are listed for
 * multipart objects only, paged with x-amz-max-parts and x-amz-part-number-marker.
 */
import { shownStorageClass } from '../tier-headers.js';
import { SvcError } from '../../../errors/index.js';
import type { ObjectInfo } from '../../../object/index.js';
import { limits } from '../../../util/limits.js';
import { headerValue, type S3Context, type S3Request, type S3Response } from '../context.js';
import { toXml } from '../xml.js';
import { withDeleteMarker } from './objects.js';
import { checksumField, objectChecksumFields } from './multipart-checksums.js';
import { checksumAlgorithms } from '../auth/checksums.js';

const known = ['ETag', 'Checksum', 'ObjectParts', 'StorageClass', 'ObjectSize'] as const;
type Attribute = (typeof known)[number];

export async function getObjectAttributes(context: S3Context, request: S3Request, bucket: string, key: string): Promise<S3Response> {
  const wanted = attributesOf(request);
  const info = await withDeleteMarker(() => context.objects.headObject(bucket, key, request.query.get('versionId') ?? undefined));
  const content: Record<string, unknown> = {};
  if (wanted.has('ETag')) content.ETag = info.etag;
  if (wanted.has('Checksum')) {
    const checksum = objectChecksumFields(info.systemMetadata);
    if (Object.keys(checksum).length > 0) content.Checksum = checksum;
  }
  if (wanted.has('ObjectParts') && /-\d+$/.test(info.etag)) content.ObjectParts = partsOf(request, info);
  if (wanted.has('StorageClass')) content.StorageClass = shownStorageClass(info);
  if (wanted.has('ObjectSize')) content.ObjectSize = info.sizeBytes;
  const headers: Record<string, string> = { 'content-type': 'application/xml', 'last-modified': new Date(info.modTimeMs).toUTCString() };
  if (info.versionId !== 'null') headers['x-amz-version-id'] = info.versionId;
  return { status: 200, headers, body: toXml('GetObjectAttributesResponse', content) };
}

function attributesOf(request: S3Request): Set<Attribute> {
  const header = headerValue(request.headers, 'x-amz-object-attributes');
  const names = (header ?? '').split(',').map((name) => name.trim()).filter((name) => name !== '');
  if (names.length === 0) throw new SvcError('InvalidArgument', 'x-amz-object-attributes must name at least one of ETag, Checksum, ObjectParts, StorageClass, ObjectSize.');
  const unknown = names.filter((name) => !(known as readonly string[]).includes(name));
  if (unknown.length > 0) throw new SvcError('InvalidArgument', `Invalid attribute name specified: ${unknown.join(', ')}.`);
  return new Set(names as Attribute[]);
}

function partsOf(request: S3Request, info: ObjectInfo): Record<string, unknown> {
  const maxText = headerValue(request.headers, 'x-amz-max-parts') ?? String(limits.maxListKeys);
  const markerText = headerValue(request.headers, 'x-amz-part-number-marker') ?? '0';
  if (!/^\d+$/.test(maxText) || !/^\d+$/.test(markerText)) throw new SvcError('InvalidArgument', 'x-amz-max-parts and x-amz-part-number-marker must be whole numbers.');
  const maxParts = Math.min(Number(maxText), limits.maxListKeys);
  const after = info.parts.filter((part) => part.number > Number(markerText));
  const page = after.slice(0, maxParts);
  const truncated = after.length > page.length;
  return {
    PartsCount: info.parts.length,
    PartNumberMarker: Number(markerText),
    ...(page.length > 0 ? { NextPartNumberMarker: page.at(-1)!.number } : {}),
    MaxParts: maxParts,
    IsTruncated: truncated,
    Part: page.map((part) => ({ PartNumber: part.number, Size: part.sizeBytes, ...partChecksum(info, part.checksum) })),
  };
}

/** A part's checksum in the algorithm of its object's (the one its upload named). */
function partChecksum(info: ObjectInfo, value: string | undefined): Record<string, string> {
  const algorithm = checksumAlgorithms.find((candidate) => info.systemMetadata[`x-amz-checksum-${candidate}`] !== undefined);
  return algorithm !== undefined && value !== undefined ? { [checksumField(algorithm)]: value } : {};
}
