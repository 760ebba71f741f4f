/**
 * POST Object: a browser form upload signed with a SigV4 POST policy (or SigV2's, where accepted). The policy (base64 JSON
 * with an expiration and conditions) is checked against the form's fields: every condition must
 * hold, and every field must be named by a condition. The file then streams into a PUT; a file
 * outside content-length-range is refused before anything is committed. A `tagging` field holds
 * a `<Tagging><TagSet>` document, checked as PutObjectTagging checks its body and stored with the
 * object.
 */
import { versionEvent } from '../../../ops/events/types.js';
import { SvcError } from '../../../errors/index.js';
import type { CredentialStore } from '../auth/sigv4.js';
import { verifyPostPolicy } from '../auth/sigv4.js';
import { verifyPostPolicyV2 } from '../auth/sigv2.js';
import { headerValue, type S3Context, type S3Response } from '../context.js';
import { boundaryOf, readForm, type FormUpload } from '../form-body.js';
import { withRequestedAcl } from '../acl-request.js';
import { toXml } from '../xml.js';
import { bucketDefaultEncryption, metadataOf, storageClassOf, storeAs } from './objects.js';
import { encodeTags, tagSetFromXml, tagsMetadataKey } from './tagging.js';
import { writeEncryptionOf } from '../sse-headers.js';
import { encryptionHeaders } from '../../../ops/sse/encrypted-objects.js';
import { storeObject } from '../../../ops/compression/compressed-objects.js';
import type { SseRequest } from '../../../ops/sse/object-keys.js';

/** Fields a policy need not name: the signature itself (V4's, or V2's key and signature) and what only carries the upload. */
const exemptFields = new Set(['policy', 'x-amz-signature', 'awsaccesskeyid', 'signature', 'file']);

interface LengthRange {
  min: number;
  max: number;
}

/**
 * Form fields the caller's policies judge as they would the headers of a PUT: those that ask for
 * encryption, and the tags (as `x-amz-tagging`, for `s3:RequestObjectTag/<key>` and
 * `s3:RequestObjectTagKeys`).
 */
export const isFormHeaderField = (name: string): boolean => name.startsWith('x-amz-server-side-encryption') || name === 'x-amz-tagging';

