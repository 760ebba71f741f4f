/** Put/Get/DeleteBucketLifecycleConfiguration: the bucket's expiry rules, applied by the lifecycle scanner (src/ops/lifecycle.ts). */
import { SvcError } from '../../../errors/index.js';
import { limits } from '../../../util/limits.js';
import { readAll, type S3Context, type S3Request, type S3Response } from '../context.js';
import { lifecycleConfigurationXml, parseLifecycleConfiguration } from '../lifecycle-xml.js';
import { tiersNamed } from '../../../ops/lifecycle-rules.js';

/** The whole configuration is replaced, or (any error) nothing changes. */
export async function putBucketLifecycle(context: S3Context, request: S3Request, bucket: string): Promise<S3Response> {
  await context.objects.requireBucket(bucket);
  const rules = parseLifecycleConfiguration(await readAll(request.body, limits.maxLifecycleBodyBytes));
  for (const tier of tiersNamed(rules)) {
    if (!(await context.tiers?.()?.has(tier))) throw new SvcError('InvalidStorageClass', `The storage class '${tier}' is not a tier of this server (rc admin tier add makes one).`, { storageClass: tier });
  }
  await context.objects.setBucketLifecycle(bucket, rules);
  return { status: 200, headers: {} };
}

export async function getBucketLifecycle(context: S3Context, _request: S3Request, bucket: string): Promise<S3Response> {
  const record = await context.objects.requireBucket(bucket);
  if (!record.lifecycle) throw new SvcError('NoSuchLifecycleConfiguration', undefined, { bucket });
  return { status: 200, headers: { 'content-type': 'application/xml' }, body: lifecycleConfigurationXml(record.lifecycle) };
}

export async function deleteBucketLifecycle(context: S3Context, _request: S3Request, bucket: string): Promise<S3Response> {
  await context.objects.requireBucket(bucket);
  await context.objects.setBucketLifecycle(bucket, undefined);
  return { status: 204, headers: {} };
}
