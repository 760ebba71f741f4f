/**
 * Every action name a policy may give. A name outside this catalogue, or a wildcard pattern that
 * matches none of it, is refused when a policy is parsed (src/iam/policy.ts), so a typo never
 * turns silently into a statement that grants or denies nothing.
 *
 * - `s3:` the whole list AWS documents for Amazon S3 (its service authorization reference),
 *   whether or not this server routes the request behind it: a policy written for AWS is accepted
 *   as written, and grants nothing more here than the requests this server serves.
 * - `admin:` the admin API's actions (the names S3 stores of this kind share).
 * - `sts:` the security token service's.
 * - `kms:` those of the built-in key management service.
 *
 * Names compare case-insensitively, as AWS compares them.
 */
import { wildcardMatch } from './match.js';

export const s3Actions = [
  'AbortMultipartUpload', 'AllowVendedLogDeliveryForResource', 'AssociateAccessGrantsIdentityCenter', 'BypassGovernanceRetention',
  'CreateAccessGrant', 'CreateAccessGrantsInstance', 'CreateAccessGrantsLocation', 'CreateAccessPoint', 'CreateAccessPointForObjectLambda',
  'CreateBucket', 'CreateBucketMetadataTableConfiguration', 'CreateJob', 'CreateMultiRegionAccessPoint', 'CreateStorageLensGroup',
  'DeleteAccessGrant', 'DeleteAccessGrantsInstance', 'DeleteAccessGrantsInstanceResourcePolicy', 'DeleteAccessGrantsLocation',
  'DeleteAccessPoint', 'DeleteAccessPointForObjectLambda', 'DeleteAccessPointPolicy', 'DeleteAccessPointPolicyForObjectLambda',
  'DeleteBucket', 'DeleteBucketMetadataTableConfiguration', 'DeleteBucketPolicy', 'DeleteBucketWebsite', 'DeleteJobTagging',
  'DeleteMultiRegionAccessPoint', 'DeleteObject', 'DeleteObjectAnnotation', 'DeleteObjectTagging', 'DeleteObjectVersion',
  'DeleteObjectVersionAnnotation', 'DeleteObjectVersionTagging', 'DeleteStorageLensConfiguration', 'DeleteStorageLensConfigurationTagging',
  'DeleteStorageLensGroup', 'DescribeJob', 'DescribeMultiRegionAccessPointOperation', 'DissociateAccessGrantsIdentityCenter',
  'GetAccelerateConfiguration', 'GetAccessGrant', 'GetAccessGrantsInstance', 'GetAccessGrantsInstanceForPrefix',
  'GetAccessGrantsInstanceResourcePolicy', 'GetAccessGrantsLocation', 'GetAccessPoint', 'GetAccessPointConfigurationForObjectLambda',
  'GetAccessPointForObjectLambda', 'GetAccessPointPolicy', 'GetAccessPointPolicyForObjectLambda', 'GetAccessPointPolicyStatus',
  'GetAccessPointPolicyStatusForObjectLambda', 'GetAccountPublicAccessBlock', 'GetAnalyticsConfiguration', 'GetBucketAbac', 'GetBucketAcl',
  'GetBucketCORS', 'GetBucketLocation', 'GetBucketLogging', 'GetBucketMetadataTableConfiguration', 'GetBucketNotification',
  'GetBucketObjectLockConfiguration', 'GetBucketOwnershipControls', 'GetBucketPolicy', 'GetBucketPolicyStatus', 'GetBucketPublicAccessBlock',
  'GetBucketRequestPayment', 'GetBucketTagging', 'GetBucketVersioning', 'GetBucketWebsite', 'GetDataAccess', 'GetEncryptionConfiguration',
  'GetIntelligentTieringConfiguration', 'GetInventoryConfiguration', 'GetJobTagging', 'GetLifecycleConfiguration', 'GetMetricsConfiguration',
  'GetMultiRegionAccessPoint', 'GetMultiRegionAccessPointPolicy', 'GetMultiRegionAccessPointPolicyStatus', 'GetMultiRegionAccessPointRoutes',
  'GetObject', 'GetObjectAcl', 'GetObjectAnnotation', 'GetObjectAttributes', 'GetObjectLegalHold', 'GetObjectRetention', 'GetObjectTagging',
  'GetObjectTorrent', 'GetObjectVersion', 'GetObjectVersionAcl', 'GetObjectVersionAnnotation', 'GetObjectVersionAnnotationForReplication',
  'GetObjectVersionAttributes', 'GetObjectVersionForReplication', 'GetObjectVersionTagging', 'GetObjectVersionTorrent',
  'GetReplicationConfiguration', 'GetStorageLensConfiguration', 'GetStorageLensConfigurationTagging', 'GetStorageLensDashboard',
  'GetStorageLensGroup', 'InitiateReplication', 'ListAccessGrants', 'ListAccessGrantsInstances', 'ListAccessGrantsLocations',
  'ListAccessPoints', 'ListAccessPointsForObjectLambda', 'ListAllMyBuckets', 'ListBucket', 'ListBucketMultipartUploads', 'ListBucketVersions',
  'ListCallerAccessGrants', 'ListJobs', 'ListMultiRegionAccessPoints', 'ListMultipartUploadParts', 'ListObjectAnnotations',
  'ListObjectVersionAnnotations', 'ListStorageLensConfigurations', 'ListStorageLensGroups', 'ListTagsForResource',
  'ObjectOwnerOverrideToBucketOwner', 'PauseReplication', 'PutAccelerateConfiguration', 'PutAccessGrantsInstanceResourcePolicy',
  'PutAccessPointConfigurationForObjectLambda', 'PutAccessPointPolicy', 'PutAccessPointPolicyForObjectLambda', 'PutAccessPointPublicAccessBlock',
  'PutAccountPublicAccessBlock', 'PutAnalyticsConfiguration', 'PutBucketAbac', 'PutBucketAcl', 'PutBucketCORS', 'PutBucketLogging',
  'PutBucketNotification', 'PutBucketObjectLockConfiguration', 'PutBucketOwnershipControls', 'PutBucketPolicy', 'PutBucketPublicAccessBlock',
  'PutBucketRequestPayment', 'PutBucketTagging', 'PutBucketVersioning', 'PutBucketWebsite', 'PutEncryptionConfiguration',
  'PutIntelligentTieringConfiguration', 'PutInventoryConfiguration', 'PutJobTagging', 'PutLifecycleConfiguration', 'PutMetricsConfiguration',
  'PutMultiRegionAccessPointPolicy', 'PutObject', 'PutObjectAcl', 'PutObjectAnnotation', 'PutObjectLegalHold', 'PutObjectRetention',
  'PutObjectTagging', 'PutObjectVersionAcl', 'PutObjectVersionAnnotation', 'PutObjectVersionTagging', 'PutReplicationConfiguration',
  'PutStorageLensConfiguration', 'PutStorageLensConfigurationTagging', 'ReplicateDelete', 'ReplicateObject', 'ReplicateObjectAnnotation',
  'ReplicateTags', 'RestoreObject', 'SubmitMultiRegionAccessPointRoutes', 'TagResource', 'UntagResource', 'UpdateAccessGrantsLocation',
  'UpdateBucketMetadataAnnotationTableConfiguration', 'UpdateBucketMetadataInventoryTableConfiguration',
  'UpdateBucketMetadataJournalTableConfiguration', 'UpdateJobPriority', 'UpdateJobStatus', 'UpdateObjectEncryption', 'UpdateStorageLensGroup',
].map((name) => `s3:${name}`);

