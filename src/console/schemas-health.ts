/** Schemas of the health and permissions routes (routes-health.ts), in the console API's form. */
import { boolean, integer, list, object, oneOfValues, statusQuery, text } from '../api/admin/route-schema.js';
import { consoleSchema } from './api-schemas.js';

const status = (description: string) => oneOfValues(['ok', 'degraded', 'critical'], description);

const classMargin = object({
  storageClass: oneOfValues(['STANDARD', 'REDUCED_REDUNDANCY'], 'storage class'),
  parity: integer('parity shards'),
  readQuorum: integer('drives a read needs'),
  writeQuorum: integer('drives a write needs'),
  readMargin: integer('drives online beyond the read quorum (negative: lost)'),
  writeMargin: integer('drives online beyond the write quorum (negative: lost)'),
  status: status('critical when a quorum is lost, degraded when the margin shrank'),
});

const setHealth = object({
  pool: integer('pool'),
  set: integer('set'),
  drivesOnline: integer('drives online and not healing'),
  drivesTotal: integer('drives in the set'),
  drives: list(object({ endpoint: text('endpoint'), slot: integer('slot'), state: oneOfValues(['online', 'offline', 'healing'], 'state') }), 'the set\'s drives'),
  classes: list(classMargin, 'quorum margins per storage class'),
  status: status('the worst of its classes'),
});

const healthExample = {
  status: 'degraded',
  generatedAt: '2026-11-25T06:00:00.000Z',
  summary: '1 of 4 drive(s) offline: every set keeps quorum, the smallest write margin is 0 drive(s).',
  nodes: [{ endpoint: 'local', state: 'online', drives: 4, drivesOnline: 3 }],
  drives: { online: 3, offline: 1, healing: 0, total: 4 },
  sets: [
    {
      pool: 0,
      set: 0,
      drivesOnline: 3,
      drivesTotal: 4,
      drives: [{ endpoint: '/data/d1', slot: 0, state: 'online' }, { endpoint: '/data/d2', slot: 1, state: 'online' }, { endpoint: '/data/d3', slot: 2, state: 'offline' }, { endpoint: '/data/d4', slot: 3, state: 'online' }],
      classes: [{ storageClass: 'STANDARD', parity: 2, readQuorum: 2, writeQuorum: 3, readMargin: 1, writeMargin: 0, status: 'degraded' }],
      status: 'degraded',
    },
  ],
  operations: [],
  errors: [],
  runbook: { title: 'Replacing a drive', section: '4. Replacing a drive' },
};

export const healthSchema = consoleSchema('cluster', {
  summary: "The deployment's health",
  description: 'Every node, set and drive; the quorum margin of each set per storage class; running operations; the last errors; one verdict (ok, degraded when a margin shrank, critical when a set lost read or write quorum) and the runbook to follow.',
  querystring: statusQuery({}),
  response: object(
    {
      status: status('the verdict'),
      generatedAt: text('ISO 8601'),
      summary: text('one sentence'),
      nodes: list(object({ endpoint: text('node'), state: oneOfValues(['online', 'offline'], 'state'), drives: integer('drives'), drivesOnline: integer('drives online') }), 'nodes'),
      drives: object({ online: integer('online'), offline: integer('offline'), healing: integer('healing'), total: integer('all') }),
      sets: list(setHealth, 'every set of every pool'),
      operations: list(object({ kind: text('rebalance, decommission, heal, drive replacement, read repair'), detail: text('what it does now') }), 'running operations'),
      errors: list(object({ source: text('what reported it'), message: text('the error') }), 'the last errors operations reported'),
      runbook: object({ title: text('runbook title'), section: text('its section in docs/runbooks.md') }),
    },
    { optional: ['runbook'] },
  ),
  example: { response: healthExample },
});

const judgement = object({ allowed: boolean('the evaluator allows it'), reason: text('why not, when refused') }, { optional: ['reason'] });

export const permissionsSchema = consoleSchema('session', {
  summary: 'What the session may do',
  description:
    'Each console action with whether the signed-in principal may take it, judged by the evaluator S3 and admin requests get (bucket policy included) and, when refused, why. Without `bucket`: the deployment actions (createBucket, serverInfo, heal, rebalance, decommission, listUsers, dataUsageInfo, endSessions, getBucketTarget, setBucketTarget, kmsKeyStatus, kmsDeleteKey); with `bucket` (and `prefix`) also listObjects, listVersions, getObject, putObject, deleteObject, deleteObjectVersion, abortUpload, putBucketVersioning, deleteBucket, getObjectVersion, putObjectTagging on it, and for the settings page `<setting>.get`, `<setting>.put` and `<setting>.remove` for policy, lifecycle, cors, tagging, encryption, object-lock, public-access-block, notification and replication (each the S3 action of its Get, Put or Delete request).',
  querystring: statusQuery({ bucket: text('a bucket'), prefix: text('a key prefix in it') }),
  response: object(
    {
      principal: text('who the session acts for'),
      root: boolean('the root keys (allowed everything)'),
      bucket: text('the bucket asked about'),
      prefix: text('the prefix asked about'),
      actions: { type: 'object', description: 'action name → judgement', additionalProperties: judgement },
    },
    { optional: ['bucket', 'prefix'] },
  ),
  example: { query: 'bucket=photos', response: { principal: 'viewer', root: false, bucket: 'photos', prefix: '', actions: { listObjects: { allowed: true }, putObject: { allowed: false, reason: 'No policy allows user viewer s3:PutObject on arn:aws:s3:::photos/*.' } } } },
});
