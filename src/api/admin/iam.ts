/**
 * Users, groups, service accounts and policies. Parameters travel in the query; secrets, policy
 * documents and member lists in the JSON body. Each route declares the admin actions it needs;
 * changes that hand out or widen permissions also need what building the result would take
 * (src/ops/iam-guard.ts), so no caller can make a credential stronger than it could give itself.
 */
import { SvcError } from '../../errors/index.js';
import { adminAction as admin } from '../../iam/index.js';
import type { Principal } from '../../iam/index.js';
import type { NewServiceAccount, ServiceAccountChange } from '../../ops/iam-store.js';
import { addUserNeeds, createPolicyNeeds, enableGroupNeeds, isOwner, leaveGroupNeeds, serviceAccountNeeds, serviceAccountParent } from '../../ops/iam-guard.js';
import type { AdminContext, AdminRequest, AdminRoute } from './context.js';
import { mutationQuery, statusQuery, type Query } from './query.js';
import * as schema from './route-schema.js';
import * as answers from './answer-schemas.js';
import { exampleGroup, examplePolicyDocument, exampleServiceAccount, exampleUser } from './answer-examples.js';

const iam = '/svc/admin/v4/iam';

const accessKeyQuery = schema.mutationQuery({ accessKey: schema.text("the user's access key") }, ['accessKey']);
const groupQuery = schema.mutationQuery({ group: schema.text('the group name') }, ['group']);
const attachmentQuery = schema.mutationQuery(
  { policy: schema.text('a policy name'), accessKey: schema.text('a user (give this or group)'), group: schema.text('a group (give this or accessKey)') },
  ['policy'],
);
const membersBody = schema.object({ members: schema.list(schema.text('access key'), 'users') }, { optional: ['members'] });

function userSchema(summary: string, description: string, query: schema.JsonSchema, example: schema.RouteExample): schema.RouteSchema {
  return { summary, description, querystring: query, response: answers.userAnswerSchema, example };
}

const userRoutes: AdminRoute[] = [
  {
    method: 'GET',
    path: `${iam}/users`,
    schema: { summary: 'Users', description: 'Every user with its state, policies and groups (never its secret).', querystring: schema.statusQuery({}), response: answers.usersSchema, example: { response: { users: [exampleUser] } } },
    access: { actions: [admin.listUsers] },
    handle: async (context) => ({ users: iamOf(context).listUsers() }),
  },
  {
    method: 'GET',
    path: `${iam}/user/info`,
    schema: userSchema('One user', 'The user with its state, policies and groups (`NoSuchUser`).', schema.statusQuery({ accessKey: schema.text("the user's access key") }, ['accessKey']), { query: 'accessKey=alice', response: { user: exampleUser } }),
    access: { actions: [admin.getUser] },
    handle: async (context, request) => ({ user: requireFound(iamOf(context).userInfo(statusParameter(request, 'accessKey')), 'NoSuchUser') }),
  },
  {
    method: 'POST',
    path: `${iam}/user/add`,
    schema: {
      summary: 'Add a user',
      description:
        'Adds a user, or replaces the secret of an existing one (its policies, groups and state stay). Refusals: `InvalidUserCredentials` (access key of 3 to 128 letters, digits and `-_.=@`, not the root key; secret of 8 to 128 characters), `NoSuchPolicy`.',
      querystring: schema.noQuery(),
      body: schema.object({ accessKey: schema.text('the access key'), secretKey: schema.text('the secret key'), policies: schema.list(schema.text('policy name'), 'policies to attach') }, { optional: ['policies'] }),
      response: answers.userAnswerSchema,
      example: { body: { accessKey: 'alice', secretKey: 'alice-secret-1', policies: ['readonly'] }, response: { user: exampleUser } },
    },
    access: {
      actions: [admin.createUser],
      conditional: { actions: [admin.attachUserOrGroupPolicy, admin.addUserToGroup], when: 'policies are named, or the user exists with policies or groups (a new secret takes it over: what building it would take)', permissions: (context, request) => addUserNeeds(iamOf(context), ...userBody(request)) },
    },
    handle: async (context, request) => {
      mutationQuery(request.rawQuery, []);
      const [accessKey, policies] = userBody(request);
      const body = jsonBody(request) as { secretKey?: unknown };
      if (typeof body.secretKey !== 'string') throw new SvcError('InvalidArgument', 'the body must be {"accessKey": "...", "secretKey": "...", "policies"?: ["..."]}');
      return { user: await iamOf(context).addUser(accessKey, body.secretKey, policies) };
    },
  },
  {
    method: 'POST',
    path: `${iam}/user/remove`,
    schema: { summary: 'Remove a user', description: 'Removes the user, its service accounts and its group memberships (`NoSuchUser` when unknown).', querystring: accessKeyQuery, response: schema.object({ removed: schema.boolean('always true') }), example: { query: 'accessKey=alice', response: { removed: true } } },
    access: { actions: [admin.deleteUser] },
    handle: async (context, request) => {
      await iamOf(context).removeUser(accessKeyOf(request));
      return { removed: true };
    },
  },
  {
    method: 'POST',
    path: `${iam}/user/enable`,
    schema: userSchema('Enable a user', 'The user may sign requests again; its earlier console sessions and temporary credentials stay ended.', accessKeyQuery, { query: 'accessKey=alice', response: { user: exampleUser } }),
    access: { actions: [admin.enableUser] },
    handle: async (context, request) => ({ user: await iamOf(context).setEnabled(accessKeyOf(request), true) }),
  },
  {
    method: 'POST',
    path: `${iam}/user/disable`,
    schema: userSchema('Disable a user', 'Requests signed by the user, its service accounts and its sessions are refused until it is enabled again.', accessKeyQuery, { query: 'accessKey=alice', response: { user: { ...exampleUser, enabled: false } } }),
    access: { actions: [admin.disableUser] },
    handle: async (context, request) => ({ user: await iamOf(context).setEnabled(accessKeyOf(request), false) }),
  },
];

