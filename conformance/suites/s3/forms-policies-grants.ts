/**
 * POST form uploads (Signature Version 2 forms, the `tagging` field), how bucket policies judge
 * requests by their conditions (aws:SourceIp with IpAddress and NotIpAddress, Null, aws:CurrentTime
 * with the Date operators, ForAnyValue:StringLike over the tag keys a PUT sends, the
 * `${aws:username}` policy variable), explicit ACL grants under ObjectWriter (the AllUsers group, a
 * user by canonical id), and a v1 listing of keys with characters XML 1.0 cannot carry. The
 * conditions are judged on anonymous requests (the owner's own credentials may pass any policy),
 * in buckets whose public access block is removed first; a check that needs a second identity
 * makes a user through the admin API's IAM routes and is n/a on a target without them.
 */
import { GetObjectCommand, ListBucketsCommand, ListObjectsV2Command, PutObjectAclCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { expectThat, type Check, type Target } from '../../runner/check.js';
import type { RawAnswer } from '../../runner/http.js';
import { formFieldsV2, formFieldsV4, postForm, type FormRequest } from '../../runner/post-form.js';
import { allowDocument, withIam, type Signer } from '../iam/support.js';
import { aclBucket } from './acl-logging.js';
import { deletePublicAccessBlock, putPolicy, taggingXml, tagsRead, tagText, type Tag } from './round-three.js';
import { awsApi, awsApiPage, awsGuide, s3Tests } from './sources.js';
import { describeAnswer, expectAbsent, expectRawError, listOf, put, textOf } from './support.js';

const formsV2 = awsApiPage('HTTPPOSTForms');
const formsV4 = awsApiPage('sigv4-HTTPPOSTForms');
const postObject = awsApiPage('RESTObjectPOST');
const bucketPolicies = awsGuide('example-bucket-policies');
const policyKeys = awsGuide('amazon-s3-policy-keys');
const iamOperators = 'https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html';
const iamVariables = 'https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_variables.html';
const iamMultiValued = 'https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-single-vs-multi-valued-context-keys.html';
const aclGuide = awsGuide('acl-overview');
const ownership = awsGuide('about-object-ownership');
const allUsers = 'http://acs.amazonaws.com/groups/global/AllUsers';
/** TEST-NET-1 (RFC 5737): documentation addresses, never a client's. */
const documentationNet = '192.0.2.0/24';
const everyAddress = ['0.0.0.0/0', '::/0'];

/** A form upload, recorded as the check's last exchange. */
async function form(target: Target, what: string, bucket: string, fields: Record<string, string>, file: string): Promise<RawAnswer> {
  target.lastExchange = { request: `POST /${bucket} (form upload: ${what}; fields ${Object.keys(fields).filter((name) => !/signature/i.test(name)).join(', ')})` };
  const answer = await postForm(target.options, bucket, fields, file);
  target.lastExchange.answer = describeAnswer(answer);
  return answer;
}

const v4Form = (target: Target, request: FormRequest) => formFieldsV4(target.options, request);

/** An anonymous (unsigned) request. */
function anonymous(target: Target, method: string, path: string, options: { headers?: Record<string, string>; body?: string; query?: Record<string, string> } = {}): Promise<RawAnswer> {
  return target.raw({ method, path, unsigned: true, ...options });
}

/** A bucket of this run without a public access block, so that a policy granting everyone applies. */
async function openBucket(target: Target, purpose: string): Promise<string> {
  const bucket = await target.makeBucket(purpose);
  const unblocked = await deletePublicAccessBlock(target, bucket);
  expectThat(unblocked.status === 204 || unblocked.status === 200 || unblocked.status === 404, `DeletePublicAccessBlock answered ${describeAnswer(unblocked)}`);
  return bucket;
}

/** Puts a policy of these statements on the bucket; it must be accepted. */
async function withPolicy(target: Target, bucket: string, statements: Record<string, unknown>[]): Promise<void> {
  const stored = await putPolicy(target, bucket, { Version: '2012-10-17', Statement: statements });
  expectThat(stored.status === 204 || stored.status === 200, `PutBucketPolicy answered ${describeAnswer(stored)} ${stored.text.slice(0, 200)}`);
}

const everyone = (bucket: string, sid: string, action: string | string[], keys: string, condition: Record<string, unknown>, effect: 'Allow' | 'Deny' = 'Allow') => ({
  Sid: sid, Effect: effect, Principal: '*', Action: action, Resource: `arn:aws:s3:::${bucket}/${keys}`, Condition: condition,
});

/** An anonymous GET must read `body`. */
async function expectAnonymousRead(target: Target, bucket: string, key: string, body: string, what: string): Promise<void> {
  const answer = await anonymous(target, 'GET', `/${bucket}/${key}`);
  expectThat(answer.status === 200 && answer.text === body, `${what}: an anonymous GET of ${key} answered ${describeAnswer(answer)} ${JSON.stringify(answer.text.slice(0, 40))}`);
}

/** An anonymous GET must be refused with 403 AccessDenied and return none of the object. */
async function expectAnonymousDenied(target: Target, bucket: string, key: string, body: string, what: string): Promise<void> {
  const answer = await anonymous(target, 'GET', `/${bucket}/${key}`);
  expectRawError(answer, 403, 'AccessDenied', `${what}: an anonymous GET of ${key}`);
  expectThat(!answer.text.includes(body), `${what}: a refused anonymous GET of ${key} returned the object`);
}

/**
 * An anonymous PUT of `key` (its name as body): when `allowed`, stored (then `stored` checks the
 * rest); otherwise 403 AccessDenied and nothing stored.
 */
async function anonymousPut(target: Target, bucket: string, key: string, headers: Record<string, string>, allowed: boolean, what: string, stored?: () => Promise<void>): Promise<void> {
  const answer = await anonymous(target, 'PUT', `/${bucket}/${key}`, { body: key, headers });
  if (!allowed) {
    expectRawError(answer, 403, 'AccessDenied', what);
    await expectAbsent(target, bucket, key, what);
    return;
  }
  expectThat(answer.status === 200, `${what} answered ${describeAnswer(answer)}`);
  expectThat((await textOf(target, bucket, key)) === key, `${what} did not store its body`);
  await stored?.();
}

/** The body `objects` writes under a key: text no error answer about the key would hold. */
const bodyFor = (key: string) => `bytes ${Buffer.from(key).toString('hex')}`;

/** Writes each key with its `bodyFor`. */
async function objects(target: Target, bucket: string, keys: string[]): Promise<void> {
  for (const key of keys) await put(target, bucket, key, bodyFor(key));
}

const formChecks: Check[] = [
  {
    id: 's3.post.v2-form',
    spec: 'S3 PostObject (Signature Version 2)',
    title: 'a form signed with Signature Version 2 (AWSAccessKeyId, policy, signature) stores the file under its key with its Content-Type (204); the same form signed with a wrong secret answers 403 SignatureDoesNotMatch and one naming an unknown access key 403 InvalidAccessKeyId, both storing nothing',
    source: `${formsV2}; ${postObject}; ${s3Tests('test_post_object_invalid_signature')}`,
    needs: ['sigv2'],
    async run(target) {
      const bucket = await target.makeBucket('post-v2');
      const request = (key: string): FormRequest => ({ bucket, fields: { key, 'Content-Type': 'text/plain' }, conditions: [['starts-with', '$key', 'forms/'], { 'Content-Type': 'text/plain' }] });
      const stored = await form(target, 'signed with V2', bucket, formFieldsV2(target.options, request('forms/v2.txt')), 'posted with V2');
      expectThat(stored.status === 204, `a V2-signed form answered ${describeAnswer(stored)} ${stored.text.slice(0, 200)}`);
      const read = await target.raw({ method: 'GET', path: `/${bucket}/forms/v2.txt` });
      expectThat(read.status === 200 && read.text === 'posted with V2' && read.headers['content-type'] === 'text/plain', `GET of the posted object answered ${describeAnswer(read)} ${JSON.stringify(read.text.slice(0, 40))} with Content-Type ${read.headers['content-type']}`);
      const forged = await form(target, 'signed with V2 and a wrong secret', bucket, formFieldsV2(target.options, { ...request('forms/forged.txt'), secretKey: `${target.options.secretKey}x` }), 'forged');
      expectRawError(forged, 403, 'SignatureDoesNotMatch', 'a V2-signed form with a wrong secret');
      await expectAbsent(target, bucket, 'forms/forged.txt', 'a V2-signed form with a wrong secret');
      const unknown = await form(target, 'signed with V2 by an unknown access key', bucket, formFieldsV2({ ...target.options, accessKey: 'AKIACONFNOSUCHKEY000' }, request('forms/unknown.txt')), 'unknown');
      expectRawError(unknown, 403, 'InvalidAccessKeyId', 'a V2-signed form naming an unknown access key');
      await expectAbsent(target, bucket, 'forms/unknown.txt', 'a V2-signed form naming an unknown access key');
    },
  },
  {
    id: 's3.post.tagging-field',
    spec: 'S3 PostObject (tagging)',
    title: 'a form\'s tagging field (a Tagging document the policy names) tags the object: GetObjectTagging reads the tag set back and GET answers x-amz-tagging-count; a tag set PutObjectTagging refuses (a key starting with aws:, a key given twice) answers 400 InvalidTag and stores nothing',
    source: `${formsV4}; ${postObject}; ${awsApi('PutObjectTagging')}; ${s3Tests('test_post_object_tags_authenticated_request')}`,
    async run(target) {
      const bucket = await target.makeBucket('post-tagging');
      const request = (key: string, tags: Tag[]): FormRequest => {
        const tagging = taggingXml(tags);
        return { bucket, fields: { key, tagging }, conditions: [{ key }, { tagging }] };
      };
      const tags: Tag[] = [['team', 'blue'], ['stage', 'draft & 1']];
      const stored = await form(target, 'with a tagging field', bucket, v4Form(target, request('tagged.txt', tags)), 'tagged by a form');
      expectThat(stored.status === 204, `a form with a tagging field answered ${describeAnswer(stored)} ${stored.text.slice(0, 200)}`);
      const read = await target.raw({ method: 'GET', path: `/${bucket}/tagged.txt`, query: { tagging: '' } });
      expectThat(read.status === 200 && tagsRead(read) === tagText(tags), `GetObjectTagging of the posted object answered ${describeAnswer(read)} with ${tagsRead(read)}, expected ${tagText(tags)}`);
      const object = await target.raw({ method: 'GET', path: `/${bucket}/tagged.txt` });
      expectThat(object.text === 'tagged by a form' && object.headers['x-amz-tagging-count'] === '2', `GET of the posted object answered ${JSON.stringify(object.text.slice(0, 40))} with x-amz-tagging-count ${object.headers['x-amz-tagging-count']}`);
      const refusals: [string, Tag[]][] = [
        ['a key starting with aws:', [['aws:owner', 'me']]],
        ['a key given twice', [['twice', '1'], ['twice', '2']]],
      ];
      for (const [what, refused] of refusals) {
        const answer = await form(target, `with a tagging field holding ${what}`, bucket, v4Form(target, request('badly-tagged.txt', refused)), 'x');
        expectRawError(answer, 400, 'InvalidTag', `a form whose tagging field holds ${what}`);
        await expectAbsent(target, bucket, 'badly-tagged.txt', `a form whose tagging field holds ${what}`);
      }
    },
  },
];

const conditionChecks: Check[] = [
  {
    id: 's3.policy.source-ip',
    spec: 'S3 bucket policy conditions',
    title: 'anonymous GETs are let in by an Allow whose IpAddress on aws:SourceIp holds (every address) or whose NotIpAddress holds (outside 192.0.2.0/24), refused with 403 AccessDenied where IpAddress names only 192.0.2.0/24 or NotIpAddress every address, and a Deny whose IpAddress holds wins over the Allow',
    source: `${bucketPolicies}; ${policyKeys}; ${iamOperators}`,
    async run(target) {
      const bucket = await openBucket(target, 'policy-source-ip');
      await objects(target, bucket, ['every/doc', 'every/secret', 'documentation/doc', 'outside/doc', 'nowhere/doc']);
      await withPolicy(target, bucket, [
        everyone(bucket, 'EveryAddress', 's3:GetObject', 'every/*', { IpAddress: { 'aws:SourceIp': everyAddress } }),
        everyone(bucket, 'DocumentationNetOnly', 's3:GetObject', 'documentation/*', { IpAddress: { 'aws:SourceIp': documentationNet } }),
        everyone(bucket, 'OutsideDocumentationNet', 's3:GetObject', 'outside/*', { NotIpAddress: { 'aws:SourceIp': documentationNet } }),
        everyone(bucket, 'OutsideEveryAddress', 's3:GetObject', 'nowhere/*', { NotIpAddress: { 'aws:SourceIp': everyAddress } }),
        everyone(bucket, 'DenySecretEverywhere', 's3:GetObject', 'every/secret', { IpAddress: { 'aws:SourceIp': everyAddress } }, 'Deny'),
      ]);
      await expectAnonymousRead(target, bucket, 'every/doc', bodyFor('every/doc'), 'IpAddress 0.0.0.0/0 and ::/0');
      await expectAnonymousDenied(target, bucket, 'documentation/doc', bodyFor('documentation/doc'), `IpAddress ${documentationNet} only`);
      await expectAnonymousRead(target, bucket, 'outside/doc', bodyFor('outside/doc'), `NotIpAddress ${documentationNet}`);
      await expectAnonymousDenied(target, bucket, 'nowhere/doc', bodyFor('nowhere/doc'), 'NotIpAddress 0.0.0.0/0 and ::/0');
      await expectAnonymousDenied(target, bucket, 'every/secret', bodyFor('every/secret'), 'a Deny whose IpAddress holds, beside an Allow');
    },
  },
  {
    id: 's3.policy.null',
    spec: 'S3 bucket policy conditions',
    title: 'Null on s3:x-amz-storage-class: an Allow with "false" lets in an anonymous PUT that sends x-amz-storage-class and refuses one without it (403 AccessDenied, nothing stored); an Allow with "true" the other way round',
    source: `${policyKeys}; ${awsApi('PutObject')}; ${iamOperators}`,
    async run(target) {
      const bucket = await openBucket(target, 'policy-null');
      await withPolicy(target, bucket, [
        everyone(bucket, 'ClassGiven', 's3:PutObject', 'given/*', { Null: { 's3:x-amz-storage-class': 'false' } }),
        everyone(bucket, 'ClassAbsent', 's3:PutObject', 'absent/*', { Null: { 's3:x-amz-storage-class': 'true' } }),
      ]);
      const cases: [key: string, storageClass: boolean, allowed: boolean][] = [
        ['given/with-class', true, true],
        ['given/without-class', false, false],
        ['absent/without-class', false, true],
        ['absent/with-class', true, false],
      ];
      for (const [key, storageClass, allowed] of cases) {
        const what = `an anonymous PUT of ${key} ${storageClass ? 'with' : 'without'} x-amz-storage-class`;
        await anonymousPut(target, bucket, key, storageClass ? { 'x-amz-storage-class': 'STANDARD' } : {}, allowed, what);
      }
    },
  },
  {
    id: 's3.policy.current-time',
    spec: 'S3 bucket policy conditions',
    title: 'aws:CurrentTime: anonymous GETs are let in by an Allow with DateGreaterThan a past instant, or DateGreaterThan a past and DateLessThan a future one, and refused with 403 AccessDenied by one with DateLessThan a past instant or DateGreaterThan a future one',
    source: `${policyKeys}; ${iamOperators}`,
    async run(target) {
      const bucket = await openBucket(target, 'policy-current-time');
      await objects(target, bucket, ['since/doc', 'until/doc', 'window/doc', 'later/doc']);
      const past = '2001-01-01T00:00:00Z';
      const future = '2999-01-01T00:00:00Z';
      await withPolicy(target, bucket, [
        everyone(bucket, 'SinceLongAgo', 's3:GetObject', 'since/*', { DateGreaterThan: { 'aws:CurrentTime': past } }),
        everyone(bucket, 'UntilLongAgo', 's3:GetObject', 'until/*', { DateLessThan: { 'aws:CurrentTime': past } }),
        everyone(bucket, 'OpenWindow', 's3:GetObject', 'window/*', { DateGreaterThan: { 'aws:CurrentTime': past }, DateLessThan: { 'aws:CurrentTime': future } }),
        everyone(bucket, 'FromFarFuture', 's3:GetObject', 'later/*', { DateGreaterThan: { 'aws:CurrentTime': future } }),
      ]);
      await expectAnonymousRead(target, bucket, 'since/doc', bodyFor('since/doc'), `DateGreaterThan ${past}`);
      await expectAnonymousDenied(target, bucket, 'until/doc', bodyFor('until/doc'), `DateLessThan ${past}`);
      await expectAnonymousRead(target, bucket, 'window/doc', bodyFor('window/doc'), `DateGreaterThan ${past} and DateLessThan ${future}`);
      await expectAnonymousDenied(target, bucket, 'later/doc', bodyFor('later/doc'), `DateGreaterThan ${future}`);
    },
  },
  {
    id: 's3.policy.for-any-value',
    spec: 'S3 bucket policy conditions',
    title: 'ForAnyValue:StringLike on s3:RequestObjectTagKeys lets in an anonymous PUT when one of the tag keys it sends matches (the tags are stored), and refuses with 403 AccessDenied, storing nothing, a PUT whose tag keys all miss and a PUT without tags',
    source: `${awsGuide('tagging-and-policies')}; ${policyKeys}; ${iamMultiValued}`,
    async run(target) {
      const bucket = await openBucket(target, 'policy-for-any-value');
      await withPolicy(target, bucket, [
        everyone(bucket, 'TeamTagged', ['s3:PutObject', 's3:PutObjectTagging'], 'tagged/*', { 'ForAnyValue:StringLike': { 's3:RequestObjectTagKeys': ['team-*', 'project'] } }),
      ]);
      const cases: [key: string, tagging: string | undefined, allowed: boolean][] = [
        ['tagged/team', 'team-blue=1&colour=red', true],
        ['tagged/project', 'project=storage', true],
        ['tagged/other', 'colour=red&size=large', false],
        ['tagged/untagged', undefined, false],
      ];
      for (const [key, tagging, allowed] of cases) {
        const what = `an anonymous PUT of ${key} ${tagging === undefined ? 'without tags' : `tagged ${tagging}`}`;
        await anonymousPut(target, bucket, key, tagging === undefined ? {} : { 'x-amz-tagging': tagging }, allowed, what, async () => {
          const read = await target.raw({ method: 'GET', path: `/${bucket}/${key}`, query: { tagging: '' } });
          const sent = tagText([...new URLSearchParams(tagging)]);
          expectThat(tagsRead(read) === sent, `${what} stored tags ${tagsRead(read)}, expected ${sent}`);
        });
      }
    },
  },
  {
    id: 's3.policy.username-variable',
    spec: 'S3 bucket policy conditions',
    title: 'a bucket policy whose Resource and s3:prefix hold ${aws:username} lets a user read and list its own home prefix, and refuses with 403 AccessDenied its reads and listings of another user\'s prefix and an anonymous read of its prefix',
    source: `${bucketPolicies}; ${iamVariables}`,
    needs: ['iam'],
    run: (target) =>
      withIam(target, async (scope) => {
        const reader = await scope.user('pv-reader');
        const bucket = await scope.bucket('policy-username', { [`home/${reader.accessKey}/note.txt`]: "the reader's own note", 'home/someone-else/note.txt': "another user's note" });
        const unblocked = await deletePublicAccessBlock(target, bucket);
        expectThat(unblocked.status === 204 || unblocked.status === 200 || unblocked.status === 404, `DeletePublicAccessBlock answered ${describeAnswer(unblocked)}`);
        await withPolicy(target, bucket, [
          { Sid: 'OwnHome', Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: `arn:aws:s3:::${bucket}/home/\${aws:username}/*` },
          { Sid: 'ListOwnHome', Effect: 'Allow', Principal: '*', Action: 's3:ListBucket', Resource: `arn:aws:s3:::${bucket}`, Condition: { StringLike: { 's3:prefix': ['home/${aws:username}/*'] } } },
        ]);
        const own = await readAs(reader, bucket, `home/${reader.accessKey}/note.txt`);
        expectThat(own === "the reader's own note", `the user's GET of its own home answered ${own}`);
        const other = await readAs(reader, bucket, 'home/someone-else/note.txt');
        expectThat(other === 'AccessDenied', `the user's GET of another user's home answered ${other}, expected AccessDenied`);
        const listing = await listAs(reader, bucket, `home/${reader.accessKey}/`);
        expectThat(listing === `home/${reader.accessKey}/note.txt`, `the user's listing of its own home answered ${listing}`);
        const otherListing = await listAs(reader, bucket, 'home/someone-else/');
        expectThat(otherListing === 'AccessDenied', `the user's listing of another user's home answered ${otherListing}, expected AccessDenied`);
        await expectAnonymousDenied(target, bucket, `home/${reader.accessKey}/note.txt`, "the reader's own note", 'no ${aws:username} for an anonymous request');
      }),
  },
];

/** What `who` gets for a GET: the body, or the error code. */
function readAs(who: Signer, bucket: string, key: string): Promise<string> {
  return who.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key })).then(
    (object) => object.Body!.transformToString(),
    (error: Error) => error.name,
  );
}

