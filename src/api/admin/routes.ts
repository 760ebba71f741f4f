/**
 * The admin routes: pools, decommission, rebalance, heal, inspection and faults. Thin: parse, call,
 * shape. Every route declares its query, body and answer (`schema`, route-schema.ts): the admin
 * plugin registers each as its own fastify route, which validates and serialises with them, and the
 * OpenAPI document and docs/admin-reference.md are generated from them.
 */
import { adminAction as admin } from '../../iam/index.js';
import { SvcError } from '../../errors/index.js';
import type { AdminContext, AdminRequest, AdminRoute } from './context.js';
import { byIdOf, jsonBody, mutationQuery, noQuery, requiredPool, resolvePool, statusQuery } from './query.js';
import { healRoutes } from './heal.js';
import { placementPermissions, placementQuery, simulateBody, simulatePermissions } from './explorer.js';
import { iamRoutes } from './iam.js';
import { lifecycleRoutes } from './lifecycle.js';
import { kmsRoutes } from './kms.js';
import { tierRoutes } from './tiers.js';
import { eventRoutes } from './events.js';
import { replicationRoutes } from './replication.js';
import { usageRoutes } from './usage.js';
import { metricsHistoryRoutes } from './metrics-history.js';
import * as schema from './route-schema.js';
import * as answers from './answer-schemas.js';
import * as examples from './answer-examples.js';

export type { AdminRoute } from './context.js';

const v3 = '/svc/admin/v3';
const v4 = '/svc/admin/v4';

const poolParameter = schema.text('a pool launch pattern, or its zero-based index with by-id=true');
const byIdParameter = schema.oneOfValues(['true', 'false'], 'pool is an index (true) or a launch pattern (false, the default)');
const poolQuery = () => schema.mutationQuery({ pool: poolParameter, 'by-id': byIdParameter }, ['pool']);

const clockSchema = schema.object({ offsetMs: schema.integer('milliseconds ahead of the wall clock', { minimum: -1e12, maximum: 1e12 }) });

