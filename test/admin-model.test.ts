/**
 * Model-based test (fast-check commands) of decommission and rebalance on a process cluster of two
 * nodes and three pools: random decommission start/cancel/clear, rebalance start/stop, restarts of
 * every node, and PUT/DELETE traffic. After every step the states the server reports are checked
 * against a model of SPEC "States and transitions" (entries may move on by themselves only along
 * queued -> active -> completed); every answer must be one the model allows. At the end every
 * acknowledged version is listed exactly once across the pools and reads back with its bytes.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { DeleteObjectCommand, GetObjectCommand, ListObjectVersionsCommand, PutBucketVersioningCommand, PutObjectCommand, CreateBucketCommand } from '@aws-sdk/client-s3';
import { s3ClientFor } from './helpers/server-process.js';
import { startProcessCluster, type ProcessCluster } from './helpers/process-cluster.js';
import { admin } from './helpers/admin-client.js';

type EntryState = 'none' | 'queued' | 'active' | 'completed' | 'canceled' | 'failed';
const poolCount = 3;
const bucket = 'model';
const keys = ['a', 'b', 'c/d', 'e'];

interface Model {
  pools: EntryState[];
  /** Acknowledged versions by version id: key and MD5 (null for a delete marker). */
  versions: Map<string, { key: string; md5: string | null }>;
}

interface Real {
  cluster: ProcessCluster;
  log: string[];
}

/** The states an entry can have reached by itself since the model last saw it. */
function reachable(state: EntryState): EntryState[] {
  if (state === 'queued') return ['queued', 'active', 'completed'];
  if (state === 'active') return ['active', 'completed'];
  return [state];
}

/** Every combination of states the pools may be in now. */
function worlds(model: Model): EntryState[][] {
  return model.pools.reduce<EntryState[][]>((partial, state) => partial.flatMap((prefix) => reachable(state).map((next) => [...prefix, next])), [[]]);
}

const unfinished = (state: EntryState) => state === 'queued' || state === 'active';

/** What decommission start answers in one world (the manager's validation order). */
function startOutcome(pools: EntryState[], targets: number[]): string {
  const seen = new Set<number>();
  for (const target of targets) {
    if (seen.has(target)) return 'DuplicatePoolTarget';
    seen.add(target);
    const state = pools[target]!;
    if (unfinished(state)) return 'DecommissionInProgress';
    if (state === 'completed') return 'DecommissionAlreadyCompleted';
    if (state !== 'none') return 'DecommissionNotCleared';
  }
  const remaining = pools.filter((state, index) => !seen.has(index) && state === 'none');
  return remaining.length === 0 ? 'LastPoolCannotBeDecommissioned' : 'ok';
}

async function entryStates(real: Real): Promise<EntryState[]> {
  const answer = await admin(real.cluster.urls[0]!, 'GET', '/svc/admin/v3/decommission/status');
  const states: EntryState[] = Array.from({ length: poolCount }, () => 'none');
  for (const entry of answer.body.entries) states[entry.pool] = entry.state;
  return states;
}

/** Reads the reported states and checks each is reachable from the model's; the model follows. */
async function observe(model: Model, real: Real): Promise<void> {
  const states = await entryStates(real);
  states.forEach((state, pool) => {
    expect(reachable(model.pools[pool]!), `pool ${pool}: model ${model.pools[pool]} -> reported ${state}\n${real.log.join('\n')}`).toContain(state);
  });
  model.pools = states;
  const rebalance = (await admin(real.cluster.urls[1]!, 'GET', '/svc/admin/v3/rebalance/status')).body;
  for (const pool of rebalance.pools) expect(['active', 'stopping', 'completed', 'stopped', 'failed']).toContain(pool.status);
}

function outcomeOf(answer: { status: number; body: Record<string, any> }): string {
  return answer.status === 200 ? 'ok' : String(answer.body.Code);
}

class Put implements fc.AsyncCommand<Model, Real> {
  constructor(readonly node: number, readonly key: string, readonly size: number, readonly fill: number) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const body = Buffer.alloc(this.size, this.fill);
    try {
      const answer = await s3ClientFor(real.cluster.urls[this.node]!).send(new PutObjectCommand({ Bucket: bucket, Key: this.key, Body: body }));
      model.versions.set(answer.VersionId!, { key: this.key, md5: createHash('md5').update(body).digest('hex') });
    } catch (error) {
      // Only a pool with a decommission entry refuses writes, and only with SlowDown.
      expect((error as Error).name).toBe('SlowDown');
      expect(model.pools.some((state) => state !== 'none')).toBe(true);
    }
    await observe(model, real);
  }
  toString = () => `put(node ${this.node}, ${this.key}, ${this.size} B)`;
}

