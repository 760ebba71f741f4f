/**
 * Transparent compression's settings (docs/compression.md): off by default; when on, a single PUT
 * or CopyObject whose key extension or Content-Type is listed is stored compressed, and a body of
 * a type that is already compressed (archives, images, audio, video) never is. Read once at
 * start-up; every value is checked, and a bad one stops the server with the variable named.
 */
import { SvcError } from '../errors/index.js';
import { zstdAvailable } from '../format/compressed-blocks.js';

export interface CompressionSettings {
  enabled: boolean;
  /** Lower-case extensions with their dot (`.txt`), or `*` for any. */
  extensions: string[];
  /** Lower-case media types (`application/json`), `type/*` patterns, or `*` for any. */
  mimeTypes: string[];
  /** Compress objects that are encrypted as well (compressed, then sealed). */
  allowEncryption: boolean;
}

export const defaultCompressionExtensions = ['.txt', '.log', '.csv', '.tsv', '.json', '.jsonl', '.ndjson', '.xml', '.yaml', '.yml', '.html', '.htm', '.css', '.js', '.md', '.sql'];
export const defaultCompressionMimeTypes = ['text/*', 'application/json', 'application/x-ndjson', 'application/xml', 'application/javascript', 'application/yaml', 'application/x-yaml', 'application/sql'];

/** Data that is compressed already: compressing it again costs time and saves nothing. */
export const neverCompressedExtensions = new Set([
  '.gz', '.tgz', '.bz2', '.tbz2', '.xz', '.txz', '.zst', '.zstd', '.lz4', '.lz', '.lzma', '.br', '.z', '.zip', '.7z', '.rar', '.jar', '.apk',
  '.jpg', '.jpeg', '.png', '.gif', '.webp', '.avif', '.heic', '.heif', '.jxl',
  '.mp3', '.m4a', '.aac', '.ogg', '.opus', '.flac', '.mp4', '.m4v', '.mov', '.mkv', '.webm', '.avi', '.wmv',
  '.docx', '.xlsx', '.pptx', '.odt', '.ods', '.odp', '.epub', '.parquet', '.orc', '.avro',
]);
export const neverCompressedMimeTypes = [
  'audio/*', 'video/*', 'image/jpeg', 'image/png', 'image/gif', 'image/webp', 'image/avif', 'image/heic', 'image/heif', 'image/jxl',
  'application/gzip', 'application/x-gzip', 'application/zip', 'application/x-zip-compressed', 'application/x-7z-compressed', 'application/vnd.rar',
  'application/x-rar-compressed', 'application/x-bzip2', 'application/x-xz', 'application/zstd', 'application/x-compress', 'application/x-lz4',
  'application/java-archive', 'application/vnd.apache.parquet',
];

const extensionPattern = /^\.[a-z0-9][a-z0-9_+-]{0,31}$/;
const mimePattern = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/(\*|[a-z0-9][a-z0-9!#$&^_.+-]*)$/;

function onOff(values: Record<string, string | undefined>, name: string, fallback: boolean): boolean {
  const raw = (values[name] ?? '').trim().toLowerCase();
  if (raw === '') return fallback;
  if (raw === 'on' || raw === 'true') return true;
  if (raw === 'off' || raw === 'false') return false;
  throw new SvcError('InvalidConfiguration', `${name}=${JSON.stringify(values[name])} is not one of on, off`, { variable: name });
}

/** A comma-separated list (its default when unset or empty), each entry checked by `check`. */
function listOf(values: Record<string, string | undefined>, name: string, fallback: string[], check: (entry: string) => string | undefined): string[] {
  const raw = values[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  return raw.split(',').map((entry) => entry.trim().toLowerCase()).filter((entry) => entry !== '').map((entry) => {
    const problem = entry === '*' ? undefined : check(entry);
    if (problem) throw new SvcError('InvalidConfiguration', `${name}: '${entry}' ${problem}`, { variable: name });
    return entry;
  });
}

function matchesMime(patterns: readonly string[], mime: string): boolean {
  return patterns.some((pattern) => pattern === '*' || pattern === mime || (pattern.endsWith('/*') && mime.startsWith(pattern.slice(0, -1))));
}

export function readCompressionSettings(values: Record<string, string | undefined>): CompressionSettings {
  const enabled = onOff(values, 'SVC_COMPRESSION_ENABLE', false);
  const extensions = listOf(values, 'SVC_COMPRESSION_EXTENSIONS', defaultCompressionExtensions, (entry) => {
    if (!extensionPattern.test(entry)) return 'is not an extension such as .txt (a dot, then up to 32 letters, digits and _+-), or *';
    return neverCompressedExtensions.has(entry) ? 'names data that is compressed already: svc never compresses it' : undefined;
  });
  const mimeTypes = listOf(values, 'SVC_COMPRESSION_MIME_TYPES', defaultCompressionMimeTypes, (entry) => {
    if (!mimePattern.test(entry)) return 'is not a media type such as application/json or text/*, or *';
    return !entry.endsWith('/*') && matchesMime(neverCompressedMimeTypes, entry) ? 'names data that is compressed already: svc never compresses it' : undefined;
  });
  const allowEncryption = onOff(values, 'SVC_COMPRESSION_ALLOW_ENCRYPTION', true);
  if (enabled && !zstdAvailable()) {
    throw new SvcError('InvalidConfiguration', `SVC_COMPRESSION_ENABLE=on needs zstd in node:zlib (Node.js 22.15 or later); this is Node.js ${process.versions.node}`, { variable: 'SVC_COMPRESSION_ENABLE' });
  }
  return { enabled, extensions, mimeTypes, allowEncryption };
}

/** The extension of a key's last path segment, lower-case with its dot (`logs/a.JSON` → `.json`), or ''. */
export function extensionOf(key: string): string {
  const name = key.slice(key.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? '' : name.slice(dot).toLowerCase();
}

/** What decides whether a new object is compressed. */
export interface NewObject {
  key: string;
  contentType?: string | undefined;
  /** The stored Content-Encoding (gzip, br, ...): a body encoded so is compressed already. */
  contentEncoding?: string | undefined;
  /** The object is to be encrypted too. */
  encrypted: boolean;
}

/**
 * Whether a new object is stored compressed: compression is on (and allowed with encryption when
 * the object is encrypted), the body is not content-encoded already, neither its extension nor
 * its type is one of compressed data, and its extension or its type is listed.
 */
export function shouldCompress(settings: CompressionSettings | undefined, object: NewObject): boolean {
  if (!settings?.enabled || (object.encrypted && !settings.allowEncryption)) return false;
  const { key, contentType, contentEncoding } = object;
  const encoding = contentEncoding?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity') return false;
  const extension = extensionOf(key);
  const mime = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (neverCompressedExtensions.has(extension) || (mime !== '' && matchesMime(neverCompressedMimeTypes, mime))) return false;
  return settings.extensions.includes('*') || (extension !== '' && settings.extensions.includes(extension)) || (mime !== '' && matchesMime(settings.mimeTypes, mime));
}
