/** The parts of a request every API plugin needs first: a request id, and the path and query exactly as on the wire. */
import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

/**
 * Request ids: a random prefix chosen once per process (so nodes and restarts differ) and a
 * counter, 16 hex digits in all. Unique without asking the system for randomness per request.
 */
const requestIdPrefix = randomBytes(4).toString('hex').toUpperCase();
let requestCounter = 0;

export function nextRequestId(): string {
  requestCounter = (requestCounter + 1) % 0x1_0000_0000;
  return requestIdPrefix + requestCounter.toString(16).toUpperCase().padStart(8, '0');
}

export function requestLine(request: FastifyRequest): { requestId: string; rawPath: string; rawQuery: string } {
  const rawUrl = request.raw.url ?? '/';
  const queryAt = rawUrl.indexOf('?');
  return {
    requestId: nextRequestId(),
    rawPath: queryAt < 0 ? rawUrl : rawUrl.slice(0, queryAt),
    rawQuery: queryAt < 0 ? '' : rawUrl.slice(queryAt + 1),
  };
}
