/** Reading console API input: every field checked, every refusal a named error naming the field. */
import { SvcError } from '../errors/index.js';
import { checkObjectKey } from '../object/index.js';
import type { StorageClass } from '../format/xl-meta-types.js';

export function bodyRecord(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new SvcError('InvalidArgument', 'the request body must be a JSON object');
  return body as Record<string, unknown>;
}

export function bucketParam(params: unknown): string {
  const bucket = (params as { bucket?: string }).bucket ?? '';
  if (bucket === '' || bucket.length > 63) throw new SvcError('InvalidBucketName', undefined, { bucket });
  return bucket;
}

export function queryOf(request: { query: unknown }): Record<string, string | undefined> {
  const query = request.query as Record<string, string | string[] | undefined>;
  const single: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(query)) {
    if (Array.isArray(value)) throw new SvcError('InvalidQueryParameter', `the ${name} parameter is given more than once`, { parameter: name });
    single[name] = value;
  }
  return single;
}

export function requiredKey(value: unknown, field = 'key'): string {
  if (typeof value !== 'string' || value === '') throw new SvcError('InvalidArgument', `${field} (an object key) is required`, { field });
  checkObjectKey(value);
  return value;
}

export function optionalVersionId(value: unknown): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || value.length > 64 || !/^[A-Za-z0-9._-]+$/.test(value)) throw new SvcError('InvalidArgument', 'versionId is not a version id', { field: 'versionId' });
  return value;
}

export function storageClassOf(value: unknown): StorageClass {
  if (value === undefined || value === '' || value === 'STANDARD') return 'STANDARD';
  if (value === 'REDUCED_REDUNDANCY') return 'REDUCED_REDUNDANCY';
  throw new SvcError('InvalidStorageClass', `The storage class '${String(value)}' is not valid: only STANDARD and REDUCED_REDUNDANCY are accepted.`, { field: 'storageClass' });
}

export function boundedInteger(value: string | undefined, field: string, fallback: number, min: number, max: number): number {
  if (value === undefined || value === '') return fallback;
  const number = Number(value);
  if (!/^\d+$/.test(value) || number < min || number > max) throw new SvcError('InvalidArgument', `${field} must be a whole number from ${min} to ${max}`, { field });
  return number;
}
