/**
 * Answers a listener gives before any route sees the request: the HTTP parser gave up on the
 * connection (a header or whole-request timeout, headers too large, not HTTP), or fastify could
 * not route the request line (a path that does not decode). Each listener renders them in its own
 * API's error shape (S3 XML, the admin and console JSON), never fastify's default.
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { SvcError } from '../errors/index.js';
import { nextRequestId } from './request-line.js';

/** An error as one API writes it: its content type and body. */
export type ErrorRenderer = (error: SvcError, requestId: string) => { contentType: string; body: string };

type ClientError = Error & { code?: string };

/** What the parser's complaint means to the client. */
export function clientErrorOf(error: ClientError): SvcError {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new SvcError('RequestTimeout');
  return new SvcError('InvalidRequest', error.code === 'HPE_HEADER_OVERFLOW' ? 'The request headers are too large.' : 'The request is not valid HTTP/1.1.');
}

/**
 * The listener's `clientErrorHandler`: the answer in the API's shape (when nothing has been sent
 * on the connection yet), then the connection closes.
 */
export function clientErrorHandler(render: ErrorRenderer): (error: ClientError, socket: Duplex) => void {
  return (error, socket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const message = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (socket.writable && !message?.headersSent) {
      const known = clientErrorOf(error);
      const { contentType, body } = render(known, nextRequestId());
      socket.write(`HTTP/1.1 ${known.httpStatus} ${STATUS_CODES[known.httpStatus]}\r\nContent-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    }
    socket.destroy();
  };
}

/**
 * Fastify's `frameworkErrors` as catalogue errors: a path whose percent-escapes are not UTF-8
 * (fastify cannot decode it to route it), or one longer than the router reads.
 */
export function frameworkErrorOf(error: ClientError): SvcError {
  if (error.code === 'FST_ERR_BAD_URL') return new SvcError('InvalidURI', 'The request path could not be decoded: a percent-escape in it is not UTF-8.');
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return new SvcError('InvalidURI', 'The request path is longer than this server reads.');
  return new SvcError('InternalError', undefined, {}, { cause: error });
}