const policyRoutes: AdminRoute[] = [
  {
    method: 'GET',
    path: `${iam}/policies`,
    schema: {
      summary: 'Policies',
      description: 'The built-in policies (readonly, writeonly, readwrite, consoleAdmin) and the created ones, with their documents.',
      querystring: schema.statusQuery({}),
      response: answers.policiesSchema,
      example: { response: { policies: [{ name: 'photos-read', builtIn: false, document: examplePolicyDocument }] } },
    },
    access: { actions: [admin.listUserPolicies] },
    handle: async (context) => ({ policies: iamOf(context).listPolicies() }),
  },
  {
    method: 'GET',
    path: `${iam}/policy/info`,
    schema: {
      summary: 'One policy',
      description: 'The policy document and who holds it (`NoSuchPolicy`).',
      querystring: schema.statusQuery({ name: schema.text('the policy name') }, ['name']),
      response: answers.policyAnswerSchema,
      example: { query: 'name=photos-read', response: { policy: { name: 'photos-read', builtIn: false, document: examplePolicyDocument, users: ['alice'], groups: [] } } },
    },
    access: { actions: [admin.getPolicy] },
    handle: async (context, request) => {
      const name = statusParameter(request, 'name');
      const store = iamOf(context);
      const policy = requireFound(store.listPolicies().find((entry) => entry.name === name), 'NoSuchPolicy');
      return { policy: { ...policy, ...store.policyHolders(name) } };
    },
  },
  {
    method: 'POST',
    path: `${iam}/policy/create`,
    schema: {
      summary: 'Create or replace a policy',
      description:
        'The body is an IAM policy document (`Version`, `Statement` of `Effect`, `Action`, `Resource`, optional `Condition`). Refusals: `MalformedPolicy`, `PolicyIsBuiltIn`.',
      querystring: schema.mutationQuery({ name: schema.text('the policy name') }, ['name']),
      body: schema.openObject('an IAM policy document'),
      bodyErrorCode: 'MalformedPolicy',
      response: schema.object({ created: schema.text('the policy name') }),
      example: { query: 'name=photos-read', body: examplePolicyDocument, response: { created: 'photos-read' } },
    },
    access: {
      actions: [admin.createPolicy],
      conditional: { actions: [admin.attachUserOrGroupPolicy], when: 'it replaces a policy a user or group holds', permissions: (context, request) => createPolicyNeeds(iamOf(context), policyNameOf(request)) },
    },
    handle: async (context, request) => {
      const name = policyNameOf(request);
      await iamOf(context).createPolicy(name, jsonBody(request, 'MalformedPolicy'));
      return { created: name };
    },
  },
  {
    method: 'POST',
    path: `${iam}/policy/remove`,
    schema: {
      summary: 'Remove a policy',
      description: 'Removes a created policy. Refusals: `NoSuchPolicy`, `PolicyIsBuiltIn`, `PolicyInUse` (a user or group still holds it).',
      querystring: schema.mutationQuery({ name: schema.text('the policy name') }, ['name']),
      response: schema.object({ removed: schema.text('the policy name') }),
      example: { query: 'name=photos-read', response: { removed: 'photos-read' } },
    },
    access: { actions: [admin.deletePolicy] },
    handle: async (context, request) => {
      const name = policyNameOf(request);
      await iamOf(context).removePolicy(name);
      return { removed: name };
    },
  },
  attachmentRoute('attach'),
  attachmentRoute('detach'),
];

