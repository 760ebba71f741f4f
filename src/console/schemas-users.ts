/**
 * Schemas of the Users page's console routes (routes-users.ts), in the console API's form
 * (api-schemas.ts): fastify checks parameters and bodies against them before a handler runs (a
 * mismatch is InvalidArgument naming the field), answers are checked against them, and the
 * console's OpenAPI document shows them with their examples.
 */
import { boolean, list, noQuery, object, openObject, text, type JsonSchema } from '../api/admin/route-schema.js';
import { consoleSchema } from './api-schemas.js';

const name = (description: string): JsonSchema => text(description, { minLength: 1, maxLength: 128 });
const user = object({
  accessKey: text("the user's access key"),
  enabled: boolean('whether it may sign requests and sign in'),
  policies: list(text('policy name'), 'the policies attached to it'),
  groups: list(text('group name'), 'the groups it is a member of'),
  createdAt: text('when it was added (ISO 8601)', { format: 'date-time' }),
}, { description: 'a user (never its secret)' });
const userAnswer = object({ user });
const exampleUser = { accessKey: 'alice', enabled: true, policies: ['readonly'], groups: [], createdAt: '2026-11-25T06:00:00.000Z' };
const accessKeyParams = object({ accessKey: name("the user's access key") });
const policyDocument = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:GetObject'], Resource: ['arn:aws:s3:::photos/*'] }] };

export const userSchemas = {
  listUsers: consoleSchema('users', {
    summary: 'Users',
    description: 'Every user with its state and policies. Needs `admin:ListUsers`.',
    querystring: noQuery(),
    response: object({ users: list(user, 'the users') }),
    example: { response: { users: [exampleUser] } },
  }),
  addUser: consoleSchema('users', {
    summary: 'Add a user',
    description: 'Adds a user with its secret and policies. Needs `admin:CreateUser`; an existing access key is `UserAlreadyExists`, an unknown policy `NoSuchPolicy`.',
    querystring: noQuery(),
    body: object({ accessKey: name('the access key'), secretKey: name('the secret key'), policies: { ...list(name('policy name'), 'policies to attach'), maxItems: 64 } }, { optional: ['policies'] }),
    response: userAnswer,
    example: { body: { accessKey: 'alice', secretKey: 'alice-secret-key', policies: ['readonly'] }, response: { user: exampleUser } },
  }),
  removeUser: consoleSchema('users', {
    summary: 'Remove a user',
    description: 'Removes the user; its console sessions end at once. Needs `admin:DeleteUser`.',
    querystring: noQuery(),
    params: accessKeyParams,
    response: object({ removed: text('the access key') }),
    example: { params: { accessKey: 'alice' }, response: { removed: 'alice' } },
  }),
  setEnabled: consoleSchema('users', {
    summary: 'Enable or disable a user',
    description: 'A disabled user is refused at once, its console sessions included. Needs `admin:EnableUser` or `admin:DisableUser`.',
    querystring: noQuery(),
    params: accessKeyParams,
    body: object({ enabled: boolean('true to enable, false to disable') }),
    response: userAnswer,
    example: { params: { accessKey: 'alice' }, body: { enabled: false }, response: { user: { ...exampleUser, enabled: false } } },
  }),
  attachment: consoleSchema('users', {
    summary: 'Attach (PUT) or detach (DELETE) a policy',
    description: 'Needs `admin:AttachUserOrGroupPolicy`; an unknown user or policy is `NoSuchUser` / `NoSuchPolicy`.',
    querystring: noQuery(),
    params: object({ accessKey: name("the user's access key"), policy: name('the policy name') }),
    response: userAnswer,
    example: { params: { accessKey: 'alice', policy: 'readonly' }, response: { user: exampleUser } },
  }),
  listPolicies: consoleSchema('users', {
    summary: 'Policies',
    description: 'The built-in and created policies with their documents and the users holding them. Needs `admin:ListUserPolicies`.',
    querystring: noQuery(),
    response: object({
      policies: list(object({ name: text('policy name'), builtIn: boolean('built in (read-only)'), document: openObject("the policy's IAM JSON document as stored"), users: list(text('access key'), 'users holding it') }), 'the policies'),
    }),
    example: { response: { policies: [{ name: 'photos-read', builtIn: false, document: policyDocument, users: ['alice'] }] } },
  }),
  putPolicy: consoleSchema('users', {
    summary: 'Create or replace a policy',
    description: "`document` is the policy's JSON text, so the validator can name what is wrong with it, its syntax included (`MalformedPolicy`). Built-in policies cannot be replaced (`PolicyIsBuiltIn`). Needs `admin:CreatePolicy`.",
    querystring: noQuery(),
    params: object({ name: name('the policy name') }),
    body: object({ document: text('the IAM policy document, as JSON text') }),
    response: object({ name: text('the policy name') }),
    example: { params: { name: 'photos-read' }, body: { document: JSON.stringify(policyDocument) }, response: { name: 'photos-read' } },
  }),
  removePolicy: consoleSchema('users', {
    summary: 'Remove a policy',
    description: 'A policy a user holds is `PolicyInUse`; a built-in one `PolicyIsBuiltIn`. Needs `admin:DeletePolicy`.',
    querystring: noQuery(),
    params: object({ name: name('the policy name') }),
    response: object({ removed: text('the policy name') }),
    example: { params: { name: 'photos-read' }, response: { removed: 'photos-read' } },
  }),
};
