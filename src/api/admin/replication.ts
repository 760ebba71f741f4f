/**
 * Bucket replication's remote targets (docs/replication.md): add one (checked first: reachable,
 * credentials accepted, versioning on its bucket), list them (never with their secrets), remove
 * one, the replication status of every node (each target's queue per node and summed, resyncs),
 * and start a resync (on the leader).
 */
import { adminAction as admin } from '../../iam/index.js';
import { SvcError } from '../../errors/index.js';
import type { ReplicationAdmin, TargetReplicationStatus } from '../../ops/replication/replicator.js';
import type { AdminContext, AdminRoute } from './context.js';
import { jsonBody, mutationQuery, statusQuery } from './query.js';
import * as schema from './route-schema.js';

const path = '/svc/admin/v4/replication';
const count = (description: string): schema.JsonSchema => schema.integer(description, { minimum: 0 });
const bucketParameter = schema.text('the source bucket');
const arnParameter = schema.text('the remote target\'s ARN (arn:svc:replication::<id>:<target bucket>)');

export const remoteTargetSchema = schema.object(
  {
    arn: schema.text('the target\'s ARN; a replication rule names it, or arn:aws:s3:::<target bucket>'),
    id: schema.text('the target id'),
    sourceBucket: schema.text('the bucket whose changes go there'),
    endpoint: schema.text('the target deployment\'s S3 endpoint'),
    targetBucket: schema.text('the bucket on the target'),
    region: schema.text('the region requests to the target are signed for'),
    accessKey: schema.text('the access key used on the target (its secret is never answered)'),
    createdMs: schema.integer('when the target was added (ms since the epoch)'),
  },
  { description: 'One remote target, without its secret.' },
);

const targetStatusSchema = schema.object(
  {
    arn: schema.text('the target\'s ARN'),
    sourceBucket: schema.text('the source bucket'),
    endpoint: schema.text('the target deployment\'s S3 endpoint'),
    targetBucket: schema.text('the bucket on the target'),
    queued: count('tasks waiting in the target\'s queue (on the node, or on every node)'),
    oldestAgeSeconds: schema.number('age of the oldest waiting task (0 when none waits)'),
    completed: count('versions and delete markers the target took since the node started'),
    sentBytes: count('bytes of version data the target took since the node started'),
    failed: count('failed attempts since the node started (each is retried)'),
    unsupported: count('versions that cannot be replicated (SSE-C, SSE-KMS without a rule for it, or refused for good by the target), marked FAILED, since the node started'),
    dropped: count('tasks dropped because the queue was full, since the node started'),
    quarantined: count('queued task files that did not decode, since the node started'),
    lastError: schema.nullable(schema.text('why the last attempt failed (null after a success)')),
  },
  { description: 'One remote target and its queue: on one node, or summed over the nodes that answered.' },
);

const resyncSchema = schema.object(
  {
    id: schema.text('the resync id (the bucket and a digest of the destination)'),
    bucket: schema.text('the source bucket'),
    bucketArn: schema.text('the destination it queues for'),
    status: schema.oneOfValues(['running', 'completed', 'failed'], 'where the walk is'),
    startedMs: schema.integer('when it started'),
    updatedMs: schema.integer('when its progress was last saved'),
    afterKey: schema.text('every key up to this one was queued'),
    keys: count('keys walked'),
    queued: count('versions and delete markers queued'),
    error: schema.text('why it failed'),
    node: schema.text('the node that runs it (host:port)'),
  },
  { optional: ['afterKey', 'error', 'node'], description: 'A resync of existing objects, saved as it goes by the node that runs it (resumed after a restart).' },
);

const nodeStatusSchema = schema.object(
  {
    node: schema.text('the node (host:port)'),
    error: schema.text('why the node did not answer (its figures are then missing from the totals)'),
    targets: schema.list(targetStatusSchema, 'the targets and their queue on this node'),
    resyncs: schema.list(resyncSchema, 'the resyncs this node ran or runs'),
  },
  { optional: ['error', 'targets', 'resyncs'], description: 'One node\'s replication figures, or why it did not answer.' },
);

/** A target's figures as the status route answers them. */
function targetRow(context: AdminContext, target: TargetReplicationStatus): Record<string, unknown> {
  return {
    arn: target.arn, sourceBucket: target.sourceBucket, endpoint: target.endpoint, targetBucket: target.targetBucket,
    queued: target.depth,
    oldestAgeSeconds: target.oldestQueuedMs === undefined ? 0 : Math.max(0, context.nowMs() - target.oldestQueuedMs) / 1000,
    completed: target.completed, sentBytes: target.sentBytes, failed: target.failed, unsupported: target.unsupported, dropped: target.dropped, quarantined: target.quarantined,
    lastError: target.lastError ?? null,
  };
}