/** What `who` gets for a listing under `prefix`: the keys joined by commas, or the error code. */
function listAs(who: Signer, bucket: string, prefix: string): Promise<string> {
  return who.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix })).then(
    (listing) => (listing.Contents ?? []).map((entry) => entry.Key).join(','),
    (error: Error) => error.name,
  );
}

/** The owner's canonical id, from GetBucketAcl. */
async function ownerIdOf(target: Target, bucket: string): Promise<string> {
  const acl = await target.raw({ method: 'GET', path: `/${bucket}`, query: { acl: '' } });
  const id = acl.xml.AccessControlPolicy?.Owner?.ID;
  expectThat(acl.status === 200 && typeof id === 'string' && id !== '', `GetBucketAcl answered ${describeAnswer(acl)} without an Owner ID`);
  return id;
}

const grantXml = (grantee: string, permission: string) =>
  `<Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ${grantee.startsWith('http') ? `xsi:type="Group"><URI>${grantee}</URI>` : `xsi:type="CanonicalUser"><ID>${grantee}</ID>`}</Grantee><Permission>${permission}</Permission></Grant>`;
const aclBody = (owner: string, grants: [grantee: string, permission: string][]) =>
  `<AccessControlPolicy xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Owner><ID>${owner}</ID></Owner><AccessControlList>${grants.map(([grantee, permission]) => grantXml(grantee, permission)).join('')}</AccessControlList></AccessControlPolicy>`;

