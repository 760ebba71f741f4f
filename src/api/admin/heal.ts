/**
 * POST /svc/admin/v3/heal/[<bucket>[/<prefix>]] (SPEC "Endpoint rules" 3): the body is the heal
 * request JSON, the query `clientToken`, `forceStart`, `forceStop`. Without a client token a heal
 * starts; with one, its status is returned (or, with forceStop, it is stopped). A heal runs on the
 * node that started it; its token names that node, so status and stop work through any node
 * (behind a load balancer, for instance).
 */
import { adminAction as admin } from '../../iam/index.js';
import { SvcError } from '../../errors/index.js';
import type { HealOptions, HealPath } from '../../ops/heal.js';
import type { AdminContext, AdminRequest, AdminRoute } from './context.js';
import { mutationQuery } from './query.js';
import * as schema from './route-schema.js';
import { healStatusSchema } from './answer-schemas.js';
import { exampleHealStatus } from './answer-examples.js';

const booleanFields = ['recursive', 'dryRun', 'remove', 'recreate', 'updateParity', 'nolock', 'readRepair'] as const;
const knownFields = new Set<string>([...booleanFields, 'scanMode', 'pool', 'set']);

const healPrefix = '/svc/admin/v3/heal';

const healBody = schema.object(
  {
    recursive: schema.boolean('heal everything below the path (a bucket heal always is)'),
    dryRun: schema.boolean('report only, write nothing'),
    remove: schema.boolean('remove dangling objects'),
    recreate: schema.boolean('recreate missing buckets'),
    scanMode: schema.oneOfValues(['normal', 'deep'], 'deep reads and checks every shard'),
    updateParity: schema.boolean('rewrite objects to the current parity'),
    nolock: schema.boolean('accepted and forced to false: admin heals always take the object lock'),
    readRepair: schema.boolean('refused when true (InvalidArgument): read-repair runs on its own'),
    pool: schema.integer('with set: heal one erasure set (root heal only)', { minimum: 0 }),
    set: schema.integer('with pool: heal one erasure set (root heal only)', { minimum: 0 }),
  },
  { optional: ['recursive', 'dryRun', 'remove', 'recreate', 'scanMode', 'updateParity', 'nolock', 'readRepair', 'pool', 'set'], description: 'The heal request; every field optional; an empty body is {}.' },
);

const healQuery = schema.mutationQuery({
  clientToken: schema.text("a running or ended heal's token: answers its status (or, with forceStop, stops it)"),
  forceStart: schema.text('true: start even when a heal of the same path runs (true or false, else InvalidArgument)'),
  forceStop: schema.text('true, with clientToken: stop that heal (true or false, else InvalidArgument)'),
});

const healRules =
  'Without `clientToken` a heal starts and its status is answered at once; with one, that heal\'s status (or, with `forceStop=true`, it is stopped). Every object is healed under its lock from the quorum metadata; an object with more shards missing than parity is reported unrecoverable.';

function healSchema(summary: string, description: string, example: schema.RouteExample, params?: schema.JsonSchema): schema.RouteSchema {
  return { summary, description: `${description} ${healRules}`, querystring: healQuery, ...(params ? { params } : {}), body: healBody, response: healStatusSchema, example };
}

const rootHeal = healSchema(
  'Heal everything, or one erasure set',
  'The root heal needs `recursive: true`, or `pool` and `set` to heal one erasure set (the format of a replaced drive included).',
  { body: { recursive: true }, response: { ...exampleHealStatus, path: {}, status: 'running', items: [] } },
);

/** Heal routes: the root (with and without the trailing slash), a bucket, a prefix. */
export const healRoutes: AdminRoute[] = [
  { method: 'POST', path: healPrefix, schema: rootHeal, access: { actions: [admin.heal] }, handle: (context, request) => heal(context, request, '') },
  { method: 'POST', path: `${healPrefix}/`, schema: rootHeal, access: { actions: [admin.heal] }, handle: (context, request) => heal(context, request, '') },
  {
    method: 'POST',
    path: `${healPrefix}/:bucket`,
    schema: healSchema('Heal a bucket', 'A bucket heal is always recursive.', { params: { bucket: 'photos' }, body: {}, response: exampleHealStatus }, schema.object({ bucket: schema.text('bucket') })),
    access: { actions: [admin.heal] },
    handle: (context, request) => heal(context, request, request.rawPath.slice(healPrefix.length + 1)),
  },
  {
    method: 'POST',
    path: `${healPrefix}/:bucket/*`,
    schema: healSchema(
      'Heal a prefix of a bucket',
      'A prefix heal honours `recursive`: without it, only the object named by the prefix.',
      { params: { bucket: 'photos', '*': '2026/' }, body: { recursive: true, scanMode: 'deep' }, response: { ...exampleHealStatus, path: { bucket: 'photos', prefix: '2026/' }, options: { ...exampleHealStatus.options, scanMode: 'deep' } } },
      schema.object({ bucket: schema.text('bucket'), '*': schema.text('the prefix (may hold slashes)') }),
    ),
    access: { actions: [admin.heal] },
    handle: (context, request) => heal(context, request, request.rawPath.slice(healPrefix.length + 1)),
  },
];

