/**
 * Signature Version 2, the public access block and policy status, bucket tagging, lifecycle
 * filters kept as sent, the condition language of bucket policies, and a few answers AWS's
 * reference fixes: a PUT that does not say its length, a part number past the last part, a delete
 * in a bucket never versioned, a refused copy that leaves its target alone. The V2 checks need the
 * `sigv2` capability (a V2-signed GET reads back), so a target that takes V4 alone is n/a there.
 */
import { CompleteMultipartUploadCommand, CreateMultipartUploadCommand, UploadPartCommand } from '@aws-sdk/client-s3';
import { expectThat, type Check, type Target } from '../../runner/check.js';
import { send, sha256Hex, signerFor, type RawAnswer } from '../../runner/http.js';
import { presignedPathV2, sendPresignedV2, sendSignedV2, type V2Request } from '../../runner/sigv2.js';
import { bodyHeaders, bucketWith, describeAnswer, expectAbsent, expectRawError, listOf, put, textOf } from './support.js';
import { awsApi, awsApiPage, awsGuide } from './sources.js';
import { canonical } from './lifecycle.js';

const sigV2 = awsApiPage('RESTAuthentication');
const blockPublicAccess = awsGuide('access-control-block-public-access');
const policyKeys = awsGuide('amazon-s3-policy-keys');
const lifecycleFilters = awsGuide('intro-lifecycle-filters');
const errorResponses = awsApiPage('ErrorResponses');

/** A V2-signed request, recorded as the check's last exchange. */
async function v2(target: Target, request: V2Request): Promise<RawAnswer> {
  const query = Object.keys(request.query ?? {}).join('&');
  target.lastExchange = { request: `${request.method} ${request.path}${query ? `?${query}` : ''} (signed with Signature Version 2${request.secretKey ? ', a wrong secret' : ''})` };
  const answer = await sendSignedV2(target.options, request);
  target.lastExchange.answer = describeAnswer(answer);
  return answer;
}

