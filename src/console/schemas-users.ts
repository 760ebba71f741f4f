/**
 * Schemas of the Users page's console routes (routes-users.ts), in the console API's form
 * (api-schemas.ts): fastify checks parameters and bodies against them before a handler runs (a
 * mismatch is InvalidArgument naming the field), answers are checked against them, and the
 * console's OpenAPI document shows them with their examples.
 */
import { boolean, integer, list, noQuery, number, object, oneOfValues, openObject, statusQuery, text, type JsonSchema } from '../api/admin/route-schema.js';
import { auditOutcomes, auditPrincipalKinds, auditSurfaces } from '../ops/audit.js';
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

const principal = object(
  { kind: oneOfValues(auditPrincipalKinds, 'how the caller signed the request (anonymous: not at all)'), accessKey: text('its access key'), parentUser: text('the user a service account or session belongs to') },
  { optional: ['accessKey', 'parentUser'], description: 'who made the request (never a secret)' },
);
const auditEntry = object(
  {
    version: text('the entry format, "1"'),
    time: text('when the request arrived (ISO 8601)', { format: 'date-time' }),
    node: text('the node that served it'),
    requestId: text('the x-amz-request-id of its answer'),
    surface: oneOfValues(auditSurfaces, 'which API served it'),
    api: text('the operation: PutObject, admin:user/add, PUT users/:accessKey/enabled'),
    principal,
    actions: list(text('IAM action'), 'the IAM actions it needed'),
    resource: text('what it acted on: bucket/key, bucket, or the admin or console target'),
    outcome: oneOfValues(auditOutcomes, 'allowed (2xx/3xx), denied (401/403) or error'),
    httpStatus: integer('the status answered'),
    errorCode: text('the error code answered'),
    sourceIp: text("the client's address"),
    userAgent: text('the User-Agent header'),
    durationMs: number('time from the request to the end of its answer'),
  },
  { optional: ['errorCode'], description: 'one audit entry (docs/audit.md)' },
);
const auditStats = object(
  {
    recorded: integer('entries this node recorded since it started'),
    webhook: boolean('whether a webhook is configured (SVC_AUDIT_WEBHOOK_ENDPOINT)'),
    queued: integer('entries waiting for the webhook'),
    delivered: integer('entries the webhook took since the start'),
    dropped: integer('entries dropped from a full webhook queue (or torn on disk) since the start'),
    quarantined: integer('queue segment files refused at start and moved aside since the start'),
    lastError: text("why the webhook's last delivery failed (absent after a success)"),
  },
  { optional: ['lastError'], description: 'the audit targets of this node' },
);
const exampleEntry = {
  version: '1', time: '2026-11-25T06:00:00.000Z', node: '127.0.0.1:9000', requestId: '1A2B3C4D00000007', surface: 's3', api: 'PutObject',
  principal: { kind: 'user', accessKey: 'alice' }, actions: ['s3:PutObject'], resource: 'photos/cat.jpg', outcome: 'denied', httpStatus: 403, errorCode: 'AccessDenied',
  sourceIp: '127.0.0.1', userAgent: 'aws-sdk-js/3', durationMs: 2.5,
};

export const auditSchema = consoleSchema('users', {
  summary: 'Recent audit entries',
  description: "This node's newest audit entries first (requests that changed state or were refused for authorization; at most the last 1000 are kept in memory). Needs `admin:Audit`.",
  querystring: statusQuery({
    limit: text('entries at most, 1 to 1000 (default 100)'),
    principal: text('only this access key, or this principal kind (anonymous, root, ...)'),
    outcome: oneOfValues(auditOutcomes, 'only this outcome'),
  }),
  response: object({ stats: auditStats, entries: list(auditEntry, 'newest first') }),
  example: { query: 'limit=1&outcome=denied', response: { stats: { recorded: 12, webhook: true, queued: 0, delivered: 12, dropped: 0, quarantined: 0 }, entries: [exampleEntry] } },
});
