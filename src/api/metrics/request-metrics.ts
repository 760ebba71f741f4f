/**
 * Observes every S3 request on the listener from the outside: an onRequest hook names its API
 * with the same pure router the S3 plugin uses, and when the answer is finished (the response
 * closes, streamed bodies included) counts it, its latency and the bytes it moved (the body's declared length, or what the socket read, and what it wrote), and
 * writes one log line carrying the request id (debug level; a 5xx answer at warn).
 */
import type { FastifyInstance } from 'fastify';
import { routeS3Request } from '../s3/router.js';
import type { NodeMetrics } from './node-metrics.js';

export interface RequestLogger {
  debug(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface S3RequestMetricsOptions {
  metrics: NodeMetrics;
  /** Paths served by other plugins (admin, RPC, health, metrics): not S3 requests. */
  reservedPrefixes: string[];
  virtualHostSuffixes?: string[];
  logger?: RequestLogger;
}

/** The API a request is for (a fixed set of names), or "Invalid" when the router refuses it. */
export function apiOf(method: string, rawUrl: string, headers: Record<string, string | string[] | undefined>, virtualHostSuffixes: string[] = []): string {
  const queryAt = rawUrl.indexOf('?');
  const rawPath = queryAt < 0 ? rawUrl : rawUrl.slice(0, queryAt);
  const query = new URLSearchParams(queryAt < 0 ? '' : rawUrl.slice(queryAt + 1));
  try {
    const host = typeof headers.host === 'string' ? headers.host : undefined;
    return routeS3Request({ method, rawPath, query, host, headers }, { virtualHostSuffixes }).kind;
  } catch {
    return 'Invalid';
  }
}

/** `/health` reserves `/health` and `/health/...` (not a bucket named `healthy`); `/svc/` reserves what is below it. */
export function isReserved(rawUrl: string, reservedPrefixes: string[]): boolean {
  const queryAt = rawUrl.indexOf('?');
  const rawPath = queryAt < 0 ? rawUrl : rawUrl.slice(0, queryAt);
  return reservedPrefixes.some((prefix) => (prefix.endsWith('/') ? rawPath.startsWith(prefix) : rawPath === prefix || rawPath.startsWith(`${prefix}/`)));
}

const internodePrefix = '/svc/rpc/v1/';
const internodeServices = new Set(['drive', 'lock', 'peer']);

/** The internode service a request is for (`/svc/rpc/v1/<service>/...`), if it is one. */
function internodeServiceOf(rawUrl: string): string | undefined {
  if (!rawUrl.startsWith(internodePrefix)) return undefined;
  const service = rawUrl.slice(internodePrefix.length).split(/[/?]/, 1)[0]!;
  return internodeServices.has(service) ? service : 'other';
}

export function installS3RequestMetrics(app: FastifyInstance, options: S3RequestMetricsOptions): void {
  app.addHook('onRequest', (request, reply, done) => {
    const rawUrl = request.raw.url ?? '/';
    if (isReserved(rawUrl, options.reservedPrefixes)) {
      const service = internodeServiceOf(rawUrl);
      if (service !== undefined) options.metrics.observeInternodeRequest(service);
      done();
      return;
    }
    const api = apiOf(request.method, rawUrl, request.headers, options.virtualHostSuffixes);
    const socket = request.raw.socket;
    const readBefore = socket.bytesRead;
    const writtenBefore = socket.bytesWritten;
    const startedAt = performance.now();
    const finish = options.metrics.s3RequestStarted(api);
    reply.raw.once('close', () => {
      const status = reply.raw.statusCode;
      // A small body arrives with the headers, before this hook: the declared length counts it.
      const declared = Number(request.headers['content-length'] ?? 0);
      finish(status, Math.max(Number.isFinite(declared) ? declared : 0, socket.bytesRead - readBefore, 0), Math.max(0, socket.bytesWritten - writtenBefore));
      const fields = { requestId: reply.getHeader('x-amz-request-id'), method: request.method, api, status, durationMs: Math.round(performance.now() - startedAt) };
      if (status >= 500) options.logger?.warn(fields, 'S3 request failed');
      else options.logger?.debug(fields, 'S3 request');
    });
    done();
  });
}
