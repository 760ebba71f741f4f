/**
 * Put/Get/DeleteBucketOwnershipControls: a bucket's S3 Object Ownership, kept in its record.
 * BucketOwnerEnforced disables ACLs (the default of new buckets); BucketOwnerPreferred and
 * ObjectWriter let ACLs count. Also the Object Ownership and ACL a CreateBucket asks for.
 */
import { SvcError } from '../../../errors/index.js';
import { grantsOthers, objectOwnerships, type Acl, type ObjectOwnership } from '../../../iam/index.js';
import { limits } from '../../../util/limits.js';
import { headerValue, readAll, type S3Context, type S3Request, type S3Response } from '../context.js';
import { aclFromHeaders, checkAclAccepted, ownerIdOf } from '../acl-request.js';
import { parseXmlBody, toXml } from '../xml.js';

function ownershipOf(value: unknown, where: string): ObjectOwnership {
  if (!objectOwnerships.includes(value as ObjectOwnership)) {
    throw new SvcError(where === 'x-amz-object-ownership' ? 'InvalidArgument' : 'MalformedXML', `${where} must be one of ${objectOwnerships.join(', ')}.`, where === 'x-amz-object-ownership' ? { errorFields: { ArgumentName: where, ArgumentValue: String(value) } } : {});
  }
  return value as ObjectOwnership;
}

/** `<OwnershipControls><Rule><ObjectOwnership>...</ObjectOwnership></Rule></OwnershipControls>`: exactly one rule. */
export function parseOwnershipControls(body: Uint8Array): ObjectOwnership {
  const controls = parseXmlBody(body, ['Rule']).OwnershipControls as Record<string, unknown> | undefined;
  const rules = (typeof controls === 'object' && controls !== null ? controls.Rule : undefined) as Record<string, unknown>[] | undefined;
  if (rules === undefined || rules.length !== 1) throw new SvcError('MalformedXML', 'OwnershipControls must hold exactly one Rule.');
  return ownershipOf(rules[0]?.ObjectOwnership, 'ObjectOwnership');
}

export async function putBucketOwnershipControls(context: S3Context, request: S3Request, bucket: string): Promise<S3Response> {
  const record = await context.objects.requireBucket(bucket);
  const ownership = parseOwnershipControls(await readAll(request.body, limits.maxXmlConfigBodyBytes));
  // ACLs cannot be disabled while the bucket's ACL still grants someone else access.
  if (ownership === 'BucketOwnerEnforced' && record.acl !== undefined && grantsOthers(record.acl, ownerIdOf(context, request))) {
    throw new SvcError('InvalidBucketAclWithObjectOwnership', 'The bucket\'s ACL grants access to others: set it to private before applying BucketOwnerEnforced.');
  }
  await context.objects.setBucketOwnership(bucket, ownership);
  return { status: 200, headers: {} };
}

export async function getBucketOwnershipControls(context: S3Context, _request: S3Request, bucket: string): Promise<S3Response> {
  const record = await context.objects.requireBucket(bucket);
  if (record.ownership === undefined) throw new SvcError('OwnershipControlsNotFoundError', undefined, { bucket });
  return { status: 200, headers: { 'content-type': 'application/xml' }, body: toXml('OwnershipControls', { Rule: { ObjectOwnership: record.ownership } }) };
}

export async function deleteBucketOwnershipControls(context: S3Context, _request: S3Request, bucket: string): Promise<S3Response> {
  await context.objects.requireBucket(bucket);
  await context.objects.setBucketOwnership(bucket, undefined);
  return { status: 204, headers: {} };
}

/**
 * The Object Ownership (`x-amz-object-ownership`, BucketOwnerEnforced when absent) and ACL a
 * CreateBucket asks for; each needs its own permission besides s3:CreateBucket.
 */
export async function creationOwnership(context: S3Context, request: S3Request, bucket: string): Promise<{ ownership: ObjectOwnership; acl?: Acl }> {
  const header = headerValue(request.headers, 'x-amz-object-ownership');
  const ownership = header === undefined ? 'BucketOwnerEnforced' : ownershipOf(header, 'x-amz-object-ownership');
  if (header !== undefined) await request.authorize?.('s3:PutBucketOwnershipControls', bucket);
  const owner = ownerIdOf(context, request);
  const acl = aclFromHeaders(request.headers, owner);
  if (acl === undefined) return { ownership };
  checkAclAccepted({ ownership }, acl, owner, true);
  await request.authorize?.('s3:PutBucketAcl', bucket);
  return grantsOthers(acl) || acl.grants.length !== 1 ? { ownership, acl } : { ownership };
}