/**
 * S3 actions this server has beyond AWS's list, named as MinIO names them so policies written for
 * it keep working: listening to a bucket's events live (`rc watch`).
 */
export const s3ExtensionActions = ['s3:ListenBucketNotification'];

/** The admin actions by a constant name, for route tables: `adminAction.createUser`. */
export const adminAction = {
  heal: 'admin:Heal',
  storageInfo: 'admin:StorageInfo',
  dataUsageInfo: 'admin:DataUsageInfo',
  topLocksInfo: 'admin:TopLocksInfo',
  profiling: 'admin:Profiling',
  serverTrace: 'admin:ServerTrace',
  consoleLog: 'admin:ConsoleLog',
  kmsCreateKey: 'admin:KMSCreateKey',
  kmsKeyStatus: 'admin:KMSKeyStatus',
  kmsRotateKey: 'admin:KMSRotateKey',
  kmsDisableKey: 'admin:KMSDisableKey',
  kmsEnableKey: 'admin:KMSEnableKey',
  kmsDeleteKey: 'admin:KMSDeleteKey',
  serverInfo: 'admin:ServerInfo',
  obdInfo: 'admin:OBDInfo',
  serverUpdate: 'admin:ServerUpdate',
  serviceRestart: 'admin:ServiceRestart',
  configUpdate: 'admin:ConfigUpdate',
  createUser: 'admin:CreateUser',
  deleteUser: 'admin:DeleteUser',
  listUsers: 'admin:ListUsers',
  enableUser: 'admin:EnableUser',
  disableUser: 'admin:DisableUser',
  getUser: 'admin:GetUser',
  addUserToGroup: 'admin:AddUserToGroup',
  removeUserFromGroup: 'admin:RemoveUserFromGroup',
  getGroup: 'admin:GetGroup',
  listGroups: 'admin:ListGroups',
  enableGroup: 'admin:EnableGroup',
  disableGroup: 'admin:DisableGroup',
  createPolicy: 'admin:CreatePolicy',
  deletePolicy: 'admin:DeletePolicy',
  getPolicy: 'admin:GetPolicy',
  attachUserOrGroupPolicy: 'admin:AttachUserOrGroupPolicy',
  listUserPolicies: 'admin:ListUserPolicies',
  createServiceAccount: 'admin:CreateServiceAccount',
  updateServiceAccount: 'admin:UpdateServiceAccount',
  removeServiceAccount: 'admin:RemoveServiceAccount',
  listServiceAccounts: 'admin:ListServiceAccounts',
  listTemporaryAccounts: 'admin:ListTemporaryAccounts',
  setBucketQuota: 'admin:SetBucketQuota',
  getBucketQuota: 'admin:GetBucketQuota',
  setBucketTarget: 'admin:SetBucketTarget',
  getBucketTarget: 'admin:GetBucketTarget',
  rebalance: 'admin:Rebalance',
  decommission: 'admin:Decommission',
  prometheus: 'admin:Prometheus',
  bandwidthMonitor: 'admin:BandwidthMonitor',
  exportIam: 'admin:ExportIAM',
  importIam: 'admin:ImportIAM',
  forceUnlock: 'admin:ForceUnlock',
  lifecycle: 'admin:Lifecycle',
  faults: 'admin:Faults',
  audit: 'admin:Audit',
  setTier: 'admin:SetTier',
  listTier: 'admin:ListTier',
} as const;

