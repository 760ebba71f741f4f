import { isSvcError } from '../../src/errors/index.js';

/** The SvcError code an action throws, 'ok' when it returns, or the text of any other error. */
export function codeOf(action: () => unknown): string {
  try {
    action();
    return 'ok';
  } catch (error) {
    return isSvcError(error) ? error.code : String(error);
  }
}

/** The error name and HTTP status an AWS SDK call fails with; `{}` when it succeeds. */
export function sdkErrorOf(promise: Promise<unknown>): Promise<{ name?: string; status?: number }> {
  return promise.then(
    () => ({}),
    (error: { name?: string; $metadata?: { httpStatusCode?: number } }) => ({ name: error.name, status: error.$metadata?.httpStatusCode }),
  );
}
