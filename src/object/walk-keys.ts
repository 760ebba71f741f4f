/**
 * Walks one drive's copy of a bucket in S3 key order (UTF-8 byte order), yielding objects with
 * their raw xl.meta and, when a '/' delimiter is given, common prefixes without descending.
 *
 * On a drive, object `a` lives in directory `a/` next to the subtree of keys `a/...`, but key
 * order puts `a` before `a-b` before `a/b`. So each directory entry contributes two items, the
 * possible object `P+name` and the subtree `P+name/`, and the items are sorted before they are
 * visited. Data directories (UUIDs inside an object directory) are skipped.
 */
import { isSvcError } from '../errors/index.js';
import type { Drive } from '../drive/index.js';
import { compareKeys } from '../util/merge.js';
import { isUuid, keySegmentOf, xlMetaName } from './paths.js';

export type WalkEntry = { kind: 'object'; key: string; metaBytes: Uint8Array } | { kind: 'prefix'; key: string };

export interface WalkOptions {
  prefix: string;
  /** Only keys strictly after this one. */
  startAfter?: string;
  /** Only '/' is handled here (others are grouped by the caller from full keys). */
  delimiter?: string;
}

interface Item {
  key: string;
  kind: 'object' | 'subtree';
  dir: string;
}

export async function* walkKeys(drive: Drive, bucket: string, options: WalkOptions): AsyncGenerator<WalkEntry> {
  let lastPrefix: string | undefined;
  for await (const entry of walkDir(drive, bucket, '', options)) {
    if (entry.kind === 'prefix') {
      if (entry.key === lastPrefix) continue;
      lastPrefix = entry.key;
    }
    yield entry;
  }
}

async function* walkDir(drive: Drive, dirPath: string, keyPrefix: string, options: WalkOptions): AsyncGenerator<WalkEntry> {
  let entries: string[];
  try {
    entries = await drive.listDir(dirPath);
  } catch (error) {
    if (isSvcError(error, 'FileNotFound') || isSvcError(error, 'NotADirectory')) return;
    throw error;
  }
  for (const item of itemsOf(entries, dirPath, keyPrefix)) {
    if (!wanted(item, options)) continue;
    if (item.kind === 'object') {
      const metaBytes = await readMeta(drive, `${item.dir}/${xlMetaName}`);
      if (!metaBytes) continue;
      if (options.delimiter === '/' && item.key.indexOf('/', options.prefix.length) >= 0) {
        const commonPrefix = commonPrefixOf(item.key, options);
        if (commonPrefix) yield commonPrefix;
        continue;
      }
      yield { kind: 'object', key: item.key, metaBytes };
    } else if (options.delimiter === '/' && item.key.length > options.prefix.length && item.key.startsWith(options.prefix)) {
      const commonPrefix = commonPrefixOf(item.key, options);
      if (commonPrefix && (await hasAnyObject(drive, item.dir))) yield commonPrefix;
    } else {
      yield* walkDir(drive, item.dir, item.key, options);
    }
  }
}

/** The common prefix a key rolls up into, unless it was already passed (continuation). */
function commonPrefixOf(key: string, options: WalkOptions): WalkEntry | undefined {
  const prefixKey = key.slice(0, key.indexOf('/', options.prefix.length) + 1);
  if (options.startAfter !== undefined && compareKeys(prefixKey, options.startAfter) <= 0) return undefined;
  return { kind: 'prefix', key: prefixKey };
}

function itemsOf(entries: string[], dirPath: string, keyPrefix: string): Item[] {
  const insideObject = entries.includes(xlMetaName);
  const items: Item[] = [];
  for (const entry of entries) {
    if (!entry.endsWith('/')) continue;
    const name = entry.slice(0, -1);
    if (insideObject && isUuid(name)) continue;
    const dir = `${dirPath}/${name}`;
    const { segment, directoryObject } = keySegmentOf(name);
    items.push({ key: keyPrefix + segment, kind: 'object', dir });
    if (!directoryObject) items.push({ key: `${keyPrefix}${name}/`, kind: 'subtree', dir });
  }
  return items.sort((a, b) => compareKeys(a.key, b.key) || (a.kind === 'object' ? -1 : 1));
}

function wanted(item: Item, options: WalkOptions): boolean {
  const { prefix, startAfter } = options;
  if (item.kind === 'object') {
    return item.key.startsWith(prefix) && (startAfter === undefined || compareKeys(item.key, startAfter) > 0);
  }
  const overlapsPrefix = item.key.startsWith(prefix) || prefix.startsWith(item.key);
  const afterStart = startAfter === undefined || compareKeys(item.key, startAfter) > 0 || startAfter.startsWith(item.key);
  return overlapsPrefix && afterStart;
}

async function readMeta(drive: Drive, path: string): Promise<Uint8Array | undefined> {
  try {
    return await drive.readFile(path);
  } catch (error) {
    if (isSvcError(error, 'FileNotFound') || isSvcError(error, 'NotADirectory') || isSvcError(error, 'IsADirectory')) return undefined;
    throw error;
  }
}

/**
 * True when the subtree `<dirPath>/...` holds at least one object below the directory itself
 * (an object's own xl.meta and data dirs, or left-over empty directories, make no prefix).
 */
async function hasAnyObject(drive: Drive, dirPath: string): Promise<boolean> {
  const own = `${dirPath}/${xlMetaName}`;
  for await (const path of drive.walk(dirPath)) {
    if (path !== own && path.endsWith(`/${xlMetaName}`)) return true;
  }
  return false;
}
