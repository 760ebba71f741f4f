/**
 * ACLs under Object Ownership, and server access logging's configuration, as AWS documents them:
 * a bucket with ACLs disabled (BucketOwnerEnforced, the default of a new bucket) refuses a
 * canned ACL; under ObjectWriter a canned ACL is kept, read back and lets an anonymous reader in;
 * PutBucketLogging keeps a target and prefix, refuses a target that does not exist, and an empty
 * status turns logging off.
 */
import { expectThat, type Check, type Target } from '../../runner/check.js';
import type { RawAnswer } from '../../runner/http.js';
import { expectRawError } from './support.js';
import { awsApi, awsGuide } from './sources.js';

const ownership = awsGuide('about-object-ownership');
const cannedAcls = awsGuide('acl-overview', 'canned-acl');
const loggingGuide = awsGuide('enable-server-access-logging');
const allUsers = 'http://acs.amazonaws.com/groups/global/AllUsers';

const describe = (answer: RawAnswer) => `${answer.status}${answer.code ? ` ${answer.code}` : ''}`;
const listOf = (value: unknown): Record<string, any>[] => (value === undefined ? [] : Array.isArray(value) ? value : [value as Record<string, any>]);

/** Makes a bucket whose Object Ownership is ObjectWriter and whose public access block is off (ACLs, public ones included, then apply). */
export async function aclBucket(target: Target, purpose: string): Promise<string> {
  const bucket = await target.makeBucket(purpose);
  const controls = '<OwnershipControls><Rule><ObjectOwnership>ObjectWriter</ObjectOwnership></Rule></OwnershipControls>';
  const set = await target.raw({ method: 'PUT', path: `/${bucket}`, query: { ownershipControls: '' }, body: controls, headers: { 'content-type': 'application/xml' } });
  expectThat(set.status === 200, `PutBucketOwnershipControls (ObjectWriter) answered ${describe(set)}`);
  const unblocked = await target.raw({ method: 'DELETE', path: `/${bucket}`, query: { publicAccessBlock: '' } });
  expectThat(unblocked.status === 204 || unblocked.status === 200 || unblocked.status === 404, `DeletePublicAccessBlock answered ${describe(unblocked)}`);
  return bucket;
}

const loggingBody = (targetBucket: string, prefix: string) =>
  `<BucketLoggingStatus xmlns="http://doc.s3.amazonaws.com/2006-03-01"><LoggingEnabled><TargetBucket>${targetBucket}</TargetBucket><TargetPrefix>${prefix}</TargetPrefix></LoggingEnabled></BucketLoggingStatus>`;

