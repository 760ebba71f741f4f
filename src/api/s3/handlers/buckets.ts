/** Bucket operations. */
import { SvcError, isSvcError } from '../../../errors/index.js';
import { limits } from '../../../util/limits.js';
import { isValidBucketName } from '../router.js';
import { parseXmlBody, toXml, xmlLimits } from '../xml.js';
import { headerValue, readAll, type S3Context, type S3Request, type S3Response } from '../context.js';
import { creationOwnership } from './ownership-controls.js';

const ok = (headers: Record<string, string> = {}): S3Response => ({ status: 200, headers });
const xml = (root: string, content: Record<string, unknown>): S3Response => ({ status: 200, headers: { 'content-type': 'application/xml' }, body: toXml(root, content) });
const iso = (ms: number): string => new Date(ms).toISOString();

export async function listBuckets(context: S3Context, request: S3Request): Promise<S3Response> {
  const page = bucketPage(request.query, context.region);
  const all = (await context.objects.listBuckets()).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const matching = all.filter((bucket) => bucket.name.startsWith(page.prefix) && (page.after === undefined || bucket.name > page.after) && page.regionMatches);
  const shown = matching.slice(0, page.maxBuckets);
  const more = matching.length > shown.length;
  return xml('ListAllMyBucketsResult', {
    Owner: { ID: request.auth.accessKeyId, DisplayName: request.auth.accessKeyId },
    Buckets: { Bucket: shown.map((bucket) => ({ Name: bucket.name, CreationDate: iso(bucket.createdMs), BucketRegion: context.region })) },
    ...(more ? { ContinuationToken: Buffer.from(shown.at(-1)!.name).toString('base64url') } : {}),
    ...(request.query.has('prefix') ? { Prefix: page.prefix } : {}),
  });
}

/**
 * ListBuckets' paging: `max-buckets` (1 to 10,000; every bucket when absent), an opaque
 * `continuation-token` (the last name of the previous page), `prefix` and `bucket-region`.
 */
function bucketPage(query: URLSearchParams, region: string): { maxBuckets: number; after?: string; prefix: string; regionMatches: boolean } {
  const maxText = query.get('max-buckets');
  if (maxText !== null && (!/^\d{1,5}$/.test(maxText) || Number(maxText) < 1 || Number(maxText) > limits.maxListBuckets)) {
    throw new SvcError('InvalidArgument', `max-buckets must be an integer from 1 to ${limits.maxListBuckets}.`, { argumentName: 'max-buckets', argumentValue: maxText });
  }
  const token = query.get('continuation-token');
  let after: string | undefined;
  if (token !== null) {
    after = Buffer.from(token, 'base64url').toString('utf8');
    if (token === '' || Buffer.from(after).toString('base64url') !== token || !isValidBucketName(after)) throw new SvcError('InvalidArgument', 'The continuation token provided is incorrect.', { argumentName: 'continuation-token' });
  }
  const bucketRegion = query.get('bucket-region');
  return {
    maxBuckets: maxText === null ? Number.MAX_SAFE_INTEGER : Number(maxText),
    ...(after !== undefined ? { after } : {}),
    prefix: query.get('prefix') ?? '',
    regionMatches: bucketRegion === null || bucketRegion === region,
  };
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
  try {
    await context.objects.makeBucket(bucket, { objectLock, ...(await creationOwnership(context, request, bucket)) });
  } catch (error) {
    // AWS's legacy rule: re-creating a bucket one owns answers 200 in us-east-1 (409 elsewhere).
    if (!isSvcError(error, 'BucketAlreadyOwnedByYou') || context.region !== 'us-east-1') throw error;
  }
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
