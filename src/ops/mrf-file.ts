/**
 * The read-repair (MRF) queue as saved at graceful shutdown, `.svc.sys/mrf-<node>.json`
 * (docs/formats.md): `{"version":1,"entries":[{"pool":0,"set":0,"bucket":"b","key":"k"},...]}`.
 *
 * The decoder is strict: a file over limits.maxMrfFileBytes, not JSON, of another version, with a
 * field not named here, more than limits.maxMrfFileEntries entries, or an entry whose pool or set
 * is not a whole number or whose bucket or key is not a valid name, is refused whole
 * (UnsupportedFormat for the version, CorruptFormat otherwise); its owner quarantines it. The
 * encoder keeps to the same limits: entries beyond them are left out and reported as dropped.
 */
import { SvcError } from '../errors/index.js';
import { parseJsonStateFile } from '../format/state-file.js';
import { limits } from '../util/limits.js';

export interface MrfFileEntry {
  pool: number;
  set: number;
  bucket: string;
  key: string;
}

export const mrfFileVersion = 1;

const corrupt = (message: string): SvcError => new SvcError('CorruptFormat', `read-repair queue file: ${message}`);
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isWhole = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

function onlyFields(value: Record<string, unknown>, names: readonly string[], at: string): void {
  const unknown = Object.keys(value).find((name) => !names.includes(name));
  if (unknown !== undefined) throw corrupt(`${at} has an unknown field '${unknown.slice(0, 64)}'`);
}

function decodeEntry(value: unknown, index: number): MrfFileEntry {
  const at = `entries[${index}]`;
  if (!isRecord(value)) throw corrupt(`${at} is not an object`);
  onlyFields(value, ['pool', 'set', 'bucket', 'key'], at);
  const { pool, set, bucket, key } = value;
  if (!isWhole(pool) || !isWhole(set)) throw corrupt(`${at} has no whole pool and set numbers`);
  if (typeof bucket !== 'string' || bucket.length < 3 || bucket.length > 63) throw corrupt(`${at} has no valid bucket name`);
  if (typeof key !== 'string' || key.length === 0 || Buffer.byteLength(key, 'utf8') > limits.maxObjectKeyBytes) throw corrupt(`${at} has no valid object key`);
  return { pool, set, bucket, key };
}

export function decodeMrfFile(bytes: Uint8Array): MrfFileEntry[] {
  const parsed = parseJsonStateFile(bytes, limits.maxMrfFileBytes, 'read-repair queue file');
  if (!isRecord(parsed)) throw corrupt('not an object');
  if (parsed.version !== mrfFileVersion) throw new SvcError('UnsupportedFormat', `read-repair queue file: version ${JSON.stringify(parsed.version) ?? 'missing'} is not supported`);
  onlyFields(parsed, ['version', 'entries'], 'the file');
  if (!Array.isArray(parsed.entries)) throw corrupt('entries is not a list');
  if (parsed.entries.length > limits.maxMrfFileEntries) throw corrupt(`${parsed.entries.length} entries, more than ${limits.maxMrfFileEntries}`);
  return parsed.entries.map(decodeEntry);
}

/** The file for these entries, and how many were left out to keep it within its limits. */
export function encodeMrfFile(entries: readonly MrfFileEntry[]): { bytes: Uint8Array; dropped: number } {
  const head = `{"version":${mrfFileVersion},"entries":[`;
  const parts: string[] = [];
  let sizeBytes = Buffer.byteLength(head) + 2;
  for (const { pool, set, bucket, key } of entries) {
    if (parts.length >= limits.maxMrfFileEntries) break;
    const part = JSON.stringify({ pool, set, bucket, key });
    const partBytes = Buffer.byteLength(part) + 1;
    if (sizeBytes + partBytes > limits.maxMrfFileBytes) break;
    parts.push(part);
    sizeBytes += partBytes;
  }
  return { bytes: Buffer.from(`${head}${parts.join(',')}]}`), dropped: entries.length - parts.length };
}
