/** Console API errors: the admin API's JSON shape, `{ Code, Message, Resource, RequestId, Details? }`. */
import { randomBytes } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { SvcError, isSvcError, type ErrorCode } from '../errors/index.js';
import { schemaRefusal } from '../api/admin/route-schema.js';

/** Fastify's own refusals (bad JSON, a body too large, a schema refusal) as catalogue errors. */
export function asSvcError(error: unknown, bodyErrorCode?: ErrorCode): SvcError {
  if (isSvcError(error)) return error;
  const refusal = schemaRefusal(error, bodyErrorCode);
  if (refusal) return refusal;
  const code = (error as { code?: string }).code;
  if (code === 'FST_ERR_CTP_INVALID_JSON_BODY' || code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || (error instanceof SyntaxError)) return new SvcError('InvalidArgument', 'the request body is not valid JSON');
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new SvcError('EntityTooLarge', 'console request bodies other than uploads are at most 1 MiB');
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new SvcError('InvalidRequest', 'unsupported content type');
  if (code === 'FST_ERR_VALIDATION') return validationError(error as ValidationFailure);
  return new SvcError('InternalError', undefined, {}, { cause: error });
}

export async function sendError(reply: FastifyReply, error: SvcError, resource: string): Promise<void> {
  const header = reply.getHeader('x-amz-request-id');
  const requestId = typeof header === 'string' ? header : randomBytes(8).toString('hex').toUpperCase();
  await reply.code(error.httpStatus).header('content-type', errorContentType).send(errorJson(error, resource, requestId));
}

export const errorContentType = 'application/json; charset=utf-8';

/** The body of a console error. */
export function errorJson(error: SvcError, resource: string, requestId: string): string {
  return JSON.stringify({ Code: error.code, Message: error.message, Resource: resource, RequestId: requestId, ...(Object.keys(error.details).length > 0 ? { Details: error.details } : {}) });
}

interface ValidationFailure {
  message: string;
  validation?: { instancePath?: string; params?: { missingProperty?: string } }[];
}

/** A request that does not fit its route's JSON schema: InvalidArgument naming the field ("body/enabled must be boolean"). */
function validationError(error: ValidationFailure): SvcError {
  const first = error.validation?.[0];
  const field = first?.params?.missingProperty ?? first?.instancePath?.split('/').filter((part) => part !== '').join('.') ?? '';
  return new SvcError('InvalidArgument', error.message, field === '' ? {} : { field });
}
