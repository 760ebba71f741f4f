/** Put/GetBucketNotificationConfiguration: the bucket's notification rules, kept in its record (events: src/ops/events). */
import { limits } from '../../../util/limits.js';
import { readAll, type S3Context, type S3Request, type S3Response } from '../context.js';
import { notificationConfigurationXml, parseNotificationConfiguration } from '../notification-xml.js';

/** The whole configuration is replaced (an empty one removes every rule), or (any error) nothing changes. */
export async function putBucketNotification(context: S3Context, request: S3Request, bucket: string): Promise<S3Response> {
  await context.objects.requireBucket(bucket);
  const rules = parseNotificationConfiguration(await readAll(request.body, limits.maxXmlConfigBodyBytes), new Set(context.events?.targetArns() ?? []));
  await context.objects.setBucketNotification(bucket, rules.length === 0 ? undefined : rules);
  return { status: 200, headers: {} };
}

/** A bucket without rules answers an empty configuration, as S3 does. */
export async function getBucketNotification(context: S3Context, _request: S3Request, bucket: string): Promise<S3Response> {
  const record = await context.objects.requireBucket(bucket);
  return { status: 200, headers: { 'content-type': 'application/xml' }, body: notificationConfigurationXml(record.notification ?? []) };
}
