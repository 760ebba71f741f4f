/**
 * Restart recovery (SPEC "Restart rules", "Persisted files"): on two nodes and two pools, after a
 * drawn workload, one drawn operation (decommission, rebalance, a root heal, or none) is started
 * through a drawn node, and after a drawn delay every node is restarted, one at a time or all at
 * once, each with SIGKILL or SIGTERM, optionally with an unreadable root-heal record left on one
 * of its drives. Then: a killed node reports the unclean marker and a stopped one does not; the bad
 * record is quarantined; a decommission comes back from pool.bin (never lost) and completes; a
 * rebalance comes back from rebalance.bin with its id and is never running again; a root heal
 * unfinished at a graceful shutdown resumes with its client token; every acknowledged object reads
 * back with its bytes.
 */
import fc from 'fast-check';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { CheckFailure, expectThat } from '../runner/check.js';
import { testCredentials } from '../harness/server-process.js';
import { adminAt, withDeployment, type Deployment } from './deployment.js';
import type { PropertySuite } from './property.js';

const nodeCount = 2;

export interface RecoveryCase {
  objects: number;
  operation: 'decommission' | 'rebalance' | 'heal' | 'none';
  /** The node the operation is sent to. */
  via: number;
  delayMs: number;
  /** Per node: SIGKILL or SIGTERM. */
  how: ('kill' | 'stop')[];
  /** Restart order (rolling), or every node down at once. */
  order: number[];
  together: boolean;
  /** Node and drive (1 or 2 of pool 0) given an unreadable root-heal record before its restart. */
  badRecord: { node: number; drive: number } | undefined;
}

export const recoveryCases: fc.Arbitrary<RecoveryCase> = fc.record({
  objects: fc.integer({ min: 10, max: 200 }),
  operation: fc.constantFrom('decommission', 'rebalance', 'heal', 'none'),
  via: fc.nat(nodeCount - 1),
  delayMs: fc.integer({ min: 0, max: 1_500 }),
  how: fc.array(fc.constantFrom('kill', 'stop'), { minLength: nodeCount, maxLength: nodeCount }),
  order: fc.shuffledSubarray([...Array(nodeCount).keys()], { minLength: nodeCount, maxLength: nodeCount }),
  together: fc.boolean(),
  badRecord: fc.option(fc.record({ node: fc.nat(nodeCount - 1), drive: fc.integer({ min: 1, max: 2 }) }), { nil: undefined }),
});

const s3At = (url: string) => new S3Client({ endpoint: url, region: 'us-east-1', forcePathStyle: true, credentials: testCredentials, maxAttempts: 1 });

/** Starts the drawn operation; answers what to verify after the restarts. */
async function startOperation(deployment: Deployment, drawn: RecoveryCase): Promise<{ rebalanceId?: string; healToken?: string; decommission?: boolean }> {
  const url = deployment.urls[drawn.via]!;
  if (drawn.operation === 'decommission') {
    const answer = await adminAt(url, 'POST', '/svc/admin/v3/pools/decommission', 'pool=0&by-id=true');
    expectThat(answer.status === 200, `decommission start answered ${answer.status} ${JSON.stringify(answer.body)}`);
    return { decommission: true };
  }
  if (drawn.operation === 'rebalance') {
    const answer = await adminAt(url, 'POST', '/svc/admin/v3/rebalance/start');
    expectThat(answer.status === 200, `rebalance start answered ${answer.status} ${JSON.stringify(answer.body)}`);
    return { rebalanceId: String(answer.body.id) };
  }
  if (drawn.operation === 'heal') {
    const answer = await adminAt(url, 'POST', '/svc/admin/v3/heal/', '', JSON.stringify({ recursive: true, scanMode: 'deep' }));
    expectThat(answer.status === 200 && typeof answer.body.clientToken === 'string', `root heal start answered ${answer.status} ${JSON.stringify(answer.body)}`);
    return { healToken: answer.body.clientToken };
  }
  return {};
}

