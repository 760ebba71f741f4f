/** Parsing of the placement query and the failure what-if body: named errors for every bad input. */
import { SvcError } from '../../errors/index.js';
import type { PlacementRequest, SimulateRequest } from '../../ops/explorer.js';
import type { AdminRequest } from './context.js';
import type { Permission } from '../../iam/index.js';
import { jsonBody, mutationQuery, statusQuery } from './query.js';

export function placementQuery(request: AdminRequest): PlacementRequest {
  const query = statusQuery(request.rawQuery);
  const bucket = query.get('bucket');
  const key = query.get('key');
  if (!bucket) throw new SvcError('InvalidQueryParameter', 'the bucket parameter is required', { parameter: 'bucket' });
  if (!key) throw new SvcError('InvalidQueryParameter', 'the key parameter is required', { parameter: 'key' });
  const verify = query.get('verify');
  if (verify !== undefined && verify !== 'true' && verify !== 'false') throw new SvcError('InvalidQueryParameter', `verify must be true or false, not '${verify}'`, { parameter: 'verify' });
  const versionId = query.get('versionId');
  return { bucket, key, ...(versionId ? { versionId } : {}), verify: verify === 'true' };
}

/** `{ "drives": [endpoint...], "nodes": [node...], "scope": { "bucket", "prefix" } }`; every field optional; no query parameters. */
export function simulateBody(request: AdminRequest): SimulateRequest {
  mutationQuery(request.rawQuery, []);
  const body = jsonBody(request, 'the failure what-if body');
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new SvcError('InvalidArgument', 'the failure what-if body must be a JSON object');
  const record = body as Record<string, unknown>;
  for (const name of Object.keys(record)) {
    if (!['drives', 'nodes', 'scope'].includes(name)) throw new SvcError('InvalidArgument', `unknown field '${name}' (allowed: drives, nodes, scope)`, { field: name });
  }
  const result: SimulateRequest = { drives: stringList(record, 'drives'), nodes: stringList(record, 'nodes') };
  if (record.scope !== undefined) {
    const scope = record.scope as Record<string, unknown> | null;
    if (typeof scope !== 'object' || scope === null || typeof scope.bucket !== 'string' || (scope.prefix !== undefined && typeof scope.prefix !== 'string')) {
      throw new SvcError('InvalidArgument', 'scope must be { "bucket": string, "prefix"?: string }', { field: 'scope' });
    }
    result.scope = { bucket: scope.bucket, ...(typeof scope.prefix === 'string' ? { prefix: scope.prefix } : {}) };
  }
  return result;
}

function stringList(record: Record<string, unknown>, name: string): string[] {
  const value = record[name];
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) throw new SvcError('InvalidArgument', `${name} must be a list of strings`, { field: name });
  return value as string[];
}

/** Placement shows an object's size, ETag, version and time: the right to read it. */
export function placementPermissions(request: AdminRequest): Permission[] {
  const { bucket, key, versionId } = placementQuery(request);
  return [{ action: versionId === undefined ? 's3:GetObject' : 's3:GetObjectVersion', bucket, key }];
}

/** A scope counts (and samples the names of) a bucket's objects: the right to list it. */
export function simulatePermissions(request: AdminRequest): Permission[] {
  const scope = simulateBody(request).scope;
  return scope ? [{ action: 's3:ListBucket', bucket: scope.bucket }] : [];
}