class Delete implements fc.AsyncCommand<Model, Real> {
  constructor(readonly node: number, readonly key: string) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const answer = await s3ClientFor(real.cluster.urls[this.node]!).send(new DeleteObjectCommand({ Bucket: bucket, Key: this.key }));
    model.versions.set(answer.VersionId!, { key: this.key, md5: null });
    await observe(model, real);
  }
  toString = () => `delete(node ${this.node}, ${this.key})`;
}

class StartDecommission implements fc.AsyncCommand<Model, Real> {
  constructor(readonly node: number, readonly targets: number[]) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const allowed = new Set(worlds(model).map((world) => startOutcome(world, this.targets)));
    const answer = await admin(real.cluster.urls[this.node]!, 'POST', '/svc/admin/v3/pools/decommission', `pool=${this.targets.join(',')}&by-id=true`);
    const outcome = outcomeOf(answer);
    real.log.push(`${this} -> ${outcome}`);
    // A running rebalance also refuses (it finishes at once here: the pools share one filesystem).
    expect([...allowed, 'RebalanceInProgress'], JSON.stringify(answer.body)).toContain(outcome);
    if (outcome === 'ok') for (const target of this.targets) model.pools[target] = 'queued';
    await observe(model, real);
  }
  toString = () => `decommission start(node ${this.node}, pools ${this.targets.join(',')})`;
}

class CancelDecommission implements fc.AsyncCommand<Model, Real> {
  constructor(readonly node: number, readonly pool: number) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const allowed = new Set(reachable(model.pools[this.pool]!).map((state) => (unfinished(state) ? 'ok' : 'NoActiveDecommission')));
    const answer = await admin(real.cluster.urls[this.node]!, 'POST', '/svc/admin/v3/pools/cancel', `pool=${this.pool}&by-id=true`);
    const outcome = outcomeOf(answer);
    real.log.push(`${this} -> ${outcome}`);
    expect([...allowed], JSON.stringify(answer.body)).toContain(outcome);
    if (outcome === 'ok') model.pools[this.pool] = 'canceled';
    await observe(model, real);
  }
  toString = () => `decommission cancel(node ${this.node}, pool ${this.pool})`;
}

class ClearDecommission implements fc.AsyncCommand<Model, Real> {
  constructor(readonly node: number, readonly pool: number) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const allowed = new Set(reachable(model.pools[this.pool]!).map((state) => (state === 'canceled' || state === 'failed' ? 'ok' : 'DecommissionNotClearable')));
    const answer = await admin(real.cluster.urls[this.node]!, 'POST', '/svc/admin/v3/pools/clear', `pool=${this.pool}&by-id=true`);
    const outcome = outcomeOf(answer);
    real.log.push(`${this} -> ${outcome}`);
    expect([...allowed], JSON.stringify(answer.body)).toContain(outcome);
    if (outcome === 'ok') model.pools[this.pool] = 'none';
    await observe(model, real);
  }
  toString = () => `decommission clear(node ${this.node}, pool ${this.pool})`;
}

class StartRebalance implements fc.AsyncCommand<Model, Real> {
  constructor(readonly node: number) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const allowed = new Set(worlds(model).map((world) => (world.some(unfinished) ? 'DecommissionBlocksRebalance' : 'ok')));
    const answer = await admin(real.cluster.urls[this.node]!, 'POST', '/svc/admin/v3/rebalance/start');
    const outcome = outcomeOf(answer);
    real.log.push(`${this} -> ${outcome}`);
    expect([...allowed, 'RebalanceInProgress'], JSON.stringify(answer.body)).toContain(outcome);
    if (outcome === 'ok') expect(answer.body.id).toMatch(/^[0-9a-f-]{36}$/);
    await observe(model, real);
  }
  toString = () => `rebalance start(node ${this.node})`;
}