async function plantBadRecord(deployment: Deployment, drawn: RecoveryCase, node: number): Promise<string | undefined> {
  if (drawn.badRecord?.node !== node) return undefined;
  const system = join(deployment.nodeRoot(node), 'p0', `d${drawn.badRecord.drive}`, '.svc.sys');
  await mkdir(system, { recursive: true });
  await writeFile(join(system, 'root-heal-unreadable.json'), 'not a heal record');
  return join(system, 'quarantine', 'root-heal-unreadable.json');
}

/** A file quarantined as `<dir>/<name>.<ms>` (src/cluster/state-quarantine.ts) for `<dir>/<name>`. */
function isQuarantined(path: string): boolean {
  const dir = dirname(path);
  const name = basename(path);
  return existsSync(dir) && readdirSync(dir).some((entry) => entry.startsWith(`${name}.`));
}

/** Whether `condition` holds within `timeoutMs` (asked every 100 ms). */
async function eventually(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}

/** Takes node `node` down as drawn, remembering the output of the run that ends (its shutdown included). */
async function takeDown(deployment: Deployment, drawn: RecoveryCase, node: number, before: string[]): Promise<void> {
  await (drawn.how[node] === 'kill' ? deployment.kill(node) : deployment.stop(node));
  before[node] = deployment.endedLogs(node);
}

