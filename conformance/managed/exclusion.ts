/**
 * Rebalance and decommission exclusion (SPEC "States and transitions", "Endpoint rules",
 * "Mutual exclusion"): fast-check draws interleavings of decommission start (batches), cancel and
 * clear, rebalance start and stop, each sent to a random node, with restarts of every node and
 * PUT/DELETE traffic, on two nodes and three pools. After every step the states the cluster
 * reports are checked against a model of the state table (entries move on by themselves only along
 * queued -> active -> completed) and every answer must be one the model allows: a running
 * decommission refuses rebalance start, a running rebalance refuses decommission start, a source
 * pool refuses writes with SlowDown only. At the end every acknowledged version is listed exactly
 * once across the pools and reads back with its bytes.
 */
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { CreateBucketCommand, DeleteObjectCommand, GetObjectCommand, ListObjectVersionsCommand, PutBucketVersioningCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { CheckFailure, expectThat } from '../runner/check.js';
import { testCredentials } from '../harness/server-process.js';
import { adminAt, outcomeOf, withDeployment, type Deployment } from './deployment.js';
import type { PropertySuite } from './property.js';

type EntryState = 'none' | 'queued' | 'active' | 'completed' | 'canceled' | 'failed';
const poolCount = 3;
const nodeCount = 2;
const bucket = 'exclusion';
const keys = ['a', 'b', 'c/d', 'e'];

interface Model {
  pools: EntryState[];
  /** Acknowledged versions by version id: key and MD5 (null for a delete marker). */
  versions: Map<string, { key: string; md5: string | null }>;
}

interface Real {
  deployment: Deployment;
  log: string[];
}

const s3At = (url: string) => new S3Client({ endpoint: url, region: 'us-east-1', forcePathStyle: true, credentials: testCredentials, maxAttempts: 1 });

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

/** What decommission start answers in one world (validation order of SPEC's state table). */
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

function expectAllowed(real: Real, step: string, allowed: Iterable<string>, outcome: string, body: unknown): void {
  const set = new Set(allowed);
  real.log.push(`${step} -> ${outcome}`);
  if (!set.has(outcome)) throw new CheckFailure(`${step} answered ${outcome}; the state table allows ${[...set].join(' or ')} (${JSON.stringify(body).slice(0, 300)}); steps: ${real.log.join(' | ')}`);
}

async function entryStates(real: Real): Promise<EntryState[]> {
  const answer = await adminAt(real.deployment.urls[0]!, 'GET', '/svc/admin/v3/decommission/status');
  const states: EntryState[] = Array.from({ length: poolCount }, () => 'none');
  for (const entry of answer.body.entries ?? []) states[entry.pool] = entry.state;
  return states;
}

/** Reads the reported states and checks each is reachable from the model's; the model follows. */
async function observe(model: Model, real: Real): Promise<void> {
  const states = await entryStates(real);
  states.forEach((state, pool) => {
    if (!reachable(model.pools[pool]!).includes(state)) throw new CheckFailure(`pool ${pool} went from ${model.pools[pool]} to ${state} by itself; steps: ${real.log.join(' | ')}`);
  });
  model.pools = states;
  const rebalance = (await adminAt(real.deployment.urls[1]!, 'GET', '/svc/admin/v3/rebalance/status')).body;
  for (const pool of rebalance.pools ?? []) expectThat(['active', 'stopping', 'completed', 'stopped', 'failed'].includes(pool.status), `rebalance status names an unknown state ${pool.status}`);
}

class Put implements fc.AsyncCommand<Model, Real> {
  constructor(readonly node: number, readonly key: string, readonly size: number, readonly fill: number) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const body = Buffer.alloc(this.size, this.fill);
    try {
      const answer = await s3At(real.deployment.urls[this.node]!).send(new PutObjectCommand({ Bucket: bucket, Key: this.key, Body: body }));
      model.versions.set(answer.VersionId!, { key: this.key, md5: createHash('md5').update(body).digest('hex') });
    } catch (error) {
      // Only a pool with a decommission entry refuses writes, and only with SlowDown.
      expectThat((error as Error).name === 'SlowDown', `${this} failed with ${(error as Error).name}: ${(error as Error).message}`);
      expectThat(model.pools.some((state) => state !== 'none'), `${this} got SlowDown with no decommission entry`);
    }
    await observe(model, real);
  }
  toString = () => `put(node ${this.node}, ${this.key}, ${this.size} B)`;
}

class Delete implements fc.AsyncCommand<Model, Real> {
  constructor(readonly node: number, readonly key: string) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const answer = await s3At(real.deployment.urls[this.node]!).send(new DeleteObjectCommand({ Bucket: bucket, Key: this.key }));
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
    const answer = await adminAt(real.deployment.urls[this.node]!, 'POST', '/svc/admin/v3/pools/decommission', `pool=${this.targets.join(',')}&by-id=true`);
    const outcome = outcomeOf(answer);
    // A running rebalance also refuses (it may finish at once: the pools share one filesystem).
    expectAllowed(real, String(this), [...allowed, 'RebalanceInProgress'], outcome, answer.body);
    if (outcome === 'ok') for (const target of this.targets) model.pools[target] = 'queued';
    await observe(model, real);
  }
  toString = () => `decommission start(node ${this.node}, pools ${this.targets.join(',')})`;
}