function attachmentRoute(verb: 'attach' | 'detach'): AdminRoute {
  const attach = verb === 'attach';
  return {
    method: 'POST',
    path: `${iam}/policy/${verb}`,
    schema: {
      summary: attach ? 'Attach a policy to a user or group' : 'Detach a policy from a user or group',
      description: 'Name the user (`accessKey`) or the group (`group`), not both. Refusals: `NoSuchUser`, `NoSuchGroup`, `NoSuchPolicy`.',
      querystring: attachmentQuery,
      response: schema.object({ user: answers.userSchema, group: answers.groupSchema }, { optional: ['user', 'group'] }),
      example: { query: 'policy=photos-read&accessKey=alice', response: { user: { ...exampleUser, policies: attach ? ['photos-read', 'readonly'] : ['readonly'] } } },
    },
    access: { actions: [admin.attachUserOrGroupPolicy] },
    handle: async (context, request) => {
      const query = mutationQuery(request.rawQuery, ['policy', 'accessKey', 'group']);
      const policy = required(query, 'policy');
      const [accessKey, group] = [query.get('accessKey'), query.get('group')];
      if ((accessKey === undefined) === (group === undefined)) throw new SvcError('InvalidQueryParameter', 'name either accessKey or group', { parameter: 'accessKey' });
      const store = iamOf(context);
      if (accessKey !== undefined) return { user: await (attach ? store.attach(accessKey, policy) : store.detach(accessKey, policy)) };
      return { group: await (attach ? store.attachToGroup(group!, policy) : store.detachFromGroup(group!, policy)) };
    },
  };
}

