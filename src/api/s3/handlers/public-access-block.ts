/**
 * Put/Get/DeletePublicAccessBlock: a bucket's four public access settings, kept in its record.
 * BlockPublicPolicy refuses a public bucket policy (PutBucketPolicy answers AccessDenied) and
 * RestrictPublicBuckets makes a public policy grant nothing to anonymous callers; the two ACL
 * settings are kept and returned (no ACL here ever grants anyone but the owner, so public ACLs
 * are refused whatever they say).
 */
import { SvcError } from '../../../errors/index.js';
import { publicAccessBlockFields, type PublicAccessBlock } from '../../../object/index.js';
import { limits } from '../../../util/limits.js';
import { readAll, type S3Context, type S3Request, type S3Response } from '../context.js';
import { parseXmlBody, toXml } from '../xml.js';

const elementNames: Record<keyof PublicAccessBlock, string> = {
  blockPublicAcls: 'BlockPublicAcls',
  ignorePublicAcls: 'IgnorePublicAcls',
  blockPublicPolicy: 'BlockPublicPolicy',
  restrictPublicBuckets: 'RestrictPublicBuckets',
};

export function parsePublicAccessBlock(body: Uint8Array): PublicAccessBlock {
  const parsed = parseXmlBody(body, []);
  const configuration = parsed.PublicAccessBlockConfiguration;
  if (configuration === undefined) throw new SvcError('MalformedXML', 'The body must be a PublicAccessBlockConfiguration.');
  const element = configuration === '' ? {} : configuration;
  if (typeof element !== 'object' || element === null) throw new SvcError('MalformedXML', 'The body must be a PublicAccessBlockConfiguration.');
  const given = element as Record<string, unknown>;
  const known = new Set(Object.values(elementNames));
  const unknown = Object.keys(given).find((name) => !known.has(name));
  if (unknown !== undefined) throw new SvcError('MalformedXML', `A PublicAccessBlockConfiguration has no element ${unknown}.`);
  const block = {} as PublicAccessBlock;
  for (const field of publicAccessBlockFields) {
    const value = given[elementNames[field]];
    if (value !== undefined && value !== 'true' && value !== 'false') throw new SvcError('MalformedXML', `${elementNames[field]} must be true or false.`);
    block[field] = value === 'true';
  }
  return block;
}

export async function putPublicAccessBlock(context: S3Context, request: S3Request, bucket: string): Promise<S3Response> {
  await context.objects.requireBucket(bucket);
  const block = parsePublicAccessBlock(await readAll(request.body, limits.maxXmlConfigBodyBytes));
  await context.objects.setBucketPublicAccessBlock(bucket, block);
  return { status: 200, headers: {} };
}

export async function getPublicAccessBlock(context: S3Context, _request: S3Request, bucket: string): Promise<S3Response> {
  const record = await context.objects.requireBucket(bucket);
  const block = record.publicAccessBlock;
  if (block === undefined) throw new SvcError('NoSuchPublicAccessBlockConfiguration', undefined, { bucket });
  const body = toXml('PublicAccessBlockConfiguration', Object.fromEntries(publicAccessBlockFields.map((field) => [elementNames[field], block[field]])));
  return { status: 200, headers: { 'content-type': 'application/xml' }, body };
}

export async function deletePublicAccessBlock(context: S3Context, _request: S3Request, bucket: string): Promise<S3Response> {
  await context.objects.requireBucket(bucket);
  await context.objects.setBucketPublicAccessBlock(bucket, undefined);
  return { status: 204, headers: {} };
}