class CancelDecommission implements fc.AsyncCommand<Model, Real> {
  constructor(readonly node: number, readonly pool: number) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const allowed = reachable(model.pools[this.pool]!).map((state) => (unfinished(state) ? 'ok' : 'NoActiveDecommission'));
    const answer = await adminAt(real.deployment.urls[this.node]!, 'POST', '/svc/admin/v3/pools/cancel', `pool=${this.pool}&by-id=true`);
    const outcome = outcomeOf(answer);
    expectAllowed(real, String(this), allowed, outcome, answer.body);
    if (outcome === 'ok') model.pools[this.pool] = 'canceled';
    await observe(model, real);
  }
  toString = () => `decommission cancel(node ${this.node}, pool ${this.pool})`;
}

class ClearDecommission implements fc.AsyncCommand<Model, Real> {
  constructor(readonly node: number, readonly pool: number) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const allowed = reachable(model.pools[this.pool]!).map((state) => (state === 'canceled' || state === 'failed' ? 'ok' : 'DecommissionNotClearable'));
    const answer = await adminAt(real.deployment.urls[this.node]!, 'POST', '/svc/admin/v3/pools/clear', `pool=${this.pool}&by-id=true`);
    const outcome = outcomeOf(answer);
    expectAllowed(real, String(this), allowed, outcome, answer.body);
    if (outcome === 'ok') model.pools[this.pool] = 'none';
    await observe(model, real);
  }
  toString = () => `decommission clear(node ${this.node}, pool ${this.pool})`;
}

class StartRebalance implements fc.AsyncCommand<Model, Real> {
  constructor(readonly node: number) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const allowed = worlds(model).map((world) => (world.some(unfinished) ? 'DecommissionBlocksRebalance' : 'ok'));
    const answer = await adminAt(real.deployment.urls[this.node]!, 'POST', '/svc/admin/v3/rebalance/start');
    const outcome = outcomeOf(answer);
    expectAllowed(real, String(this), [...allowed, 'RebalanceInProgress'], outcome, answer.body);
    if (outcome === 'ok') expectThat(/^[0-9a-f-]{36}$/.test(String(answer.body.id)), `rebalance start answered id ${answer.body.id}, not a uuid`);
    await observe(model, real);
  }
  toString = () => `rebalance start(node ${this.node})`;
}

class StopRebalance implements fc.AsyncCommand<Model, Real> {
  constructor(readonly node: number) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const answer = await adminAt(real.deployment.urls[this.node]!, 'POST', '/svc/admin/v3/rebalance/stop');
    const outcome = outcomeOf(answer);
    expectAllowed(real, String(this), ['ok', 'NoRebalanceRunning'], outcome, answer.body);
    if (outcome === 'ok') expectThat(!(answer.body.pools as { status: string }[]).some((pool) => pool.status === 'active'), 'a pool is still active after rebalance stop answered');
    await observe(model, real);
  }
  toString = () => `rebalance stop(node ${this.node})`;
}

class RestartEveryNode implements fc.AsyncCommand<Model, Real> {
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const nodes = [...Array(nodeCount).keys()];
    await Promise.all(nodes.map((node) => real.deployment.stop(node)));
    await Promise.all(nodes.map((node) => real.deployment.start(node)));
    real.log.push('restart');
    // A restart never starts a rebalance.
    const rebalance = (await adminAt(real.deployment.urls[0]!, 'GET', '/svc/admin/v3/rebalance/status')).body;
    expectThat(!(rebalance.pools as { status: string }[]).some((pool) => pool.status === 'active'), `a rebalance is active after a restart; steps: ${real.log.join(' | ')}`);
    await observe(model, real);
  }
  toString = () => 'restart every node';
}

const node = fc.nat(nodeCount - 1);
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
  expectThat(!(await entryStates(real)).some(unfinished), 'a decommission did not finish within 60 s');
  const s3 = s3At(real.deployment.urls[1]!);
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
  const expected = [...model.versions.keys()].sort();
  const sorted = [...listed].sort();
  expectThat(JSON.stringify(sorted) === JSON.stringify(expected), `listed versions ${sorted.length} (${sorted.length - new Set(sorted).size} duplicated) differ from the ${expected.length} acknowledged; steps: ${real.log.join(' | ')}`);
  for (const [versionId, { key, md5 }] of model.versions) {
    if (md5 === null) continue;
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, VersionId: versionId }));
    const read = createHash('md5').update(await object.Body!.transformToByteArray()).digest('hex');
    expectThat(read === md5, `${key} version ${versionId} reads back different bytes`);
  }
}

export type ExclusionCase = Iterable<fc.AsyncCommand<Model, Real>>;

export const exclusionSuite: PropertySuite<ExclusionCase> = {
  id: 'managed.rebalance-decommission-exclusion',
  spec: 'States and transitions',
  title: 'random interleavings of decommission start/cancel/clear and rebalance start/stop sent to random nodes, with restarts and traffic, follow the state table and exclude each other; every acknowledged version survives once',
  defaultRuns: 2,
  cases: fc.commands(commands, { maxCommands: 24, size: 'large' }),
  // A command sequence prints the commands it ran (empty before it runs).
  describe: (sequence) => String(sequence).replace(/\s*\/\*replayPath=.*\*\/\s*$/, '') || 'commands drawn as they run',
  run: (sequence, launcher) =>
    withDeployment(launcher, { nodes: nodeCount, poolPaths: ['/p0/d{1...2}', '/p1/d{1...2}', '/p2/d{1...2}'], env: { SVC_DECOMMISSION_ENTRY_CONCURRENCY: '2' } }, async (deployment) => {
      const s3 = s3At(deployment.urls[0]!);
      await s3.send(new CreateBucketCommand({ Bucket: bucket }));
      await s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
      const model: Model = { pools: Array.from({ length: poolCount }, () => 'none'), versions: new Map() };
      const real: Real = { deployment, log: [] };
      await fc.asyncModelRun(() => ({ model, real }), sequence);
      await finalCheck(model, real);
    }),
};