const groupRoutes: AdminRoute[] = [
  {
    method: 'GET',
    path: `${iam}/groups`,
    schema: { summary: 'Groups', description: 'Every group with its members and policies.', querystring: schema.statusQuery({}), response: answers.groupsSchema, example: { response: { groups: [exampleGroup] } } },
    access: { actions: [admin.listGroups] },
    handle: async (context) => ({ groups: iamOf(context).listGroups() }),
  },
  {
    method: 'GET',
    path: `${iam}/group/info`,
    schema: { summary: 'One group', description: 'The group with its members and policies (`NoSuchGroup`).', querystring: schema.statusQuery({ group: schema.text('the group name') }, ['group']), response: answers.groupAnswerSchema, example: { query: 'group=staff', response: { group: exampleGroup } } },
    access: { actions: [admin.getGroup] },
    handle: async (context, request) => ({ group: requireFound(iamOf(context).groupInfo(statusParameter(request, 'group')), 'NoSuchGroup') }),
  },
  {
    method: 'POST',
    path: `${iam}/group/add`,
    schema: {
      summary: 'Add users to a group',
      description: 'Creates the group when it does not exist (enabled, no policies). Members get the group\'s policies while it is enabled. Refusals: `NoSuchUser`, `InvalidArgument` (a name of 1 to 128 letters, digits and `-_.=@+`).',
      querystring: groupQuery,
      body: membersBody,
      response: answers.groupAnswerSchema,
      example: { query: 'group=staff', body: { members: ['alice'] }, response: { group: exampleGroup } },
    },
    access: { actions: [admin.addUserToGroup] },
    handle: async (context, request) => ({ group: await iamOf(context).addGroupMembers(groupOf(request), membersOf(request)) }),
  },
  {
    method: 'POST',
    path: `${iam}/group/remove`,
    schema: {
      summary: 'Remove users from a group, or an empty group',
      description: 'With `members`, takes them out; without, removes the group, which must be empty (`GroupNotEmpty`). Refusals: `NoSuchGroup`, `NoSuchUser` (not a member).',
      querystring: groupQuery,
      body: membersBody,
      response: schema.object({ group: answers.groupSchema, removed: schema.boolean('the group itself was removed') }, { optional: ['group'] }),
      example: { query: 'group=staff', body: { members: ['alice'] }, response: { group: { ...exampleGroup, members: [] }, removed: false } },
    },
    access: {
      actions: [admin.removeUserFromGroup],
      conditional: { actions: [admin.attachUserOrGroupPolicy], when: "the group's policies hold a Deny", permissions: (context, request) => leaveGroupNeeds(iamOf(context), groupOf(request)) },
    },
    handle: async (context, request) => {
      const group = await iamOf(context).removeGroupMembers(groupOf(request), membersOf(request));
      return group ? { group, removed: false } : { removed: true };
    },
  },
  groupStateRoute('enable'),
  groupStateRoute('disable'),
];

function groupStateRoute(verb: 'enable' | 'disable'): AdminRoute {
  const enable = verb === 'enable';
  return {
    method: 'POST',
    path: `${iam}/group/${verb}`,
    schema: {
      summary: enable ? 'Enable a group' : 'Disable a group',
      description: enable
        ? 'Its policies apply to its members again. Refusal: `NoSuchGroup`.'
        : 'Its policies stop applying to its members (a `Deny` among them too). Refusal: `NoSuchGroup`.',
      querystring: groupQuery,
      response: answers.groupAnswerSchema,
      example: { query: 'group=staff', response: { group: { ...exampleGroup, enabled: enable } } },
    },
    access: {
      actions: [enable ? admin.enableGroup : admin.disableGroup],
      conditional: enable
        ? { actions: [admin.attachUserOrGroupPolicy], when: 'the group has policies and members', permissions: (context, request) => enableGroupNeeds(iamOf(context), groupOf(request)) }
        : { actions: [admin.attachUserOrGroupPolicy], when: "the group's policies hold a Deny", permissions: (context, request) => leaveGroupNeeds(iamOf(context), groupOf(request)) },
    },
    handle: async (context, request) => ({ group: await iamOf(context).setGroupEnabled(groupOf(request), enable) }),
  };
}

const serviceAccountBody = schema.object(
  {
    parent: schema.text('the user it belongs to (default: the caller)'),
    accessKey: schema.text('its access key (default: generated)'),
    secretKey: schema.text('its secret key (default: generated)'),
    policy: schema.openObject("an inline policy that narrows the user's permissions"),
    name: schema.text('a name'),
    description: schema.text('a description'),
    expiry: schema.text('ISO 8601 time from which it is refused'),
  },
  { optional: ['parent', 'accessKey', 'secretKey', 'policy', 'name', 'description', 'expiry'] },
);

const ownerRule = 'the account is another user\'s than the caller\'s own (the action, and what building that user would take)';