export async function postObject(
  context: S3Context,
  credentials: CredentialStore,
  headers: Record<string, string | string[] | undefined>,
  body: AsyncIterable<Uint8Array>,
  bucket: string,
  mayPut: (accessKeyId: string, sessionToken: string | undefined, key: string, formHeaders: Record<string, string>) => Promise<void>,
  options: { signatureV2: boolean; secureTransport?: boolean } = { signatureV2: false },
): Promise<S3Response> {
  await context.objects.requireBucket(bucket);
  const form = await readForm(body, boundaryOf(headerValue(headers, 'content-type')));
  const fields = form.fields;
  const policyText = fields.get('policy');
  if (policyText === undefined) throw new SvcError('InvalidArgument', 'The form has no policy field: anonymous form uploads are not accepted.');
  const v2AccessKey = fields.get('awsaccesskeyid');
  const { accessKeyId, sessionToken } =
    options.signatureV2 && v2AccessKey !== undefined && !fields.has('x-amz-algorithm')
      ? verifyPostPolicyV2({ policy: policyText, accessKeyId: v2AccessKey, signature: fields.get('signature'), securityToken: fields.get('x-amz-security-token') }, credentials)
      : verifyPostPolicy(
          { policy: policyText, algorithm: fields.get('x-amz-algorithm'), credential: fields.get('x-amz-credential'), date: fields.get('x-amz-date'), signature: fields.get('x-amz-signature'), securityToken: fields.get('x-amz-security-token') },
          credentials,
        );
  const keyField = fields.get('key');
  if (keyField === undefined || keyField === '') throw new SvcError('InvalidArgument', 'The form has no key field.');
  const key = keyField.replaceAll('${filename}', form.fileName);
  fields.set('key', key);
  const tags = formTags(fields);
  const judged = Object.fromEntries([...fields].filter(([name]) => isFormHeaderField(name)));
  await mayPut(accessKeyId, sessionToken, key, tags === undefined ? judged : { ...judged, 'x-amz-tagging': tags });
  const range = checkPolicy(decodePolicy(policyText, context.nowMs()), fields, bucket);
  const asHeaders = formHeaders(fields, form);
  // The form's encryption fields as a PUT's headers, else the bucket's default encryption.
  const settings = { secure: options.secureTransport === true, allowInsecure: context.encryption?.allowInsecureSsec === true, kms: context.encryption?.kms() };
  const sse: (SseRequest & { customerKeyMd5?: string }) | undefined = writeEncryptionOf(asHeaders, settings) ?? bucketDefaultEncryption((await context.objects.bucketRecord(bucket))?.encryption);
  const metadata = metadataOf(asHeaders);
  if (tags !== undefined) metadata.systemMetadata[tagsMetadataKey] = tags;
  metadata.systemMetadata = await withRequestedAcl(context, { auth: { accessKeyId }, headers: asHeaders }, { bucket, key }, metadata.systemMetadata);
  const putOptions = {
    storageClass: storageClassOf(asHeaders),
    ...metadata,
    beforeCommit: (received: { sizeBytes: number }) => {
      if (range && received.sizeBytes < range.min) throw new SvcError('EntityTooSmall', `Your proposed upload is smaller than the minimum allowed size (${range.min} bytes).`);
    },
  };
  const file = limitedTo(form.file, range);
  // Stored as a PutObject of the same key, type and encryption would be: sealed, compressed, or both.
  const info = await storeObject(context.objects, settings.kms, storeAs(context, key, metadata, sse), bucket, key, file, putOptions);
  const answer = successAnswer(fields, bucket, key, info.etag, info.versionId);
  const encryption = encryptionHeaders(info.encryption, sse?.kind === 'SSE-C' ? sse.customerKeyMd5 : undefined);
  return { ...answer, headers: { ...answer.headers, ...encryption }, events: [versionEvent('ObjectCreated:Post', info)] };
}

/** The `tagging` field's tag set, checked against AWS's rules and encoded as stored; absent or empty: undefined. */
function formTags(fields: Map<string, string>): string | undefined {
  const document = fields.get('tagging');
  if (document === undefined) return undefined;
  if (fields.has('x-amz-tagging')) throw new SvcError('InvalidArgument', 'Give the tags in the tagging field or in x-amz-tagging, not both.', { errorFields: { ArgumentName: 'tagging' } });
  return encodeTags(tagSetFromXml(Buffer.from(document, 'utf8')));
}

/** The form's fields as the request headers a PUT would carry (content type, metadata, class); the tags travel apart. */
function formHeaders(fields: Map<string, string>, form: FormUpload): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of fields) {
    if (name !== 'tagging') headers[name === 'acl' ? 'x-amz-acl' : name] = value;
  }
  if (headers['content-type'] === undefined && form.fileContentType !== undefined) headers['content-type'] = form.fileContentType;
  return headers;
}

function decodePolicy(policyText: string, nowMs: number): { conditions: unknown[] } {
  let policy: { expiration?: unknown; conditions?: unknown };
  try {
    policy = JSON.parse(Buffer.from(policyText, 'base64').toString('utf8')) as typeof policy;
  } catch {
    throw new SvcError('InvalidArgument', 'The policy is not base64-encoded JSON.');
  }
  const expiresMs = typeof policy.expiration === 'string' ? Date.parse(policy.expiration) : NaN;
  if (Number.isNaN(expiresMs)) throw new SvcError('InvalidArgument', 'The policy has no valid expiration.');
  if (expiresMs < nowMs) throw new SvcError('AccessDenied', 'Invalid according to Policy: Policy expired.');
  if (!Array.isArray(policy.conditions)) throw new SvcError('InvalidArgument', 'The policy has no conditions list.');
  return { conditions: policy.conditions };
}