export type AdminActionName = (typeof adminAction)[keyof typeof adminAction];

export const stsAction = {
  assumeRole: 'sts:AssumeRole',
  assumeRoleWithWebIdentity: 'sts:AssumeRoleWithWebIdentity',
  getCallerIdentity: 'sts:GetCallerIdentity',
} as const;

/** What a key administrator does with the built-in KMS: see its state, and make, list, inspect and rotate keys. */
export const kmsAction = {
  status: 'kms:Status',
  metrics: 'kms:Metrics',
  version: 'kms:Version',
  createKey: 'kms:CreateKey',
  listKeys: 'kms:ListKeys',
  keyStatus: 'kms:KeyStatus',
  rotateKey: 'kms:RotateKey',
} as const;

/** The services whose actions a policy may name. */
export const actionServices = ['s3', 'admin', 'sts', 'kms'] as const;

export const knownActions: readonly string[] = [...s3Actions, ...s3ExtensionActions, ...Object.values(adminAction), ...Object.values(stsAction), ...Object.values(kmsAction)];

const knownLowerCase = new Set(knownActions.map((name) => name.toLowerCase()));

/** A catalogued action, named exactly (no wildcards), in any letter case. */
export function isKnownAction(name: string): boolean {
  return knownLowerCase.has(name.toLowerCase());
}

/** Whether an action pattern (`*` and `?` wildcards, any letter case) matches at least one catalogued action. */
export function patternMatchesSomeAction(pattern: string): boolean {
  if (!/[*?]/.test(pattern)) return isKnownAction(pattern);
  return knownActions.some((name) => wildcardMatch(pattern, name, true));
}