function putAcl(target: Target, path: string, acl: { body?: string; headers?: Record<string, string> }): Promise<RawAnswer> {
  return target.raw({ method: 'PUT', path, query: { acl: '' }, ...(acl.body === undefined ? {} : { body: acl.body, headers: { 'content-type': 'application/xml' } }), ...(acl.headers ? { headers: acl.headers } : {}) });
}

const grantsOf = async (target: Target, path: string) => listOf((await target.raw({ method: 'GET', path, query: { acl: '' } })).xml.AccessControlPolicy?.AccessControlList?.Grant);

const grantChecks: Check[] = [
  {
    id: 's3.acl.grant-all-users',
    spec: 'S3 PutObjectAcl (grants)',
    title: 'under ObjectWriter, PutObjectAcl with an AccessControlPolicy granting AllUsers READ lets an anonymous GET read that object (and no other); a grant of an unknown permission answers 400 MalformedACLError and keeps the ACL; PutBucketAcl with x-amz-grant-read to AllUsers lets an anonymous listing in but not an anonymous PUT; under BucketOwnerEnforced the same grant answers 400 AccessControlListNotSupported',
    source: `${awsApi('PutObjectAcl')}; ${awsApi('PutBucketAcl')}; ${aclGuide}; ${ownership}`,
    async run(target) {
      const bucket = await aclBucket(target, 'acl-all-users');
      await objects(target, bucket, ['granted', 'private']);
      const owner = await ownerIdOf(target, bucket);
      await expectAnonymousDenied(target, bucket, 'granted', bodyFor('granted'), 'before any grant');
      const granted = await putAcl(target, `/${bucket}/granted`, { body: aclBody(owner, [[owner, 'FULL_CONTROL'], [allUsers, 'READ']]) });
      expectThat(granted.status === 200, `PutObjectAcl granting AllUsers READ answered ${describeAnswer(granted)}`);
      const grants = await grantsOf(target, `/${bucket}/granted`);
      expectThat(grants.some((grant) => grant.Grantee?.URI === allUsers && grant.Permission === 'READ'), `GetObjectAcl lists no READ grant to AllUsers: ${JSON.stringify(grants)}`);
      await expectAnonymousRead(target, bucket, 'granted', bodyFor('granted'), 'after PutObjectAcl granted AllUsers READ');
      await expectAnonymousDenied(target, bucket, 'private', bodyFor('private'), 'an object the grant is not on');
      const malformed = await putAcl(target, `/${bucket}/granted`, { body: aclBody(owner, [[owner, 'FULL_CONTROL'], [allUsers, 'READ_EVERYTHING']]) });
      expectRawError(malformed, 400, 'MalformedACLError', 'PutObjectAcl with the permission READ_EVERYTHING');
      await expectAnonymousRead(target, bucket, 'granted', bodyFor('granted'), 'after a refused PutObjectAcl');
      const listing = () => anonymous(target, 'GET', `/${bucket}`);
      expectRawError(await listing(), 403, 'AccessDenied', 'an anonymous listing before any bucket grant');
      const bucketGrant = await putAcl(target, `/${bucket}`, { headers: { 'x-amz-grant-read': `uri="${allUsers}"`, 'x-amz-grant-full-control': `id="${owner}"` } });
      expectThat(bucketGrant.status === 200, `PutBucketAcl with x-amz-grant-read to AllUsers answered ${describeAnswer(bucketGrant)}`);
      const listed = await listing();
      const keys = listOf(listed.xml.ListBucketResult?.Contents).map((entry) => String(entry.Key)).join(',');
      expectThat(listed.status === 200 && keys === 'granted,private', `an anonymous listing after PutBucketAcl granted AllUsers READ answered ${describeAnswer(listed)} with keys ${keys}`);
      const written = await anonymous(target, 'PUT', `/${bucket}/anonymous`, { body: 'x' });
      expectRawError(written, 403, 'AccessDenied', 'an anonymous PUT into a bucket whose ACL grants AllUsers READ only');
      await expectAbsent(target, bucket, 'anonymous', 'an anonymous PUT into a bucket whose ACL grants AllUsers READ only');
      const enforced = await target.makeBucket('acl-enforced-grant');
      await put(target, enforced, 'doc', bodyFor('doc'));
      const refused = await putAcl(target, `/${enforced}/doc`, { body: aclBody(owner, [[owner, 'FULL_CONTROL'], [allUsers, 'READ']]) });
      expectRawError(refused, 400, 'AccessControlListNotSupported', 'PutObjectAcl granting AllUsers READ under BucketOwnerEnforced');
      await expectAnonymousDenied(target, enforced, 'doc', bodyFor('doc'), 'after a grant refused under BucketOwnerEnforced');
    },
  },
  {
    id: 's3.acl.grant-user-by-id',
    spec: 'S3 PutObjectAcl (grants)',
    title: 'under ObjectWriter, x-amz-grant-read naming another user\'s canonical id (its ListBuckets Owner ID) lets that user read the object, not change its ACL, while anonymous reads stay refused; x-amz-grant-write on the bucket lets it write objects but not list them',
    source: `${awsApi('PutObjectAcl')}; ${awsApi('PutBucketAcl')}; ${awsApi('ListBuckets')}; ${aclGuide}`,
    needs: ['iam'],
    run: (target) =>
      withIam(target, async (scope) => {
        const listOwn = await scope.policy('list-buckets', allowDocument(['s3:ListAllMyBuckets'], ['arn:aws:s3:::*']));
        const grantee = await scope.user('acl-grantee', [listOwn]);
        const granteeId = (await grantee.s3.send(new ListBucketsCommand({}))).Owner?.ID;
        expectThat(typeof granteeId === 'string' && granteeId !== '', 'ListBuckets by the user answered no Owner ID');
        const bucket = await aclBucket(target, 'acl-user');
        await objects(target, bucket, ['shared', 'unshared']);
        const owner = await ownerIdOf(target, bucket);
        expectThat((await readAs(grantee, bucket, 'shared')) === 'AccessDenied', 'the user read the object before any grant');
        const granted = await putAcl(target, `/${bucket}/shared`, { headers: { 'x-amz-grant-read': `id="${granteeId}"`, 'x-amz-grant-full-control': `id="${owner}"` } });
        expectThat(granted.status === 200, `PutObjectAcl with x-amz-grant-read to the user answered ${describeAnswer(granted)}`);
        const read = await readAs(grantee, bucket, 'shared');
        expectThat(read === bodyFor('shared'), `the user's GET after a READ grant answered ${read}`);
        const unshared = await readAs(grantee, bucket, 'unshared');
        expectThat(unshared === 'AccessDenied', `the user's GET of an object it holds no grant on answered ${unshared}`);
        const relabel = await grantee.s3.send(new PutObjectAclCommand({ Bucket: bucket, Key: 'shared', ACL: 'public-read' })).then(() => 'accepted', (error: Error) => error.name);
        expectThat(relabel === 'AccessDenied', `PutObjectAcl by a user holding READ answered ${relabel}, expected AccessDenied`);
        await expectAnonymousDenied(target, bucket, 'shared', bodyFor('shared'), 'a READ grant to one user');
        const writeGrant = await putAcl(target, `/${bucket}`, { headers: { 'x-amz-grant-write': `id="${granteeId}"`, 'x-amz-grant-full-control': `id="${owner}"` } });
        expectThat(writeGrant.status === 200, `PutBucketAcl with x-amz-grant-write to the user answered ${describeAnswer(writeGrant)}`);
        const written = await grantee.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'from-grantee', Body: 'written by the grantee' })).then(() => 'stored', (error: Error) => error.name);
        expectThat(written === 'stored', `the user's PUT after a bucket WRITE grant answered ${written}`);
        expectThat((await textOf(target, bucket, 'from-grantee')) === 'written by the grantee', 'the object the user wrote does not read back');
        const listing = await listAs(grantee, bucket, '');
        expectThat(listing === 'AccessDenied', `the user's listing with a bucket WRITE grant only answered ${listing}, expected AccessDenied`);
      }),
  },
];