const serviceAccountRoutes: AdminRoute[] = [
  {
    method: 'POST',
    path: `${iam}/svcacct/add`,
    schema: {
      summary: 'Add a service account',
      description:
        "An access key of a user that never holds more than the user does (cut down further by its inline policy) and ends with it. A user adds its own without any admin action. The secret is in this answer only. Refusals: `NoSuchUser`, `MalformedPolicy`, `InvalidArgument` (expiry not in the future), `UserAlreadyExists`.",
      querystring: schema.noQuery(),
      body: serviceAccountBody,
      bodyErrorCode: 'InvalidArgument',
      response: answers.newServiceAccountSchema,
      example: { body: { parent: 'alice', name: 'backup', expiry: '2027-11-25T06:00:00.000Z' }, response: { serviceAccount: { ...exampleServiceAccount, secretKey: 'xq2Jc9V0pL3mS8tYw1Bz6Kd4Hf7Ng5Re0Ua2Oi9E' } } },
    },
    access: {
      actions: [],
      conditional: { actions: [admin.createServiceAccount, admin.attachUserOrGroupPolicy, admin.addUserToGroup], when: ownerRule, permissions: (context, request, caller) => serviceAccountNeeds(iamOf(context), caller, parentOf(request, caller), admin.createServiceAccount) },
    },
    handle: async (context, request, caller) => {
      mutationQuery(request.rawQuery, []);
      const body = serviceAccountRequest(request);
      return { serviceAccount: await iamOf(context).addServiceAccount(parentOf(request, caller), body) };
    },
  },
  {
    method: 'GET',
    path: `${iam}/svcacct/list`,
    schema: {
      summary: 'Service accounts of a user',
      description: 'A user lists its own without any admin action; `all=true` (or no `parent` from root) lists every one.',
      querystring: schema.statusQuery({ parent: schema.text('the user (default: the caller)'), all: schema.oneOfValues(['true', 'false'], 'every service account') }),
      response: answers.serviceAccountsSchema,
      example: { query: 'parent=alice', response: { serviceAccounts: [exampleServiceAccount] } },
    },
    access: {
      actions: [],
      conditional: { actions: [admin.listServiceAccounts], when: "listing another user's, or every one", permissions: (_context, request, caller) => (listsOwn(request, caller) ? [] : [{ action: admin.listServiceAccounts }]) },
    },
    handle: async (context, request, caller) => {
      const query = statusQuery(request.rawQuery);
      // Root and SSO accounts are no user: without a parent they list every account.
      const all = query.get('all') === 'true' || (query.get('parent') === undefined && (caller.kind === 'root' || caller.kind === 'sso'));
      return { serviceAccounts: iamOf(context).listServiceAccounts(all ? undefined : listParentOf(request, caller)) };
    },
  },
  {
    method: 'GET',
    path: `${iam}/svcacct/info`,
    schema: {
      summary: 'One service account',
      description: 'Its user, state, inline policy and expiry, never its secret. Refusal: `NoSuchServiceAccount`.',
      querystring: schema.statusQuery({ accessKey: schema.text('its access key') }, ['accessKey']),
      response: answers.serviceAccountAnswerSchema,
      example: { query: 'accessKey=Q3AM3UQ867SPQQA43P2F', response: { serviceAccount: exampleServiceAccount } },
    },
    access: ownedAccountAccess(admin.listServiceAccounts, (request) => statusParameter(request, 'accessKey'), false),
    handle: async (context, request) => ({ serviceAccount: requireFound(iamOf(context).serviceAccountInfo(statusParameter(request, 'accessKey')), 'NoSuchServiceAccount') }),
  },
  {
    method: 'POST',
    path: `${iam}/svcacct/update`,
    schema: {
      summary: 'Change a service account',
      description: 'Enable or disable it, give it a new secret, replace (`policy`) or drop (`policy: null`) its inline policy, change its expiry (`expiry: null` drops it), name or description. Refusals: `NoSuchServiceAccount`, `MalformedPolicy`, `InvalidArgument`.',
      querystring: schema.mutationQuery({ accessKey: schema.text('its access key') }, ['accessKey']),
      body: schema.object(
        { enabled: schema.boolean('may sign requests'), secretKey: schema.text('a new secret key'), policy: schema.nullable(schema.openObject('a new inline policy, or null')), expiry: schema.nullable(schema.text('ISO 8601 time, or null')), name: schema.text('a name'), description: schema.text('a description') },
        { optional: ['enabled', 'secretKey', 'policy', 'expiry', 'name', 'description'] },
      ),
      response: answers.serviceAccountAnswerSchema,
      example: { query: 'accessKey=Q3AM3UQ867SPQQA43P2F', body: { enabled: false }, response: { serviceAccount: { ...exampleServiceAccount, enabled: false } } },
    },
    access: ownedAccountAccess(admin.updateServiceAccount, (request) => required(mutationQuery(request.rawQuery, ['accessKey']), 'accessKey'), true),
    handle: async (context, request) => {
      const accessKey = required(mutationQuery(request.rawQuery, ['accessKey']), 'accessKey');
      return { serviceAccount: await iamOf(context).updateServiceAccount(accessKey, serviceAccountChange(request)) };
    },
  },
  {
    method: 'POST',
    path: `${iam}/svcacct/remove`,
    schema: {
      summary: 'Remove a service account',
      description: 'Refusal: `NoSuchServiceAccount`.',
      querystring: schema.mutationQuery({ accessKey: schema.text('its access key') }, ['accessKey']),
      response: schema.object({ removed: schema.text('its access key') }),
      example: { query: 'accessKey=Q3AM3UQ867SPQQA43P2F', response: { removed: 'Q3AM3UQ867SPQQA43P2F' } },
    },
    access: ownedAccountAccess(admin.removeServiceAccount, (request) => required(mutationQuery(request.rawQuery, ['accessKey']), 'accessKey'), false),
    handle: async (context, request) => {
      const accessKey = required(mutationQuery(request.rawQuery, ['accessKey']), 'accessKey');
      await iamOf(context).removeServiceAccount(accessKey);
      return { removed: accessKey };
    },
  },
];

