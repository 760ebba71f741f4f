/**
 * Users and policies (root only, like every admin route): add, remove, enable, disable and list
 * users; create, remove, attach, detach and list policies. Parameters travel in the query; a new
 * user's secret and a policy document travel in the JSON body.
 */
import { SvcError } from '../../errors/index.js';
import type { AdminContext, AdminRequest, AdminRoute } from './context.js';
import { mutationQuery, type Query } from './query.js';
import * as schema from './route-schema.js';
import { policiesSchema, userAnswerSchema, usersSchema } from './answer-schemas.js';
import { examplePolicyDocument, exampleUser } from './answer-examples.js';

const iam = '/svc/admin/v4/iam';

const accessKeyQuery = schema.mutationQuery({ accessKey: schema.text("the user's access key") }, ['accessKey']);
const userAndPolicyQuery = schema.mutationQuery({ accessKey: schema.text("the user's access key"), policy: schema.text('a policy name') }, ['accessKey', 'policy']);

function userSchema(summary: string, description: string, query: schema.JsonSchema, example: schema.RouteExample): schema.RouteSchema {
  return { summary, description, querystring: query, response: userAnswerSchema, example };
}

export const iamRoutes: AdminRoute[] = [
  {
    method: 'GET',
    path: `${iam}/users`,
    schema: { summary: 'Users', description: 'Every user with its state and policies (never its secret).', querystring: schema.statusQuery({}), response: usersSchema, example: { response: { users: [exampleUser] } } },
    handle: async (context) => ({ users: iamOf(context).listUsers() }),
  },
  {
    method: 'POST',
    path: `${iam}/user/add`,
    schema: {
      summary: 'Add a user',
      description: 'Adds a user, or replaces the secret of an existing one (its policies and state stay). Refusals: `InvalidUserCredentials` (access key of 3 to 128 letters, digits and `-_.=@`, not the root key; secret of 8 to 128 characters), `NoSuchPolicy`.',
      querystring: schema.noQuery(),
      body: schema.object({ accessKey: schema.text('the access key'), secretKey: schema.text('the secret key'), policies: schema.list(schema.text('policy name'), 'policies to attach') }, { optional: ['policies'] }),
      response: userAnswerSchema,
      example: { body: { accessKey: 'alice', secretKey: 'alice-secret-1', policies: ['readonly'] }, response: { user: exampleUser } },
    },
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
    schema: { summary: 'Remove a user', description: 'Removes the user and its access (`NoSuchUser` when unknown).', querystring: accessKeyQuery, response: schema.object({ removed: schema.boolean('always true') }), example: { query: 'accessKey=alice', response: { removed: true } } },
    handle: async (context, request) => {
      await iamOf(context).removeUser(required(mutationQuery(request.rawQuery, ['accessKey']), 'accessKey'));
      return { removed: true };
    },
  },
  {
    method: 'POST',
    path: `${iam}/user/enable`,
    schema: userSchema('Enable a user', 'The user may sign requests again.', accessKeyQuery, { query: 'accessKey=alice', response: { user: exampleUser } }),
    handle: async (context, request) => ({ user: await iamOf(context).setEnabled(accessKeyOf(request), true) }),
  },
  {
    method: 'POST',
    path: `${iam}/user/disable`,
    schema: userSchema('Disable a user', 'Requests signed by the user are refused (`AccessDenied`) until it is enabled again.', accessKeyQuery, { query: 'accessKey=alice', response: { user: { ...exampleUser, enabled: false } } }),
    handle: async (context, request) => ({ user: await iamOf(context).setEnabled(accessKeyOf(request), false) }),
  },
  {
    method: 'GET',
    path: `${iam}/policies`,
    schema: {
      summary: 'Policies',
      description: 'The built-in policies (readonly, writeonly, readwrite, consoleAdmin) and the created ones, with their documents.',
      querystring: schema.statusQuery({}),
      response: policiesSchema,
      example: { response: { policies: [{ name: 'photos-read', builtIn: false, document: examplePolicyDocument }] } },
    },
    handle: async (context) => ({ policies: iamOf(context).listPolicies() }),
  },
  {
    method: 'POST',
    path: `${iam}/policy/create`,
    schema: {
      summary: 'Create or replace a policy',
      description: 'The body is an IAM policy document (`Version`, `Statement` of `Effect`, `Action`, `Resource`, optional `Condition`). Refusals: `MalformedPolicy`, `PolicyIsBuiltIn`.',
      querystring: schema.mutationQuery({ name: schema.text('the policy name') }, ['name']),
      body: schema.openObject('an IAM policy document'),
      bodyErrorCode: 'MalformedPolicy',
      response: schema.object({ created: schema.text('the policy name') }),
      example: { query: 'name=photos-read', body: examplePolicyDocument, response: { created: 'photos-read' } },
    },
    handle: async (context, request) => {
      const name = required(mutationQuery(request.rawQuery, ['name']), 'name');
      await iamOf(context).createPolicy(name, jsonBody(request, 'MalformedPolicy'));
      return { created: name };
    },
  },
  {
    method: 'POST',
    path: `${iam}/policy/remove`,
    schema: {
      summary: 'Remove a policy',
      description: 'Removes a created policy. Refusals: `NoSuchPolicy`, `PolicyIsBuiltIn`, `PolicyInUse` (a user still holds it).',
      querystring: schema.mutationQuery({ name: schema.text('the policy name') }, ['name']),
      response: schema.object({ removed: schema.text('the policy name') }),
      example: { query: 'name=photos-read', response: { removed: 'photos-read' } },
    },
    handle: async (context, request) => {
      const name = required(mutationQuery(request.rawQuery, ['name']), 'name');
      await iamOf(context).removePolicy(name);
      return { removed: name };
    },
  },
  {
    method: 'POST',
    path: `${iam}/policy/attach`,
    schema: userSchema('Attach a policy to a user', 'Refusals: `NoSuchUser`, `NoSuchPolicy`.', userAndPolicyQuery, { query: 'accessKey=alice&policy=photos-read', response: { user: { ...exampleUser, policies: ['photos-read', 'readonly'] } } }),
    handle: async (context, request) => ({ user: await iamOf(context).attach(...userAndPolicy(request)) }),
  },
  {
    method: 'POST',
    path: `${iam}/policy/detach`,
    schema: userSchema('Detach a policy from a user', 'Refusals: `NoSuchUser`, `NoSuchPolicy`.', userAndPolicyQuery, { query: 'accessKey=alice&policy=photos-read', response: { user: exampleUser } }),
    handle: async (context, request) => ({ user: await iamOf(context).detach(...userAndPolicy(request)) }),
  },
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
