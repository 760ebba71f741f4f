/**
 * The two ends `rc mirror` copies between: a bucket (and prefix) of any S3 server, or a local
 * directory. Each lists its entries (every version where the bucket keeps them, else the current
 * objects), reads one with what travels with it (content type and headers, user metadata, tags,
 * retention, legal hold, where the server has them), writes one, and removes one. An object
 * above the multipart threshold (5 GiB, one PutObject's limit) is written as a multipart upload,
 * streamed part by part.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetBucketVersioningCommand,
  GetObjectCommand,
  GetObjectLegalHoldCommand,
  GetObjectLockConfigurationCommand,
  GetObjectRetentionCommand,
  GetObjectTaggingCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutObjectCommand,
  UploadPartCommand,
  type CompletedPart,
  type ObjectLockMode,
  type S3Client,
} from '@aws-sdk/client-s3';
import { contentTypeOf } from './content-types.js';

export interface MirrorEntry {
  key: string;
  /** Absent on a side without versions ('null' is a real version id of an unversioned object). */
  versionId?: string;
  deleteMarker: boolean;
  size: number;
  /** Without quotes. */
  etag?: string;
  modifiedMs: number;
}

export interface ObjectDetails {
  contentType?: string;
  cacheControl?: string;
  contentDisposition?: string;
  contentEncoding?: string;
  contentLanguage?: string;
  metadata: Record<string, string>;
  tags?: Record<string, string>;
  retention?: { mode: string; untilMs: number };
  legalHold?: boolean;
}

export interface MirrorSide {
  /** How the summary names it: `alias/bucket/prefix` or the directory. */
  label: string;
  /** Whether it keeps versions (a versioned bucket). */
  versioned(): Promise<boolean>;
  /** Every entry under the prefix, keys relative to it; versions of one key newest first. */
  list(): Promise<MirrorEntry[]>;
  read(entry: MirrorEntry): Promise<{ body: Readable; details: ObjectDetails }>;
  write(key: string, body: Readable, size: number, details: ObjectDetails): Promise<void>;
  /** Removes a key (a delete marker on a versioned bucket). */
  remove(key: string): Promise<void>;
}

const bufferedBytes = 16 * 1024 * 1024;
const mebibyte = 1024 * 1024;
/** Above this an object is written in parts: one PutObject carries at most 5 GiB. */
export const defaultMultipartThresholdBytes = 5 * 1024 * mebibyte;
const maxParts = 10_000;
const minPartBytes = 8 * mebibyte;

/** The part size of a multipart copy: 8 MiB, or larger (whole MiB) so that the object fits in 10,000 parts. */
export function partSizeFor(sizeBytes: number): number {
  return Math.max(minPartBytes, Math.ceil(sizeBytes / maxParts / mebibyte) * mebibyte);
}

export interface S3SideOptions {
  /** Objects larger than this are written as multipart uploads (default 5 GiB). */
  multipartThresholdBytes?: number;
}

const unquote = (etag: string | undefined): string | undefined => etag?.replace(/^"|"$/g, '');

