/**
 * What is wrong and what the session may do. `GET /health` is the deployment's health model
 * (health.ts: every node, set and drive, the quorum margin per set and storage class, running
 * operations, last errors, one verdict and the runbook to follow); every page shows it as a banner
 * and a mark in the navigation. `GET /permissions` says which of the console's actions the
 * signed-in principal may take, on the deployment or on a bucket and prefix, each judged by the
 * same evaluator as the request itself would be (access.ts), with the refusal's reason, so the
 * browser hides or disables what would be refused instead of guessing.
 */
import type { FastifyInstance } from 'fastify';
import type { ConsoleContext } from './context.js';
import { adminActions } from './access.js';
import { requestAccess } from './request-state.js';
import { queryOf } from './input.js';
import { healthModel, type SnapshotView, type StorageClassView } from './health.js';
import { healthSchema, permissionsSchema } from './schemas-health.js';
import type { Permission } from '../api/s3/access.js';
import { bucketSettings } from './routes-bucket-settings.js';

/** A console action: what the console calls it, and the permission the same request would need. */
type ActionRule = [name: string, permission: (bucket: string, prefix: string) => Permission];

const deploymentActions: ActionRule[] = [
  ['createBucket', (bucket) => ({ action: 's3:CreateBucket', bucket: bucket || '*' })],
  ['serverInfo', () => ({ action: adminActions.serverInfo })],
  ['heal', () => ({ action: adminActions.heal })],
  ['rebalance', () => ({ action: 'admin:Rebalance' })],
  ['decommission', () => ({ action: 'admin:Decommission' })],
  ['listUsers', () => ({ action: adminActions.listUsers })],
  ['dataUsageInfo', () => ({ action: 'admin:DataUsageInfo' })],
  ['endSessions', () => ({ action: adminActions.disableUser })],
  ['getBucketTarget', () => ({ action: adminActions.getBucketTarget })],
  ['setBucketTarget', () => ({ action: adminActions.setBucketTarget })],
  ['kmsKeyStatus', () => ({ action: adminActions.kmsKeyStatus })],
  ['kmsDeleteKey', () => ({ action: adminActions.kmsDeleteKey })],
];

const bucketActions: ActionRule[] = [
  ['listObjects', (bucket) => ({ action: 's3:ListBucket', bucket })],
  ['listVersions', (bucket) => ({ action: 's3:ListBucketVersions', bucket })],
  ['getObject', (bucket, prefix) => ({ action: 's3:GetObject', bucket, key: `${prefix}*` })],
  ['putObject', (bucket, prefix) => ({ action: 's3:PutObject', bucket, key: `${prefix}*` })],
  ['deleteObject', (bucket, prefix) => ({ action: 's3:DeleteObject', bucket, key: `${prefix}*` })],
  ['deleteObjectVersion', (bucket, prefix) => ({ action: 's3:DeleteObjectVersion', bucket, key: `${prefix}*` })],
  ['abortUpload', (bucket, prefix) => ({ action: 's3:AbortMultipartUpload', bucket, key: `${prefix}*` })],
  ['putBucketVersioning', (bucket) => ({ action: 's3:PutBucketVersioning', bucket })],
  ['deleteBucket', (bucket) => ({ action: 's3:DeleteBucket', bucket })],
  ['getObjectVersion', (bucket, prefix) => ({ action: 's3:GetObjectVersion', bucket, key: `${prefix}*` })],
  ['putObjectTagging', (bucket, prefix) => ({ action: 's3:PutObjectTagging', bucket, key: `${prefix}*` })],
  ...settingActions(),
];

/** The bucket settings page's actions: `<setting>.get`, `<setting>.put`, `<setting>.remove` (routes-bucket-settings.ts). */
function settingActions(): ActionRule[] {
  return bucketSettings.flatMap((setting) =>
    (['get', 'put', 'remove'] as const).flatMap((verb): ActionRule[] => {
      const action = setting[verb]?.action;
      return action === undefined ? [] : [[`${setting.name}.${verb}`, (bucket) => ({ action, bucket })]];
    }),
  );
}

export async function healthRoutes(app: FastifyInstance, options: { context: ConsoleContext }): Promise<void> {
  const { context } = options;
  app.get('/health', { schema: healthSchema, config: { access: { actions: [adminActions.serverInfo], on: 'deployment' } } }, async () => {
    const admin = context.admin();
    const snapshot = (await admin.snapshot()) as unknown as SnapshotView;
    const classes = (admin.capabilities() as { storageClasses: StorageClassView[] }).storageClasses;
    return healthModel(snapshot, classes);
  });
  app.get('/permissions', { schema: permissionsSchema, config: { access: { session: "the session's own permissions, judged as its requests would be" } } }, async (request) => {
    const query = queryOf(request);
    const bucket = query.bucket ?? '';
    const prefix = query.prefix ?? '';
    const access = requestAccess(request);
    const rules = bucket === '' ? deploymentActions : [...deploymentActions, ...bucketActions];
    const actions: Record<string, { allowed: boolean; reason?: string }> = {};
    for (const [name, permission] of rules) actions[name] = await access.judge([permission(bucket, prefix)], bucket === '' ? {} : { prefix, delimiter: '/' });
    return { principal: access.principal.accessKey, root: access.principal.kind === 'root', ...(bucket === '' ? {} : { bucket, prefix }), actions };
  });
}
