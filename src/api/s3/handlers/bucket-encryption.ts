/**
 * Put/Get/DeleteBucketEncryption: a bucket's default encryption, applied to every new object
 * that asks for none (docs/encryption.md). SSE-S3 (`AES256`) or SSE-KMS (`aws:kms`, with a key id
 * the KMS must know); kept in the bucket record.
 */
import { SvcError } from '../../../errors/index.js';
import type { BucketEncryption } from '../../../object/index.js';
import { limits } from '../../../util/limits.js';
import { readAll, type S3Context, type S3Request, type S3Response } from '../context.js';
import { parseXmlBody, toXml } from '../xml.js';
import { kmsKeyIdOf } from '../sse-headers.js';
import { requireKms } from '../../../ops/sse/object-keys.js';

const isElement = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function onlyNames(element: Record<string, unknown>, names: string[], where: string): void {
  const unknown = Object.keys(element).find((name) => !names.includes(name));
  if (unknown !== undefined) throw new SvcError('MalformedXML', `${where} has no element ${unknown}.`);
}

/** A ServerSideEncryptionConfiguration with exactly one rule, as AWS accepts it. */
export function parseBucketEncryption(body: Uint8Array): BucketEncryption {
  const configuration = parseXmlBody(body, ['Rule']).ServerSideEncryptionConfiguration;
  if (!isElement(configuration)) throw new SvcError('MalformedXML', 'The body must be a ServerSideEncryptionConfiguration.');
  onlyNames(configuration, ['Rule'], 'ServerSideEncryptionConfiguration');
  const rules = configuration.Rule;
  if (!Array.isArray(rules) || rules.length !== 1 || !isElement(rules[0])) throw new SvcError('MalformedXML', 'A ServerSideEncryptionConfiguration holds exactly one Rule.');
  const rule = rules[0];
  onlyNames(rule, ['ApplyServerSideEncryptionByDefault', 'BucketKeyEnabled'], 'Rule');
  const apply = rule.ApplyServerSideEncryptionByDefault;
  if (!isElement(apply)) throw new SvcError('MalformedXML', 'A Rule needs ApplyServerSideEncryptionByDefault.');
  onlyNames(apply, ['SSEAlgorithm', 'KMSMasterKeyID'], 'ApplyServerSideEncryptionByDefault');
  const algorithm = apply.SSEAlgorithm;
  if (algorithm !== 'AES256' && algorithm !== 'aws:kms') throw new SvcError('MalformedXML', 'SSEAlgorithm must be AES256 or aws:kms.');
  const keyId = apply.KMSMasterKeyID;
  if (keyId !== undefined && (typeof keyId !== 'string' || algorithm !== 'aws:kms')) throw new SvcError('InvalidArgument', 'KMSMasterKeyID is only valid with SSEAlgorithm aws:kms.');
  const bucketKey = rule.BucketKeyEnabled;
  if (bucketKey !== undefined && bucketKey !== 'true' && bucketKey !== 'false') throw new SvcError('MalformedXML', 'BucketKeyEnabled must be true or false.');
  return { algorithm, ...(keyId !== undefined ? { kmsKeyId: kmsKeyIdOf(keyId) } : {}), bucketKeyEnabled: bucketKey === 'true' };
}

export async function putBucketEncryption(context: S3Context, request: S3Request, bucket: string): Promise<S3Response> {
  await context.objects.requireBucket(bucket);
  const encryption = parseBucketEncryption(await readAll(request.body, limits.maxXmlConfigBodyBytes));
  // A default no write could use is refused now rather than on every PUT.
  const kms = requireKms(context.encryption?.kms());
  if (encryption.kmsKeyId !== undefined) await kms.keyStatus(encryption.kmsKeyId);
  await context.objects.setBucketEncryption(bucket, encryption);
  return { status: 200, headers: {} };
}

export async function getBucketEncryption(context: S3Context, _request: S3Request, bucket: string): Promise<S3Response> {
  const record = await context.objects.requireBucket(bucket);
  const encryption = record.encryption;
  if (!encryption) throw new SvcError('ServerSideEncryptionConfigurationNotFoundError', undefined, { bucket });
  const body = toXml('ServerSideEncryptionConfiguration', {
    Rule: {
      ApplyServerSideEncryptionByDefault: { SSEAlgorithm: encryption.algorithm, ...(encryption.kmsKeyId !== undefined ? { KMSMasterKeyID: encryption.kmsKeyId } : {}) },
      BucketKeyEnabled: encryption.bucketKeyEnabled,
    },
  });
  return { status: 200, headers: { 'content-type': 'application/xml' }, body };
}

export async function deleteBucketEncryption(context: S3Context, _request: S3Request, bucket: string): Promise<S3Response> {
  await context.objects.requireBucket(bucket);
  await context.objects.setBucketEncryption(bucket, undefined);
  return { status: 204, headers: {} };
}
