/** `rc admin user ...` and `rc admin policy ...`: users and policies over the signed admin API. */
import { readFile } from 'node:fs/promises';
import { RcError, table, type RcContext } from './context.js';

const iam = '/svc/admin/v4/iam';

const userLine = (user: Record<string, any>): string => `${user.accessKey}: ${user.enabled ? 'enabled' : 'disabled'}, policies ${(user.policies as string[]).join(', ') || 'none'}`;

export async function user(context: RcContext, action: string, aliasName: string, accessKey: string | undefined, secretKey: string | undefined, policies: string | undefined): Promise<void> {
  const alias = await context.alias(aliasName);
  if (action === 'list') {
    const answer = await context.admin(alias, 'GET', `${iam}/users`);
    context.print(answer, () => ((answer.users as any[]).length === 0 ? 'no users' : table(['ACCESS KEY', 'STATE', 'POLICIES'], (answer.users as any[]).map((u) => [u.accessKey, u.enabled ? 'enabled' : 'disabled', (u.policies as string[]).join(',') || '-']))));
    return;
  }
  if (accessKey === undefined) throw new RcError(`rc admin user ${action} needs an access key`, 2);
  if (action === 'add') {
    if (secretKey === undefined) throw new RcError('rc admin user add needs an access key and a secret key', 2);
    const body = { accessKey, secretKey, policies: policies === undefined ? [] : policies.split(',').filter((name) => name !== '') };
    const answer = await context.admin(alias, 'POST', `${iam}/user/add`, {}, JSON.stringify(body));
    context.print(answer, () => `added ${userLine(answer.user)}`);
    return;
  }
  if (action === 'remove') {
    const answer = await context.admin(alias, 'POST', `${iam}/user/remove`, { accessKey });
    context.print(answer, () => `removed user ${accessKey}`);
    return;
  }
  if (action !== 'enable' && action !== 'disable') throw new RcError(`unknown user action '${action}' (add, remove, list, enable, disable)`, 2);
  const answer = await context.admin(alias, 'POST', `${iam}/user/${action}`, { accessKey });
  context.print(answer, () => userLine(answer.user));
}

export async function policy(context: RcContext, action: string, aliasName: string, first: string | undefined, second: string | undefined): Promise<void> {
  const alias = await context.alias(aliasName);
  if (action === 'list') {
    const answer = await context.admin(alias, 'GET', `${iam}/policies`);
    context.print(answer, () => table(['POLICY', 'KIND'], (answer.policies as any[]).map((p) => [p.name, p.builtIn ? 'built-in' : 'created'])));
    return;
  }
  if (action === 'create') {
    if (first === undefined || second === undefined) throw new RcError('rc admin policy create needs a name and a policy file (JSON)', 2);
    const text = await readFile(second, 'utf8').catch((error: Error) => {
      throw new RcError(`cannot read the policy file ${second}: ${error.message}`, 1);
    });
    const answer = await context.admin(alias, 'POST', `${iam}/policy/create`, { name: first }, text);
    context.print(answer, () => `created policy ${first}`);
    return;
  }
  if (action === 'remove') {
    if (first === undefined) throw new RcError('rc admin policy remove needs a policy name', 2);
    const answer = await context.admin(alias, 'POST', `${iam}/policy/remove`, { name: first });
    context.print(answer, () => `removed policy ${first}`);
    return;
  }
  if (action !== 'attach' && action !== 'detach') throw new RcError(`unknown policy action '${action}' (create, remove, attach, detach, list)`, 2);
  if (first === undefined || second === undefined) throw new RcError(`rc admin policy ${action} needs a policy name and a user's access key`, 2);
  const answer = await context.admin(alias, 'POST', `${iam}/policy/${action}`, { policy: first, accessKey: second });
  context.print(answer, () => userLine(answer.user));
}