/** A request to a V2 presigned path, recorded as the check's last exchange. */
async function presigned(target: Target, method: string, pathAndQuery: string, body?: string): Promise<RawAnswer> {
  target.lastExchange = { request: `${method} ${pathAndQuery.replace(/Signature=[^&]*/, 'Signature=(not shown)')} (presigned, Signature Version 2)` };
  const answer = await sendPresignedV2(target.options, method, pathAndQuery, body);
  target.lastExchange.answer = describeAnswer(answer);
  return answer;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

const publicAccessBlockXml = (settings: Record<string, boolean>) =>
  `<PublicAccessBlockConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${Object.entries(settings).map(([name, value]) => `<${name}>${value}</${name}>`).join('')}</PublicAccessBlockConfiguration>`;

function putPublicAccessBlock(target: Target, bucket: string, settings: Record<string, boolean>): Promise<RawAnswer> {
  const body = publicAccessBlockXml(settings);
  return target.raw({ method: 'PUT', path: `/${bucket}`, query: { publicAccessBlock: '' }, body, headers: bodyHeaders(body) });
}

const publicAccessBlockOf = (target: Target, bucket: string) => target.raw({ method: 'GET', path: `/${bucket}`, query: { publicAccessBlock: '' } });
export const deletePublicAccessBlock = (target: Target, bucket: string) => target.raw({ method: 'DELETE', path: `/${bucket}`, query: { publicAccessBlock: '' } });

export function putPolicy(target: Target, bucket: string, policy: unknown): Promise<RawAnswer> {
  const body = JSON.stringify(policy);
  return target.raw({ method: 'PUT', path: `/${bucket}`, query: { policy: '' }, body, headers: bodyHeaders(body, 'application/json') });
}

const policyOf = (target: Target, bucket: string) => target.raw({ method: 'GET', path: `/${bucket}`, query: { policy: '' } });
const policyAccepted = (answer: RawAnswer) => answer.status === 204 || answer.status === 200;

/** Everyone may read the bucket's objects: a public policy. */
const publicPolicy = (bucket: string) => ({
  Version: '2012-10-17',
  Statement: [{ Sid: 'EveryoneReads', Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: `arn:aws:s3:::${bucket}/*` }],
});

/** The same grant narrowed to a fixed block of source addresses: not public. */
const sourceIpPolicy = (bucket: string) => ({
  Version: '2012-10-17',
  Statement: [{ Sid: 'OneNetworkReads', Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: `arn:aws:s3:::${bucket}/*`, Condition: { IpAddress: { 'aws:SourceIp': '192.0.2.0/24' } } }],
});

async function isPublic(target: Target, bucket: string): Promise<string> {
  const answer = await target.raw({ method: 'GET', path: `/${bucket}`, query: { policyStatus: '' } });
  expectThat(answer.status === 200, `GetBucketPolicyStatus answered ${describeAnswer(answer)}`);
  return String(answer.xml.PolicyStatus?.IsPublic);
}

export type Tag = [key: string, value: string];

const xmlText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
export const taggingXml = (tags: Tag[]) => `<Tagging xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><TagSet>${tags.map(([key, value]) => `<Tag><Key>${xmlText(key)}</Key><Value>${xmlText(value)}</Value></Tag>`).join('')}</TagSet></Tagging>`;

function putBucketTags(target: Target, bucket: string, tags: Tag[]): Promise<RawAnswer> {
  const body = taggingXml(tags);
  return target.raw({ method: 'PUT', path: `/${bucket}`, query: { tagging: '' }, body, headers: bodyHeaders(body) });
}

const bucketTagsOf = (target: Target, bucket: string) => target.raw({ method: 'GET', path: `/${bucket}`, query: { tagging: '' } });
export const tagText = (tags: Tag[]) => tags.map(([key, value]) => `${key}=${value}`).sort().join(', ');
export const tagsRead = (answer: RawAnswer) => tagText(listOf(answer.xml.Tagging?.TagSet?.Tag).map((tag): Tag => [String(tag.Key), String(tag.Value ?? '')]));

const lifecycleXml = [
  '<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">',
  '<Rule><ID>and-filter</ID><Filter><And><Prefix>logs/</Prefix><Tag><Key>class</Key><Value>temp</Value></Tag><Tag><Key>team</Key><Value>data</Value></Tag><ObjectSizeGreaterThan>1024</ObjectSizeGreaterThan><ObjectSizeLessThan>1048576</ObjectSizeLessThan></And></Filter><Status>Enabled</Status><Expiration><Days>30</Days></Expiration></Rule>',
  '<Rule><ID>prefix-only</ID><Filter><Prefix>docs/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>60</Days></Expiration></Rule>',
  '<Rule><ID>size-only</ID><Filter><ObjectSizeLessThan>512</ObjectSizeLessThan></Filter><Status>Disabled</Status><Expiration><Days>7</Days></Expiration></Rule>',
  '</LifecycleConfiguration>',
].join('');

function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Conditions a bucket policy may hold, on Deny statements whose conditions never all hold for
 * the requests of a run (so the policy is not public and changes nothing the run does).
 */
const conditionedPolicy = (bucket: string) => ({
  Version: '2012-10-17',
  Statement: [
    { Sid: 'NoTinyListingsOfOnePrefix', Effect: 'Deny', Principal: '*', Action: 's3:ListBucket', Resource: `arn:aws:s3:::${bucket}`, Condition: { StringLike: { 's3:prefix': 'never-listed/*' }, NumericLessThanEquals: { 's3:max-keys': '0' } } },
    { Sid: 'TlsOnlyForOnePrefix', Effect: 'Deny', Principal: '*', Action: 's3:GetObject', Resource: `arn:aws:s3:::${bucket}/never-read/*`, Condition: { Bool: { 'aws:SecureTransport': 'false' } } },
  ],
});

/** A PUT signed with SigV4 that carries neither Content-Length nor Transfer-Encoding. */
async function putWithoutLength(target: Target, path: string): Promise<RawAnswer> {
  const url = new URL(target.options.endpoint);
  const headers = { host: url.host, 'x-amz-content-sha256': sha256Hex('') };
  const signed = await signerFor(target.options).sign({ method: 'PUT', protocol: url.protocol, hostname: url.hostname, port: url.port ? Number(url.port) : undefined, path, query: {}, headers });
  target.lastExchange = { request: `PUT ${path} (neither Content-Length nor Transfer-Encoding)` };
  const answer = await send(url, 'PUT', path, signed.headers as Record<string, string>, Buffer.alloc(0), { withoutLength: true });
  target.lastExchange.answer = describeAnswer(answer);
  return answer;
}

const sigV2Checks: Check[] = [
  {
    id: 's3.sigv2.header-put-get',
    spec: 'S3 Signature Version 2',
    title: 'a PUT and a GET signed with Signature Version 2 in the Authorization header (AWS key:signature; dated by Date, or by x-amz-date with an empty Date line) store and read the object with its Content-Type and x-amz-meta-* metadata, and a V2-signed GetObjectTagging signs its subresource',
    source: `${sigV2}; ${awsApi('PutObject')}; ${awsApi('GetObjectTagging')}`,
    needs: ['sigv2'],
    async run(target) {
      const bucket = await target.makeBucket('sigv2-header');
      const stored = await v2(target, { method: 'PUT', path: `/${bucket}/signed.txt`, body: 'signed with V2', headers: { 'content-type': 'text/plain', 'x-amz-meta-colour': 'blue' } });
      expectThat(stored.status === 200, `a V2-signed PUT answered ${describeAnswer(stored)}`);
      const read = await v2(target, { method: 'GET', path: `/${bucket}/signed.txt`, headers: { 'x-amz-date': new Date().toUTCString() } });
      expectThat(read.status === 200 && read.text === 'signed with V2', `a V2-signed GET dated by x-amz-date answered ${describeAnswer(read)} ${JSON.stringify(read.text.slice(0, 60))}`);
      expectThat(read.headers['content-type'] === 'text/plain' && read.headers['x-amz-meta-colour'] === 'blue', `the V2-signed PUT stored Content-Type ${read.headers['content-type']} and x-amz-meta-colour ${read.headers['x-amz-meta-colour']}`);
      const tagging = await v2(target, { method: 'GET', path: `/${bucket}/signed.txt`, query: { tagging: '' } });
      expectThat(tagging.status === 200 && tagging.xml.Tagging !== undefined, `a V2-signed GetObjectTagging answered ${describeAnswer(tagging)}`);
    },
  },
  {
    id: 's3.sigv2.presigned',
    spec: 'S3 Signature Version 2',
    title: 'a V2 presigned GET (AWSAccessKeyId, Expires, Signature) reads the object; the same query on another key, or with the method PUT, answers 403 SignatureDoesNotMatch and changes nothing',
    source: `${sigV2}#RESTAuthenticationQueryStringAuth`,
    needs: ['sigv2'],
    async run(target) {
      const bucket = await bucketWith(target, 'sigv2-presigned', 'shared.txt', 'shared by a V2 URL');
      await put(target, bucket, 'other.txt', 'not shared');
      const url = presignedPathV2(target.options, 'GET', `/${bucket}/shared.txt`, nowSeconds() + 300);
      const read = await presigned(target, 'GET', url);
      expectThat(read.status === 200 && read.text === 'shared by a V2 URL', `a V2 presigned GET answered ${describeAnswer(read)} ${JSON.stringify(read.text.slice(0, 60))}`);
      const moved = await presigned(target, 'GET', url.replace('/shared.txt?', '/other.txt?'));
      expectRawError(moved, 403, 'SignatureDoesNotMatch', 'a V2 presigned GET moved to another key');
      expectThat(!moved.text.includes('not shared'), 'a V2 presigned URL moved to another key returned that object');
      const written = await presigned(target, 'PUT', url, 'overwritten');
      expectRawError(written, 403, 'SignatureDoesNotMatch', 'a PUT to a URL presigned for GET');
      expectThat((await textOf(target, bucket, 'shared.txt')) === 'shared by a V2 URL', 'a refused PUT to a URL presigned for GET changed the object');
    },
  },
  {
    id: 's3.sigv2.presigned-expired',
    spec: 'S3 Signature Version 2',
    title: 'a V2 presigned GET whose Expires has passed answers 403 AccessDenied and none of the object',
    source: `${sigV2}#RESTAuthenticationQueryStringAuth`,
    needs: ['sigv2'],
    async run(target) {
      const bucket = await bucketWith(target, 'sigv2-expired', 'late.txt', 'too late to read');
      const answer = await presigned(target, 'GET', presignedPathV2(target.options, 'GET', `/${bucket}/late.txt`, nowSeconds() - 60));
      expectRawError(answer, 403, 'AccessDenied', 'a V2 presigned GET that expired a minute ago');
      expectThat(!answer.text.includes('too late to read'), 'an expired V2 presigned GET returned the object');
    },
  },
  {
    id: 's3.sigv2.bad-signature',
    spec: 'S3 Signature Version 2',
    title: 'V2 requests signed with a wrong secret answer 403 SignatureDoesNotMatch (a PUT stores nothing, a GET returns none of the object), and one naming an unknown access key 403 InvalidAccessKeyId',
    source: `${sigV2}; ${errorResponses}`,
    needs: ['sigv2'],
    async run(target) {
      const bucket = await bucketWith(target, 'sigv2-forged', 'kept.txt', 'for the owner only');
      const forged = await v2(target, { method: 'PUT', path: `/${bucket}/forged.txt`, body: 'forged', secretKey: `${target.options.secretKey}x` });
      expectRawError(forged, 403, 'SignatureDoesNotMatch', 'a V2-signed PUT with a wrong secret');
      await expectAbsent(target, bucket, 'forged.txt', 'a V2-signed PUT with a wrong secret');
      const read = await v2(target, { method: 'GET', path: `/${bucket}/kept.txt`, secretKey: `${target.options.secretKey}x` });
      expectRawError(read, 403, 'SignatureDoesNotMatch', 'a V2-signed GET with a wrong secret');
      expectThat(!read.text.includes('for the owner only'), 'a V2-signed GET with a wrong secret returned the object');
      target.lastExchange = { request: `GET /${bucket}/kept.txt (signed with Signature Version 2 by an unknown access key)` };
      const unknown = await sendSignedV2({ ...target.options, accessKey: 'AKIACONFNOSUCHKEY000' }, { method: 'GET', path: `/${bucket}/kept.txt` });
      target.lastExchange.answer = describeAnswer(unknown);
      expectRawError(unknown, 403, 'InvalidAccessKeyId', 'a V2-signed GET by an unknown access key');
    },
  },
];

const publicAccessChecks: Check[] = [
  {
    id: 's3.public-access-block.round-trip',
    spec: 'S3 PutPublicAccessBlock',
    title: 'without a public access block GetPublicAccessBlock answers 404 NoSuchPublicAccessBlockConfiguration; PutPublicAccessBlock (200) keeps the four settings as sent, GetPublicAccessBlock reads them back, and after DeletePublicAccessBlock (204) the configuration is gone',
    source: `${awsApi('PutPublicAccessBlock')}; ${awsApi('GetPublicAccessBlock')}; ${awsApi('DeletePublicAccessBlock')}`,
    async run(target) {
      const bucket = await target.makeBucket('pab');
      // A new bucket may start with a block (AWS blocks new buckets by default): remove it first.
      const cleared = await deletePublicAccessBlock(target, bucket);
      expectThat(cleared.status === 204, `DeletePublicAccessBlock answered ${describeAnswer(cleared)}`);
      expectRawError(await publicAccessBlockOf(target, bucket), 404, 'NoSuchPublicAccessBlockConfiguration', 'GetPublicAccessBlock of a bucket without one');
      const settings = { BlockPublicAcls: true, IgnorePublicAcls: false, BlockPublicPolicy: true, RestrictPublicBuckets: false };
      const stored = await putPublicAccessBlock(target, bucket, settings);
      expectThat(stored.status === 200, `PutPublicAccessBlock answered ${describeAnswer(stored)}`);
      const read = await publicAccessBlockOf(target, bucket);
      expectThat(read.status === 200, `GetPublicAccessBlock answered ${describeAnswer(read)}`);
      const element = (read.xml.PublicAccessBlockConfiguration ?? {}) as Record<string, unknown>;
      const got = Object.keys(settings).map((name) => `${name}=${String(element[name])}`).join(', ');
      const sent = Object.entries(settings).map(([name, value]) => `${name}=${value}`).join(', ');
      expectThat(got === sent, `GetPublicAccessBlock read back ${got}, expected ${sent}`);
      const removed = await deletePublicAccessBlock(target, bucket);
      expectThat(removed.status === 204, `DeletePublicAccessBlock answered ${describeAnswer(removed)}`);
      expectRawError(await publicAccessBlockOf(target, bucket), 404, 'NoSuchPublicAccessBlockConfiguration', 'GetPublicAccessBlock after DeletePublicAccessBlock');
    },
  },
  {
    id: 's3.public-access-block.blocks-public-policy',
    spec: 'S3 PutBucketPolicy (public access block)',
    title: 'under BlockPublicPolicy a bucket policy that makes the bucket public (Principal * without a narrowing condition) is refused with 403 AccessDenied and not stored, while one narrowed to a fixed block of source addresses is accepted',
    source: `${awsApi('PutBucketPolicy')}; ${blockPublicAccess}`,
    async run(target) {
      const bucket = await target.makeBucket('pab-policy');
      const blocked = await putPublicAccessBlock(target, bucket, { BlockPublicAcls: false, IgnorePublicAcls: false, BlockPublicPolicy: true, RestrictPublicBuckets: false });
      expectThat(blocked.status === 200, `PutPublicAccessBlock answered ${describeAnswer(blocked)}`);
      expectRawError(await putPolicy(target, bucket, publicPolicy(bucket)), 403, 'AccessDenied', 'PutBucketPolicy of a public policy under BlockPublicPolicy');
      expectRawError(await policyOf(target, bucket), 404, 'NoSuchBucketPolicy', 'GetBucketPolicy after a refused public policy');
      const narrowed = await putPolicy(target, bucket, sourceIpPolicy(bucket));
      expectThat(policyAccepted(narrowed), `PutBucketPolicy of a policy narrowed to 192.0.2.0/24 under BlockPublicPolicy answered ${describeAnswer(narrowed)}`);
    },
  },
  {
    id: 's3.policy-status.is-public',
    spec: 'S3 GetBucketPolicyStatus',
    title: 'GetBucketPolicyStatus answers IsPublic false for a policy narrowed to a fixed block of source addresses and true once the policy lets everyone read',
    source: `${awsApi('GetBucketPolicyStatus')}; ${blockPublicAccess}`,
    async run(target) {
      const bucket = await target.makeBucket('policy-status');
      const cleared = await deletePublicAccessBlock(target, bucket);
      expectThat(cleared.status === 204, `DeletePublicAccessBlock answered ${describeAnswer(cleared)}`);
      const narrowed = await putPolicy(target, bucket, sourceIpPolicy(bucket));
      expectThat(policyAccepted(narrowed), `PutBucketPolicy of a policy narrowed to 192.0.2.0/24 answered ${describeAnswer(narrowed)}`);
      const first = await isPublic(target, bucket);
      expectThat(first === 'false', `GetBucketPolicyStatus of a policy narrowed to 192.0.2.0/24 answered IsPublic ${first}`);
      const opened = await putPolicy(target, bucket, publicPolicy(bucket));
      expectThat(policyAccepted(opened), `PutBucketPolicy of a public policy without a public access block answered ${describeAnswer(opened)}`);
      const second = await isPublic(target, bucket);
      expectThat(second === 'true', `GetBucketPolicyStatus of a policy that lets everyone read answered IsPublic ${second}`);
    },
  },
];

const taggingChecks: Check[] = [
  {
    id: 's3.bucket-tagging.round-trip',
    spec: 'S3 PutBucketTagging',
    title: 'GetBucketTagging of a bucket without tags answers 404 NoSuchTagSet; PutBucketTagging keeps a tag set that GetBucketTagging reads back; after DeleteBucketTagging (204) it answers NoSuchTagSet again',
    source: `${awsApi('PutBucketTagging')}; ${awsApi('GetBucketTagging')}; ${awsApi('DeleteBucketTagging')}`,
    async run(target) {
      const bucket = await target.makeBucket('bucket-tags');
      expectRawError(await bucketTagsOf(target, bucket), 404, 'NoSuchTagSet', 'GetBucketTagging of a bucket without tags');
      const tags: Tag[] = [['project', 'conformance'], ['cost-centre', 'team blue']];
      const stored = await putBucketTags(target, bucket, tags);
      expectThat(stored.status === 204 || stored.status === 200, `PutBucketTagging answered ${describeAnswer(stored)}`);
      const read = await bucketTagsOf(target, bucket);
      expectThat(read.status === 200 && tagsRead(read) === tagText(tags), `GetBucketTagging answered ${describeAnswer(read)} with ${tagsRead(read)}, expected ${tagText(tags)}`);
      const removed = await target.raw({ method: 'DELETE', path: `/${bucket}`, query: { tagging: '' } });
      expectThat(removed.status === 204, `DeleteBucketTagging answered ${describeAnswer(removed)}`);
      expectRawError(await bucketTagsOf(target, bucket), 404, 'NoSuchTagSet', 'GetBucketTagging after DeleteBucketTagging');
    },
  },
  {
    id: 's3.bucket-tagging.invalid',
    spec: 'S3 PutBucketTagging',
    title: 'PutBucketTagging refuses with 400 InvalidTag a key starting with aws:, a key given twice, a key of 129 characters and a value of 257, and keeps the tags it had',
    source: `${awsApi('PutBucketTagging')}; ${awsGuide('tagging-managing')}`,
    async run(target) {
      const bucket = await target.makeBucket('bucket-tags-bad');
      const kept: Tag[] = [['keep', 'me']];
      const stored = await putBucketTags(target, bucket, kept);
      expectThat(stored.status === 204 || stored.status === 200, `PutBucketTagging answered ${describeAnswer(stored)}`);
      const refusals: [string, Tag[]][] = [
        ['a key starting with aws:', [['aws:owner', 'me']]],
        ['a key given twice', [['twice', '1'], ['twice', '2']]],
        ['a key of 129 characters', [['k'.repeat(129), 'v']]],
        ['a value of 257 characters', [['long', 'v'.repeat(257)]]],
      ];
      for (const [what, tags] of refusals) {
        expectRawError(await putBucketTags(target, bucket, tags), 400, 'InvalidTag', `PutBucketTagging with ${what}`);
        const read = await bucketTagsOf(target, bucket);
        expectThat(tagsRead(read) === tagText(kept), `after PutBucketTagging with ${what} was refused the bucket has tags ${tagsRead(read)} (${describeAnswer(read)})`);
      }
    },
  },
];

const lifecycleAndPolicyChecks: Check[] = [
  {
    id: 's3.lifecycle.filters-as-sent',
    spec: 'S3 PutBucketLifecycleConfiguration',
    title: 'rules filtered by And (a prefix, two tags and both object-size bounds), by a prefix alone and by an object size alone read back with the filter in the form they were sent',
    source: `${awsApi('PutBucketLifecycleConfiguration')}; ${awsApi('GetBucketLifecycleConfiguration')}; ${lifecycleFilters}`,
    async run(target) {
      const bucket = await target.makeBucket('lifecycle-filters');
      const stored = await target.raw({ method: 'PUT', path: `/${bucket}`, query: { lifecycle: '' }, body: lifecycleXml, headers: bodyHeaders(lifecycleXml) });
      expectThat(stored.status === 200, `PutBucketLifecycleConfiguration answered ${describeAnswer(stored)}`);
      const read = await target.raw({ method: 'GET', path: `/${bucket}`, query: { lifecycle: '' } });
      expectThat(read.status === 200, `GetBucketLifecycleConfiguration answered ${describeAnswer(read)}`);
      const rules = new Map(listOf(read.xml.LifecycleConfiguration?.Rule).map((rule): [string, Record<string, any>] => [String(rule.ID), rule]));
      const and = rules.get('and-filter')?.Filter?.And as Record<string, unknown> | undefined;
      const andText = and ? `Prefix=${String(and.Prefix)} Tags=[${tagText(listOf(and.Tag).map((tag): Tag => [String(tag.Key), String(tag.Value)]))}] >${String(and.ObjectSizeGreaterThan)} <${String(and.ObjectSizeLessThan)}` : 'no And';
      expectThat(andText === 'Prefix=logs/ Tags=[class=temp, team=data] >1024 <1048576', `the And filter read back as ${andText}: ${JSON.stringify(rules.get('and-filter') ?? null)}`);
      expectThat(String(rules.get('and-filter')?.Expiration?.Days) === '30' && rules.get('and-filter')?.Status === 'Enabled', `the And rule's action read back as ${JSON.stringify(rules.get('and-filter') ?? null)}`);
      const prefixOnly = rules.get('prefix-only')?.Filter as Record<string, unknown> | undefined;
      expectThat(prefixOnly?.Prefix === 'docs/' && prefixOnly.And === undefined, `the prefix filter read back as ${JSON.stringify(prefixOnly ?? null)}`);
      const sizeOnly = rules.get('size-only');
      expectThat(sizeOnly?.Filter?.ObjectSizeLessThan === '512' && sizeOnly.Filter.And === undefined && sizeOnly.Status === 'Disabled', `the size filter read back as ${JSON.stringify(sizeOnly ?? null)}`);
    },
  },
  {
    id: 's3.policy.condition-operators',
    spec: 'S3 PutBucketPolicy (conditions)',
    title: 'a bucket policy with conditions (StringLike on s3:prefix, NumericLessThanEquals on s3:max-keys, Bool on aws:SecureTransport) is accepted and GetBucketPolicy returns each statement\'s conditions as sent',
    source: `${awsApi('PutBucketPolicy')}; ${policyKeys}; https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html`,
    async run(target) {
      const bucket = await target.makeBucket('policy-conditions');
      const policy = conditionedPolicy(bucket);
      const stored = await putPolicy(target, bucket, policy);
      expectThat(policyAccepted(stored), `PutBucketPolicy with StringLike, NumericLessThanEquals and Bool conditions answered ${describeAnswer(stored)} ${stored.text.slice(0, 200)}`);
      const read = await policyOf(target, bucket);
      expectThat(read.status === 200, `GetBucketPolicy answered ${describeAnswer(read)}`);
      const document = jsonOf(read.text) as { Statement?: { Sid?: string; Condition?: unknown }[] | { Sid?: string; Condition?: unknown } } | undefined;
      expectThat(document !== undefined, `GetBucketPolicy returned no JSON: ${read.text.slice(0, 200)}`);
      const statements = Array.isArray(document.Statement) ? document.Statement : document.Statement ? [document.Statement] : [];
      for (const sent of policy.Statement) {
        const kept = statements.find((statement) => statement.Sid === sent.Sid);
        expectThat(kept !== undefined && canonical(kept.Condition) === canonical(sent.Condition), `statement ${sent.Sid} read back with conditions ${JSON.stringify(kept?.Condition)}, expected ${JSON.stringify(sent.Condition)}`);
      }
    },
  },
  {
    id: 's3.policy.malformed-condition',
    spec: 'S3 PutBucketPolicy (conditions)',
    title: 'a bucket policy with an unknown condition operator, or an unknown s3: condition key, is refused with 400 MalformedPolicy and nothing is stored',
    source: `${awsApi('PutBucketPolicy')}; ${policyKeys}; ${errorResponses}`,
    async run(target) {
      const bucket = await target.makeBucket('policy-malformed');
      const refusals: [string, Record<string, Record<string, string>>][] = [
        ['an unknown condition operator (StringLikeish)', { StringLikeish: { 's3:prefix': 'home/*' } }],
        ['an unknown condition key (s3:no-such-key)', { StringLike: { 's3:no-such-key': 'home/*' } }],
      ];
      for (const [what, condition] of refusals) {
        const policy = { Version: '2012-10-17', Statement: [{ Sid: 'Refused', Effect: 'Deny', Principal: '*', Action: 's3:ListBucket', Resource: `arn:aws:s3:::${bucket}`, Condition: condition }] };
        expectRawError(await putPolicy(target, bucket, policy), 400, 'MalformedPolicy', `PutBucketPolicy with ${what}`);
        expectRawError(await policyOf(target, bucket), 404, 'NoSuchBucketPolicy', `GetBucketPolicy after a policy with ${what} was refused`);
      }
    },
  },
];

const smallerChecks: Check[] = [
  {
    id: 's3.put.missing-content-length',
    spec: 'S3 PutObject (Content-Length)',
    title: 'a PUT that carries neither Content-Length nor Transfer-Encoding answers 411 MissingContentLength and stores nothing',
    source: `${errorResponses}; ${awsApi('PutObject')}`,
    async run(target) {
      const bucket = await target.makeBucket('no-length');
      expectRawError(await putWithoutLength(target, `/${bucket}/unsized`), 411, 'MissingContentLength', 'a PUT without Content-Length');
      await expectAbsent(target, bucket, 'unsized', 'a PUT without Content-Length');
    },
  },
  {
    id: 's3.get.part-number-past-last',
    spec: 'S3 GetObject (partNumber)',
    title: 'GET with partNumber=1 of a one-part multipart object answers that part with x-amz-mp-parts-count: 1; partNumber=2 answers 416 InvalidPartNumber',
    source: `${awsApi('GetObject')}; ${errorResponses}`,
    needs: ['multipart'],
    async run(target) {
      const bucket = await target.makeBucket('part-number');
      const { UploadId } = await target.s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'one-part' }));
      const { ETag } = await target.s3.send(new UploadPartCommand({ Bucket: bucket, Key: 'one-part', UploadId, PartNumber: 1, Body: 'the only part' }));
      await target.s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'one-part', UploadId, MultipartUpload: { Parts: [{ ETag, PartNumber: 1 }] } }));
      const first = await target.raw({ method: 'GET', path: `/${bucket}/one-part`, query: { partNumber: '1' } });
      expectThat((first.status === 206 || first.status === 200) && first.text === 'the only part', `GET with partNumber=1 answered ${describeAnswer(first)} ${JSON.stringify(first.text.slice(0, 40))}`);
      expectThat(first.headers['x-amz-mp-parts-count'] === '1', `GET with partNumber=1 answered x-amz-mp-parts-count ${first.headers['x-amz-mp-parts-count']}`);
      const past = await target.raw({ method: 'GET', path: `/${bucket}/one-part`, query: { partNumber: '2' } });
      expectRawError(past, 416, 'InvalidPartNumber', 'GET with partNumber=2 of a one-part object');
      expectThat(!past.text.includes('the only part'), 'GET with a part number past the last part returned the object');
    },
  },
  {
    id: 's3.delete.unversioned',
    spec: 'S3 DeleteObject',
    title: 'in a bucket never versioned DeleteObject answers 204 without x-amz-version-id or x-amz-delete-marker: true and the key is gone (GET 404 NoSuchKey); deleting it again answers 204',
    source: awsApi('DeleteObject'),
    async run(target) {
      const bucket = await bucketWith(target, 'delete-unversioned', 'doc', 'to be removed');
      const removed = await target.raw({ method: 'DELETE', path: `/${bucket}/doc` });
      expectThat(removed.status === 204, `DeleteObject answered ${describeAnswer(removed)}`);
      expectThat(removed.headers['x-amz-delete-marker'] !== 'true' && removed.headers['x-amz-version-id'] === undefined, `DeleteObject in a bucket never versioned answered x-amz-delete-marker ${removed.headers['x-amz-delete-marker']} and x-amz-version-id ${removed.headers['x-amz-version-id']}`);
      expectRawError(await target.raw({ method: 'GET', path: `/${bucket}/doc` }), 404, 'NoSuchKey', 'GET after DeleteObject');
      const again = await target.raw({ method: 'DELETE', path: `/${bucket}/doc` });
      expectThat(again.status === 204, `DeleteObject of a key already deleted answered ${describeAnswer(again)}`);
    },
  },
  {
    id: 's3.conditional.copy.if-match-keeps-target',
    spec: 'S3 CopyObject (conditional)',
    title: 'CopyObject onto an existing key with x-amz-copy-source-if-match naming another ETag answers 412 PreconditionFailed and the key keeps its body; with the source\'s ETag the copy replaces it',
    source: awsApi('CopyObject'),
    async run(target) {
      const bucket = await bucketWith(target, 'copy-if-match', 'source', 'the new body');
      const { ETag } = await put(target, bucket, 'target', 'the old body');
      expectThat(ETag !== undefined, 'PutObject answered no ETag');
      const copy = (etag: string) => target.raw({ method: 'PUT', path: `/${bucket}/target`, headers: { 'x-amz-copy-source': `/${bucket}/source`, 'x-amz-copy-source-if-match': etag } });
      expectRawError(await copy('"0123456789abcdef0123456789abcdef"'), 412, 'PreconditionFailed', 'CopyObject with x-amz-copy-source-if-match naming another ETag');
      expectThat((await textOf(target, bucket, 'target')) === 'the old body', 'a CopyObject refused by x-amz-copy-source-if-match changed its target');
      const sourceEtag = (await target.raw({ method: 'HEAD', path: `/${bucket}/source` })).headers.etag ?? '';
      const copied = await copy(sourceEtag);
      expectThat(copied.status === 200, `CopyObject with x-amz-copy-source-if-match naming the source's ETag answered ${describeAnswer(copied)}`);
      expectThat((await textOf(target, bucket, 'target')) === 'the new body', 'a CopyObject whose x-amz-copy-source-if-match held did not replace its target');
    },
  },
];

export const roundThreeChecks: Check[] = [...sigV2Checks, ...publicAccessChecks, ...taggingChecks, ...lifecycleAndPolicyChecks, ...smallerChecks];
