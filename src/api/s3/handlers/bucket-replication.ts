/** Put/Get/DeleteBucketReplication: the bucket's replication rules, kept in its record (the replicator: src/ops/replication). */
import { SvcError } from '../../../errors/index.js';
import { limits } from '../../../util/limits.js';
import { readAll, type S3Context, type S3Request, type S3Response } from '../context.js';
import { parseReplicationConfiguration, replicationConfigurationXml } from '../replication-xml.js';

/** The whole configuration is replaced, or (any error) nothing changes. Versioning must be enabled on the bucket. */
export async function putBucketReplication(context: S3Context, request: S3Request, bucket: string): Promise<S3Response> {
  const record = await context.objects.requireBucket(bucket);
  const body = await readAll(request.body, limits.maxXmlConfigBodyBytes);
  if (record.versioning !== 'enabled') throw new SvcError('InvalidRequest', 'Versioning must be \'Enabled\' on the bucket to apply a replication configuration.', { bucket });
  const known = (await context.replication?.destinations(bucket)) ?? new Set<string>();
  const configuration = parseReplicationConfiguration(body, (arn) => known.has(arn));
  await context.objects.setBucketReplication(bucket, configuration);
  await context.replication?.configured(bucket);
  return { status: 200, headers: {} };
}

export async function getBucketReplication(context: S3Context, _request: S3Request, bucket: string): Promise<S3Response> {
  const record = await context.objects.requireBucket(bucket);
  if (!record.replication) throw new SvcError('ReplicationConfigurationNotFoundError', undefined, { bucket });
  return { status: 200, headers: { 'content-type': 'application/xml' }, body: replicationConfigurationXml(record.replication) };
}

/** Removing a configuration the bucket does not have succeeds, as S3 answers it. */
export async function deleteBucketReplication(context: S3Context, _request: S3Request, bucket: string): Promise<S3Response> {
  const record = await context.objects.requireBucket(bucket);
  if (record.replication) await context.objects.setBucketReplication(bucket, undefined);
  return { status: 204, headers: {} };
}
