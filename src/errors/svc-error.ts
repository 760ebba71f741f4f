import { errorCatalogue, type ErrorCode } from './catalogue.js';

/** A typed, operating error: something that happens to a healthy program (a drive fails, a client sends bad input). */
export class SvcError extends Error {
  readonly code: ErrorCode;
  readonly httpStatus: number;
  /** Extra context for logs and error bodies (resource, drive endpoint, rule name...). */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message?: string, details: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message ?? errorCatalogue[code].message, options);
    this.name = 'SvcError';
    this.code = code;
    this.httpStatus = errorCatalogue[code].httpStatus;
    this.details = details;
  }
}

/**
 * Makes an error without capturing its stack. For failures that are answers, not bugs, and come
 * by the thousand: a file not found on each drive a new object's metadata is looked for on. A
 * stack cost more than the rest of the error (their captures were about 5 % of a busy node's
 * event-loop CPU), and that of a drive call, resumed from the event loop, says nothing its code
 * and details do not.
 */
export function withoutStack<T>(make: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

export function isSvcError(error: unknown, code?: ErrorCode): error is SvcError {
  return error instanceof SvcError && (code === undefined || error.code === code);
}

/**
 * An invariant: a broken one is a bug in this program, never an operating condition.
 * Shard counts, quorums and part numbers out of range assert (TIGER_STYLE).
 */
export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new AssertionError(message);
}

export class AssertionError extends Error {
  constructor(message: string) {
    super(`invariant violated: ${message}`);
    this.name = 'AssertionError';
  }
}