/** Checks every condition and that every field is covered; returns the content-length-range. */
function checkPolicy(policy: { conditions: unknown[] }, fields: Map<string, string>, bucket: string): LengthRange | undefined {
  const valueOf = (name: string): string | undefined => (name === 'bucket' ? bucket : fields.get(name));
  const covered = new Set<string>(['bucket']);
  let range: LengthRange | undefined;
  const fail = (condition: unknown): never => {
    throw new SvcError('AccessDenied', `Invalid according to Policy: Policy Condition failed: ${JSON.stringify(condition)}`);
  };
  for (const condition of policy.conditions) {
    if (Array.isArray(condition) && String(condition[0]).toLowerCase() === 'content-length-range') {
      const [min, max] = [Number(condition[1]), Number(condition[2])];
      if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || min < 0 || max < min) throw new SvcError('InvalidArgument', 'content-length-range needs two whole numbers, min <= max.');
      range = { min, max };
      continue;
    }
    const [operator, name, expected] = conditionParts(condition);
    covered.add(name);
    const actual = valueOf(name) ?? '';
    const holds = operator === 'eq' ? actual === expected : name === 'content-type' ? actual.split(',').every((item) => item.trim().startsWith(expected)) : actual.startsWith(expected);
    if (!holds) fail(condition);
  }
  for (const name of fields.keys()) {
    if (!exemptFields.has(name) && !name.startsWith('x-ignore-') && !covered.has(name)) {
      throw new SvcError('AccessDenied', `Invalid according to Policy: Extra input fields: ${name}`);
    }
  }
  return range;
}

/** `{ "name": "value" }`, `["eq", "$name", "value"]` or `["starts-with", "$name", "prefix"]`. */
function conditionParts(condition: unknown): [operator: 'eq' | 'starts-with', name: string, expected: string] {
  if (Array.isArray(condition) && condition.length === 3 && typeof condition[1] === 'string' && condition[1].startsWith('$')) {
    const operator = String(condition[0]).toLowerCase();
    if (operator === 'eq' || operator === 'starts-with') return [operator, condition[1].slice(1).toLowerCase(), String(condition[2])];
  }
  if (condition && typeof condition === 'object' && !Array.isArray(condition)) {
    const entries = Object.entries(condition as Record<string, unknown>);
    if (entries.length === 1) return ['eq', entries[0]![0].toLowerCase(), String(entries[0]![1])];
  }
  throw new SvcError('InvalidArgument', `The policy condition ${JSON.stringify(condition)} is not one this server understands.`);
}

/** The file, refused with EntityTooLarge as soon as it passes the policy's maximum. */
async function* limitedTo(file: AsyncIterable<Uint8Array>, range: LengthRange | undefined): AsyncGenerator<Uint8Array> {
  let total = 0;
  for await (const chunk of file) {
    total += chunk.length;
    if (range && total > range.max) throw new SvcError('EntityTooLarge', `Your proposed upload exceeds the maximum allowed size (${range.max} bytes).`);
    yield chunk;
  }
}

/** success_action_redirect (303 to it), else success_action_status 200, 201 (with XML) or 204. */
function successAnswer(fields: Map<string, string>, bucket: string, key: string, etag: string, versionId: string): S3Response {
  const headers: Record<string, string> = { etag: `"${etag}"`, location: `/${bucket}/${encodeURIComponent(key)}`, ...(versionId !== 'null' ? { 'x-amz-version-id': versionId } : {}) };
  const redirect = fields.get('success_action_redirect') ?? fields.get('redirect');
  if (redirect) {
    const target = parseUrl(redirect);
    target.searchParams.set('bucket', bucket);
    target.searchParams.set('key', key);
    target.searchParams.set('etag', `"${etag}"`);
    return { status: 303, headers: { ...headers, location: target.toString() } };
  }
  const status = Number(fields.get('success_action_status') ?? '204');
  if (status === 201) {
    return { status, headers: { ...headers, 'content-type': 'application/xml' }, body: toXml('PostResponse', { Location: headers.location, Bucket: bucket, Key: key, ETag: `"${etag}"` }) };
  }
  return { status: status === 200 ? 200 : 204, headers };
}

function parseUrl(text: string): URL {
  try {
    return new URL(text);
  } catch {
    throw new SvcError('InvalidArgument', 'success_action_redirect must be an absolute URL.');
  }
}
