/**
 * Black-box IAM checks: users, policies and groups made through the admin API's IAM routes, then
 * used over S3 with their own credentials. Every check needs the admin API and the IAM routes
 * (both probed) and removes what it made, passed or failed (iam/support.ts).
 */
import { HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { errorOf, expectThat, type Check } from '../runner/check.js';
import type { Capability } from '../runner/capabilities.js';
import { accountChecks } from './iam/accounts.js';
import { allowDocument, bucketResources, expectDenied, expectReads, expectRefusedCredential, readText, withIam } from './iam/support.js';

const userChecks: Check[] = [
  {
    id: 'iam.readonly.refuses-writes',
    spec: 'IAM policies',
    title: 'a user holding readonly lists and reads, but a PUT is 403 AccessDenied and stores nothing',
    run: (target) =>
      withIam(target, async (scope) => {
        const bucket = await scope.bucket('iam-ro', { 'seen.txt': 'seen' });
        const reader = await scope.user('ro', ['readonly']);
        const listed = await reader.s3.send(new ListObjectsV2Command({ Bucket: bucket }));
        expectThat((listed.Contents ?? []).some((object) => object.Key === 'seen.txt'), `the readonly user's listing of ${bucket} lacks seen.txt`);
        await expectReads(reader, bucket, 'seen.txt', 'seen', 'the readonly user');
        await expectDenied(reader.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'written.txt', Body: 'no' })), 'a PUT by the readonly user');
        const head = await errorOf(target.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'written.txt' })));
        expectThat(head.status === 404, `a refused PUT stored the object anyway (root's HEAD answered ${head.name})`);
      }),
  },
  {
    id: 'iam.policy.deny-wins',
    spec: 'IAM policies',
    title: "an explicit Deny in a user's second policy wins over the Allow of its first",
    run: (target) =>
      withIam(target, async (scope) => {
        const bucket = await scope.bucket('iam-deny', { 'open.txt': 'open', 'private/plan.txt': 'plan' });
        const allow = await scope.policy('allow-all', allowDocument(['s3:*'], bucketResources(bucket)));
        const deny = await scope.policy('deny-private', allowDocument(['s3:GetObject'], [`arn:aws:s3:::${bucket}/private/*`], 'Deny'));
        const user = await scope.user('denied', [allow, deny]);
        await expectReads(user, bucket, 'open.txt', 'open', 'under the Allow alone');
        await expectDenied(readText(user.s3, bucket, 'private/plan.txt'), 'a GET that one policy allows and the other denies');
      }),
  },
  {
    id: 'iam.user.disabled-refused',
    spec: 'IAM users',
    title: 'a disabled user is refused (InvalidAccessKeyId or AccessDenied) and works again once enabled',
    run: (target) =>
      withIam(target, async (scope) => {
        const bucket = await scope.bucket('iam-off', { 'a.txt': 'a' });
        const user = await scope.user('off', ['readonly']);
        const query = `accessKey=${encodeURIComponent(user.accessKey)}`;
        await expectReads(user, bucket, 'a.txt', 'a', 'the enabled user');
        await scope.root('POST', 'user/disable', query);
        await expectRefusedCredential(user, bucket, 'a.txt', 'the disabled user');
        await scope.root('POST', 'user/enable', query);
        await expectReads(user, bucket, 'a.txt', 'a', 'the user enabled again');
      }),
  },
  {
    id: 'iam.group.policies-follow-membership',
    spec: 'IAM groups',
    title: "a group's policies apply to its members while it is enabled, not while it is disabled nor after a member is taken out",
    run: (target) =>
      withIam(target, async (scope) => {
        const bucket = await scope.bucket('iam-group', { 'g.txt': 'g' });
        const member = await scope.user('member');
        await expectDenied(readText(member.s3, bucket, 'g.txt'), 'a GET by a user with no policy of its own, before joining');
        const group = await scope.group('readers', [member.accessKey], ['readonly']);
        const query = `group=${encodeURIComponent(group)}`;
        await expectReads(member, bucket, 'g.txt', 'g', 'a member of an enabled group holding readonly');
        await scope.root('POST', 'group/disable', query);
        await expectDenied(readText(member.s3, bucket, 'g.txt'), 'a GET by a member while its group is disabled');
        await scope.root('POST', 'group/enable', query);
        await expectReads(member, bucket, 'g.txt', 'g', 'a member once its group is enabled again');
        await scope.root('POST', 'group/remove', query, { members: [member.accessKey] });
        await expectDenied(readText(member.s3, bucket, 'g.txt'), 'a GET by a user taken out of the group');
      }),
  },
];

/** Every IAM check; each needs the admin API and its IAM routes, which the run probes first. */
export const iamChecks: Check[] = [...userChecks, ...accountChecks].map((check) => ({ ...check, needs: [...new Set([...(check.needs ?? []), 'admin', 'iam'] as Capability[])] }));
