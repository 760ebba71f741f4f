/**
 * RestoreObject (`POST /<bucket>/<key>?restore`): a copy of a transitioned version's data back on
 * the drives for `Days` days. The copy is made before the answer (202 Accepted; 200 OK when a
 * restored copy was there already and only its expiry moved), so HEAD then shows
 * `x-amz-restore: ongoing-request="false", expiry-date="..."`. The lifecycle scanner removes the
 * copy once it expires. A version that was never transitioned is ObjectAlreadyInActiveTierError
 * (403), as AWS answers for an object not in an archive class.
 */
import { SvcError } from '../../../errors/index.js';
import { dueAfterDays } from '../../../ops/lifecycle-rules.js';
import { limits } from '../../../util/limits.js';
import { readAll, type S3Context, type S3Request, type S3Response } from '../context.js';
import { parseXmlBody } from '../xml.js';

export async function restoreObject(context: S3Context, request: S3Request, bucket: string, key: string): Promise<S3Response> {
  const days = restoreDays(await readAll(request.body, limits.maxXmlListBodyBytes));
  const versionId = request.query.get('versionId') ?? undefined;
  const { restoredNow, info } = await context.objects.restoreObject(bucket, key, versionId, dueAfterDays(context.nowMs(), days));
  return { status: restoredNow ? 202 : 200, headers: info.versionId !== 'null' ? { 'x-amz-version-id': info.versionId } : {} };
}

/** `<RestoreRequest><Days>N</Days>...</RestoreRequest>`: Days (1 or more) is required; a SELECT restore is not supported. */
function restoreDays(body: Uint8Array): number {
  const parsed = parseXmlBody(body);
  const restore = parsed.RestoreRequest;
  if (typeof restore !== 'object' || restore === null || Array.isArray(restore)) throw new SvcError('MalformedXML', 'The body must be a RestoreRequest.');
  const request = restore as Record<string, unknown>;
  if (request.Type !== undefined || request.SelectParameters !== undefined || request.OutputLocation !== undefined) throw new SvcError('NotImplemented', 'A SELECT restore request is not supported.');
  if (request.Days === undefined) throw new SvcError('MalformedXML', 'A RestoreRequest needs Days.');
  const days = /^\d{1,9}$/.test(String(request.Days)) ? Number(request.Days) : NaN;
  if (!(days >= 1 && days <= limits.maxLifecycleDays)) throw new SvcError('InvalidArgument', 'Days must be a positive integer.', { errorFields: { ArgumentName: 'Days' } });
  return days;
}
