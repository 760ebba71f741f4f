/**
 * Users and policies for the Users page: list, add, enable, disable and remove users, attach and
 * detach policies; list, create (or replace) and remove policies. The same IAM store as the admin
 * API and `rc admin user|policy`, so every node sees a change before the call answers. Each route
 * needs its admin action (`admin:ListUsers`, `admin:CreateUser`, ...: `consoleAdmin` holds them
 * all) and, like the admin API's, what building the result would take (src/ops/iam-guard.ts: a
 * user created with policies also needs the right to attach them), and declares the JSON schema of
 * its parameters, body and answer.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parsePolicy } from '../iam/index.js';
import type { UserInfo } from '../ops/iam-store.js';
import type { ConsoleContext } from './context.js';
import { adminActions } from './access.js';
import { requestAccess } from './request-state.js';
import { userSchemas as schemas } from './schemas-users.js';
import { addUserNeeds, createPolicyNeeds } from '../ops/iam-guard.js';

export async function userRoutes(app: FastifyInstance, options: { context: ConsoleContext }): Promise<void> {
  const { context } = options;
  const iam = () => context.iam();
  const may = (request: FastifyRequest, action: string) => requestAccess(request).require([{ action }]);

  app.get('/users', { schema: schemas.listUsers, config: { access: { actions: [adminActions.listUsers], on: 'deployment' } } }, async (request) => {
    return { users: iam().listUsers().map(userAnswer) };
  });
  app.post('/users', { schema: schemas.addUser, config: { access: { actions: [adminActions.createUser], on: 'deployment', conditional: { actions: [adminActions.attachUserOrGroupPolicy], when: 'policies are named' } } } }, async (request) => {
    const body = request.body as { accessKey: string; secretKey: string; policies?: string[] };
    await requestAccess(request).require(addUserNeeds(iam(), body.accessKey, body.policies ?? []));
    const user = await iam().addUser(body.accessKey, body.secretKey, body.policies ?? [], { onlyNew: true });
    context.logger.info({ by: requestAccess(request).session.accessKey, accessKey: user.accessKey, policies: user.policies }, 'console added a user');
    return { user: userAnswer(user) };
  });
  app.delete('/users/:accessKey', { schema: schemas.removeUser, config: { access: { actions: [adminActions.deleteUser], on: 'deployment' } } }, async (request) => {
    const { accessKey } = request.params as { accessKey: string };
    await iam().removeUser(accessKey);
    return { removed: accessKey };
  });
  app.put('/users/:accessKey/enabled', { schema: schemas.setEnabled, config: { access: { actions: [], on: 'deployment', conditional: { actions: [adminActions.enableUser, adminActions.disableUser], when: 'admin:EnableUser to enable, admin:DisableUser to disable' } } } }, async (request) => {
    const { accessKey } = request.params as { accessKey: string };
    const { enabled } = request.body as { enabled: boolean };
    await may(request, enabled ? adminActions.enableUser : adminActions.disableUser);
    return { user: userAnswer(await iam().setEnabled(accessKey, enabled)) };
  });
  app.put('/users/:accessKey/policies/:policy', { schema: schemas.attachment, config: { access: { actions: [adminActions.attachUserOrGroupPolicy], on: 'deployment' } } }, async (request) => {
    const { accessKey, policy } = request.params as { accessKey: string; policy: string };
    return { user: userAnswer(await iam().attach(accessKey, policy)) };
  });
  app.delete('/users/:accessKey/policies/:policy', { schema: schemas.attachment, config: { access: { actions: [adminActions.attachUserOrGroupPolicy], on: 'deployment' } } }, async (request) => {
    const { accessKey, policy } = request.params as { accessKey: string; policy: string };
    return { user: userAnswer(await iam().detach(accessKey, policy)) };
  });
  app.get('/policies', { schema: schemas.listPolicies, config: { access: { actions: [adminActions.listUserPolicies], on: 'deployment' } } }, async (request) => {
    return { policies: iam().listPolicies().map((policy) => ({ ...policy, users: iam().policyHolders(policy.name).users })) };
  });
  app.put('/policies/:name', { schema: schemas.putPolicy, config: { access: { actions: [adminActions.createPolicy], on: 'deployment', conditional: { actions: [adminActions.attachUserOrGroupPolicy], when: 'a user or group holds the policy' } } } }, async (request) => {
    const { name } = request.params as { name: string };
    const { document } = request.body as { document: string };
    await requestAccess(request).require(createPolicyNeeds(iam(), name));
    // The validator's own refusal (MalformedPolicy saying what is wrong), the JSON text included.
    parsePolicy(document);
    await iam().createPolicy(name, JSON.parse(document));
    return { name };
  });
  app.delete('/policies/:name', { schema: schemas.removePolicy, config: { access: { actions: [adminActions.deletePolicy], on: 'deployment' } } }, async (request) => {
    const { name } = request.params as { name: string };
    await iam().removePolicy(name);
    return { removed: name };
  });
}

function userAnswer(user: UserInfo) {
  return { accessKey: user.accessKey, enabled: user.enabled, policies: user.policies, groups: user.groups, createdAt: new Date(user.createdMs).toISOString() };
}
