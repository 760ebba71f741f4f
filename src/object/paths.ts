/**
 * Where an object lives on a drive: `<bucket>/<encoded key>/xl.meta`, shards in
 * `<bucket>/<encoded key>/<data-dir>/part.<N>`. Keys below an object share its directory, so a
 * key segment must never be taken for one of the object's own entries (its `xl.meta`, a data
 * directory named by a UUID). The encoding keeps ordinary segments as they are and escapes the
 * few that could be mistaken (docs/formats.md, "Key encoding"):
 *
 *   - a segment that is UUID-shaped, is `xl.meta`, or ends in `__XLDIR__` or `__XLKEY__` is
 *     stored as `<segment>__XLKEY__`;
 *   - a key ending in '/' (a "directory object") stores its last segment, encoded as above, with
 *     `__XLDIR__` appended, so that it does not collide with the prefix itself.
 *
 * A raw name therefore never ends in `__XLKEY__`, an escaped one always does, and a directory
 * object's name always ends in `__XLDIR__`: every on-disk name decodes to one key segment.
 * Objects written before the encoding keep their raw names; `legacyObjectDir` says where.
 */
import { SvcError } from '../errors/index.js';
import { limits } from '../util/limits.js';
import { systemDir } from '../drive/index.js';

export const xlMetaName = 'xl.meta';
export const directoryObjectSuffix = '__XLDIR__';
export const escapeSuffix = '__XLKEY__';
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const partFilePattern = /^part\.\d+$/;

export function isUuid(name: string): boolean {
  return uuidPattern.test(name);
}

/** A shard file's name inside a data directory. */
export function isPartFileName(name: string): boolean {
  return partFilePattern.test(name);
}

/** Could this segment, stored raw, be read as an object's own entry or as an encoded name? */
export function needsEscape(segment: string): boolean {
  return isUuid(segment) || segment === xlMetaName || segment.endsWith(directoryObjectSuffix) || segment.endsWith(escapeSuffix);
}

/** The on-disk name of one key segment (`directoryObject`: the last segment of a key ending in '/'). */
export function encodeSegment(segment: string, directoryObject = false): string {
  const name = needsEscape(segment) ? `${segment}${escapeSuffix}` : segment;
  return directoryObject ? `${name}${directoryObjectSuffix}` : name;
}

export type DecodedName =
  | { kind: 'segment'; segment: string; directoryObject: boolean }
  /** A name this encoding never writes: a data directory, or a key segment stored raw by the older layout. */
  | { kind: 'raw'; name: string };

/** Turns a directory name found in a bucket back into the key segment it stores. */
export function decodeName(name: string): DecodedName {
  const directoryObject = name.endsWith(directoryObjectSuffix);
  const base = directoryObject ? name.slice(0, -directoryObjectSuffix.length) : name;
  if (base.endsWith(escapeSuffix)) {
    const segment = base.slice(0, -escapeSuffix.length);
    if (needsEscape(segment)) return { kind: 'segment', segment: directoryObject ? `${segment}/` : segment, directoryObject };
  } else if (!needsEscape(base)) {
    return { kind: 'segment', segment: directoryObject ? `${base}/` : base, directoryObject };
  }
  return { kind: 'raw', name };
}

/**
 * Refuses, before any drive is touched, keys the drive layout cannot hold: empty, over 1024
 * bytes, a segment whose on-disk name would exceed the file-name limit, empty, '.' or '..'
 * segments (a leading '/' or '//' included), NUL bytes or backslashes. Everything else, UUIDs,
 * `xl.meta`, `part.N` and the reserved suffixes included, is a key of its own.
 */
export function checkObjectKey(key: string): void {
  if (key === '') throw new SvcError('InvalidArgument', 'object key must not be empty');
  if (Buffer.byteLength(key, 'utf8') > limits.maxObjectKeyBytes) {
    throw new SvcError('KeyTooLongError', `Your key is too long: at most ${limits.maxObjectKeyBytes} bytes.`, { key: key.slice(0, 64) });
  }
  const segments = segmentsOf(key);
  if (key.includes('\0') || key.includes('\\') || segments.some((segment) => segment === '' || segment === '.' || segment === '..')) {
    throw new SvcError('InvalidObjectName', `object key '${printable(key)}' cannot be stored: empty, '.' or '..' segments, NUL bytes and backslashes are refused`, { key: printable(key) });
  }
  const directoryObject = key.endsWith('/');
  segments.forEach((segment, index) => {
    const name = encodeSegment(segment, directoryObject && index === segments.length - 1);
    if (Buffer.byteLength(name, 'utf8') > limits.maxDriveNameBytes) {
      throw new SvcError('KeyTooLongError', `key segment '${printable(segment).slice(0, 32)}...' is too long: each part of a key between slashes may take at most ${limits.maxDriveNameBytes} bytes on disk (a segment that must be escaped, or the last one of a key ending in '/', takes ${escapeSuffix.length} more)`, { key: printable(key).slice(0, 64) });
    }
  });
}

function segmentsOf(key: string): string[] {
  return (key.endsWith('/') ? key.slice(0, -1) : key).split('/');
}

function printable(text: string): string {
  return text.replace(/[\0-\x1f]/g, '?');
}

export function checkBucketName(bucket: string): void {
  if (bucket === '' || bucket.includes('/') || bucket === systemDir || bucket.startsWith('.')) {
    throw new SvcError('InvalidBucketName', undefined, { bucket });
  }
}

/** Drive-relative directory of an object, as this layout names it. */
export function objectDir(bucket: string, key: string): string {
  const segments = segmentsOf(key);
  const directoryObject = key.endsWith('/');
  return `${bucket}/${segments.map((segment, index) => encodeSegment(segment, directoryObject && index === segments.length - 1)).join('/')}`;
}

/**
 * The directory the layout before the encoding gave the key (segments raw), when it differs from
 * `objectDir` and could hold this key: not for keys that layout refused (an `xl.meta` segment, a
 * last segment ending in `__XLDIR__`), nor for one whose raw names read as encoded names of
 * another key.
 */
export function legacyObjectDir(bucket: string, key: string): string | undefined {
  const segments = segmentsOf(key);
  if (segments.includes(xlMetaName) || segments.at(-1)!.endsWith(directoryObjectSuffix)) return undefined;
  if (segments.some((segment) => decodeName(segment).kind === 'segment' && segment.endsWith(escapeSuffix))) return undefined;
  const raw = key.endsWith('/') ? `${bucket}/${key.slice(0, -1)}${directoryObjectSuffix}` : `${bucket}/${key}`;
  return raw === objectDir(bucket, key) ? undefined : raw;
}

export function xlMetaPathIn(dir: string): string {
  return `${dir}/${xlMetaName}`;
}

export function partPathIn(dir: string, dataDir: string, partNumber: number): string {
  return `${dir}/${dataDir}/part.${partNumber}`;
}
