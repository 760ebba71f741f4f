/**
 * Users and policies (root only, like every admin route): add, remove, enable, disable and list
 * users; create, remove, attach, detach and list policies. Parameters travel in the query; a new
 * user's secret and a policy document travel in the JSON body.
 */
import { SvcError } from '../../errors/index.js';
import type { AdminContext, AdminRequest } from './context.js';
import { mutationQuery, type Query } from './query.js';

const iam = '/svc/admin/v4/iam';

/** Shaped as routes.ts's AdminRoute (which spreads these in). */
interface IamRoute {
  method: 'GET' | 'POST';
  path: string;
  handle(context: AdminContext, request: AdminRequest): Promise<unknown>;
}

export const iamRoutes: IamRoute[] = [
  { method: 'GET', path: `${iam}/users`, handle: async (context) => ({ users: iamOf(context).listUsers() }) },
  {
    method: 'POST',
    path: `${iam}/user/add`,
    handle: async (context, request) => {
      mutationQuery(request.rawQuery, []);
      const body = jsonBody(request) as { accessKey?: unknown; secretKey?: unknown; policies?: unknown };
      const policies = body.policies ?? [];
      if (typeof body.accessKey !== 'string' || typeof body.secretKey !== 'string' || !Array.isArray(policies) || !policies.every((name) => typeof name === 'string')) {
        throw new SvcError('InvalidArgument', 'the body must be {"accessKey": "...", "secretKey": "...", "policies"?: ["..."]}');
      }
      return { user: await iamOf(context).addUser(body.accessKey, body.secretKey, policies as string[]) };
    },
  },
  {
    method: 'POST',
    path: `${iam}/user/remove`,
    handle: async (context, request) => {
      await iamOf(context).removeUser(required(mutationQuery(request.rawQuery, ['accessKey']), 'accessKey'));
      return { removed: true };
    },
  },
  { method: 'POST', path: `${iam}/user/enable`, handle: async (context, request) => ({ user: await iamOf(context).setEnabled(accessKeyOf(request), true) }) },
  { method: 'POST', path: `${iam}/user/disable`, handle: async (context, request) => ({ user: await iamOf(context).setEnabled(accessKeyOf(request), false) }) },
  { method: 'GET', path: `${iam}/policies`, handle: async (context) => ({ policies: iamOf(context).listPolicies() }) },
  {
    method: 'POST',
    path: `${iam}/policy/create`,
    handle: async (context, request) => {
      const name = required(mutationQuery(request.rawQuery, ['name']), 'name');
      await iamOf(context).createPolicy(name, jsonBody(request, 'MalformedPolicy'));
      return { created: name };
    },
  },
  {
    method: 'POST',
    path: `${iam}/policy/remove`,
    handle: async (context, request) => {
      const name = required(mutationQuery(request.rawQuery, ['name']), 'name');
      await iamOf(context).removePolicy(name);
      return { removed: name };
    },
  },
  { method: 'POST', path: `${iam}/policy/attach`, handle: async (context, request) => ({ user: await iamOf(context).attach(...userAndPolicy(request)) }) },
  { method: 'POST', path: `${iam}/policy/detach`, handle: async (context, request) => ({ user: await iamOf(context).detach(...userAndPolicy(request)) }) },
];

function iamOf(context: AdminContext): NonNullable<AdminContext['iam']> {
  if (!context.iam) throw new SvcError('NotImplemented', 'users and policies are not available on this server');
  return context.iam;
}

function accessKeyOf(request: AdminRequest): string {
  return required(mutationQuery(request.rawQuery, ['accessKey']), 'accessKey');
}

function userAndPolicy(request: AdminRequest): [string, string] {
  const query = mutationQuery(request.rawQuery, ['accessKey', 'policy']);
  return [required(query, 'accessKey'), required(query, 'policy')];
}

function required(query: Query, name: string): string {
  const value = query.get(name);
  if (value === undefined || value === '') throw new SvcError('InvalidQueryParameter', `the ${name} parameter is required`, { parameter: name });
  return value;
}

function jsonBody(request: AdminRequest, code: 'InvalidArgument' | 'MalformedPolicy' = 'InvalidArgument'): unknown {
  try {
    return JSON.parse(request.body.toString('utf8'));
  } catch {
    throw new SvcError(code, code === 'MalformedPolicy' ? 'The policy is not valid: the body is not valid JSON.' : 'the body is not valid JSON');
  }
}