/** A route on one service account: free for its user; for others the action (and, when it can widen, building the user). */
function ownedAccountAccess(action: string, accessKeyOfRequest: (request: AdminRequest) => string, widens: boolean): AdminRoute['access'] {
  return {
    actions: [],
    conditional: {
      actions: widens ? [action, admin.attachUserOrGroupPolicy, admin.addUserToGroup] : [action],
      when: widens ? ownerRule : 'the account is another user\'s than the caller\'s own',
      permissions: (context, request, caller) => {
        const parent = serviceAccountParent(iamOf(context), accessKeyOfRequest(request));
        if (parent !== undefined && isOwner(caller, parent)) return [];
        return widens && parent !== undefined ? serviceAccountNeeds(iamOf(context), caller, parent, action) : [{ action }];
      },
    },
  };
}

export const iamRoutes: AdminRoute[] = [...userRoutes, ...policyRoutes, ...groupRoutes, ...serviceAccountRoutes];

function iamOf(context: AdminContext): NonNullable<AdminContext['iam']> {
  if (!context.iam) throw new SvcError('NotImplemented', 'users and policies are not available on this server');
  return context.iam;
}

function accessKeyOf(request: AdminRequest): string {
  return required(mutationQuery(request.rawQuery, ['accessKey']), 'accessKey');
}

function policyNameOf(request: AdminRequest): string {
  return required(mutationQuery(request.rawQuery, ['name']), 'name');
}

function groupOf(request: AdminRequest): string {
  return required(mutationQuery(request.rawQuery, ['group']), 'group');
}

function statusParameter(request: AdminRequest, name: string): string {
  return required(statusQuery(request.rawQuery), name);
}

function required(query: Query, name: string): string {
  const value = query.get(name);
  if (value === undefined || value === '') throw new SvcError('InvalidQueryParameter', `the ${name} parameter is required`, { parameter: name });
  return value;
}

