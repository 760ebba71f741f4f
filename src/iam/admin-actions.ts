/**
 * The admin actions routes declare (the names stores of this kind use in policies). A policy that
 * holds one lets its user call every route that declares it, on the admin API, in `rc admin` and
 * in the console alike.
 */
export const admin = {
  serverInfo: 'admin:ServerInfo',
  heal: 'admin:Heal',
  rebalance: 'admin:Rebalance',
  decommission: 'admin:Decommission',
  lifecycle: 'admin:Lifecycle',
  faults: 'admin:Faults',
  audit: 'admin:Audit',
  listUsers: 'admin:ListUsers',
  getUser: 'admin:GetUser',
  createUser: 'admin:CreateUser',
  deleteUser: 'admin:DeleteUser',
  enableUser: 'admin:EnableUser',
  disableUser: 'admin:DisableUser',
  attachPolicy: 'admin:AttachUserOrGroupPolicy',
  listPolicies: 'admin:ListUserPolicies',
  getPolicy: 'admin:GetPolicy',
  createPolicy: 'admin:CreatePolicy',
  deletePolicy: 'admin:DeletePolicy',
  listGroups: 'admin:ListGroups',
  getGroup: 'admin:GetGroup',
  addUserToGroup: 'admin:AddUserToGroup',
  removeUserFromGroup: 'admin:RemoveUserFromGroup',
  enableGroup: 'admin:EnableGroup',
  disableGroup: 'admin:DisableGroup',
  createServiceAccount: 'admin:CreateServiceAccount',
  updateServiceAccount: 'admin:UpdateServiceAccount',
  removeServiceAccount: 'admin:RemoveServiceAccount',
  listServiceAccounts: 'admin:ListServiceAccounts',
  prometheus: 'admin:Prometheus',
} as const;

export type AdminAction = (typeof admin)[keyof typeof admin];
