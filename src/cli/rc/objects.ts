/** Everyday object commands: mb, rb, ls, cp, cat, rm, stat. Targets are written `alias/bucket/key`. */
import { createReadStream, createWriteStream } from 'node:fs';
import { open, stat as statFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { contentTypeOf } from './content-types.js';
import { formatBytes, RcError, table, type Alias, type RcContext } from './context.js';

const partSizeBytes = 16 * 1024 * 1024;

export interface Target {
  aliasName: string;
  alias: Alias;
  bucket?: string;
  key?: string;
}

/** `alias[/bucket[/key...]]`; anything without a known alias as its first segment is not remote. */
export async function remoteTarget(context: RcContext, text: string): Promise<Target | undefined> {
  const [aliasName, bucket, ...rest] = text.split('/');
  const aliases = await context.readAliases();
  const alias = aliasName ? aliases[aliasName] : undefined;
  if (!alias) return undefined;
  return { aliasName: aliasName!, alias, ...(bucket ? { bucket } : {}), ...(rest.length > 0 && rest.join('/') !== '' ? { key: rest.join('/') } : {}) };
}

export async function requireTarget(context: RcContext, text: string, needs: 'alias' | 'bucket' | 'key'): Promise<Target & { bucket: string; key: string }> {
  const target = await remoteTarget(context, text);
  if (!target) throw new RcError(`'${text}' does not start with a known alias (rc alias list shows them)`);
  if (needs !== 'alias' && !target.bucket) throw new RcError(`'${text}' names no bucket: write ${target.aliasName}/<bucket>${needs === 'key' ? '/<key>' : ''}`, 2);
  if (needs === 'key' && !target.key) throw new RcError(`'${text}' names no object: write ${target.aliasName}/${target.bucket}/<key>`, 2);
  return target as Target & { bucket: string; key: string };
}

/** S3 errors as one line: the code and what the server said. */
export function s3Failure(error: unknown, what: string): RcError {
  if (error instanceof RcError) return error;
  const named = error as { name?: string; message?: string; $metadata?: { httpStatusCode?: number }; code?: string };
  if (named.$metadata?.httpStatusCode === 404 && named.name === 'NotFound') return new RcError(`${what}: NotFound: no such object`);
  if (named.$metadata?.httpStatusCode) return new RcError(`${what}: ${named.name ?? 'Error'}: ${named.message ?? ''}`.trim());
  const cause = (error as { cause?: { message?: string } }).cause?.message;
  return new RcError(`${what}: ${named.code ?? named.name ?? 'Error'}: ${cause ?? named.message ?? String(error)}`);
}

async function send<T>(what: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    throw s3Failure(error, what);
  }
}

export async function mb(context: RcContext, text: string): Promise<void> {
  const target = await requireTarget(context, text, 'bucket');
  await send(`make bucket ${target.bucket}`, () => context.s3(target.alias).send(new CreateBucketCommand({ Bucket: target.bucket })));
  context.print({ bucket: target.bucket, created: true }, () => `bucket created: ${text}`);
}

export async function rb(context: RcContext, text: string, force: boolean): Promise<void> {
  const target = await requireTarget(context, text, 'bucket');
  const s3 = context.s3(target.alias);
  if (force) await removeAll(s3, target.bucket, '', true);
  await send(`remove bucket ${target.bucket}`, () => s3.send(new DeleteBucketCommand({ Bucket: target.bucket })));
  context.print({ bucket: target.bucket, removed: true }, () => `bucket removed: ${text}`);
}