/** The text of an XML element as a parser that keeps character references would read it. */
const xmlTextOf = (text: string) =>
  text
    .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
    .replace(/&#([0-9]+);/g, (_, decimal: string) => String.fromCodePoint(Number(decimal)))
    .replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');

const elements = (text: string, name: string) => [...text.matchAll(new RegExp(`<${name}>([\\s\\S]*?)</${name}>`, 'g'))].map((match) => match[1]!);

const listingChecks: Check[] = [
  {
    id: 's3.list-v1.control-characters',
    spec: 'S3 ListObjects (v1)',
    title: 'ListObjects (v1) without encoding-type answers keys holding a line feed and U+0001, and a prefix of a line feed, as stored (written as characters or character references, never percent-encoded) and without EncodingType; with encoding-type=url it percent-encodes them and says EncodingType url',
    source: `${awsApi('ListObjects')}; ${awsGuide('object-keys')}; ${s3Tests('test_bucket_list_prefix_unreadable')}`,
    async run(target) {
      const bucket = await target.makeBucket('list-v1-control');
      const keys = ['ctl/line\nbreak', 'ctl/one\u0001two'];
      for (const key of keys) await put(target, bucket, key, 'x');
      const plain = await target.raw({ method: 'GET', path: `/${bucket}`, query: { prefix: 'ctl/' } });
      expectThat(plain.status === 200, `ListObjects answered ${describeAnswer(plain)}`);
      const listed = elements(plain.text, 'Key').map(xmlTextOf);
      expectThat(JSON.stringify(listed) === JSON.stringify(keys), `ListObjects without encoding-type answered keys ${JSON.stringify(listed)}, expected ${JSON.stringify(keys)}`);
      expectThat(!plain.text.includes('<EncodingType>'), 'ListObjects without encoding-type answered an EncodingType element');
      const unreadable = await target.raw({ method: 'GET', path: `/${bucket}`, query: { prefix: '\n' } });
      const prefix = elements(unreadable.text, 'Prefix').map(xmlTextOf)[0];
      expectThat(unreadable.status === 200 && prefix === '\n', `ListObjects with a line feed as prefix answered ${describeAnswer(unreadable)} with Prefix ${JSON.stringify(prefix)}`);
      const encoded = await target.raw({ method: 'GET', path: `/${bucket}`, query: { prefix: 'ctl/', 'encoding-type': 'url' } });
      const raw = elements(encoded.text, 'Key');
      expectThat(encoded.status === 200 && raw.every((key) => /^[\x21-\x7e]*$/.test(key)) && JSON.stringify(raw.map((key) => decodeURIComponent(key))) === JSON.stringify(keys), `ListObjects with encoding-type=url answered keys ${JSON.stringify(raw)}`);
      expectThat(encoded.xml.ListBucketResult?.EncodingType === 'url', `ListObjects with encoding-type=url answered EncodingType ${String(encoded.xml.ListBucketResult?.EncodingType)}`);
    },
  },
];

export const formPolicyGrantChecks: Check[] = [...formChecks, ...conditionChecks, ...grantChecks, ...listingChecks];
