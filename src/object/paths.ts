/**
 * Where an object lives on a drive: `<bucket>/<key>/xl.meta`, shards in
 * `<bucket>/<key>/<data-dir>/part.<N>`. A key ending in '/' (a "directory object" made by many
 * clients) is stored under a reserved suffix so that it does not collide with the prefix itself.
 */
import { SvcError } from '../errors/index.js';
import { limits } from '../util/limits.js';
import { systemDir } from '../drive/index.js';

export const xlMetaName = 'xl.meta';
export const directoryObjectSuffix = '__XLDIR__';
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function isUuid(name: string): boolean {
  return uuidPattern.test(name);
}

/**
 * Refuses keys the drive layout cannot hold: empty, over 1024 bytes, with empty, '.' or '..'
 * segments, NUL bytes or backslashes, or reaching into the system area.
 */
export function checkObjectKey(key: string): void {
  if (key === '') throw new SvcError('InvalidArgument', 'object key must not be empty');
  if (Buffer.byteLength(key, 'utf8') > limits.maxObjectKeyBytes) {
    throw new SvcError('KeyTooLongError', undefined, { key: key.slice(0, 64) });
  }
  const body = key.endsWith('/') ? key.slice(0, -1) : key;
  const bad =
    body === '' ||
    body.startsWith('/') ||
    key.includes('\0') ||
    key.includes('\\') ||
    body.split('/').some((segment) => segment === '' || segment === '.' || segment === '..') ||
    body.split('/').at(-1)!.endsWith(directoryObjectSuffix) ||
    body.split('/').includes(xlMetaName);
  if (bad) throw new SvcError('InvalidObjectName', `object key '${key}' cannot be stored (empty, '.' or '..' segments, NUL, backslash or reserved name)`);
}

export function checkBucketName(bucket: string): void {
  if (bucket === '' || bucket.includes('/') || bucket === systemDir || bucket.startsWith('.')) {
    throw new SvcError('InvalidBucketName', undefined, { bucket });
  }
}

/** Drive-relative directory of an object. */
export function objectDir(bucket: string, key: string): string {
  return key.endsWith('/') ? `${bucket}/${key.slice(0, -1)}${directoryObjectSuffix}` : `${bucket}/${key}`;
}

export function xlMetaPath(bucket: string, key: string): string {
  return `${objectDir(bucket, key)}/${xlMetaName}`;
}

export function dataDirPath(bucket: string, key: string, dataDir: string): string {
  return `${objectDir(bucket, key)}/${dataDir}`;
}

export function partPath(bucket: string, key: string, dataDir: string, partNumber: number): string {
  return `${dataDirPath(bucket, key, dataDir)}/part.${partNumber}`;
}

/** Turns a directory name found on a drive back into the key segment it stores. */
export function keySegmentOf(name: string): { segment: string; directoryObject: boolean } {
  return name.endsWith(directoryObjectSuffix)
    ? { segment: `${name.slice(0, -directoryObjectSuffix.length)}/`, directoryObject: true }
    : { segment: name, directoryObject: false };
}