/** The JSON log lines of `output` with message `msg` (pino: one object a line). */
function logLines(output: string, msg: string): Record<string, unknown>[] {
  return output.split('\n').filter((line) => line.includes(`"msg":"${msg}"`)).flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

function checkMarkers(deployment: Deployment, drawn: RecoveryCase): void {
  for (let node = 0; node < nodeCount; node += 1) {
    const unclean = deployment.nodeLogs(node).includes('the last shutdown was unclean');
    if (unclean !== (drawn.how[node] === 'kill')) throw new CheckFailure(`node ${node + 1} was ${drawn.how[node] === 'kill' ? 'killed' : 'stopped gracefully'}, yet its restart ${unclean ? 'reported' : 'did not report'} an unclean shutdown`);
  }
}

async function checkOperation(deployment: Deployment, expected: { rebalanceId?: string; healToken?: string; decommission?: boolean }, drawn: RecoveryCase, before: string[]): Promise<void> {
  const url = deployment.urls[0]!;
  if (expected.rebalanceId) {
    const status = (await adminAt(url, 'GET', '/svc/admin/v3/rebalance/status')).body;
    expectThat(status.id === expected.rebalanceId, `after the restarts the rebalance status has id ${status.id}, not the started ${expected.rebalanceId} (rebalance.bin lost)`);
    const running = (status.pools as { status: string }[]).filter((pool) => pool.status === 'active' || pool.status === 'stopping');
    expectThat(running.length === 0, `a rebalance is ${running[0]?.status} after every node restarted: a restart never starts a rebalance`);
  }
  if (expected.decommission) {
    const deadline = Date.now() + 90_000;
    let state = 'none';
    for (;;) {
      state = (await adminAt(url, 'GET', '/svc/admin/v3/decommission/status', 'pool=0&by-id=true')).body.entries?.[0]?.state ?? 'none';
      if ((state !== 'queued' && state !== 'active') || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expectThat(state === 'completed', `the decommission interrupted by the restarts ended '${state}', not completed (pool.bin)`);
  }
  if (expected.healToken) {
    const token = expected.healToken;
    const node = drawn.via;
    const ofToken = (msg: string, output: string) => logLines(output, msg).filter((line) => line.clientToken === token);
    const saved = ofToken('saved the running root heal for the next start', before[node]!).length > 0;
    const finished = ofToken('heal ended', before[node]!).some((line) => line.status === 'finished');
    if (drawn.how[node] === 'stop' && !finished) expectThat(saved, `node ${node + 1} stopped gracefully during a root heal (${token}) without saving it`);
    if (saved) {
      // The line may follow readiness (and a container's output arrives through a stream): wait for it a little.
      const resumed = () => ofToken('resuming the root heal saved at the last shutdown', deployment.nodeLogs(node)).length > 0;
      for (const deadline = Date.now() + 10_000; !resumed() && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 100));
      expectThat(resumed(), `the root heal saved at shutdown (${token}) was not resumed with its token`);
    }
  }
}

async function runCase(deployment: Deployment, drawn: RecoveryCase): Promise<void> {
  const s3 = s3At(deployment.urls[0]!);
  await s3.send(new CreateBucketCommand({ Bucket: 'recover' }));
  const bodies = Array.from({ length: drawn.objects }, (_, index) => `object ${index} `.repeat(1 + (index % 7) * 400));
  for (let index = 0; index < drawn.objects; index += 20) {
    await Promise.all(bodies.slice(index, index + 20).map((body, offset) => s3.send(new PutObjectCommand({ Bucket: 'recover', Key: `k${index + offset}`, Body: body }))));
  }
  const expected = await startOperation(deployment, drawn);
  await new Promise((resolve) => setTimeout(resolve, drawn.delayMs));
  const before: string[] = [];
  const quarantined: string[] = [];
  if (drawn.together) {
    await Promise.all(drawn.order.map((node) => takeDown(deployment, drawn, node, before)));
    for (const node of drawn.order) quarantined.push(...[await plantBadRecord(deployment, drawn, node)].filter((path): path is string => path !== undefined));
    await Promise.all(drawn.order.map((node) => deployment.start(node)));
  } else {
    for (const node of drawn.order) {
      await takeDown(deployment, drawn, node, before);
      quarantined.push(...[await plantBadRecord(deployment, drawn, node)].filter((path): path is string => path !== undefined));
      await deployment.start(node);
    }
  }
  checkMarkers(deployment, drawn);
  // Records are judged when the node's heal service starts, which may be just after it answers ready.
  for (const path of quarantined) expectThat(await eventually(() => isQuarantined(path), 15_000), `the unreadable root-heal record was not moved to quarantine (${path}.<ms>)`);
  await checkOperation(deployment, expected, drawn, before);
  const reader = s3At(deployment.urls[1]!);
  for (const [index, body] of bodies.entries()) {
    const read = await (await reader.send(new GetObjectCommand({ Bucket: 'recover', Key: `k${index}` }))).Body!.transformToString();
    expectThat(read === body, `k${index} reads back different bytes after the restarts`);
  }
}

export const recoverySuite: PropertySuite<RecoveryCase> = {
  id: 'managed.restart-recovery',
  spec: 'Restart rules',
  title: 'nodes restarted at random points (SIGKILL or SIGTERM) recover pool.bin, rebalance.bin, root-heal records and the unclean marker as the restart rules say, and lose no acknowledged object',
  defaultRuns: 2,
  cases: recoveryCases,
  describe: (drawn) =>
    `${drawn.objects} objects, ${drawn.operation} via node ${drawn.via + 1}, after ${drawn.delayMs} ms ${drawn.together ? 'every node down at once' : `nodes restarted in order ${drawn.order.map((node) => node + 1).join(',')}`} (${drawn.how.map((how, node) => `node ${node + 1} ${how}`).join(', ')})${drawn.badRecord ? `, bad root-heal record on node ${drawn.badRecord.node + 1} drive ${drawn.badRecord.drive}` : ''}`,
  run: (drawn, launcher) =>
    withDeployment(launcher, { nodes: nodeCount, poolPaths: ['/p0/d{1...2}', '/p1/d{1...2}'], env: { SVC_DECOMMISSION_ENTRY_CONCURRENCY: '1' } }, (deployment) => runCase(deployment, drawn)),
};
