/** DeleteObjects (POST /<bucket>?delete): up to 1000 keys, quiet mode. */
import { removalEvent, type ObjectEvent } from '../../../ops/events/types.js';
import { createHash } from 'node:crypto';
import { SvcError, isSvcError } from '../../../errors/index.js';
import { limits } from '../../../util/limits.js';
import { headerValue, readAll, type S3Context, type S3Request, type S3Response } from '../context.js';
import { parseXmlBody, toXml, xmlLimits } from '../xml.js';
import { governanceBypass } from './object-lock.js';
import { deletePrecondition, type DeleteConditions } from './delete-conditions.js';

interface Target {
  key: string;
  versionId?: string;
  /** The entry's ETag, LastModifiedTime and Size elements. */
  conditions: DeleteConditions;
}

function targetsOf(parsed: Record<string, unknown>): { targets: Target[]; quiet: boolean } {
  const root = parsed.Delete as Record<string, unknown> | undefined;
  const objects = root?.Object as Record<string, unknown>[] | undefined;
  if (!root || !Array.isArray(objects) || objects.length === 0) throw new SvcError('MalformedXML', 'Delete must list at least one Object');
  if (objects.length > limits.maxDeleteObjects) throw new SvcError('MalformedXML', `Delete lists more than ${limits.maxDeleteObjects} objects`);
  const targets = objects.map((object) => {
    if (typeof object?.Key !== 'string' || object.Key === '') throw new SvcError('MalformedXML', 'every Object needs a Key');
    const conditions: DeleteConditions = {
      ...(typeof object.ETag === 'string' ? { ifMatch: object.ETag } : {}),
      ...(typeof object.LastModifiedTime === 'string' ? { lastModifiedTime: object.LastModifiedTime } : {}),
      ...(typeof object.Size === 'string' ? { sizeBytes: object.Size } : {}),
    };
    return { key: object.Key, ...(typeof object.VersionId === 'string' ? { versionId: object.VersionId } : {}), conditions };
  });
  return { targets, quiet: String(root.Quiet ?? 'false').toLowerCase() === 'true' };
}

export async function deleteObjects(context: S3Context, request: S3Request, bucket: string): Promise<S3Response> {
  await context.objects.requireBucket(bucket);
  const body = await readAll(request.body, xmlLimits.maxXmlBodyBytes);
  const md5 = headerValue(request.headers, 'content-md5');
  if (md5 !== undefined && createHash('md5').update(body).digest('base64') !== md5) throw new SvcError('BadDigest');
  const { targets, quiet } = targetsOf(parseXmlBody(body, ['Object']));
  const deleted: Record<string, unknown>[] = [];
  const errors: Record<string, unknown>[] = [];
  const events: ObjectEvent[] = [];
  for (const target of targets) {
    try {
      await request.authorize?.(target.versionId === undefined ? 's3:DeleteObject' : 's3:DeleteObjectVersion', bucket, target.key);
      if (target.conditions.ifMatch !== undefined) await request.authorize?.('s3:GetObject', bucket, target.key);
      const precondition = deletePrecondition(target.conditions);
      const bypassGovernance = target.versionId !== undefined && (await governanceBypass(request, bucket, target.key));
      const result = await context.objects.deleteObject(bucket, target.key, target.versionId, { bypassGovernance, ...(precondition ? { precondition } : {}) });
      events.push(removalEvent(bucket, target.key, result, target.versionId !== undefined));
      if (quiet) continue;
      deleted.push({
        Key: target.key,
        ...(target.versionId !== undefined ? { VersionId: target.versionId } : {}),
        ...(result.deleteMarker ? { DeleteMarker: true, ...(target.versionId === undefined ? { DeleteMarkerVersionId: result.versionId } : {}) } : {}),
      });
    } catch (error) {
      const code = isSvcError(error) ? error.code : 'InternalError';
      errors.push({ Key: target.key, ...(target.versionId !== undefined ? { VersionId: target.versionId } : {}), Code: code, Message: isSvcError(error) ? error.message : 'internal error' });
    }
  }
  return { status: 200, headers: { 'content-type': 'application/xml' }, body: toXml('DeleteResult', { Deleted: deleted, Error: errors }), events };
}
