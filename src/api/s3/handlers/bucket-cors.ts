/** Put/Get/DeleteBucketCors and the preflight (OPTIONS) a browser sends before a cross-origin request. */
import { SvcError } from '../../../errors/index.js';
import { limits } from '../../../util/limits.js';
import { headerValue, readAll, type S3Context, type S3Request, type S3Response } from '../context.js';
import { corsConfigurationXml, matchingRule, parseCorsConfiguration, preflightHeaders } from '../cors.js';

export async function putBucketCors(context: S3Context, request: S3Request, bucket: string): Promise<S3Response> {
  await context.objects.requireBucket(bucket);
  const rules = parseCorsConfiguration(await readAll(request.body, limits.maxXmlConfigBodyBytes));
  await context.objects.setBucketCors(bucket, rules);
  return { status: 200, headers: {} };
}

export async function getBucketCors(context: S3Context, _request: S3Request, bucket: string): Promise<S3Response> {
  const record = await context.objects.requireBucket(bucket);
  if (!record.cors) throw new SvcError('NoSuchCORSConfiguration', undefined, { bucket });
  return { status: 200, headers: { 'content-type': 'application/xml' }, body: corsConfigurationXml(record.cors) };
}

export async function deleteBucketCors(context: S3Context, _request: S3Request, bucket: string): Promise<S3Response> {
  await context.objects.requireBucket(bucket);
  await context.objects.setBucketCors(bucket, undefined);
  return { status: 204, headers: {} };
}

/**
 * A preflight: unsigned, answered 200 with the allow headers when a rule of the bucket allows
 * the origin, the method and every requested header; otherwise 403 CORSResponse.
 */
export async function preflight(context: S3Context, headers: Record<string, string | string[] | undefined>, bucket: string | undefined): Promise<S3Response> {
  const origin = headerValue(headers, 'origin');
  const method = headerValue(headers, 'access-control-request-method');
  if (origin === undefined || method === undefined) throw new SvcError('InvalidRequest', 'A CORS preflight needs the Origin and Access-Control-Request-Method headers.');
  const record = bucket === undefined ? undefined : await context.objects.bucketRecord(bucket);
  const requested = (headerValue(headers, 'access-control-request-headers') ?? '').split(',').map((name) => name.trim().toLowerCase()).filter((name) => name !== '');
  const ask = { origin, method, headers: requested };
  const rule = matchingRule(record?.cors, ask);
  if (!rule) throw new SvcError('CORSResponse', undefined, { bucket, origin, method });
  return { status: 200, headers: preflightHeaders(rule, ask) };
}
