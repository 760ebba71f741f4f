/**
 * `x-amz-expected-bucket-owner` (and `x-amz-source-expected-bucket-owner` for the source of a
 * copy): a request that names an owner other than the bucket's is refused with 403 AccessDenied
 * before anything is read or changed. A deployment is one account, so every bucket has the same
 * owner: the account id `ownerAccountId`.
 */
import { SvcError } from '../../errors/index.js';
import { headerValue } from './context.js';
import type { S3Endpoint } from './router.js';

/** The twelve-digit account id that owns every bucket of a deployment. */
export const ownerAccountId = '000000000000';

type Headers = Record<string, string | string[] | undefined>;

/** Throws AccessDenied when the request expects its bucket (or its copy source's) to have another owner. */
export function checkExpectedOwner(endpoint: S3Endpoint, headers: Headers): void {
  if (!('bucket' in endpoint) || endpoint.bucket === undefined) return;
  refuseOtherOwner(headerValue(headers, 'x-amz-expected-bucket-owner'), endpoint.bucket);
  if ('source' in endpoint) refuseOtherOwner(headerValue(headers, 'x-amz-source-expected-bucket-owner'), endpoint.source.bucket);
}

function refuseOtherOwner(expected: string | undefined, bucket: string): void {
  if (expected === undefined || expected.trim() === ownerAccountId) return;
  throw new SvcError('AccessDenied', `The bucket '${bucket}' is not owned by the account named in the expected bucket owner header.`, { bucket });
}