class StopRebalance implements fc.AsyncCommand<Model, Real> {
  constructor(readonly node: number) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const answer = await admin(real.cluster.urls[this.node]!, 'POST', '/svc/admin/v3/rebalance/stop');
    const outcome = outcomeOf(answer);
    real.log.push(`${this} -> ${outcome}`);
    expect(['ok', 'NoRebalanceRunning'], JSON.stringify(answer.body)).toContain(outcome);
    if (outcome === 'ok') expect(answer.body.pools.map((pool: any) => pool.status)).not.toContain('active');
    await observe(model, real);
  }
  toString = () => `rebalance stop(node ${this.node})`;
}

class RestartEveryNode implements fc.AsyncCommand<Model, Real> {
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    await Promise.all([real.cluster.stop(0), real.cluster.stop(1)]);
    await Promise.all([real.cluster.start(0), real.cluster.start(1)]);
    real.log.push('restart');
    // A restart never starts a rebalance.
    const rebalance = (await admin(real.cluster.urls[0]!, 'GET', '/svc/admin/v3/rebalance/status')).body;
    expect(rebalance.pools.map((pool: any) => pool.status)).not.toContain('active');
    await observe(model, real);
  }
  toString = () => 'restart every node';
}

const node = fc.constantFrom(0, 1);
const pool = fc.nat(poolCount - 1);
const commands = [
  fc.tuple(node, fc.constantFrom(...keys), fc.constantFrom(10, 5_000, 300_000), fc.nat(255)).map(([at, key, size, fill]) => new Put(at, key, size, fill)),
  fc.tuple(node, fc.constantFrom(...keys)).map(([at, key]) => new Delete(at, key)),
  fc.tuple(node, fc.array(pool, { minLength: 1, maxLength: 2 })).map(([at, targets]) => new StartDecommission(at, targets)),
  fc.tuple(node, pool).map(([at, target]) => new CancelDecommission(at, target)),
  fc.tuple(node, pool).map(([at, target]) => new ClearDecommission(at, target)),
  node.map((at) => new StartRebalance(at)),
  node.map((at) => new StopRebalance(at)),
  fc.constant(new RestartEveryNode()),
];

async function finalCheck(model: Model, real: Real): Promise<void> {
  const deadline = Date.now() + 60_000;
  while ((await entryStates(real)).some(unfinished) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
  expect((await entryStates(real)).some(unfinished)).toBe(false);
  const s3 = s3ClientFor(real.cluster.urls[1]!);
  const listed: string[] = [];
  let keyMarker: string | undefined;
  let versionMarker: string | undefined;
  for (;;) {
    const page = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket, KeyMarker: keyMarker, VersionIdMarker: versionMarker }));
    for (const version of page.Versions ?? []) listed.push(version.VersionId!);
    for (const marker of page.DeleteMarkers ?? []) listed.push(marker.VersionId!);
    if (!page.IsTruncated) break;
    keyMarker = page.NextKeyMarker;
    versionMarker = page.NextVersionIdMarker;
  }
  // Exactly once: no version lost, none duplicated across pools.
  expect([...listed].sort()).toEqual([...model.versions.keys()].sort());
  for (const [versionId, { key, md5 }] of model.versions) {
    if (md5 === null) continue;
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, VersionId: versionId }));
    expect(createHash('md5').update(await object.Body!.transformToByteArray()).digest('hex')).toBe(md5);
  }
}

describe('decommission and rebalance against a model of the state table', () => {
  it('random admin operations, restarts and traffic on 2 nodes x 3 pools', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 24, size: 'large' }), async (sequence) => {
        const cluster = await startProcessCluster({
          nodes: 2,
          drivesPerNode: 2,
          poolPaths: ['/p0/d{1...2}', '/p1/d{1...2}', '/p2/d{1...2}'],
          env: { SVC_DECOMMISSION_ENTRY_CONCURRENCY: '2' },
        });
        const real: Real = { cluster, log: [] };
        try {
          const s3 = s3ClientFor(cluster.urls[0]!);
          await s3.send(new CreateBucketCommand({ Bucket: bucket }));
          await s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
          const model: Model = { pools: Array.from({ length: poolCount }, () => 'none'), versions: new Map() };
          await fc.asyncModelRun(() => ({ model, real }), sequence);
          await finalCheck(model, real);
          if (process.env.SVC_MODEL_TRACE) console.log(real.log.join(' | '), model.pools);
        } catch (error) {
          console.error(`commands: ${real.log.join(' | ')}\n${cluster.logs().slice(-8_000)}`);
          throw error;
        } finally {
          await cluster.destroy();
        }
      }),
      { numRuns: 6, endOnFailure: true },
    );
  }, 600_000);
});
