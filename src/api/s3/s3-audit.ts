/**
 * The audit facts of an S3 request (src/api/audit-facts.ts): who it claims to be, as soon as the
 * request arrives; the operation, its IAM actions and its resource once it is routed, or, when
 * it fails before that (a refused signature), from routing it for the record alone.
 */
import type { FastifyRequest } from 'fastify';
import { claimedAccessKey, principalOfKey, type AuditFacts } from '../audit-facts.js';
import { isUnsigned, permissionsOf, type Permission } from './access.js';
import { routeS3Request, type RoutableRequest, type S3Endpoint } from './router.js';

/** The caller, before its signature is checked: anonymous when unsigned and anonymous requests are judged, else the key it names. */
export function s3CallerFacts(headers: FastifyRequest['headers'], rawQuery: string, rootAccessKey: string | undefined): Partial<AuditFacts> {
  const query = new URLSearchParams(rawQuery);
  if (isUnsigned(headers, query)) return { surface: 's3', principal: { kind: 'anonymous' } };
  return { surface: 's3', principal: principalOfKey(claimedAccessKey(headers, query), rootAccessKey ?? '') };
}

/** The operation, the actions it needs (DeleteObjects: each key's s3:DeleteObject) and what it acts on. */
export function s3EndpointFacts(endpoint: S3Endpoint, needed: Permission[] | 'per-key'): Partial<AuditFacts> {
  const actions = needed === 'per-key' ? ['s3:DeleteObject'] : needed.map((permission) => permission.action);
  const bucket = 'bucket' in endpoint ? endpoint.bucket : '';
  return { api: endpoint.kind, actions, resource: 'key' in endpoint ? `${bucket}/${endpoint.key}` : bucket };
}

/** For a request that failed before it was routed: what it would have been, or `Unknown` when it does not route either. */
export function s3UnroutedFacts(request: RoutableRequest, virtualHostSuffixes: string[]): Partial<AuditFacts> {
  try {
    const endpoint = routeS3Request(request, { virtualHostSuffixes });
    return s3EndpointFacts(endpoint, permissionsOf(endpoint, request.query));
  } catch {
    return { api: 'Unknown', actions: [], resource: '' };
  }
}
