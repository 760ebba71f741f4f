/**
 * The data-usage scanner (src/ops/usage-scanner.ts): the last result with its age and the scan
 * under way (from any node: the result is persisted), and a scan started on this node now. Each
 * route carries its query and answer as JSON Schema with an example, for the OpenAPI document.
 */
import { adminAction as admin } from '../../iam/index.js';
import type { AdminRoute } from './context.js';
import { noQuery } from './query.js';
import * as schema from './route-schema.js';

const usage = '/svc/admin/v4/data-usage';

const count = (description: string): schema.JsonSchema => schema.integer(description, { minimum: 0 });
const instant = (description: string): schema.JsonSchema => schema.text(description, { format: 'date-time' });
const nullable = schema.nullable;

const countFields = {
  objects: count('keys whose current version is not a delete marker'),
  versions: count('stored versions that are not delete markers, current and noncurrent'),
  deleteMarkers: count('delete markers'),
  sizeBytes: count('bytes of every stored version (client sizes, before erasure coding)'),
  currentSizeBytes: count('bytes of the current versions only'),
};

const bucketUsageSchema = schema.object({ bucket: schema.text('bucket name'), ...countFields }, { description: 'One bucket as the last scan walked it.' });

export const usageProgressSchema = schema.object(
  {
    startedAt: instant('when the scan started'),
    savedAt: instant('when its checkpoint was last saved'),
    bucket: nullable(schema.text('the bucket being walked')),
    bucketsDone: count('buckets walked to their end'),
    bucketsTotal: count('buckets the scan walks'),
    keysWalked: count('keys walked so far, across resumes'),
    resumes: count('times the scan was taken up again from its checkpoint'),
  },
  { description: 'A scan under way, as its last checkpoint records it.' },
);

const snapshotSchema = schema.object(
  {
    startedAt: instant('when the scan started'),
    finishedAt: instant('when it finished'),
    resumes: count('times it was taken up again from its checkpoint'),
    buckets: schema.list(bucketUsageSchema, 'every bucket, by name'),
    total: schema.object({ buckets: count('buckets'), ...countFields }),
  },
  { description: 'The last finished scan.' },
);

export const usageStatusSchema = schema.object(
  {
    generatedAt: instant('when this answer was made'),
    running: schema.boolean('a scan runs on this node now'),
    objectsPerSecond: count('keys a second the scanner walks at most'),
    intervalMs: count('time from the end of a scheduled scan to the start of the next'),
    nextScanAt: nullable(instant('when this node starts its next scheduled scan (null on nodes that do not schedule scans, or while one runs)')),
    last: nullable(snapshotSchema),
    ageSeconds: nullable(count('seconds since the last scan finished')),
    current: nullable(usageProgressSchema),
  },
  { description: 'The data-usage scanner: its last result and the scan under way.' },
);

const exampleBuckets = [
  { bucket: 'logs', objects: 1200, versions: 1200, deleteMarkers: 0, sizeBytes: 52_428_800, currentSizeBytes: 52_428_800 },
  { bucket: 'photos', objects: 310, versions: 352, deleteMarkers: 7, sizeBytes: 812_000_000, currentSizeBytes: 790_000_000 },
];

export const usageRoutes: AdminRoute[] = [
  {
    method: 'GET',
    path: usage,
    schema: {
      summary: 'Data usage',
      description: "Objects, versions, delete markers and bytes per bucket and in all, from the data-usage scanner's last finished scan (persisted, so every node answers the same), with its age, and the scan under way. Unknown query parameters are ignored.",
      querystring: schema.statusQuery({}),
      response: usageStatusSchema,
      example: {
        response: {
          generatedAt: '2026-11-25T06:40:00.000Z', running: false, objectsPerSecond: 2000, intervalMs: 600_000, nextScanAt: '2026-11-25T06:45:12.000Z',
          last: { startedAt: '2026-11-25T06:35:10.000Z', finishedAt: '2026-11-25T06:35:12.000Z', resumes: 0, buckets: exampleBuckets, total: { buckets: 2, objects: 1510, versions: 1552, deleteMarkers: 7, sizeBytes: 864_428_800, currentSizeBytes: 842_428_800 } },
          ageSeconds: 288, current: null,
        },
      },
    },
    access: { actions: [admin.dataUsageInfo] },
    handle: async (context) => context.usage.status(),
  },
  {
    method: 'POST',
    path: `${usage}/scan`,
    schema: {
      summary: 'Start a data-usage scan now',
      description: 'Starts a scan on this node (taking up the unfinished one from its checkpoint, if any) and answers once it holds the cluster-wide scan lock. No query string, not even a bare `?`. 409 DataUsageScanRunning while a scan runs here or on another node.',
      querystring: schema.noQuery(),
      response: schema.object({ started: usageProgressSchema }),
      example: { response: { started: { startedAt: '2026-11-25T06:35:10.000Z', savedAt: '2026-11-25T06:35:10.000Z', bucket: null, bucketsDone: 0, bucketsTotal: 2, keysWalked: 0, resumes: 0 } } },
    },
    access: { actions: [admin.dataUsageInfo] },
    handle: async (context, request) => {
      noQuery(request);
      return { started: await context.usage.runNow() };
    },
  },
];
