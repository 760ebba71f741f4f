/**
 * The lifecycle scanner of the node that answers (root only, like every admin route): its status
 * (current and last cycle), and a cycle started now. Each route carries its query and answer as
 * JSON Schema with an example (`schema`), for the OpenAPI document.
 */
import { adminAction as admin } from '../../iam/index.js';
import type { AdminRoute } from './context.js';
import { noQuery } from './query.js';
import * as schema from './route-schema.js';

const lifecycle = '/svc/admin/v4/lifecycle';

const count = (description: string): schema.JsonSchema => schema.integer(description, { minimum: 0 });
const instant = (description: string): schema.JsonSchema => schema.text(description, { format: 'date-time' });
const nullable = schema.nullable;
const closed = (properties: Record<string, schema.JsonSchema>, description?: string): schema.JsonSchema => schema.object(properties, description ? { description } : {});

export const lifecycleCycleSchema = closed(
  {
    trigger: schema.oneOfValues(['schedule', 'manual'], 'started by the interval, or by POST /svc/admin/v4/lifecycle/run'),
    startedAt: instant('when the cycle started'),
    finishedAt: nullable(instant('when it ended (null while it runs)')),
    judgedAt: instant("the lifecycle clock's time the rules were judged at"),
    currentBucket: nullable(schema.text('the bucket being scanned')),
    bucketsScanned: count('buckets walked to the end (those with rules; every bucket on a repair walk)'),
    bucketsSkipped: count("buckets whose scan lock another node held"),
    objectsScanned: count("keys walked (those under the rules' prefixes; every key on a repair walk)"),
    versionsScanned: count('versions (delete markers included) of the keys walked'),
    expired: closed({
      currentVersions: count('current versions expired (deleted, or a delete marker put on them)'),
      noncurrentVersions: count('noncurrent versions removed'),
      deleteMarkers: count('expired object delete markers removed'),
      multipartUploads: count('incomplete multipart uploads aborted'),
    }),
    transitioned: count("versions whose data was moved to a remote tier (Transition, NoncurrentVersionTransition)"),
    restoredCopiesEnded: count('restored copies (RestoreObject) past their expiry whose local bytes were removed (found through the restored-copy index, no walk needed)'),
    repairWalk: schema.boolean("every key of every bucket was walked to rebuild a set's restored-copy index marked for repair (a copy of it was refused)"),
    lockedVersionsKept: count('versions a rule would have removed but object lock kept'),
    errors: count('keys or buckets that failed'),
    recentErrors: schema.list(schema.text('a failure'), 'the last 10 failures, in words'),
  },
  'One lifecycle cycle of this node.',
);

export const lifecycleStatusSchema = closed(
  {
    running: schema.boolean('a cycle runs now'),
    intervalMs: count('time between the end of a cycle and the start of the next (SVC_LIFECYCLE_INTERVAL)'),
    objectsPerSecond: count('keys a second the scanner walks at most (SVC_LIFECYCLE_OBJECTS_PER_SECOND)'),
    nextCycleAt: nullable(instant('when the next scheduled cycle starts (null while one runs)')),
    current: nullable(lifecycleCycleSchema),
    last: nullable(lifecycleCycleSchema),
  },
  "This node's lifecycle scanner.",
);

const exampleCycle = {
  trigger: 'manual', startedAt: '2026-11-25T06:26:01.000Z', finishedAt: '2026-11-25T06:26:01.412Z', judgedAt: '2026-11-25T06:26:01.000Z', currentBucket: null,
  bucketsScanned: 1, bucketsSkipped: 0, objectsScanned: 2, versionsScanned: 2,
  expired: { currentVersions: 2, noncurrentVersions: 0, deleteMarkers: 0, multipartUploads: 0 }, transitioned: 0, restoredCopiesEnded: 1, repairWalk: false, lockedVersionsKept: 0, errors: 0, recentErrors: [],
};

export const lifecycleRoutes: AdminRoute[] = [
  {
    method: 'GET',
    path: `${lifecycle}/status`,
    schema: {
      summary: 'Lifecycle scanner status',
      description: "This node's lifecycle scanner: the running cycle and the last ended one, with what each expired by kind. Unknown query parameters are ignored.",
      querystring: schema.statusQuery({}),
      response: lifecycleStatusSchema,
      example: { response: { running: false, intervalMs: 3_600_000, objectsPerSecond: 1000, nextCycleAt: '2026-11-25T07:26:01.412Z', current: null, last: exampleCycle } },
    },
    access: { actions: [admin.serverInfo] },
    handle: async (context) => context.lifecycle.status(),
  },
  {
    method: 'POST',
    path: `${lifecycle}/run`,
    schema: {
      summary: 'Start a lifecycle cycle now',
      description: "Starts a cycle on this node over every bucket with rules (each under its cluster-wide scan lock; the keys under the rules' prefixes) and over the restored-copy index of every set (restored copies past their expiry end, in any bucket), and answers at once. No query string, not even a bare `?`. 409 LifecycleScanRunning while a cycle runs.",
      querystring: schema.noQuery(),
      response: closed({ started: lifecycleCycleSchema }),
      example: { response: { started: { ...exampleCycle, finishedAt: null, bucketsScanned: 0, objectsScanned: 0, versionsScanned: 0, restoredCopiesEnded: 0, expired: { currentVersions: 0, noncurrentVersions: 0, deleteMarkers: 0, multipartUploads: 0 } } } },
    },
    access: { actions: [admin.lifecycle] },
    handle: async (context, request) => {
      noQuery(request);
      return { started: context.lifecycle.runNow() };
    },
  },
];
