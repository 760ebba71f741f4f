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