export const aclLoggingChecks: Check[] = [
  {
    id: 's3.acl.enforced-refuses-canned-acl',
    spec: 'S3 PutObject (ACLs under Object Ownership)',
    title: 'a new bucket has ACLs disabled (BucketOwnerEnforced): a PUT with a canned ACL answers 400 AccessControlListNotSupported and stores nothing',
    source: `${awsApi('PutObject')}; ${ownership}`,
    async run(target) {
      const bucket = await target.makeBucket('acl-enforced');
      const refused = await target.raw({ method: 'PUT', path: `/${bucket}/doc`, body: 'x', headers: { 'x-amz-acl': 'public-read' } });
      expectRawError(refused, 400, 'AccessControlListNotSupported', 'a PUT with x-amz-acl: public-read into a BucketOwnerEnforced bucket');
      const head = await target.raw({ method: 'HEAD', path: `/${bucket}/doc` });
      expectThat(head.status === 404, `the refused PUT stored an object (HEAD answered ${head.status})`);
    },
  },
  {
    id: 's3.acl.object-writer-canned-acl',
    spec: 'S3 GetObjectAcl (canned ACLs under ObjectWriter)',
    title: 'under ObjectWriter a PUT with x-amz-acl: public-read keeps the ACL: GetObjectAcl shows AllUsers READ, and an anonymous GET reads the object',
    source: `${awsApi('GetObjectAcl')}; ${cannedAcls}; ${ownership}`,
    async run(target) {
      const bucket = await aclBucket(target, 'acl-writer');
      const put = await target.raw({ method: 'PUT', path: `/${bucket}/public.txt`, body: 'for everyone', headers: { 'x-amz-acl': 'public-read' } });
      expectThat(put.status === 200, `a PUT with x-amz-acl: public-read under ObjectWriter answered ${describe(put)}`);
      const acl = await target.raw({ method: 'GET', path: `/${bucket}/public.txt`, query: { acl: '' } });
      expectThat(acl.status === 200, `GetObjectAcl answered ${describe(acl)}`);
      const grants = listOf(acl.xml.AccessControlPolicy?.AccessControlList?.Grant);
      expectThat(grants.some((grant) => grant.Grantee?.URI === allUsers && grant.Permission === 'READ'), `GetObjectAcl lists no READ grant to AllUsers: ${acl.text.slice(0, 400)}`);
      expectThat(grants.some((grant) => grant.Permission === 'FULL_CONTROL' && grant.Grantee?.ID !== undefined), `GetObjectAcl lists no FULL_CONTROL grant to the owner: ${acl.text.slice(0, 400)}`);
      const anonymous = await target.raw({ method: 'GET', path: `/${bucket}/public.txt`, unsigned: true });
      expectThat(anonymous.status === 200 && anonymous.text === 'for everyone', `an anonymous GET of a public-read object answered ${describe(anonymous)}`);
      const privateRead = await target.raw({ method: 'PUT', path: `/${bucket}/private.txt`, body: 'owner only', headers: { 'x-amz-acl': 'private' } });
      expectThat(privateRead.status === 200, `a PUT with x-amz-acl: private answered ${describe(privateRead)}`);
      const refused = await target.raw({ method: 'GET', path: `/${bucket}/private.txt`, unsigned: true });
      expectRawError(refused, 403, 'AccessDenied', 'an anonymous GET of a private object');
    },
  },
  {
    id: 's3.logging.configuration',
    spec: 'S3 PutBucketLogging',
    title: 'PutBucketLogging keeps the target bucket and prefix (GetBucketLogging reads them back), refuses a target that does not exist with 400 InvalidTargetBucketForLogging and keeps the configuration, and an empty BucketLoggingStatus turns logging off',
    source: `${awsApi('PutBucketLogging')}; ${awsApi('GetBucketLogging')}; ${loggingGuide}`,
    async run(target) {
      const source = await target.makeBucket('logging-source');
      const logs = await target.makeBucket('logging-target');
      const policy = JSON.stringify({
        Version: '2012-10-17',
        Statement: [{ Effect: 'Allow', Principal: { Service: 'logging.s3.amazonaws.com' }, Action: 's3:PutObject', Resource: `arn:aws:s3:::${logs}/access/*` }],
      });
      const allowed = await target.raw({ method: 'PUT', path: `/${logs}`, query: { policy: '' }, body: policy, headers: { 'content-type': 'application/json' } });
      expectThat(allowed.status === 204 || allowed.status === 200, `PutBucketPolicy for the logging service answered ${describe(allowed)}`);
      const put = await target.raw({ method: 'PUT', path: `/${source}`, query: { logging: '' }, body: loggingBody(logs, 'access/'), headers: { 'content-type': 'application/xml' } });
      expectThat(put.status === 200, `PutBucketLogging answered ${describe(put)}`);
      const readBack = async () => (await target.raw({ method: 'GET', path: `/${source}`, query: { logging: '' } })).xml.BucketLoggingStatus?.LoggingEnabled as Record<string, unknown> | undefined;
      const enabled = await readBack();
      expectThat(enabled?.TargetBucket === logs && enabled?.TargetPrefix === 'access/', `GetBucketLogging answered ${JSON.stringify(enabled)}`);
      const missing = await target.raw({ method: 'PUT', path: `/${source}`, query: { logging: '' }, body: loggingBody(`${logs}-never-made`, 'x/'), headers: { 'content-type': 'application/xml' } });
      expectRawError(missing, 400, 'InvalidTargetBucketForLogging', 'PutBucketLogging with a target bucket that does not exist');
      expectThat((await readBack())?.TargetBucket === logs, 'a refused PutBucketLogging changed the configuration');
      const off = await target.raw({ method: 'PUT', path: `/${source}`, query: { logging: '' }, body: '<BucketLoggingStatus xmlns="http://doc.s3.amazonaws.com/2006-03-01"/>', headers: { 'content-type': 'application/xml' } });
      expectThat(off.status === 200, `PutBucketLogging with an empty status answered ${describe(off)}`);
      expectThat((await readBack()) === undefined, 'logging is still on after an empty BucketLoggingStatus');
    },
  },
];