const exampleTarget = { arn: 'arn:svc:replication::3f2a9c01d4e5b6a7:photos-copy', id: '3f2a9c01d4e5b6a7', sourceBucket: 'photos', endpoint: 'https://dr.example.net:9000', targetBucket: 'photos-copy', region: 'us-east-1', accessKey: 'replicator', createdMs: 1_795_000_000_000 };
const exampleResync = { id: 'photos-8d2c41f0a9b3', bucket: 'photos', bucketArn: 'arn:aws:s3:::photos-copy', status: 'running', startedMs: 1_795_000_100_000, updatedMs: 1_795_000_160_000, afterKey: '2026/11/cat.jpg', keys: 1500, queued: 1720 };

function replicationOf(context: AdminContext): ReplicationAdmin {
  if (!context.replication) throw new SvcError('SlowDown', 'replication is not running on this node yet');
  return context.replication;
}

function requiredText(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '') throw new SvcError('InvalidArgument', `${name} is required`, { field: name });
  return value;
}

export const replicationRoutes: AdminRoute[] = [
  {
    method: 'POST',
    path: `${path}/target/add`,
    schema: {
      summary: 'Add a remote replication target',
      description: 'Adds a destination for a bucket\'s replication: another deployment\'s S3 endpoint, bucket and credentials (the secret is kept sealed and never answered). The target is checked first: `RemoteTargetUnreachable`, `RemoteTargetCredentialsRefused`, `RemoteTargetNotVersioned` by name, and nothing is stored. Versioning must be enabled on the source bucket (`InvalidRequest`); a second target for the same target bucket is `RemoteTargetExists`.',
      querystring: schema.mutationQuery({}),
      body: schema.object(
        {
          bucket: bucketParameter,
          endpoint: schema.text('the target deployment\'s S3 endpoint, http(s)://host:port'),
          targetBucket: schema.text('the bucket on the target'),
          accessKey: schema.text('an access key of the target'),
          secretKey: schema.text('its secret key'),
          region: schema.text('the region to sign for (us-east-1 by default)'),
        },
        { optional: ['region'] },
      ),
      response: schema.object({ target: remoteTargetSchema }),
      example: { body: { bucket: 'photos', endpoint: 'https://dr.example.net:9000', targetBucket: 'photos-copy', accessKey: 'replicator', secretKey: 'replicator-secret' }, response: { target: exampleTarget } },
    },
    access: { actions: [admin.setBucketTarget] },
    handle: async (context, request) => {
      mutationQuery(request.rawQuery, []);
      const body = jsonBody(request, 'the body') as Record<string, unknown>;
      const endpoint = requiredText(body.endpoint, 'endpoint');
      if (!/^https?:\/\/[^/\s]+\/?$/.test(endpoint)) throw new SvcError('InvalidArgument', 'endpoint must be http(s)://host[:port]', { field: 'endpoint' });
      const target = await replicationOf(context).addTarget({
        sourceBucket: requiredText(body.bucket, 'bucket'),
        endpoint: endpoint.replace(/\/$/, ''),
        targetBucket: requiredText(body.targetBucket, 'targetBucket'),
        accessKey: requiredText(body.accessKey, 'accessKey'),
        secretKey: requiredText(body.secretKey, 'secretKey'),
        ...(typeof body.region === 'string' && body.region !== '' ? { region: body.region } : {}),
      });
      return { target };
    },
  },
  {
    method: 'GET',
    path: `${path}/target/list`,
    schema: {
      summary: 'List remote replication targets',
      description: 'The remote targets of one bucket, or of every bucket without `bucket`; never with their secrets. Unknown query parameters are ignored.',
      querystring: schema.statusQuery({ bucket: bucketParameter }),
      response: schema.object({ targets: schema.list(remoteTargetSchema, 'the targets') }),
      example: { query: 'bucket=photos', response: { targets: [exampleTarget] } },
    },
    access: { actions: [admin.getBucketTarget] },
    handle: async (context, request) => ({ targets: await replicationOf(context).listTargets(statusQuery(request.rawQuery).get('bucket')) }),
  },
  {
    method: 'POST',
    path: `${path}/target/remove`,
    schema: {
      summary: 'Remove a remote replication target',
      description: 'Removes a target of the bucket and its queue. `NoSuchRemoteTarget` when unknown; `RemoteTargetInUse` while a replication rule of the bucket names it.',
      querystring: schema.mutationQuery({ bucket: bucketParameter, arn: arnParameter }, ['bucket', 'arn']),
      response: schema.object({ removed: schema.text('the ARN removed') }),
      example: { query: `bucket=photos&arn=${exampleTarget.arn}`, response: { removed: exampleTarget.arn } },
    },
    access: { actions: [admin.setBucketTarget] },
    handle: async (context, request) => {
      const query = mutationQuery(request.rawQuery, ['bucket', 'arn']);
      const removed = await replicationOf(context).removeTarget(requiredText(query.get('bucket'), 'bucket'), requiredText(query.get('arn'), 'arn'));
      return { removed: removed.arn };
    },
  },
  {
    method: 'GET',
    path: `${path}/status`,
    schema: {
      summary: 'Replication status',
      description: 'Each remote target (of one bucket, or all) with its queue on every node of the deployment, gathered over the peer protocol: `nodes` holds one row per node (or its error when it did not answer), `targets` the figures summed over the nodes that answered: tasks waiting and the oldest one\'s age, completed, bytes sent, failed attempts, the last error; and every node\'s resyncs. Unknown query parameters are ignored.',
      querystring: schema.statusQuery({ bucket: bucketParameter }),
      response: schema.object(
        { targets: schema.list(targetStatusSchema, 'the targets, summed over the nodes'), resyncs: schema.list(resyncSchema, 'the resyncs of every node'), nodes: schema.list(nodeStatusSchema, 'one row per node') },
        { optional: ['nodes'] },
      ),
      example: {
        query: 'bucket=photos',
        response: {
          targets: [{ arn: exampleTarget.arn, sourceBucket: 'photos', endpoint: exampleTarget.endpoint, targetBucket: 'photos-copy', queued: 2, oldestAgeSeconds: 0.4, completed: 1204, sentBytes: 73_400_320, failed: 3, unsupported: 0, dropped: 0, quarantined: 0, lastError: null }],
          resyncs: [exampleResync],
          nodes: [
            { node: '127.0.0.1:9000', targets: [{ arn: exampleTarget.arn, sourceBucket: 'photos', endpoint: exampleTarget.endpoint, targetBucket: 'photos-copy', queued: 2, oldestAgeSeconds: 0.4, completed: 1204, sentBytes: 73_400_320, failed: 3, unsupported: 0, dropped: 0, quarantined: 0, lastError: null }], resyncs: [exampleResync] },
            { node: '127.0.0.2:9000', error: 'the peer did not answer within 5000 ms' },
          ],
        },
      },
    },
    access: { actions: [admin.getBucketTarget] },
    handle: async (context, request) => {
      const status = await replicationOf(context).status(statusQuery(request.rawQuery).get('bucket'));
      return {
        targets: status.targets.map((target) => targetRow(context, target)),
        resyncs: status.resyncs,
        ...(status.nodes
          ? {
              nodes: status.nodes.map((row) => ({
                node: row.node,
                ...(row.error !== undefined ? { error: row.error } : {}),
                ...(row.targets ? { targets: row.targets.map((target) => targetRow(context, target)) } : {}),
                ...(row.resyncs ? { resyncs: row.resyncs } : {}),
              })),
            }
          : {}),
      };
    },
  },
  {
    method: 'POST',
    path: `${path}/resync`,
    schema: {
      summary: 'Resync a bucket',
      description: 'Starts a background walk over the bucket on the leader (the node holding the first endpoint; another node forwards the request there) that queues every version and delete marker a rule sends to the destination (every destination of an enabled rule without `arn`). Its progress is saved as it goes and resumed after a restart; one already running is answered as it is. `ReplicationConfigurationNotFoundError` when the bucket has no replication configuration.',
      querystring: schema.mutationQuery({ bucket: bucketParameter, arn: schema.text('a destination: arn:aws:s3:::<bucket> or a target ARN') }, ['bucket']),
      response: schema.object({ resyncs: schema.list(resyncSchema, 'the resyncs started (or running)') }),
      example: { query: 'bucket=photos', response: { resyncs: [exampleResync] } },
    },
    access: { actions: [admin.setBucketTarget] },
    handle: async (context, request) => {
      const query = mutationQuery(request.rawQuery, ['bucket', 'arn']);
      return { resyncs: await replicationOf(context).resync(requiredText(query.get('bucket'), 'bucket'), query.get('arn')) };
    },
  },
];
