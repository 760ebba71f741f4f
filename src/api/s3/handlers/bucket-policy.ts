/** Put/Get/DeleteBucketPolicy and GetBucketPolicyStatus: the bucket's JSON policy, judged by src/iam. */
import { SvcError } from '../../../errors/index.js';
import { limits } from '../../../util/limits.js';
import { isPublicAcl, isPublicPolicy, parsePolicy } from '../../../iam/index.js';
import { bucketAclOf, ownerIdOf } from '../acl-request.js';
import { readAll, type S3Context, type S3Request, type S3Response } from '../context.js';
import { toXml } from '../xml.js';

export async function putBucketPolicy(context: S3Context, request: S3Request, bucket: string): Promise<S3Response> {
  const record = await context.objects.requireBucket(bucket);
  const text = Buffer.from(await readAll(request.body, limits.maxPolicyBytes)).toString('utf8');
  const policy = parsePolicy(text, { bucket });
  if (record.publicAccessBlock?.blockPublicPolicy === true && isPublicPolicy(policy)) {
    throw new SvcError('AccessDenied', 'The bucket\'s public access block (BlockPublicPolicy) refuses a policy that makes the bucket public.', { bucket });
  }
  await context.objects.setBucketPolicy(bucket, text);
  return { status: 204, headers: {} };
}

export async function getBucketPolicy(context: S3Context, _request: S3Request, bucket: string): Promise<S3Response> {
  const record = await context.objects.requireBucket(bucket);
  if (record.policy === undefined) throw new SvcError('NoSuchBucketPolicy', undefined, { bucket });
  return { status: 200, headers: { 'content-type': 'application/json' }, body: record.policy };
}

export async function deleteBucketPolicy(context: S3Context, _request: S3Request, bucket: string): Promise<S3Response> {
  await context.objects.requireBucket(bucket);
  await context.objects.setBucketPolicy(bucket, undefined);
  return { status: 204, headers: {} };
}

/**
 * IsPublic when the bucket policy is public (src/iam/public-policy.ts) or, while ACLs count and
 * IgnorePublicAcls is off, the bucket's ACL grants AllUsers or AuthenticatedUsers anything.
 * A bucket with neither policy nor public ACL is answered IsPublic false.
 */
export async function getBucketPolicyStatus(context: S3Context, request: S3Request, bucket: string): Promise<S3Response> {
  const record = await context.objects.requireBucket(bucket);
  const publicPolicy = record.policy !== undefined && isPublicPolicy(parsePolicy(record.policy, { bucket }));
  const publicAcl = record.publicAccessBlock?.ignorePublicAcls !== true && isPublicAcl(bucketAclOf(record, ownerIdOf(context, request)));
  const isPublic = publicPolicy || publicAcl;
  return { status: 200, headers: { 'content-type': 'application/xml' }, body: toXml('PolicyStatus', { IsPublic: isPublic }) };
}
