/** Bucket operations. */
import { SvcError } from '../../../errors/index.js';
import { isValidBucketName } from '../router.js';
import { parseXmlBody, toXml, xmlLimits } from '../xml.js';
import { headerValue, readAll, type S3Context, type S3Request, type S3Response } from '../context.js';
import { creationOwnership } from './ownership-controls.js';

const ok = (headers: Record<string, string> = {}): S3Response => ({ status: 200, headers });
const xml = (root: string, content: Record<string, unknown>): S3Response => ({ status: 200, headers: { 'content-type': 'application/xml' }, body: toXml(root, content) });
const iso = (ms: number): string => new Date(ms).toISOString();

export async function listBuckets(context: S3Context, request: S3Request): Promise<S3Response> {
  const buckets = await context.objects.listBuckets();
  return xml('ListAllMyBucketsResult', {
    Owner: { ID: request.auth.accessKeyId, DisplayName: request.auth.accessKeyId },
    Buckets: { Bucket: buckets.map((bucket) => ({ Name: bucket.name, CreationDate: iso(bucket.createdMs) })) },
  });
}

export async function createBucket(context: S3Context, request: S3Request, bucket: string): Promise<S3Response> {
  if (!isValidBucketName(bucket)) throw new SvcError('InvalidBucketName', undefined, { bucket });
  const body = await readAll(request.body, xmlLimits.maxXmlConfigBodyBytes);
  if (body.length > 0) {
    const parsed = parseXmlBody(body);
    const location = (parsed.CreateBucketConfiguration as Record<string, unknown> | undefined)?.LocationConstraint;
    if (location !== undefined && location !== '' && location !== context.region) {
      throw new SvcError('InvalidArgument', `LocationConstraint '${String(location)}' does not match this server's region '${context.region}'`);
    }
  }
  const objectLock = headerValue(request.headers, 'x-amz-bucket-object-lock-enabled')?.toLowerCase() === 'true';
  if (objectLock) {
    await request.authorize?.('s3:PutBucketObjectLockConfiguration', bucket);
    await request.authorize?.('s3:PutBucketVersioning', bucket);
  }
  await context.objects.makeBucket(bucket, { objectLock, ...(await creationOwnership(context, request, bucket)) });
  return ok({ location: `/${bucket}` });
}

export async function deleteBucket(context: S3Context, _request: S3Request, bucket: string): Promise<S3Response> {
  await context.objects.deleteBucket(bucket);
  return { status: 204, headers: {} };
}

export async function headBucket(context: S3Context, _request: S3Request, bucket: string): Promise<S3Response> {
  await context.objects.requireBucket(bucket);
  return ok({ 'x-amz-bucket-region': context.region });
}

export async function getBucketLocation(context: S3Context, _request: S3Request, bucket: string): Promise<S3Response> {
  await context.objects.requireBucket(bucket);
  return { status: 200, headers: { 'content-type': 'application/xml' }, body: toXml('LocationConstraint', { '#text': context.region === 'us-east-1' ? '' : context.region }) };
}

export async function getBucketVersioning(context: S3Context, _request: S3Request, bucket: string): Promise<S3Response> {
  const record = await context.objects.requireBucket(bucket);
  const status = record.versioning === 'enabled' ? { Status: 'Enabled' } : record.versioning === 'suspended' ? { Status: 'Suspended' } : {};
  return xml('VersioningConfiguration', status);
}

export async function putBucketVersioning(context: S3Context, request: S3Request, bucket: string): Promise<S3Response> {
  await context.objects.requireBucket(bucket);
  const parsed = parseXmlBody(await readAll(request.body, xmlLimits.maxXmlConfigBodyBytes));
  const status = (parsed.VersioningConfiguration as Record<string, unknown> | undefined)?.Status;
  if (status !== 'Enabled' && status !== 'Suspended') throw new SvcError('MalformedXML', 'VersioningConfiguration Status must be Enabled or Suspended');
  await context.objects.setBucketVersioning(bucket, status === 'Enabled' ? 'enabled' : 'suspended');
  return ok();
}