export async function ls(context: RcContext, text: string, options: { recursive: boolean; versions: boolean }): Promise<void> {
  const target = await requireTarget(context, text, 'alias');
  const s3 = context.s3(target.alias);
  if (!target.bucket) {
    const answer = await send('list buckets', () => s3.send(new ListBucketsCommand({})));
    const buckets = (answer.Buckets ?? []).map((bucket) => ({ name: bucket.Name!, created: bucket.CreationDate?.toISOString() }));
    context.print(buckets, () => table(['CREATED', 'BUCKET'], buckets.map((bucket) => [bucket.created ?? '-', `${bucket.name}/`])));
    return;
  }
  const prefix = target.key ?? '';
  if (options.versions) {
    const rows: { key: string; versionId: string; latest: boolean; deleteMarker: boolean; size: number; modified?: string }[] = [];
    let keyMarker: string | undefined;
    let versionMarker: string | undefined;
    for (;;) {
      const page = await send('list versions', () => s3.send(new ListObjectVersionsCommand({ Bucket: target.bucket, Prefix: prefix, KeyMarker: keyMarker, VersionIdMarker: versionMarker })));
      for (const version of page.Versions ?? []) rows.push({ key: version.Key!, versionId: version.VersionId!, latest: version.IsLatest === true, deleteMarker: false, size: version.Size ?? 0, modified: version.LastModified?.toISOString() });
      for (const marker of page.DeleteMarkers ?? []) rows.push({ key: marker.Key!, versionId: marker.VersionId!, latest: marker.IsLatest === true, deleteMarker: true, size: 0, modified: marker.LastModified?.toISOString() });
      if (!page.IsTruncated) break;
      keyMarker = page.NextKeyMarker;
      versionMarker = page.NextVersionIdMarker;
    }
    rows.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : (b.modified ?? '').localeCompare(a.modified ?? '')));
    context.print(rows, () => table(['MODIFIED', 'SIZE', 'VERSION', 'KEY'], rows.map((row) => [row.modified ?? '-', row.deleteMarker ? 'DEL' : formatBytes(row.size), `${row.versionId}${row.latest ? ' (latest)' : ''}`, row.key])));
    return;
  }
  const rows: { key: string; size: number; modified?: string; prefix: boolean }[] = [];
  let token: string | undefined;
  do {
    const page = await send('list objects', () => s3.send(new ListObjectsV2Command({ Bucket: target.bucket, Prefix: prefix, ContinuationToken: token, ...(options.recursive ? {} : { Delimiter: '/' }) })));
    for (const common of page.CommonPrefixes ?? []) rows.push({ key: common.Prefix!, size: 0, prefix: true });
    for (const object of page.Contents ?? []) rows.push({ key: object.Key!, size: object.Size ?? 0, modified: object.LastModified?.toISOString(), prefix: false });
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  rows.sort((a, b) => (a.key < b.key ? -1 : 1));
  context.print(rows, () => table(['MODIFIED', 'SIZE', 'KEY'], rows.map((row) => [row.prefix ? '' : row.modified ?? '-', row.prefix ? 'DIR' : formatBytes(row.size), row.key])));
}

export async function cp(context: RcContext, from: string, to: string): Promise<void> {
  const source = await remoteTarget(context, from);
  const target = await remoteTarget(context, to);
  if (!source && !target) throw new RcError(`neither '${from}' nor '${to}' starts with a known alias`, 2);
  if (source && target) {
    const src = await requireTarget(context, from, 'key');
    const dst = await requireTarget(context, to, 'bucket');
    const key = dst.key ?? src.key.split('/').at(-1)!;
    if (src.aliasName !== dst.aliasName) throw new RcError('server-side copy needs both sides on one alias', 2);
    await send(`copy ${from}`, () => context.s3(dst.alias).send(new CopyObjectCommand({ Bucket: dst.bucket, Key: key, CopySource: `${src.bucket}/${src.key.split('/').map(encodeURIComponent).join('/')}` })));
    context.print({ from, to: `${dst.aliasName}/${dst.bucket}/${key}`, copied: true }, () => `copied (server side): ${from} -> ${dst.aliasName}/${dst.bucket}/${key}`);
    return;
  }
  if (target) {
    const dst = await requireTarget(context, to, 'bucket');
    const key = dst.key === undefined || dst.key.endsWith('/') ? `${dst.key ?? ''}${from.split('/').at(-1)}` : dst.key;
    const size = await statFile(from).then((info) => info.size, () => {
      throw new RcError(`cannot read local file '${from}'`);
    });
    const etag = await upload(context, context.s3(dst.alias), from, size, dst.bucket, key);
    context.print({ from, to: `${dst.aliasName}/${dst.bucket}/${key}`, size, etag }, () => `uploaded ${formatBytes(size)}: ${from} -> ${dst.aliasName}/${dst.bucket}/${key}`);
    return;
  }
  const src = await requireTarget(context, from, 'key');
  const object = await send(`get ${from}`, () => context.s3(src.alias).send(new GetObjectCommand({ Bucket: src.bucket, Key: src.key })));
  const total = object.ContentLength ?? 0;
  const bar = context.progress('download');
  let done = 0;
  const body = object.Body as Readable;
  body.on('data', (chunk: Buffer) => {
    done += chunk.length;
    bar.update(done, total, `${formatBytes(done)}/${formatBytes(total)}`);
  });
  await pipeline(body, createWriteStream(to));
  bar.finish();
  context.print({ from, to, size: total }, () => `downloaded ${formatBytes(total)}: ${from} -> ${to}`);
}

