/**
 * IAM checks on credentials made from credentials: service accounts (secret shown once, inline
 * policy narrowing, bound to their user's state), delegated administration (a user's admin
 * actions honoured, nothing beyond them), policy validation, and who may add a service account.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { errorOf, expectThat, type Check } from '../../runner/check.js';
import { allowDocument, bucketResources, expectAdminRefusal, expectDenied, expectReads, expectRefusedCredential, iamPath, summary, withIam, type IamScope, type Identity, type Signer } from './support.js';

/** Adds a service account of `parent` by root; its keys from the answer. */
async function addServiceAccount(scope: IamScope, parent: string, policy?: unknown): Promise<Signer> {
  const answer = await scope.root('POST', 'svcacct/add', '', { parent, ...(policy === undefined ? {} : { policy }) });
  const account = answer.body.serviceAccount as { accessKey?: unknown; secretKey?: unknown; parent?: unknown } | undefined;
  expectThat(typeof account?.accessKey === 'string' && typeof account.secretKey === 'string' && account.secretKey.length >= 8, 'svcacct/add answered no serviceAccount with an accessKey and a secretKey');
  expectThat(account.parent === parent, `svcacct/add made an account of ${String(account.parent)}, not of ${parent}`);
  return scope.signer({ accessKey: account.accessKey, secretKey: account.secretKey });
}

/** List and info name the account and never carry its secret. */
async function expectSecretHidden(scope: IamScope, parent: string, account: Identity): Promise<void> {
  const list = await scope.root('GET', 'svcacct/list', `parent=${encodeURIComponent(parent)}`);
  const listed = (list.body.serviceAccounts ?? []) as { accessKey?: string }[];
  expectThat(listed.some((entry) => entry.accessKey === account.accessKey), 'svcacct/list of its user does not name the new account');
  const info = await scope.root('GET', 'svcacct/info', `accessKey=${encodeURIComponent(account.accessKey)}`);
  expectThat(info.body.serviceAccount?.accessKey === account.accessKey, 'svcacct/info does not describe the account asked for');
  for (const [route, answer] of [['svcacct/list', list], ['svcacct/info', info]] as const) {
    const text = JSON.stringify(answer.body);
    expectThat(!text.includes(account.secretKey) && !/"secretKey"/.test(text), `${route} carries the account's secret key (it belongs in the add answer only)`);
  }
}

const serviceAccountCheck: Check = {
  id: 'iam.service-account.lifecycle',
  spec: 'IAM service accounts',
  title: "a service account's secret is in the add answer only; its inline policy narrows its user's rights; it is refused while its user is disabled and gone with its user",
  run: (target) =>
    withIam(target, async (scope) => {
      const bucket = await scope.bucket('iam-sa', { 'in/a.txt': 'inside', 'out/b.txt': 'outside' });
      const user = await scope.user('sa-owner', ['readwrite']);
      const account = await addServiceAccount(scope, user.accessKey, allowDocument(['s3:GetObject'], [`arn:aws:s3:::${bucket}/in/*`]));
      await expectSecretHidden(scope, user.accessKey, account);
      await expectReads(account, bucket, 'in/a.txt', 'inside', 'the service account inside its inline policy');
      await expectReads(user, bucket, 'out/b.txt', 'outside', 'its user, outside the inline policy');
      await expectDenied(account.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'in/new.txt', Body: 'x' })), 'a PUT by the service account that its user may make but its inline policy does not allow');
      const userKey = `accessKey=${encodeURIComponent(user.accessKey)}`;
      await scope.root('POST', 'user/disable', userKey);
      await expectRefusedCredential(account, bucket, 'in/a.txt', 'the service account of a disabled user');
      await scope.root('POST', 'user/enable', userKey);
      await expectReads(account, bucket, 'in/a.txt', 'inside', 'the service account once its user is enabled again');
      await scope.root('POST', 'user/remove', userKey);
      const info = await target.admin('GET', `${iamPath}/svcacct/info`, `accessKey=${encodeURIComponent(account.accessKey)}`);
      expectAdminRefusal(info, 404, 'NoSuchServiceAccount', 'svcacct/info of an account whose user was removed');
      await expectRefusedCredential(account, bucket, 'in/a.txt', 'the service account of a removed user');
    }),
};

