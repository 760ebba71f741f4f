/**
 * No escalation through IAM calls. A change that hands its caller a credential (a user's new
 * secret, a service account, a session) or that widens what someone already holds (a policy
 * replaced, a group enabled, a Deny taken away) needs, besides its own action, every action that
 * would build the same result from nothing: attaching the policies the credential will hold
 * (`admin:AttachUserOrGroupPolicy`), putting it in the groups it will be in
 * (`admin:AddUserToGroup`). So whatever a caller can make, it could already have given itself.
 * A user manages its own service accounts without any admin action (they never hold more than
 * it does); a service account or a session never acts as the owner of its user's accounts.
 */
import { adminAction as admin } from '../iam/index.js';
import type { Permission, Principal } from '../iam/index.js';
import type { IamStore } from './iam-store.js';

type IamReader = Pick<IamStore, 'userInfo' | 'groupInfo' | 'policyHolders' | 'policyDocument' | 'serviceAccountInfo'>;

const need = (...actions: string[]): Permission[] => [...new Set(actions)].map((action) => ({ action }));

/** What building user `accessKey` as it stands would take: attaching its policies, adding it to its groups. */
export function buildUserNeeds(iam: IamReader, accessKey: string): Permission[] {
  const user = iam.userInfo(accessKey);
  if (!user) return [];
  return need(...(user.policies.length > 0 ? [admin.attachUserOrGroupPolicy] : []), ...(user.groups.length > 0 ? [admin.addUserToGroup] : []));
}

/** Adding a user: attaching the policies named; replacing an existing user's secret takes it over, so also building it. */
export function addUserNeeds(iam: IamReader, accessKey: string, policies: readonly string[]): Permission[] {
  return need(...(policies.length > 0 ? [admin.attachUserOrGroupPolicy] : []), ...buildUserNeeds(iam, accessKey).map((permission) => permission.action));
}

/** Whether the caller is the user itself acting with its own credentials (not a service account or session of it). */
export function isOwner(caller: Principal, user: string): boolean {
  return caller.kind === 'user' && caller.accessKey === user;
}

/** Creating or changing a service account of `parent`: nothing for its owner; otherwise the action and building `parent`. */
export function serviceAccountNeeds(iam: IamReader, caller: Principal, parent: string, action: string): Permission[] {
  if (isOwner(caller, parent)) return [];
  return need(action, ...buildUserNeeds(iam, parent).map((permission) => permission.action));
}

/** The owner of a service account (undefined when there is none: the route's own refusal follows). */
export function serviceAccountParent(iam: IamReader, accessKey: string): string | undefined {
  return iam.serviceAccountInfo(accessKey)?.parent;
}

/** Replacing a policy someone holds changes what they may do: as attaching it to them. */
export function createPolicyNeeds(iam: IamReader, name: string): Permission[] {
  const holders = iam.policyHolders(name);
  return holders.users.length + holders.groups.length > 0 ? need(admin.attachUserOrGroupPolicy) : [];
}

/** Enabling a group gives its members its policies: as attaching them. */
export function enableGroupNeeds(iam: IamReader, group: string): Permission[] {
  const info = iam.groupInfo(group);
  return info && info.policies.length > 0 && info.members.length > 0 ? need(admin.attachUserOrGroupPolicy) : [];
}

/** Taking members out of a group, or disabling it, lifts any Deny its policies hold over them: as detaching them. */
export function leaveGroupNeeds(iam: IamReader, group: string): Permission[] {
  const info = iam.groupInfo(group);
  return info && info.policies.some((name) => holdsDeny(iam.policyDocument(name))) ? need(admin.attachUserOrGroupPolicy) : [];
}

function holdsDeny(document: unknown): boolean {
  const statements = (document as { Statement?: unknown } | undefined)?.Statement;
  const list = Array.isArray(statements) ? statements : statements === undefined ? [] : [statements];
  return list.some((statement) => (statement as { Effect?: unknown } | null)?.Effect === 'Deny');
}
