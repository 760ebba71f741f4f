/**
 * Object tagging: Put/Get/DeleteObjectTagging, and the tag set sent with `x-amz-tagging` on PUT,
 * copy and CreateMultipartUpload. Tags are stored with the version's system metadata under
 * `x-amz-tagging`, as a URL-encoded query string (docs/formats.md); GET and HEAD answer their
 * number in `x-amz-tagging-count`. Bucket tagging: Put/Get/DeleteBucketTagging, kept in the bucket
 * record (up to 50 tags).
 */
import { versionEvent } from '../../../ops/events/types.js';
import { SvcError } from '../../../errors/index.js';
import type { ObjectInfo } from '../../../object/index.js';
import { limits } from '../../../util/limits.js';
import { headerValue, readAll, type S3Context, type S3Request, type S3Response } from '../context.js';
import { parseXmlBody, toXml } from '../xml.js';

export const tagsMetadataKey = 'x-amz-tagging';

type Tag = [key: string, value: string];

/** Checks AWS's limits and encodes a tag set the way it is stored (empty set: undefined). */
export function encodeTags(tags: Tag[]): string | undefined {
  if (tags.length > limits.maxObjectTags) throw new SvcError('InvalidTag', `Object tags cannot be greater than ${limits.maxObjectTags}.`);
  checkTags(tags);
  if (tags.length === 0) return undefined;
  return new URLSearchParams(tags).toString();
}

/** AWS's rules for every tag set: keys of 1 to 128 characters, unique, not `aws:`; values of at most 256. */
function checkTags(tags: Tag[]): void {
  const seen = new Set<string>();
  for (const [key, value] of tags) {
    const keyChars = [...key].length;
    if (keyChars < 1 || keyChars > limits.maxTagKeyChars) throw new SvcError('InvalidTag', `The TagKey you have provided is invalid: it must have 1 to ${limits.maxTagKeyChars} characters.`, { tagKey: key });
    if ([...value].length > limits.maxTagValueChars) throw new SvcError('InvalidTag', `The TagValue you have provided is invalid: it may have ${limits.maxTagValueChars} characters at most.`, { tagKey: key });
    if (key.toLowerCase().startsWith('aws:')) throw new SvcError('InvalidTag', 'Tag keys starting with aws: are reserved.', { tagKey: key });
    if (seen.has(key)) throw new SvcError('InvalidTag', 'Cannot provide multiple Tags with the same key.', { tagKey: key });
    seen.add(key);
  }
}

export function decodeTags(stored: string | undefined): Tag[] {
  return stored === undefined ? [] : [...new URLSearchParams(stored)];
}

/** The tag set of an `x-amz-tagging` header (URL query form), checked; absent: undefined. */
export function tagsFromHeader(headers: Record<string, string | string[] | undefined>): string | undefined {
  const header = headerValue(headers, 'x-amz-tagging');
  return header === undefined ? undefined : encodeTags([...new URLSearchParams(header)]);
}

/** Response headers of a GET or HEAD: the number of tags, when there are any. */
export function tagCountHeader(info: ObjectInfo): Record<string, number> {
  const count = decodeTags(info.systemMetadata[tagsMetadataKey]).length;
  return count > 0 ? { 'x-amz-tagging-count': count } : {};
}

const versionHeader = (info: ObjectInfo): Record<string, string> => (info.versionId !== 'null' ? { 'x-amz-version-id': info.versionId } : {});

export async function getObjectTagging(context: S3Context, request: S3Request, bucket: string, key: string): Promise<S3Response> {
  const info = await context.objects.headObject(bucket, key, request.query.get('versionId') ?? undefined);
  const body = tagSetXml(decodeTags(info.systemMetadata[tagsMetadataKey]));
  return { status: 200, headers: { 'content-type': 'application/xml', ...versionHeader(info) }, body };
}

/** The tags of a `<Tagging><TagSet>` body, in the order given (not yet checked against the limits). */
async function tagSetOf(request: S3Request): Promise<Tag[]> {
  return tagSetFromXml(await readAll(request.body, limits.maxXmlConfigBodyBytes));
}

/** The tags of a `<Tagging><TagSet>` document (a body, or a form's `tagging` field), in the order given. */
export function tagSetFromXml(bytes: Uint8Array): Tag[] {
  const parsed = parseXmlBody(bytes, ['Tag']);
  const tagSet = (parsed.Tagging as Record<string, unknown> | undefined)?.TagSet;
  if (tagSet === undefined) throw new SvcError('MalformedXML', 'The body must be <Tagging><TagSet>...</TagSet></Tagging>.');
  // An empty <TagSet/> parses as an empty string: no tags.
  const items = (typeof tagSet === 'object' && tagSet !== null ? (tagSet as Record<string, unknown>).Tag ?? [] : []) as Record<string, unknown>[];
  return items.map((item): Tag => {
    if (typeof item.Key !== 'string') throw new SvcError('MalformedXML', 'Every Tag needs a Key.');
    return [item.Key, typeof item.Value === 'string' ? item.Value : ''];
  });
}

const tagSetXml = (tags: Tag[]): string => toXml('Tagging', { TagSet: { Tag: tags.map(([Key, Value]) => ({ Key, Value })) } });

export async function putObjectTagging(context: S3Context, request: S3Request, bucket: string, key: string): Promise<S3Response> {
  const encoded = encodeTags(await tagSetOf(request));
  const info = await context.objects.updateVersionMetadata(bucket, key, request.query.get('versionId') ?? undefined, (version) => ({ systemMetadata: withTags(version.systemMetadata, encoded) }));
  return { status: 200, headers: versionHeader(info), events: [versionEvent('ObjectTagging:Put', info)] };
}

export async function deleteObjectTagging(context: S3Context, request: S3Request, bucket: string, key: string): Promise<S3Response> {
  const info = await context.objects.updateVersionMetadata(bucket, key, request.query.get('versionId') ?? undefined, (version) => ({ systemMetadata: withTags(version.systemMetadata, undefined) }));
  return { status: 204, headers: versionHeader(info), events: [versionEvent('ObjectTagging:Delete', info)] };
}

/** System metadata with the tag set replaced (undefined: removed). */
export function withTags(systemMetadata: Record<string, string>, encoded: string | undefined): Record<string, string> {
  const { [tagsMetadataKey]: _old, ...rest } = systemMetadata;
  return encoded === undefined ? rest : { ...rest, [tagsMetadataKey]: encoded };
}

/** PutBucketTagging: replaces the bucket's tags (up to 50; an empty set removes them). */
export async function putBucketTagging(context: S3Context, request: S3Request, bucket: string): Promise<S3Response> {
  await context.objects.requireBucket(bucket);
  const tags = await tagSetOf(request);
  if (tags.length > limits.maxBucketTags) throw new SvcError('InvalidTag', `Bucket tag count cannot be greater than ${limits.maxBucketTags}.`);
  checkTags(tags);
  await context.objects.setBucketTags(bucket, tags.length === 0 ? undefined : tags);
  return { status: 204, headers: {} };
}

export async function getBucketTagging(context: S3Context, _request: S3Request, bucket: string): Promise<S3Response> {
  const record = await context.objects.requireBucket(bucket);
  if (record.tags === undefined) throw new SvcError('NoSuchTagSet', undefined, { bucket });
  return { status: 200, headers: { 'content-type': 'application/xml' }, body: tagSetXml(record.tags) };
}

export async function deleteBucketTagging(context: S3Context, _request: S3Request, bucket: string): Promise<S3Response> {
  await context.objects.requireBucket(bucket);
  await context.objects.setBucketTags(bucket, undefined);
  return { status: 204, headers: {} };
}
