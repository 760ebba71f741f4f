/** `rc admin user ...`, `rc admin group ...`, `rc admin policy ...` and `rc admin user svcacct ...`: users, groups, policies and service accounts over the signed admin API. */
import { readFile } from 'node:fs/promises';
import { RcError, table, type RcContext } from './context.js';

const iam = '/svc/admin/v4/iam';

const userLine = (user: Record<string, any>): string =>
  `${user.accessKey}: ${user.enabled ? 'enabled' : 'disabled'}, policies ${(user.policies as string[]).join(', ') || 'none'}, groups ${((user.groups ?? []) as string[]).join(', ') || 'none'}`;
const groupLine = (group: Record<string, any>): string =>
  `group ${group.name}: ${group.enabled ? 'enabled' : 'disabled'}, members ${(group.members as string[]).join(', ') || 'none'}, policies ${(group.policies as string[]).join(', ') || 'none'}`;

export async function user(context: RcContext, action: string, aliasName: string, accessKey: string | undefined, secretKey: string | undefined, policies: string | undefined): Promise<void> {
  const alias = await context.alias(aliasName);
  if (action === 'list') {
    const answer = await context.admin(alias, 'GET', `${iam}/users`);
    context.print(answer, () => ((answer.users as any[]).length === 0 ? 'no users' : table(['ACCESS KEY', 'STATE', 'POLICIES', 'GROUPS'], (answer.users as any[]).map((u) => [u.accessKey, u.enabled ? 'enabled' : 'disabled', (u.policies as string[]).join(',') || '-', (u.groups as string[]).join(',') || '-']))));
    return;
  }
  if (accessKey === undefined) throw new RcError(`rc admin user ${action} needs an access key`, 2);
  if (action === 'info') {
    const answer = await context.admin(alias, 'GET', `${iam}/user/info`, { accessKey });
    context.print(answer, () => userLine(answer.user));
    return;
  }
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

export async function policy(context: RcContext, action: string, aliasName: string, first: string | undefined, second: string | undefined, group?: string): Promise<void> {
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
  if (action === 'info') {
    if (first === undefined) throw new RcError('rc admin policy info needs a policy name', 2);
    const answer = await context.admin(alias, 'GET', `${iam}/policy/info`, { name: first });
    const held = [...(answer.policy.users as string[]), ...(answer.policy.groups as string[]).map((group) => `group ${group}`)];
    context.print(answer, () => `${JSON.stringify(answer.policy.document, null, 2)}\nheld by: ${held.join(', ') || 'nobody'}`);
    return;
  }
  if (action !== 'attach' && action !== 'detach') throw new RcError(`unknown policy action '${action}' (create, remove, attach, detach, list, info)`, 2);
  if (first === undefined || (second === undefined) === (group === undefined)) throw new RcError(`rc admin policy ${action} needs a policy name and a user's access key or --group <name>`, 2);
  const answer = await context.admin(alias, 'POST', `${iam}/policy/${action}`, { policy: first, ...(second === undefined ? { group: group! } : { accessKey: second }) });
  context.print(answer, () => (answer.user ? userLine(answer.user) : groupLine(answer.group)));
}

export async function group(context: RcContext, action: string, aliasName: string, name: string | undefined, members: string[]): Promise<void> {
  const alias = await context.alias(aliasName);
  if (action === 'list') {
    const answer = await context.admin(alias, 'GET', `${iam}/groups`);
    context.print(answer, () => ((answer.groups as any[]).length === 0 ? 'no groups' : table(['GROUP', 'STATE', 'MEMBERS', 'POLICIES'], (answer.groups as any[]).map((g) => [g.name, g.enabled ? 'enabled' : 'disabled', (g.members as string[]).join(',') || '-', (g.policies as string[]).join(',') || '-']))));
    return;
  }
  if (name === undefined) throw new RcError(`rc admin group ${action} needs a group name`, 2);
  if (action === 'info') {
    const answer = await context.admin(alias, 'GET', `${iam}/group/info`, { group: name });
    context.print(answer, () => groupLine(answer.group));
    return;
  }
  if (action === 'add' || action === 'remove') {
    if (action === 'add' && members.length === 0) throw new RcError('rc admin group add needs a group name and at least one member', 2);
    const answer = await context.admin(alias, 'POST', `${iam}/group/${action}`, { group: name }, JSON.stringify(members.length > 0 ? { members } : {}));
    context.print(answer, () => (answer.removed === true ? `removed group ${name}` : groupLine(answer.group)));
    return;
  }
  if (action !== 'enable' && action !== 'disable') throw new RcError(`unknown group action '${action}' (add, remove, info, list, enable, disable)`, 2);
  const answer = await context.admin(alias, 'POST', `${iam}/group/${action}`, { group: name });
  context.print(answer, () => groupLine(answer.group));
}

/** Options of `rc admin user svcacct add|edit`. */
export interface ServiceAccountOptions {
  accessKey?: string;
  secretKey?: string;
  policyFile?: string;
  noPolicy?: boolean;
  name?: string;
  description?: string;
  expiry?: string;
  enable?: boolean;
  disable?: boolean;
}

const accountLine = (account: Record<string, any>): string =>
  `${account.accessKey} (user ${account.parent}): ${account.enabled ? 'enabled' : 'disabled'}, ${account.policy ? 'inline policy' : "the user's permissions"}, ${account.expiresMs ? `expires ${new Date(account.expiresMs).toISOString()}` : 'no expiry'}${account.name ? `, name ${account.name}` : ''}`;

export async function serviceAccount(context: RcContext, action: string, aliasName: string, subject: string | undefined, options: ServiceAccountOptions): Promise<void> {
  const alias = await context.alias(aliasName);
  if (action === 'ls') {
    const answer = await context.admin(alias, 'GET', `${iam}/svcacct/list`, subject === undefined ? {} : { parent: subject });
    context.print(answer, () => ((answer.serviceAccounts as any[]).length === 0 ? 'no service accounts' : table(['ACCESS KEY', 'USER', 'STATE', 'POLICY', 'EXPIRES', 'NAME'], (answer.serviceAccounts as any[]).map((a) => [a.accessKey, a.parent, a.enabled ? 'enabled' : 'disabled', a.policy ? 'inline' : 'inherited', a.expiresMs ? new Date(a.expiresMs).toISOString() : '-', a.name ?? '-']))));
    return;
  }
  if (action === 'add') {
    const body = { ...(subject === undefined ? {} : { parent: subject }), ...(await accountFields(options)) };
    const answer = await context.admin(alias, 'POST', `${iam}/svcacct/add`, {}, JSON.stringify(body));
    const account = answer.serviceAccount;
    context.print(answer, () => `Access Key: ${account.accessKey}\nSecret Key: ${account.secretKey}\n(the secret key is shown this once)\n${accountLine(account)}`);
    return;
  }
  if (subject === undefined) throw new RcError(`rc admin user svcacct ${action} needs the service account's access key`, 2);
  if (action === 'info') {
    const answer = await context.admin(alias, 'GET', `${iam}/svcacct/info`, { accessKey: subject });
    context.print(answer, () => `${accountLine(answer.serviceAccount)}${answer.serviceAccount.policy ? `\n${JSON.stringify(answer.serviceAccount.policy, null, 2)}` : ''}`);
    return;
  }
  if (action === 'rm') {
    const answer = await context.admin(alias, 'POST', `${iam}/svcacct/remove`, { accessKey: subject });
    context.print(answer, () => `removed service account ${subject}`);
    return;
  }
  if (action !== 'edit') throw new RcError(`unknown svcacct action '${action}' (add, ls, info, edit, rm)`, 2);
  if (options.enable === true && options.disable === true) throw new RcError('give --enable or --disable, not both', 2);
  const change = { ...(await accountFields(options)), ...(options.enable ? { enabled: true } : {}), ...(options.disable ? { enabled: false } : {}), ...(options.noPolicy ? { policy: null } : {}) };
  if (Object.keys(change).length === 0) throw new RcError('rc admin user svcacct edit changes nothing: give --enable, --disable, --policy, --no-policy, --secret-key, --expiry, --name or --description', 2);
  const answer = await context.admin(alias, 'POST', `${iam}/svcacct/update`, { accessKey: subject }, JSON.stringify(change));
  context.print(answer, () => accountLine(answer.serviceAccount));
}

/** The body fields the options give: a policy read from its file, an expiry as ISO time or a duration (`90d`, `12h`, `30m`). */
async function accountFields(options: ServiceAccountOptions): Promise<Record<string, unknown>> {
  const fields: Record<string, unknown> = {};
  if (options.accessKey !== undefined) fields.accessKey = options.accessKey;
  if (options.secretKey !== undefined) fields.secretKey = options.secretKey;
  if (options.name !== undefined) fields.name = options.name;
  if (options.description !== undefined) fields.description = options.description;
  if (options.expiry !== undefined) fields.expiry = expiryOf(options.expiry);
  if (options.policyFile !== undefined) {
    if (options.noPolicy === true) throw new RcError('give --policy or --no-policy, not both', 2);
    const text = await readFile(options.policyFile, 'utf8').catch((error: Error) => {
      throw new RcError(`cannot read the policy file ${options.policyFile}: ${error.message}`, 1);
    });
    try {
      fields.policy = JSON.parse(text);
    } catch {
      throw new RcError(`the policy file ${options.policyFile} is not JSON`, 1);
    }
  }
  return fields;
}

function expiryOf(text: string): string {
  const duration = /^(\d+)([dhm])$/.exec(text);
  if (duration) {
    const unitMs = { d: 86_400_000, h: 3_600_000, m: 60_000 }[duration[2] as 'd' | 'h' | 'm'];
    return new Date(Date.now() + Number(duration[1]) * unitMs).toISOString();
  }
  if (Number.isNaN(Date.parse(text))) throw new RcError(`--expiry '${text}' is neither an ISO 8601 time nor a duration such as 90d, 12h or 30m`, 2);
  return new Date(text).toISOString();
}