function requireFound<T>(value: T | undefined, code: 'NoSuchUser' | 'NoSuchGroup' | 'NoSuchPolicy' | 'NoSuchServiceAccount'): T {
  if (value === undefined) throw new SvcError(code);
  return value;
}

function jsonBody(request: AdminRequest, code: 'InvalidArgument' | 'MalformedPolicy' = 'InvalidArgument'): unknown {
  try {
    return request.body.length === 0 ? {} : JSON.parse(request.body.toString('utf8'));
  } catch {
    throw new SvcError(code, code === 'MalformedPolicy' ? 'The policy is not valid: the body is not valid JSON.' : 'the body is not valid JSON');
  }
}

/** The access key and policies of a user/add body. */
function userBody(request: AdminRequest): [string, string[]] {
  const body = jsonBody(request) as { accessKey?: unknown; policies?: unknown };
  const policies = body.policies ?? [];
  if (typeof body.accessKey !== 'string' || !Array.isArray(policies) || !policies.every((name) => typeof name === 'string')) {
    throw new SvcError('InvalidArgument', 'the body must be {"accessKey": "...", "secretKey": "...", "policies"?: ["..."]}');
  }
  return [body.accessKey, policies as string[]];
}

function membersOf(request: AdminRequest): string[] {
  const members = (jsonBody(request) as { members?: unknown }).members ?? [];
  if (!Array.isArray(members) || !members.every((member) => typeof member === 'string')) throw new SvcError('InvalidArgument', 'members must be a list of access keys', { field: 'members' });
  return members as string[];
}

/** Whose service account a svcacct/add creates: `parent`, or the caller's own user. */
function parentOf(request: AdminRequest, caller: Principal): string {
  const parent = (jsonBody(request) as { parent?: unknown }).parent;
  if (parent !== undefined && typeof parent !== 'string') throw new SvcError('InvalidArgument', 'parent must be an access key', { field: 'parent' });
  return parent ?? callerUser(caller);
}

function callerUser(caller: Principal): string {
  if (caller.kind === 'root' || caller.kind === 'sso') throw new SvcError('InvalidArgument', `name the user with parent: the ${caller.kind === 'root' ? 'root credentials are' : 'SSO account is'} not a user`, { field: 'parent' });
  return caller.parentUser ?? caller.accessKey;
}

function listParentOf(request: AdminRequest, caller: Principal): string {
  return statusQuery(request.rawQuery).get('parent') ?? callerUser(caller);
}

function listsOwn(request: AdminRequest, caller: Principal): boolean {
  const query = statusQuery(request.rawQuery);
  if (query.get('all') === 'true') return false;
  return caller.kind === 'user' && (query.get('parent') ?? caller.accessKey) === caller.accessKey;
}

function expiryOf(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(ms)) throw new SvcError('InvalidArgument', 'expiry must be an ISO 8601 time', { field: 'expiry' });
  return ms;
}

function serviceAccountRequest(request: AdminRequest): NewServiceAccount {
  const body = jsonBody(request) as Record<string, unknown>;
  const text = (name: string) => {
    const value = body[name];
    if (value !== undefined && typeof value !== 'string') throw new SvcError('InvalidArgument', `${name} must be a string`, { field: name });
    return value as string | undefined;
  };
  const expiresMs = expiryOf(body.expiry);
  const fields = { accessKey: text('accessKey'), secretKey: text('secretKey'), name: text('name'), description: text('description'), policy: body.policy, expiresMs };
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

function serviceAccountChange(request: AdminRequest): ServiceAccountChange {
  const body = jsonBody(request) as Record<string, unknown>;
  const change: ServiceAccountChange = {};
  if (body.enabled !== undefined) change.enabled = body.enabled === true;
  for (const name of ['secretKey', 'name', 'description'] as const) if (typeof body[name] === 'string') change[name] = body[name];
  if (body.policy !== undefined) change.policy = body.policy;
  if (body.expiry !== undefined) change.expiresMs = body.expiry === null ? null : expiryOf(body.expiry)!;
  return change;
}