export function s3Side(s3: S3Client, label: string, bucket: string, prefix: string, options: S3SideOptions = {}): MirrorSide {
  let lockEnabled: Promise<boolean> | undefined;
  const full = (key: string): string => `${prefix}${key}`;
  const multipartThresholdBytes = options.multipartThresholdBytes ?? defaultMultipartThresholdBytes;
  return {
    label,
    versioned: async () => (await s3.send(new GetBucketVersioningCommand({ Bucket: bucket })).catch(() => ({ Status: undefined }))).Status === 'Enabled',
    list: async () => {
      const entries: MirrorEntry[] = [];
      try {
        let keyMarker: string | undefined;
        let versionMarker: string | undefined;
        for (;;) {
          const page = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: prefix, KeyMarker: keyMarker, VersionIdMarker: versionMarker }));
          // Versions and delete markers come in two lists: merged back into one newest-first order per key.
          const merged = [
            ...(page.Versions ?? []).map((version) => ({ key: version.Key!, versionId: version.VersionId ?? 'null', deleteMarker: false, size: version.Size ?? 0, etag: unquote(version.ETag), modifiedMs: version.LastModified?.getTime() ?? 0 })),
            ...(page.DeleteMarkers ?? []).map((marker) => ({ key: marker.Key!, versionId: marker.VersionId ?? 'null', deleteMarker: true, size: 0, modifiedMs: marker.LastModified?.getTime() ?? 0 })),
          ];
          merged.sort((first, second) => (first.key < second.key ? -1 : first.key > second.key ? 1 : second.modifiedMs - first.modifiedMs));
          entries.push(...merged.map((entry) => ({ ...entry, key: entry.key.slice(prefix.length) })));
          if (!page.IsTruncated) break;
          keyMarker = page.NextKeyMarker;
          versionMarker = page.NextVersionIdMarker;
        }
        if (entries.length > 0) return entries;
      } catch (error) {
        if (entries.length > 0) throw error;
      }
      // A server without version listing (one that refuses it, or answers it as a plain listing): its current objects.
      let token: string | undefined;
      do {
        const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
        for (const object of page.Contents ?? []) entries.push({ key: object.Key!.slice(prefix.length), deleteMarker: false, size: object.Size ?? 0, ...(object.ETag ? { etag: unquote(object.ETag)! } : {}), modifiedMs: object.LastModified?.getTime() ?? 0 });
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return entries;
    },
    read: async (entry) => {
      const versionId = entry.versionId;
      const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: full(entry.key), ...(versionId ? { VersionId: versionId } : {}) }));
      const version = versionId ? { VersionId: versionId } : {};
      const [tags, retention, hold] = await Promise.all([
        s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: full(entry.key), ...version })).then((answer) => answer.TagSet, () => undefined),
        s3.send(new GetObjectRetentionCommand({ Bucket: bucket, Key: full(entry.key), ...version })).then((answer) => answer.Retention, () => undefined),
        s3.send(new GetObjectLegalHoldCommand({ Bucket: bucket, Key: full(entry.key), ...version })).then((answer) => answer.LegalHold, () => undefined),
      ]);
      const details: ObjectDetails = {
        metadata: object.Metadata ?? {},
        ...(object.ContentType ? { contentType: object.ContentType } : {}),
        ...(object.CacheControl ? { cacheControl: object.CacheControl } : {}),
        ...(object.ContentDisposition ? { contentDisposition: object.ContentDisposition } : {}),
        ...(object.ContentEncoding ? { contentEncoding: object.ContentEncoding } : {}),
        ...(object.ContentLanguage ? { contentLanguage: object.ContentLanguage } : {}),
        ...(tags && tags.length > 0 ? { tags: Object.fromEntries(tags.map((tag) => [tag.Key!, tag.Value ?? ''])) } : {}),
        ...(retention?.Mode && retention.RetainUntilDate ? { retention: { mode: retention.Mode, untilMs: retention.RetainUntilDate.getTime() } } : {}),
        ...(hold?.Status === 'ON' ? { legalHold: true } : {}),
      };
      return { body: object.Body as Readable, details };
    },
    write: async (key, body, size, details) => {
      lockEnabled ??= s3.send(new GetObjectLockConfigurationCommand({ Bucket: bucket })).then((answer) => answer.ObjectLockConfiguration?.ObjectLockEnabled === 'Enabled', () => false);
      const locks = await lockEnabled;
      const headers = writeHeaders(details, locks);
      if (size > multipartThresholdBytes) return writeInParts(s3, bucket, full(key), body, size, headers);
      // Up to 16 MiB goes as one buffer (signed whole); larger objects stream.
      const payload = size <= bufferedBytes ? Buffer.concat(await body.toArray()) : body;
      // The target checks the bytes it stored against Content-MD5 (a streamed one, against a CRC-32 trailer).
      const integrity = Buffer.isBuffer(payload) ? { ContentMD5: createHash('md5').update(payload).digest('base64') } : { ChecksumAlgorithm: 'CRC32' as const };
      await s3.send(new PutObjectCommand({
        Bucket: bucket,
        Key: full(key),
        Body: payload,
        ...integrity,
        ContentLength: size,
        ...headers,
      }));
    },
    remove: async (key) => void (await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: full(key) }))),
  };
}

