/**
 * `.svc.sys/usage.bin` (magic `SVDU`, the state-file frame of src/format/state-file.ts): the
 * data-usage scanner's last result and the checkpoint of an unfinished scan. The validator is
 * strict: every field of its type and no other field; a copy it refuses is quarantined by the
 * state store (state-quarantine.ts) and never read again.
 */
import { SvcError } from '../errors/index.js';
import type { BucketUsage, UsageSnapshot } from '../contracts/usage.js';
import type { UsageCheckpoint, UsageDocument } from './usage-scanner.js';

export const usageFileName = 'usage.bin';
export const usageFileMagic = 'SVDU';
const usageDocumentVersion = 1;

type Fields = Record<string, unknown>;

function refuse(what: string): never {
  throw new SvcError('CorruptFormat', `${usageFileName}: ${what}`);
}

function record(value: unknown, keys: readonly string[], what: string): Fields {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) refuse(`${what} is not an object`);
  const fields = value as Fields;
  const extra = Object.keys(fields).filter((key) => !keys.includes(key));
  const missing = keys.filter((key) => !(key in fields));
  if (extra.length > 0 || missing.length > 0) refuse(`${what} has fields [${extra.join(', ')}] it should not, lacks [${missing.join(', ')}]`);
  return fields;
}

function count(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) refuse(`${what} is not a count`);
  return value;
}

function instant(value: unknown, what: string): string {
  if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) refuse(`${what} is not a time`);
  return value;
}

function name(value: unknown, what: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 1024) refuse(`${what} is not a name`);
  return value;
}

const usageKeys = ['bucket', 'objects', 'versions', 'deleteMarkers', 'sizeBytes', 'currentSizeBytes'] as const;

function bucketUsage(value: unknown, what: string): BucketUsage {
  const fields = record(value, usageKeys, what);
  return {
    bucket: name(fields.bucket, `${what}.bucket`),
    objects: count(fields.objects, `${what}.objects`),
    versions: count(fields.versions, `${what}.versions`),
    deleteMarkers: count(fields.deleteMarkers, `${what}.deleteMarkers`),
    sizeBytes: count(fields.sizeBytes, `${what}.sizeBytes`),
    currentSizeBytes: count(fields.currentSizeBytes, `${what}.currentSizeBytes`),
  };
}

function list<T>(value: unknown, what: string, item: (value: unknown, what: string) => T): T[] {
  if (!Array.isArray(value)) refuse(`${what} is not a list`);
  return value.map((entry, index) => item(entry, `${what}[${index}]`));
}

function snapshot(value: unknown): UsageSnapshot {
  const fields = record(value, ['startedAt', 'finishedAt', 'resumes', 'buckets', 'total'], 'last');
  const total = record(fields.total, ['buckets', ...usageKeys.filter((key) => key !== 'bucket')], 'last.total');
  return {
    startedAt: instant(fields.startedAt, 'last.startedAt'),
    finishedAt: instant(fields.finishedAt, 'last.finishedAt'),
    resumes: count(fields.resumes, 'last.resumes'),
    buckets: list(fields.buckets, 'last.buckets', bucketUsage),
    total: {
      buckets: count(total.buckets, 'last.total.buckets'),
      objects: count(total.objects, 'last.total.objects'),
      versions: count(total.versions, 'last.total.versions'),
      deleteMarkers: count(total.deleteMarkers, 'last.total.deleteMarkers'),
      sizeBytes: count(total.sizeBytes, 'last.total.sizeBytes'),
      currentSizeBytes: count(total.currentSizeBytes, 'last.total.currentSizeBytes'),
    },
  };
}

function checkpoint(value: unknown): UsageCheckpoint {
  const fields = record(value, ['startedAt', 'savedAt', 'pending', 'done', 'partial', 'afterKey', 'keysWalked', 'resumes'], 'checkpoint');
  const partial = fields.partial === null ? null : bucketUsage(fields.partial, 'checkpoint.partial');
  const afterKey = fields.afterKey === null ? null : name(fields.afterKey, 'checkpoint.afterKey');
  if (partial === null && afterKey !== null) refuse('checkpoint.afterKey is set without a bucket being walked');
  return {
    startedAt: instant(fields.startedAt, 'checkpoint.startedAt'),
    savedAt: instant(fields.savedAt, 'checkpoint.savedAt'),
    pending: list(fields.pending, 'checkpoint.pending', name),
    done: list(fields.done, 'checkpoint.done', bucketUsage),
    partial,
    afterKey,
    keysWalked: count(fields.keysWalked, 'checkpoint.keysWalked'),
    resumes: count(fields.resumes, 'checkpoint.resumes'),
  };
}

/** The document as stored: with its version. */
export type StoredUsageDocument = UsageDocument & { version: number };

export function storedUsageDocument(document: UsageDocument): StoredUsageDocument {
  return { version: usageDocumentVersion, ...document };
}

/** The document of a decoded `usage.bin` payload, or CorruptFormat saying what is wrong. */
export function validateUsageDocument(payload: unknown): StoredUsageDocument {
  const fields = record(payload, ['version', 'generation', 'last', 'checkpoint'], 'document');
  if (fields.version !== usageDocumentVersion) throw new SvcError('UnsupportedFormat', `${usageFileName}: document version ${String(fields.version)}`);
  return {
    version: usageDocumentVersion,
    generation: count(fields.generation, 'generation'),
    last: fields.last === null ? null : snapshot(fields.last),
    checkpoint: fields.checkpoint === null ? null : checkpoint(fields.checkpoint),
  };
}
