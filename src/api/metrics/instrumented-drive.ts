/**
 * Times a drive's operations without changing them: a proxy that forwards everything (so a
 * fault-injecting drive underneath keeps its controls) and, for the operations that answer with a
 * promise, observes how long they took and whether they failed. Streams (readStream, walk) and
 * the handles openReader/openWriter return are forwarded untimed; opening them is timed.
 */
import type { Drive } from '../../drive/index.js';
import { isSvcError } from '../../errors/index.js';

export const timedDriveOperations = [
  'readFile', 'readRange', 'openReader', 'writeFile', 'writeFileAtomic', 'appendFile', 'openWriter',
  'makeDir', 'rename', 'deleteFile', 'deleteDir', 'deleteRecursive', 'listDir', 'stat', 'diskInfo',
] as const;

export interface DriveOperationObserver {
  /** `outcome`: ok; answer (a normal negative answer such as a missing file); error; timeout. */
  observe(operation: string, durationSeconds: number, outcome: 'ok' | 'answer' | 'error' | 'timeout'): void;
}

/** Codes that answer a question (the file is not there) rather than report a failing drive. */
const answerCodes = new Set(['FileNotFound', 'DirectoryNotEmpty', 'NotADirectory', 'IsADirectory', 'PathEscapesDrive']);

function outcomeOf(error: unknown): 'answer' | 'error' | 'timeout' {
  if (isSvcError(error) && answerCodes.has(error.code)) return 'answer';
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 4; cause = cause.cause, depth += 1) {
    if (/timed out|timeout/i.test(cause.message)) return 'timeout';
  }
  return 'error';
}

export function instrumentDrive<T extends Drive>(drive: T, observer: DriveOperationObserver): T {
  const timed = new Set<PropertyKey>(timedDriveOperations);
  const wrappers = new Map<PropertyKey, unknown>();
  return new Proxy(drive, {
    get(target, property) {
      const value = Reflect.get(target, property) as unknown;
      if (!timed.has(property) || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
      let wrapper = wrappers.get(property);
      if (!wrapper) {
        wrapper = async (...args: unknown[]) => {
          const startedAt = performance.now();
          try {
            const result = await (value as (...callArgs: unknown[]) => Promise<unknown>).apply(target, args);
            observer.observe(String(property), (performance.now() - startedAt) / 1000, 'ok');
            return result;
          } catch (error) {
            observer.observe(String(property), (performance.now() - startedAt) / 1000, outcomeOf(error));
            throw error;
          }
        };
        wrappers.set(property, wrapper);
      }
      return wrapper;
    },
  });
}