/** What a written object carries besides its bytes (a PutObject's or a CreateMultipartUpload's fields). */
function writeHeaders(details: ObjectDetails, locks: boolean) {
  return {
    Metadata: details.metadata,
    ...(details.contentType ? { ContentType: details.contentType } : {}),
    ...(details.cacheControl ? { CacheControl: details.cacheControl } : {}),
    ...(details.contentDisposition ? { ContentDisposition: details.contentDisposition } : {}),
    ...(details.contentEncoding ? { ContentEncoding: details.contentEncoding } : {}),
    ...(details.contentLanguage ? { ContentLanguage: details.contentLanguage } : {}),
    ...(details.tags ? { Tagging: new URLSearchParams(details.tags).toString() } : {}),
    // Retention and legal hold only where the target bucket can hold them.
    ...(locks && details.retention && details.retention.untilMs > Date.now() ? { ObjectLockMode: details.retention.mode as ObjectLockMode, ObjectLockRetainUntilDate: new Date(details.retention.untilMs) } : {}),
    ...(locks && details.legalHold ? { ObjectLockLegalHoldStatus: 'ON' as const } : {}),
  };
}

/**
 * Writes a large object as a multipart upload: the body is cut into parts of `partSizeFor(size)`
 * as it streams (one part in memory at a time), each sent with its Content-MD5; any failure
 * aborts the upload, so nothing half-written stays on the target.
 */
async function writeInParts(s3: S3Client, bucket: string, key: string, body: Readable, size: number, headers: ReturnType<typeof writeHeaders>): Promise<void> {
  const partSizeBytes = partSizeFor(size);
  const { UploadId: uploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ...headers }));
  if (!uploadId) throw new Error(`${bucket}/${key}: the target answered no upload id`);
  try {
    const parts: CompletedPart[] = [];
    let sentBytes = 0;
    const send = async (part: Buffer): Promise<void> => {
      const PartNumber = parts.length + 1;
      const answer = await s3.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber, Body: part, ContentLength: part.length, ContentMD5: createHash('md5').update(part).digest('base64') }));
      parts.push({ PartNumber, ETag: answer.ETag });
      sentBytes += part.length;
    };
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      let rest = chunk;
      while (pendingBytes + rest.length >= partSizeBytes) {
        const take = partSizeBytes - pendingBytes;
        await send(Buffer.concat([...pending, rest.subarray(0, take)]));
        rest = rest.subarray(take);
        pending = [];
        pendingBytes = 0;
      }
      if (rest.length > 0) {
        pending.push(rest);
        pendingBytes += rest.length;
      }
    }
    if (pendingBytes > 0 || parts.length === 0) await send(Buffer.concat(pending));
    if (sentBytes !== size) throw new Error(`${bucket}/${key}: read ${sentBytes} bytes of the ${size} listed`);
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } }));
  } catch (error) {
    await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId })).catch(() => undefined);
    throw error;
  }
}

export function directorySide(root: string): MirrorSide {
  const pathOf = (key: string): string => join(root, ...key.split('/'));
  return {
    label: root,
    versioned: async () => false,
    list: async () => {
      const entries: MirrorEntry[] = [];
      const walk = async (directory: string): Promise<void> => {
        const children = await readdir(directory, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT') return [];
          throw error;
        });
        for (const child of children) {
          const path = join(directory, child.name);
          if (child.isDirectory()) await walk(path);
          else if (child.isFile() && !child.name.startsWith('.rc-mirror-')) {
            const info = await stat(path);
            entries.push({ key: relative(root, path).split(sep).join('/'), deleteMarker: false, size: info.size, etag: await md5Of(path), modifiedMs: info.mtimeMs });
          }
        }
      };
      await walk(root);
      return entries.sort((first, second) => (first.key < second.key ? -1 : 1));
    },
    read: async (entry) => ({ body: createReadStream(pathOf(entry.key)), details: { metadata: {}, contentType: contentTypeOf(entry.key) } }),
    write: async (key, body) => {
      const path = pathOf(key);
      await mkdir(dirname(path), { recursive: true });
      const temporary = join(dirname(path), `.rc-mirror-${process.pid}-${Date.now()}`);
      await pipeline(body, createWriteStream(temporary));
      await rename(temporary, path);
    },
    remove: async (key) => unlink(pathOf(key)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    }),
  };
}

function md5Of(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('md5');
    createReadStream(path).on('data', (chunk) => hash.update(chunk)).on('end', () => resolve(hash.digest('hex'))).on('error', reject);
  });
}