export const adminRoutes: AdminRoute[] = [
  ...iamRoutes,
  ...lifecycleRoutes,
  ...kmsRoutes,
  ...tierRoutes,
  ...eventRoutes,
  ...replicationRoutes,
  ...usageRoutes,
  ...metricsHistoryRoutes,
  ...healRoutes,
  {
    method: 'POST',
    path: `${v3}/background-heal/status`,
    schema: {
      summary: 'Background heal status',
      description: 'The MRF queue (objects reads and writes found damaged), background erasure-set heals and replaced drives. No query string, not even a bare `?`.',
      querystring: schema.noQuery(),
      response: answers.backgroundHealSchema,
      example: { response: examples.exampleBackgroundHeal },
    },
    access: { actions: [admin.heal] },
    handle: async (context, request) => {
      noQuery(request);
      return context.heal.backgroundStatus();
    },
  },
  {
    method: 'GET',
    path: `${v4}/heal/replacement-recovery`,
    schema: {
      summary: 'Replaced drives and their recovery',
      description: 'Every replaced drive found at startup with its set heal; `completed` is true only when every object of the drive was rebuilt (an idle queue is not proof of completion).',
      querystring: schema.statusQuery({}),
      response: answers.replacementRecoverySchema,
      example: { response: { instances: [{ pool: 0, set: 0, slot: 2, endpoint: '/data/pool1/d3', driveId: '80fc8a98-3fe8-4c89-974b-27a7cd241449', detectedAt: '2026-11-25T06:00:00.000Z', startedAt: '2026-11-25T06:00:01.000Z', finishedAt: '2026-11-25T06:00:09.000Z', objectsHealed: 118, objectsFailed: 0, completed: true }] } },
    },
    access: { actions: [admin.heal] },
    handle: async (context) => context.heal.replacementRecovery(),
  },
  {
    method: 'GET',
    path: `${v4}/cluster/snapshot`,
    schema: {
      summary: 'Cluster snapshot',
      description: 'Deployment id, nodes (online when any of their drives answers), pools with sets and drives, and the running operations (rebalance, decommission, background heal).',
      querystring: schema.statusQuery({}),
      response: answers.snapshotSchema,
      example: {
        response: {
          deploymentId: '5d35af67-247e-4b21-8ba8-d9c94bd096bc',
          generatedAt: '2026-11-25T06:01:03.883Z',
          thisNode: '127.0.0.1:9000',
          nodes: [{ endpoint: 'local', state: 'online', drives: 4, drivesOnline: 4 }],
          pools: [examples.examplePoolStatus],
          operations: { rebalance: { id: null, pools: [] }, decommission: [], heal: examples.exampleBackgroundHeal },
        },
      },
    },
    access: { actions: [admin.serverInfo] },
    handle: async (context) => context.snapshot(),
  },
  {
    method: 'GET',
    path: `${v4}/runtime/capabilities`,
    schema: {
      summary: 'Runtime capabilities',
      description: 'Server version, admin route groups per version, drive backends, fault injection on or off, storage classes per pool, listing quorum and limits.',
      querystring: schema.statusQuery({}),
      response: answers.capabilitiesSchema,
      example: {
        response: {
          server: 'svc',
          version: '0.1.0',
          adminApi: { v3: ['pools', 'decommission', 'rebalance', 'heal', 'background-heal', 'info'], v4: ['cluster/snapshot', 'runtime/capabilities', 'heal/replacement-recovery', 'object/placement', 'simulate/failure', 'iam', 'lifecycle'] },
          driveBackends: ['fs', 'memfs', 'remote'],
          driveBackend: 'fs',
          faultInjection: false,
          storageClasses: [{ pool: 0, STANDARD: 'EC:2', REDUCED_REDUNDANCY: 'EC:1' }],
          listQuorum: 'optimal',
          limits: { erasureBlockSizeBytes: 1048576, minPartSizeBytes: 5242880, maxPartNumber: 10000, lockExpiryMs: 30000, mrfQueueLimit: 10000, decommissionBucketConcurrency: 4, decommissionEntryConcurrency: 8, rebalanceMaxAttempts: 3, lifecycleObjectsPerSecond: 1000, lifecycleIntervalMs: 3600000 },
        },
      },
    },
    access: { actions: [admin.serverInfo] },
    handle: async (context) => context.capabilities(),
  },
  {
    method: 'GET',
    path: `${v4}/object/placement`,
    schema: {
      summary: "Where an object's shards are",
      description:
        'Pool, set, geometry, quorums with their formulas worked out, what the object can do now, and every shard with its drive and files. With `verify=true` every shard is read and each chunk checked against its hash (`status`, `problem`). Takes the read lock, needs the metadata votes of a GET, changes nothing. Refusals: `InvalidQueryParameter`, `NoSuchBucket`, `NoSuchKey`, `NoSuchVersion`, `ErasureReadQuorum`.',
      querystring: schema.statusQuery(
        { bucket: schema.text('bucket'), key: schema.text('object key'), versionId: schema.text('a version (default: the latest)'), verify: schema.oneOfValues(['true', 'false'], 'read and check every shard') },
        ['bucket', 'key'],
      ),
      response: answers.placementSchema,
      example: { query: 'bucket=photos&key=cat.jpg&verify=true', response: examples.examplePlacement },
    },
    access: { actions: [admin.serverInfo], conditional: { actions: ['s3:GetObject', 's3:GetObjectVersion'], when: 'always: the object read (`s3:GetObjectVersion` with a versionId, else `s3:GetObject`)', permissions: (_context, request) => placementPermissions(request) } },
    handle: async (context, request) => context.explorer.placement(placementQuery(request)),
  },
  {
    method: 'POST',
    path: `${v4}/simulate/failure`,
    schema: {
      summary: 'What failing drives or nodes would do',
      description:
        'Verdicts per erasure set and storage class (readable while N − failed ≥ K, writable while N − failed ≥ K, or K + 1 when K = M, deletable while N − failed ≥ N/2 + 1), and with a scope the count of objects that would become unreadable (at most `scanLimit` objects read). Fails nothing. An unknown drive or node is `InvalidArgument`.',
      querystring: schema.noQuery(),
      body: schema.object(
        {
          drives: schema.list(schema.text('a drive endpoint'), 'drives to treat as failed'),
          nodes: schema.list(schema.text('host:port, or local'), 'nodes whose every drive is treated as failed'),
          scope: schema.object({ bucket: schema.text('bucket'), prefix: schema.text('prefix') }, { optional: ['prefix'], description: 'count the objects of this bucket (and prefix)' }),
        },
        { optional: ['drives', 'nodes', 'scope'] },
      ),
      response: answers.simulateSchema,
      example: { body: { drives: ['/data/pool1/d1'], scope: { bucket: 'photos' } }, response: examples.exampleSimulate },
    },
    access: { actions: [admin.serverInfo], conditional: { actions: ['s3:ListBucket'], when: 'a scope is given (its bucket listed)', permissions: (_context, request) => simulatePermissions(request) } },
    handle: async (context, request) => context.explorer.simulate(simulateBody(request)),
  },
  {
    method: 'GET',
    path: `${v3}/info`,
    schema: {
      summary: 'Servers and their drives',
      description: 'Every node with its drives (what `rc admin info disk` shows).',
      querystring: schema.statusQuery({}),
      response: answers.serversInfoSchema,
      example: { response: { servers: [{ endpoint: 'local', state: 'online', drivesOnline: 1, drives: [{ pool: 0, ...examples.exampleSlot }] }] } },
    },
    access: { actions: [admin.serverInfo] },
    handle: async (context) => context.serversInfo(),
  },
  {
    method: 'GET',
    path: `${v4}/faults`,
    schema: {
      summary: "This node's drives and their fault plans",
      description: 'Needs `SVC_FAULT_INJECTION=on` (else `FaultInjectionDisabled`).',
      querystring: schema.statusQuery({}),
      response: schema.object({ drives: schema.list(schema.object({ drive: schema.text('drive path'), endpoint: schema.text('drive endpoint'), faults: answers.faultPlanSchema }), 'drives of this node') }),
      example: { response: { drives: [{ drive: '/data/pool1/d1', endpoint: '/data/pool1/d1', faults: {} }] } },
    },
    access: { actions: [admin.faults] },
    handle: async (context) => ({ drives: faultsOf(context).list() }),
  },
  {
    method: 'POST',
    path: `${v4}/faults`,
    schema: {
      summary: 'Set the fault plan of one drive',
      description: 'Replaces the fault plan of a drive of this node (`{}` clears it). Needs `SVC_FAULT_INJECTION=on` (else `FaultInjectionDisabled`); an unknown drive is `NoSuchDrive`.',
      querystring: schema.mutationQuery({ drive: schema.text('a drive path of this node') }, ['drive']),
      body: answers.faultPlanSchema,
      response: schema.object({ drive: schema.text('drive path'), faults: answers.faultPlanSchema }),
      example: { query: 'drive=/data/pool1/d2', body: { offline: true }, response: { drive: '/data/pool1/d2', faults: { offline: true } } },
    },
    access: { actions: [admin.faults] },
    handle: async (context, request) => {
      const faults = faultsOf(context);
      const query = mutationQuery(request.rawQuery, ['drive']);
      const drive = query.get('drive');
      if (!drive) throw new SvcError('InvalidQueryParameter', 'the drive parameter (a drive path of this node) is required', { parameter: 'drive' });
      return faults.set(drive, jsonBody(request, 'the fault plan'));
    },
  },
  {
    method: 'GET',
    path: `${v4}/faults/clock`,
    schema: {
      summary: "How far this node's identity clock runs ahead",
      description: 'The identity clock judges the expiry of temporary credentials, web identity tokens and service accounts. Needs `SVC_FAULT_INJECTION=on` (else `FaultInjectionDisabled`).',
      querystring: schema.statusQuery({}),
      response: clockSchema,
      example: { response: { offsetMs: 0 } },
    },
    access: { actions: [admin.faults] },
    handle: async (context) => faultsOf(context).clock(),
  },
  {
    method: 'POST',
    path: `${v4}/faults/clock`,
    schema: {
      summary: "Move this node's identity clock",
      description:
        'Sets how far the identity clock (expiry of temporary credentials, web identity tokens and service accounts) runs ahead of the wall clock on this node (`0` puts it back); request signing keeps the wall clock. A test harness setting: needs `SVC_FAULT_INJECTION=on` (else `FaultInjectionDisabled`).',
      querystring: schema.noQuery(),
      body: clockSchema,
      response: clockSchema,
      example: { body: { offsetMs: 3_600_000 }, response: { offsetMs: 3_600_000 } },
    },
    access: { actions: [admin.faults] },
    handle: async (context, request) => {
      const faults = faultsOf(context);
      mutationQuery(request.rawQuery, []);
      return faults.setClock((jsonBody(request, 'the clock offset') as { offsetMs: number }).offsetMs);
    },
  },
  {
    method: 'GET',
    path: `${v3}/pools/list`,
    schema: {
      summary: 'Every pool',
      description: 'Layout, capacity and decommission entry (or null) of every pool, in launch order.',
      querystring: schema.statusQuery({}),
      response: schema.object({ pools: schema.list(answers.poolInfoSchema, 'pools in launch order') }),
      example: { response: { pools: [examples.examplePool, { ...examples.examplePool, id: 1, cmdline: '/data/pool2/d{1...4}', decommission: examples.exampleDecommissionEntry }] } },
    },
    access: { actions: [admin.serverInfo] },
    handle: async (context) => ({ pools: await context.pools() }),
  },
  {
    method: 'GET',
    path: `${v3}/pools/status`,
    schema: {
      summary: 'One pool with its sets and drives',
      description: 'The pool of `pools/list`, plus every set with its drives: endpoint, the drive id the slot expects, state and capacity. An unknown pool is `NoSuchPool`.',
      querystring: schema.statusQuery({ pool: poolParameter, 'by-id': byIdParameter }, ['pool']),
      response: answers.poolStatusSchema,
      example: { query: 'pool=0&by-id=true', response: examples.examplePoolStatus },
    },
    access: { actions: [admin.serverInfo] },
    handle: async (context, request) => {
      const query = statusQuery(request.rawQuery);
      const pool = resolvePool(requiredPool(query), byIdOf(query), context.poolPatterns);
      const info = (await context.pools())[pool]!;
      const slots = await context.slots(pool);
      const sets = Array.from({ length: info.setCount }, (_, set) => ({ set, drives: slots.filter((slot) => slot.set === set) }));
      return { ...info, sets };
    },
  },
  {
    method: 'GET',
    path: `${v3}/decommission/status`,
    schema: {
      summary: 'Decommission entries',
      description: 'Every entry, or the entry of one pool: state, progress, time elapsed and left, the reason of a failure and the unresolved keys. On the leader also the objects moving now and the most at once.',
      querystring: schema.statusQuery({ pool: poolParameter, 'by-id': byIdParameter }),
      response: answers.decommissionEntriesSchema,
      example: { query: 'pool=1&by-id=true', response: { entries: [examples.exampleDecommissionEntry] } },
    },
    access: { actions: [admin.serverInfo] },
    handle: async (context, request) => {
      const query = statusQuery(request.rawQuery);
      const name = query.get('pool');
      const pool = name === undefined || name === '' ? undefined : resolvePool(name, byIdOf(query), context.poolPatterns);
      return { entries: await context.decommission.status(pool) };
    },
  },
  {
    method: 'POST',
    path: `${v3}/pools/decommission`,
    schema: {
      summary: 'Start decommissioning pools',
      description:
        'Queues one pool, or a comma-separated batch; the batch is validated whole before anything is persisted. Answers at once (`queued`/`active`), not at completion; sent to any node, it runs on the leader. Refusals: `NotImplemented` (one pool, legacy layout), `NoSuchPool`, `DuplicatePoolTarget`, `DecommissionInProgress`, `DecommissionAlreadyCompleted`, `DecommissionNotCleared`, `LastPoolCannotBeDecommissioned`, `RebalanceInProgress`.',
      querystring: schema.mutationQuery({ pool: schema.text('launch patterns or (with by-id=true) indexes, comma-separated'), 'by-id': byIdParameter }, ['pool']),
      response: answers.decommissionEntriesSchema,
      example: { query: 'pool=1&by-id=true', response: { entries: [examples.exampleDecommissionEntry] } },
    },
    access: { actions: [admin.decommission] },
    handle: async (context, request) => {
      const query = mutationQuery(request.rawQuery, ['pool', 'by-id']);
      const byId = byIdOf(query);
      const names = requiredPool(query).split(',');
      // The whole batch is resolved (and then validated by the manager) before anything is persisted.
      const pools = names.map((name) => resolvePool(name.trim(), byId, context.poolPatterns));
      return { entries: await context.decommission.start(pools) };
    },
  },
  {
    method: 'POST',
    path: `${v3}/pools/cancel`,
    schema: {
      summary: 'Cancel a decommission',
      description: 'Cancels a queued or active entry; it is kept as `canceled` (`NoActiveDecommission` when there is none).',
      querystring: poolQuery(),
      response: schema.object({ entry: answers.decommissionEntrySchema }),
      example: { query: 'pool=1&by-id=true', response: { entry: { ...examples.exampleDecommissionEntry, state: 'canceled', finishedMs: 1795586465000 } } },
    },
    access: { actions: [admin.decommission] },
    handle: async (context, request) => ({ entry: await context.decommission.cancel(onePool(context, request)) }),
  },
  {
    method: 'POST',
    path: `${v3}/pools/clear`,
    schema: {
      summary: 'Clear a failed or canceled decommission',
      description: 'Removes a `failed` or `canceled` entry without unresolved objects (`DecommissionNotClearable` otherwise). No data moves back.',
      querystring: poolQuery(),
      response: schema.object({ pool: schema.integer('pool index'), cleared: schema.boolean('always true') }),
      example: { query: 'pool=1&by-id=true', response: { pool: 1, cleared: true } },
    },
    access: { actions: [admin.decommission] },
    handle: async (context, request) => {
      const pool = onePool(context, request);
      await context.decommission.clear(pool);
      return { pool, cleared: true };
    },
  },
  {
    method: 'POST',
    path: `${v3}/rebalance/start`,
    schema: {
      summary: 'Start a rebalance',
      description:
        'Fixes the goal (the used fraction of the whole deployment), tells every node and answers at once with the rebalance id. No query string, not even a bare `?`. Refusals: `NotImplemented` (one pool), `DecommissionBlocksRebalance`, `RebalanceInProgress`, `RebalancePropagationFailed` (rolled back).',
      querystring: schema.noQuery(),
      response: schema.object({ id: schema.text('the rebalance id (a uuid)') }),
      example: { response: { id: '43cf2fd3-592e-4e53-923f-82c5f936dc67' } },
    },
    access: { actions: [admin.rebalance] },
    handle: async (context, request) => {
      noQuery(request);
      return context.rebalance.start();
    },
  },
  {
    method: 'GET',
    path: `${v3}/rebalance/status`,
    schema: {
      summary: 'Rebalance status',
      description: 'The goal, start and stop times, stop propagation, and per pool the state, used fraction, last error, cleanup warnings and progress. `{"id": null, "pools": []}` before the first rebalance.',
      querystring: schema.statusQuery({}),
      response: answers.rebalanceStatusSchema,
      example: { response: examples.exampleRebalanceStatus },
    },
    access: { actions: [admin.serverInfo] },
    handle: async (context) => context.rebalance.status(),
  },
  {
    method: 'POST',
    path: `${v3}/rebalance/stop`,
    schema: {
      summary: 'Stop the rebalance',
      description: 'Closes admission, stops the workers, persists the stopped state and tells every node; answers the status. No query string, not even a bare `?`.',
      querystring: schema.noQuery(),
      response: answers.rebalanceStatusSchema,
      example: { response: { ...examples.exampleRebalanceStatus, stoppedAt: '2026-11-25T06:02:00.000Z', stopPropagation: { complete: true, failedPeers: [] }, pools: examples.exampleRebalanceStatus.pools.map((pool) => ({ ...pool, status: pool.status === 'active' ? 'stopped' : pool.status })) } },
    },
    access: { actions: [admin.rebalance] },
    handle: async (context, request) => {
      noQuery(request);
      return context.rebalance.stop();
    },
  },
];

function faultsOf(context: AdminContext): NonNullable<AdminContext['faults']> {
  if (!context.faults) throw new SvcError('FaultInjectionDisabled');
  return context.faults;
}

function onePool(context: AdminContext, request: AdminRequest): number {
  const query = mutationQuery(request.rawQuery, ['pool', 'by-id']);
  const name = requiredPool(query);
  if (name.includes(',')) throw new SvcError('InvalidQueryParameter', 'this operation takes one pool', { parameter: 'pool' });
  return resolvePool(name, byIdOf(query), context.poolPatterns);
}