const delegatedAdminCheck: Check = {
  id: 'iam.admin.delegated',
  spec: 'IAM delegated administration',
  title: 'a user holding admin:ListUsers and admin:CreateUser lists users and adds a user without policies, but adding one with consoleAdmin is 403 and adds nothing, and an admin route it holds no action for is 403 JSON',
  run: (target) =>
    withIam(target, async (scope) => {
      const policy = await scope.policy('user-admin', allowDocument(['admin:ListUsers', 'admin:CreateUser'], ['arn:aws:s3:::*']));
      const delegate = await scope.user('delegate', [policy]);
      const listed = await scope.as(delegate, 'GET', `${iamPath}/users`);
      expectThat(listed.status === 200 && Array.isArray(listed.body.users) && listed.body.users.some((user: { accessKey?: string }) => user.accessKey === delegate.accessKey), `iam/users by the delegate answered ${summary(listed)}`);
      const plain = scope.plannedUser('plain');
      const added = await scope.as(delegate, 'POST', `${iamPath}/user/add`, '', plain);
      expectThat(added.status === 200, `user/add of a user without policies by the delegate answered ${summary(added)}`);
      await scope.root('GET', 'user/info', `accessKey=${encodeURIComponent(plain.accessKey)}`);
      const mighty = scope.plannedUser('mighty');
      const refused = await scope.as(delegate, 'POST', `${iamPath}/user/add`, '', { ...mighty, policies: ['consoleAdmin'] });
      expectAdminRefusal(refused, 403, 'AccessDenied', 'user/add with consoleAdmin by a delegate without admin:AttachUserOrGroupPolicy');
      const after = await target.admin('GET', `${iamPath}/user/info`, `accessKey=${encodeURIComponent(mighty.accessKey)}`);
      expectThat(after.status === 404, `the refused user/add created the user anyway (user/info answered ${summary(after)})`);
      const pools = await scope.as(delegate, 'GET', '/svc/admin/v3/pools/list');
      expectAdminRefusal(pools, 403, 'AccessDenied', 'pools/list by a delegate holding no action for it');
    }),
};

const unknownActionCheck: Check = {
  id: 'iam.policy.unknown-action',
  spec: 'IAM policies',
  title: 'a policy naming an unknown action (s3:GetObjekt) is refused with MalformedPolicy naming it, and nothing is stored',
  run: (target) =>
    withIam(target, async (scope) => {
      const name = scope.plannedPolicy('typo');
      const answer = await target.admin('POST', `${iamPath}/policy/create`, `name=${encodeURIComponent(name)}`, { body: JSON.stringify(allowDocument(['s3:GetObjekt'], ['arn:aws:s3:::*'])) });
      const stored = await target.admin('GET', `${iamPath}/policy/info`, `name=${encodeURIComponent(name)}`);
      const keeps = stored.status === 200 ? '; the policy was stored' : '';
      expectThat(answer.status === 400 && answer.body.Code === 'MalformedPolicy', `policy/create with the unknown action s3:GetObjekt answered ${summary(answer)}, expected 400 MalformedPolicy${keeps} (the target accepts actions it does not know)`);
      expectThat(typeof answer.body.Message === 'string' && answer.body.Message.includes('s3:GetObjekt'), `the MalformedPolicy message does not name s3:GetObjekt: ${JSON.stringify(answer.body.Message)}`);
      expectThat(!keeps, 'the refused policy was stored anyway');
    }),
};

const ownershipCheck: Check = {
  id: 'iam.service-account.ownership',
  spec: 'IAM service accounts',
  title: 'a user without admin:CreateServiceAccount cannot add a service account for another user (403, nothing added), but adds its own without any admin action',
  run: (target) =>
    withIam(target, async (scope) => {
      const bucket = await scope.bucket('iam-own', { 'own.txt': 'own' });
      const [owner, other] = [await scope.user('owner', ['readonly']), await scope.user('other', ['readonly'])];
      const foreign = await scope.as(owner, 'POST', `${iamPath}/svcacct/add`, '', { parent: other.accessKey });
      expectAdminRefusal(foreign, 403, 'AccessDenied', "svcacct/add for another user by a user without admin:CreateServiceAccount");
      const others = await scope.root('GET', 'svcacct/list', `parent=${encodeURIComponent(other.accessKey)}`);
      expectThat(Array.isArray(others.body.serviceAccounts) && others.body.serviceAccounts.length === 0, `the refused svcacct/add left ${JSON.stringify((others.body.serviceAccounts ?? []).map((entry: { accessKey?: string }) => entry.accessKey))} on the other user`);
      const own = await scope.as(owner, 'POST', `${iamPath}/svcacct/add`, '', {});
      expectThat(own.status === 200, `svcacct/add of its own by a user without admin actions answered ${summary(own)}`);
      const account = own.body.serviceAccount as { accessKey?: unknown; secretKey?: unknown; parent?: unknown } | undefined;
      expectThat(typeof account?.accessKey === 'string' && typeof account.secretKey === 'string' && account.parent === owner.accessKey, 'the own service account answered without keys or with another parent');
      const signer = scope.signer({ accessKey: account.accessKey, secretKey: account.secretKey });
      await expectReads(signer, bucket, 'own.txt', 'own', 'the service account the user made itself');
      const put = await errorOf(signer.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'more.txt', Body: 'x' })));
      expectThat(put.name === 'AccessDenied', `the service account of a readonly user may write (PUT answered ${put.name}): it holds more than its user`);
    }),
};

export const accountChecks: Check[] = [serviceAccountCheck, delegatedAdminCheck, unknownActionCheck, ownershipCheck];