/** One PUT for small files; multipart in 16 MiB parts for large ones, with a progress bar. */
async function upload(context: RcContext, s3: S3Client, path: string, size: number, bucket: string, key: string): Promise<string | undefined> {
  const bar = context.progress('upload');
  if (size <= partSizeBytes) {
    const answer = await send(`upload ${path}`, () => s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: createReadStream(path), ContentLength: size, ContentType: contentTypeOf(path) })));
    bar.update(size, size, formatBytes(size));
    bar.finish();
    return answer.ETag;
  }
  const created = await send(`upload ${path}`, () => s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: contentTypeOf(path) })));
  const uploadId = created.UploadId!;
  const file = await open(path, 'r');
  try {
    const parts: { ETag: string; PartNumber: number }[] = [];
    for (let offset = 0, number = 1; offset < size; offset += partSizeBytes, number += 1) {
      const length = Math.min(partSizeBytes, size - offset);
      const buffer = Buffer.alloc(length);
      await file.read(buffer, 0, length, offset);
      const part = await send(`upload part ${number} of ${path}`, () => s3.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: number, Body: buffer, ContentLength: length })));
      parts.push({ ETag: part.ETag!, PartNumber: number });
      bar.update(offset + length, size, `${formatBytes(offset + length)}/${formatBytes(size)}`);
    }
    const done = await send(`complete upload of ${path}`, () => s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } })));
    bar.finish();
    return done.ETag;
  } catch (error) {
    await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId })).catch(() => undefined);
    throw error;
  } finally {
    await file.close();
  }
}

export async function cat(context: RcContext, text: string, versionId?: string): Promise<void> {
  const target = await requireTarget(context, text, 'key');
  const object = await send(`get ${text}`, () => context.s3(target.alias).send(new GetObjectCommand({ Bucket: target.bucket, Key: target.key, VersionId: versionId })));
  for await (const chunk of object.Body as Readable) await context.io.write(chunk as Buffer);
}

export async function rm(context: RcContext, text: string, options: { recursive: boolean; versions: boolean; versionId?: string }): Promise<void> {
  const target = await requireTarget(context, text, options.recursive ? 'bucket' : 'key');
  const s3 = context.s3(target.alias);
  if (options.recursive) {
    const removed = await removeAll(s3, target.bucket, target.key ?? '', options.versions);
    context.print({ removed }, () => `removed ${removed} ${options.versions ? 'version(s)' : 'object(s)'} under ${text}`);
    return;
  }
  const answer = await send(`remove ${text}`, () => s3.send(new DeleteObjectCommand({ Bucket: target.bucket, Key: target.key, VersionId: options.versionId })));
  context.print({ key: target.key, versionId: answer.VersionId, deleteMarker: answer.DeleteMarker === true }, () => `removed: ${text}${answer.DeleteMarker ? ' (delete marker added)' : ''}`);
}

async function removeAll(s3: S3Client, bucket: string, prefix: string, versions: boolean): Promise<number> {
  let removed = 0;
  if (versions) {
    for (;;) {
      const page = await send('list versions', () => s3.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: prefix })));
      const all = [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])];
      if (all.length === 0) return removed;
      for (const version of all) {
        await send(`remove ${version.Key}`, () => s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: version.Key!, VersionId: version.VersionId })));
        removed += 1;
      }
    }
  }
  let token: string | undefined;
  do {
    const page = await send('list objects', () => s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token })));
    for (const object of page.Contents ?? []) {
      await send(`remove ${object.Key}`, () => s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: object.Key! })));
      removed += 1;
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return removed;
}

export async function stat(context: RcContext, text: string, versionId?: string): Promise<void> {
  const target = await requireTarget(context, text, 'key');
  const head = await send(`stat ${text}`, () => context.s3(target.alias).send(new HeadObjectCommand({ Bucket: target.bucket, Key: target.key, VersionId: versionId })));
  const info = {
    key: target.key,
    size: head.ContentLength ?? 0,
    etag: head.ETag,
    lastModified: head.LastModified?.toISOString(),
    contentType: head.ContentType,
    storageClass: head.StorageClass ?? 'STANDARD',
    versionId: head.VersionId,
    metadata: head.Metadata ?? {},
  };
  context.print(info, () =>
    [
      `Name      : ${info.key}`,
      `Size      : ${formatBytes(info.size)} (${info.size} bytes)`,
      `ETag      : ${info.etag}`,
      `Modified  : ${info.lastModified}`,
      `Type      : ${info.contentType ?? '-'}`,
      `Class     : ${info.storageClass}`,
      `Version   : ${info.versionId ?? '-'}`,
      ...Object.entries(info.metadata).map(([name, value]) => `Metadata  : ${name}=${value}`),
    ].join('\n'),
  );
}