async function heal(context: AdminContext, request: AdminRequest, rest: string): Promise<unknown> {
  const query = mutationQuery(request.rawQuery, ['clientToken', 'forceStart', 'forceStop']);
  const forceStart = flag(query.get('forceStart'), 'forceStart');
  const forceStop = flag(query.get('forceStop'), 'forceStop');
  if (forceStart && forceStop) throw new SvcError('InvalidArgument', 'forceStart and forceStop cannot both be true');
  const path = pathOf(rest);
  const body = parseBody(request.body);
  if (body.readRepair === true) throw new SvcError('InvalidArgument', 'readRepair is not an admin heal option: read-repair runs on its own after reads that find damaged shards');
  const clientToken = query.get('clientToken');
  if (clientToken !== undefined && clientToken !== '') {
    if (forceStart) throw new SvcError('InvalidArgument', 'forceStart starts a new heal and takes no clientToken');
    // Any node answers: a heal started on another node is asked for there.
    return context.healSequence(clientToken, path, forceStop);
  }
  if (forceStop) throw new SvcError('InvalidArgument', 'forceStop needs the clientToken of the heal to stop');
  const options = optionsOf(context, path, body);
  return context.heal.startSequence(path, options, { forceStart });
}

function flag(value: string | undefined, name: string): boolean {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw new SvcError('InvalidArgument', `${name} must be true or false`);
}

function pathOf(rest: string): HealPath {
  if (rest === '') return {};
  const slash = rest.indexOf('/');
  const bucket = decodeURIComponent(slash < 0 ? rest : rest.slice(0, slash));
  const prefix = slash < 0 ? '' : decodeURIComponent(rest.slice(slash + 1));
  return prefix === '' ? { bucket } : { bucket, prefix };
}

function parseBody(body: Buffer): Record<string, unknown> {
  if (body.length === 0) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new SvcError('InvalidArgument', 'the heal request body is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new SvcError('InvalidArgument', 'the heal request body must be a JSON object');
  const record = parsed as Record<string, unknown>;
  for (const key of Object.keys(record)) if (!knownFields.has(key)) throw new SvcError('InvalidArgument', `unknown heal option '${key}'`);
  for (const key of booleanFields) if (record[key] !== undefined && typeof record[key] !== 'boolean') throw new SvcError('InvalidArgument', `${key} must be true or false`);
  if (record.scanMode !== undefined && record.scanMode !== 'normal' && record.scanMode !== 'deep') throw new SvcError('InvalidArgument', "scanMode must be 'normal' or 'deep'");
  for (const key of ['pool', 'set']) if (record[key] !== undefined && !(Number.isInteger(record[key]) && (record[key] as number) >= 0)) throw new SvcError('InvalidArgument', `${key} must be a zero-based index`);
  return record;
}

function optionsOf(context: AdminContext, path: HealPath, body: Record<string, unknown>): HealOptions {
  const pool = body.pool as number | undefined;
  const set = body.set as number | undefined;
  const options: HealOptions = {
    recursive: body.recursive === true,
    dryRun: body.dryRun === true,
    remove: body.remove === true,
    recreate: body.recreate === true,
    scanMode: (body.scanMode as 'normal' | 'deep' | undefined) ?? 'normal',
    updateParity: body.updateParity === true,
    // nolock is accepted and forced off: admin heals always take the object lock.
  };
  if ((pool === undefined) !== (set === undefined)) throw new SvcError('InvalidArgument', 'pool and set go together: name both to heal one erasure set');
  if (pool !== undefined && set !== undefined) {
    if (path.bucket !== undefined) throw new SvcError('InvalidArgument', 'pool and set name an erasure set; they apply to the root heal only');
    if (pool >= context.setCounts.length) throw new SvcError('NoSuchPool', `no pool ${pool}`, { pool });
    if (set >= context.setCounts[pool]!) throw new SvcError('InvalidArgument', `pool ${pool} has ${context.setCounts[pool]} set(s); set ${set} does not exist`);
    return { ...options, pool, set };
  }
  if (path.bucket === undefined && !options.recursive) throw new SvcError('InvalidArgument', 'a root heal needs recursive=true, or pool and set to heal one erasure set');
  if (path.bucket !== undefined && path.prefix === undefined) options.recursive = true; // a bucket heal is always recursive
  return options;
}
