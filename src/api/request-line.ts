/** The parts of a request every API plugin needs first: a request id, and the path and query exactly as on the wire. */
import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

export function requestLine(request: FastifyRequest): { requestId: string; rawPath: string; rawQuery: string } {
  const rawUrl = request.raw.url ?? '/';
  const queryAt = rawUrl.indexOf('?');
  return {
    requestId: randomBytes(8).toString('hex').toUpperCase(),
    rawPath: queryAt < 0 ? rawUrl : rawUrl.slice(0, queryAt),
    rawQuery: queryAt < 0 ? '' : rawUrl.slice(queryAt + 1),
  };
}
