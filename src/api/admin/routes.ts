/** The admin routes: pools, decommission, rebalance, heal, inspection and faults. Thin: parse, call, shape. */
import { SvcError } from '../../errors/index.js';
import type { AdminContext, AdminRequest } from './context.js';
import { byIdOf, jsonBody, mutationQuery, noQuery, requiredPool, resolvePool, statusQuery } from './query.js';
import { heal } from './heal.js';
import { placementQuery, simulateBody } from './explorer.js';
import { iamRoutes } from './iam.js';
import { lifecycleRoutes } from './lifecycle.js';

export interface AdminRoute {
  method: 'GET' | 'POST';
  path: string;
  /** The route also serves every path below `path` (heal of a bucket or prefix). */
  subtree?: boolean;
  handle(context: AdminContext, request: AdminRequest, rest: string): Promise<unknown>;
}

const v3 = '/svc/admin/v3';

export const adminRoutes: AdminRoute[] = [
  ...iamRoutes,
  ...lifecycleRoutes,
  { method: 'POST', path: `${v3}/heal/`, subtree: true, handle: (context, request, rest) => heal(context, request, rest) },
  // Without the trailing slash: the root heal.
  { method: 'POST', path: `${v3}/heal`, handle: (context, request) => heal(context, request, '') },
  {
    method: 'POST',
    path: `${v3}/background-heal/status`,
    handle: async (context, request) => {
      noQuery(request);
      return context.heal.backgroundStatus();
    },
  },
  { method: 'GET', path: '/svc/admin/v4/heal/replacement-recovery', handle: async (context) => context.heal.replacementRecovery() },
  { method: 'GET', path: '/svc/admin/v4/cluster/snapshot', handle: async (context) => context.snapshot() },
  { method: 'GET', path: '/svc/admin/v4/runtime/capabilities', handle: async (context) => context.capabilities() },
  { method: 'GET', path: '/svc/admin/v4/object/placement', handle: async (context, request) => context.explorer.placement(placementQuery(request)) },
  { method: 'POST', path: '/svc/admin/v4/simulate/failure', handle: async (context, request) => context.explorer.simulate(simulateBody(request)) },
  { method: 'GET', path: `${v3}/info`, handle: async (context) => context.serversInfo() },
  {
    method: 'GET',
    path: '/svc/admin/v4/faults',
    handle: async (context) => ({ drives: faultsOf(context).list() }),
  },
  {
    method: 'POST',
    path: '/svc/admin/v4/faults',
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
    path: `${v3}/pools/list`,
    handle: async (context) => ({ pools: await context.pools() }),
  },
  {
    method: 'GET',
    path: `${v3}/pools/status`,
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
    handle: async (context, request) => ({ entry: await context.decommission.cancel(onePool(context, request)) }),
  },
  {
    method: 'POST',
    path: `${v3}/pools/clear`,
    handle: async (context, request) => {
      const pool = onePool(context, request);
      await context.decommission.clear(pool);
      return { pool, cleared: true };
    },
  },
  {
    method: 'POST',
    path: `${v3}/rebalance/start`,
    handle: async (context, request) => {
      noQuery(request);
      return context.rebalance.start();
    },
  },
  {
    method: 'GET',
    path: `${v3}/rebalance/status`,
    handle: async (context) => context.rebalance.status(),
  },
  {
    method: 'POST',
    path: `${v3}/rebalance/stop`,
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
