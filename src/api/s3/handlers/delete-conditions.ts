/**
 * Conditional deletes: `If-Match` (an ETag or `*`) on DeleteObject and the `ETag` element of a
 * DeleteObjects entry hold only when the object's current version exists and (for an ETag) has
 * that ETag: no object is 404 NoSuchKey, another ETag 412 PreconditionFailed.
 * `x-amz-if-match-last-modified-time` and `x-amz-if-match-size` (elements `LastModifiedTime` and
 * `Size`) hold when the current version has that modification time (to the second) and size, or
 * when there is no object. All are checked under the object's write lock, before anything changes.
 */
import { SvcError } from '../../../errors/index.js';
import type { ObjectInfo, WritePrecondition } from '../../../object/index.js';
import { headerValue } from '../context.js';

export interface DeleteConditions {
  ifMatch?: string;
  lastModifiedTime?: string;
  sizeBytes?: string;
}

/** The conditions of a DeleteObject request, from its headers. */
export function deleteConditionsOf(headers: Record<string, string | string[] | undefined>): DeleteConditions {
  const ifMatch = headerValue(headers, 'if-match');
  const lastModifiedTime = headerValue(headers, 'x-amz-if-match-last-modified-time');
  const sizeBytes = headerValue(headers, 'x-amz-if-match-size');
  return { ...(ifMatch !== undefined ? { ifMatch } : {}), ...(lastModifiedTime !== undefined ? { lastModifiedTime } : {}), ...(sizeBytes !== undefined ? { sizeBytes } : {}) };
}

/** The precondition the conditions make (undefined when there are none); malformed values are 400 InvalidArgument now. */
export function deletePrecondition(conditions: DeleteConditions): WritePrecondition | undefined {
  const { ifMatch } = conditions;
  const timeMs = conditions.lastModifiedTime === undefined ? undefined : Date.parse(conditions.lastModifiedTime);
  if (timeMs !== undefined && Number.isNaN(timeMs)) throw new SvcError('InvalidArgument', `The last modified time '${conditions.lastModifiedTime}' is not a valid date.`);
  if (conditions.sizeBytes !== undefined && !/^\d{1,16}$/.test(conditions.sizeBytes)) throw new SvcError('InvalidArgument', `The size '${conditions.sizeBytes}' is not a whole number of bytes.`);
  const size = conditions.sizeBytes === undefined ? undefined : Number(conditions.sizeBytes);
  if (ifMatch === undefined && timeMs === undefined && size === undefined) return undefined;
  return (current: ObjectInfo | undefined) => {
    if (ifMatch !== undefined) {
      if (!current) throw new SvcError('NoSuchKey', 'No object exists under this key to match If-Match.');
      if (!etagMatches(ifMatch, current.etag)) throw new SvcError('PreconditionFailed', 'The object\'s ETag does not match If-Match.', { condition: 'If-Match' });
    }
    if (!current) return;
    if (timeMs !== undefined && Math.floor(current.modTimeMs / 1000) !== Math.floor(timeMs / 1000)) throw new SvcError('PreconditionFailed', 'The object\'s last modified time does not match.', { condition: 'x-amz-if-match-last-modified-time' });
    if (size !== undefined && current.sizeBytes !== size) throw new SvcError('PreconditionFailed', 'The object\'s size does not match.', { condition: 'x-amz-if-match-size' });
  };
}

function etagMatches(list: string, etag: string): boolean {
  return list.split(',').map((item) => item.trim().replace(/^W\//, '').replace(/"/g, '')).some((item) => item === '*' || item === etag);
}
