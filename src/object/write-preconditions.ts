/**
 * Conditional writes: a condition on the object's current version (If-None-Match: *, If-Match),
 * checked under the object's write lock (cluster-wide through the lock clients) just before a
 * new version is published, so two writers cannot both see "no object" and both commit.
 */
import { isSvcError, SvcError } from '../errors/index.js';
import { headObject } from './get-object.js';
import { objectResource } from './locks.js';
import type { SetConfig } from './set-context.js';
import type { ObjectInfo } from './types.js';

/** Throws (PreconditionFailed, NoSuchKey...) when the write must not happen. */
export type WritePrecondition = (current: ObjectInfo | undefined) => void;

/** Checks a precondition against the current version (none, or a delete marker: undefined). */
export async function checkWritePrecondition(config: SetConfig, bucket: string, key: string, precondition: WritePrecondition | undefined): Promise<void> {
  if (!precondition) return;
  let current: ObjectInfo | undefined;
  try {
    current = await headObject(config, bucket, key);
  } catch (error) {
    if (!isSvcError(error, 'NoSuchKey')) throw error;
  }
  precondition(current);
}

/**
 * The object's write lock. A conditional write that cannot have it in time (another write to the
 * key holds it) answers ConditionalRequestConflict: its condition could not be checked.
 */
export async function acquireWriteLock(config: SetConfig, bucket: string, key: string, conditional: boolean): Promise<() => void> {
  try {
    return await config.locker.acquire(objectResource(bucket, key), 'write');
  } catch (error) {
    if (conditional && isSvcError(error, 'SlowDown')) throw new SvcError('ConditionalRequestConflict', undefined, { bucket, key });
    throw error;
  }
}
