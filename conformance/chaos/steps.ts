/**
 * Steps every chaos scenario shares: the bucket, an S3 and admin client for a node, the PUT traffic
 * of the write checker, the rebalance status, and the closing heal that must fail on nothing and
 * leave every object at full redundancy.
 */
import { limits } from '../../src/util/limits.js';
import type { S3Client } from '@aws-sdk/client-s3';
import { Target } from '../runner/check.js';
import { testCredentials } from '../harness/server-process.js';
import type { Prng } from '../../src/util/prng.js';
import type { WriteChecker } from './checker.js';

export interface ChaosContext {
  seed: number;
  prng: Prng;
  /** Scales the traffic (1 = the small CI size). */
  size: number;
  timeline: string[];
  note(event: string): void;
  /** Traffic rounds so far (each round writes its own keys, overwriting only its own). */
  round: number;
}

export const bucket = 'chaos';

/**
 * How many times a scenario's base traffic a size writes: the size itself up to 2 (what CI runs),
 * then half its square, so small sizes stay cheap and `--size 10` writes 50 times the base
 * (thousands of writes a run). Fault points, waits and room grow with it.
 */
export function volume(size: number): number {
  return Math.max(size, Math.ceil((size * size) / 2));
}

export function targetFor(url: string, seed: number): Target {
  return new Target({ endpoint: url, accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey, seed });
}

/** Sets a drive's fault plan through the node's fault route (the node runs with SVC_FAULT_INJECTION=on). */
export async function faultDrive(target: Target, drive: string, plan: unknown): Promise<void> {
  const answer = await target.admin('POST', '/svc/admin/v4/faults', `drive=${encodeURIComponent(drive)}`, { body: JSON.stringify(plan) });
  if (answer.status !== 200) throw new Error(`fault route answered ${answer.status} ${JSON.stringify(answer.body)}`);
}

/** The drives a node's fault route can reach (its own). */
export async function driveList(target: Target): Promise<string[]> {
  return ((await target.admin('GET', '/svc/admin/v4/faults')).body.drives as { drive: string }[]).map((entry) => entry.drive);
}

export async function waitForHeal(target: Target, path: string, token: string, timeoutMs = 120_000): Promise<Record<string, any>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await target.admin('POST', `/svc/admin/v3/heal/${path}`, `clientToken=${token}`);
    if (answer.status !== 200) throw new Error(`heal status answered ${answer.status} ${JSON.stringify(answer.body)}`);
    if (answer.body.status !== 'running') return answer.body;
    if (Date.now() > deadline) throw new Error(`heal ${token} still running after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Heals the bucket, then checks with a deep dry-run scan that every object is at full redundancy.
 * A lock granted where the answer or the release was lost to a cut link is held until its expiry
 * (30 s, SPEC: released after expiry): a heal whose only failures are lock waits is run once more
 * after that expiry.
 */
export async function healAndCheckRedundancy(target: Target, context: ChaosContext): Promise<string[]> {
  // A deep heal reads every shard: its time grows with the traffic.
  const timeoutMs = 120_000 * Math.max(1, volume(context.size) / 5);
  const healOnce = async (): Promise<string[]> => {
    // remove: versions left on a drive that was offline while a majority deleted them (moved objects) are dangling.
    const heal = await target.admin('POST', `/svc/admin/v3/heal/${bucket}`, '', { body: JSON.stringify({ scanMode: 'deep', remove: true }) });
    if (heal.status !== 200) return [`heal start answered ${heal.status} ${JSON.stringify(heal.body)}`];
    const healed = await waitForHeal(target, bucket, heal.body.clientToken, timeoutMs);
    const uploads = (healed.items as any[]).filter((item) => item.type === 'upload' && item.outcome === 'healed').length;
    context.note(`heal: ${healed.counts.objectsHealed} objects healed, ${healed.counts.shardsHealed} shards written, ${healed.counts.failures} failures${uploads > 0 ? `; ${uploads} upload directories left behind removed` : ''}`);
    const failed: string[] = [];
    for (const item of healed.items as any[]) if (item.outcome === 'failed' || item.outcome === 'unrecoverable') failed.push(`heal ${item.bucket}/${item.object ?? ''} (pool ${item.pool}, set ${item.set}): ${item.outcome} ${item.reason ?? ''}`);
    if (healed.counts.failures > 0 && failed.length === 0) failed.push(`the heal failed on ${healed.counts.failures} item(s)`);
    return failed;
  };
  // As an operator does before a heal, wait until the healing node sees every drive online: a
  // peer drive taken offline during the fault comes back at its next answered probe, which may
  // wait out one drive deadline after the links heal.
  await everyDriveOnline(target, context);
  let problems = await healOnce();
  if (problems.length > 0 && problems.every((problem) => /waiting for the write lock/.test(problem))) {
    context.note(`heal waited out locks (${problems.length}): healing again after the lock expiry`);
    await new Promise((resolve) => setTimeout(resolve, limits.lockExpiryMs + 1_000));
    problems = await healOnce();
  }
  const scan = await target.admin('POST', `/svc/admin/v3/heal/${bucket}`, '', { body: JSON.stringify({ scanMode: 'deep', dryRun: true }) });
  const checked = await waitForHeal(target, bucket, scan.body.clientToken, timeoutMs);
  for (const item of checked.items as any[]) if (item.outcome !== 'healthy') problems.push(`after heal ${item.bucket}/${item.object}: ${item.outcome} ${item.reason ?? ''} (${(item.before ?? []).map((slot: any) => slot.state).join(',')})`);
  if (checked.counts.failures > 0) problems.push(`the redundancy scan failed on ${checked.counts.failures} object(s)`);
  return problems;
}

/** Waits (at most three drive deadlines) until `target` reports every drive online, and notes it. */
async function everyDriveOnline(target: Target, context: ChaosContext): Promise<void> {
  const started = Date.now();
  const offline = async (): Promise<string[]> => {
    const answer = await target.admin('GET', '/svc/admin/v3/info');
    if (answer.status !== 200) return [`info answered ${answer.status}`];
    return (answer.body.servers as { drives: { endpoint: string; state: string }[] }[]).flatMap((server) => server.drives).filter((drive) => drive.state !== 'online').map((drive) => drive.endpoint);
  };
  let left = await offline();
  while (left.length > 0 && Date.now() - started < 3 * limits.driveCallDeadlineMsDefault) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    left = await offline();
  }
  if (Date.now() - started >= 250) context.note(left.length === 0 ? `every drive online after ${((Date.now() - started) / 1000).toFixed(1)} s` : `still offline before the heal: ${left.join(', ')}`);
}

/** PUTs a batch of traffic sends at once: 4 at the small sizes CI runs, 8 once the traffic is large. */
export function batchSize(context: ChaosContext): number {
  return volume(context.size) > 2 ? 8 : 4;
}

/**
 * Runs `count` PUTs (a batch at a time) through the given endpoints, calling `at(i)` before the
 * batch holding write i starts (every earlier batch answered): fault points are write indices.
 * `alongside` runs with each batch (recorded operations of concurrent clients, recorded-phases.ts).
 */
export async function traffic(context: ChaosContext, checker: WriteChecker, clients: () => S3Client[], count: number, at: (index: number) => Promise<void> = async () => undefined, alongside?: () => Promise<void>): Promise<void> {
  const round = (context.round += 1);
  const batch = batchSize(context);
  for (let start = 0; start < count; start += batch) {
    for (let index = start; index < Math.min(count, start + batch); index += 1) await at(index);
    const list = clients();
    const keys = new Set<string>();
    await Promise.all([
      ...Array.from({ length: Math.min(batch, count - start) }, (_, offset) => {
        const key = trafficKey(context, round, start + offset, start, keys);
        return checker.put(list[(start + offset) % list.length]!, key, context.prng);
      }),
      alongside?.(),
    ]);
  }
}

/**
 * Mostly new keys; every fifth write overwrites a key of an earlier batch (all of its writes
 * answered) that no other write of its batch touches, so the order of a key's writes is the order
 * the checker recorded them in.
 */
export function trafficKey(context: ChaosContext, round: number, index: number, batchStart: number, batchKeys: Set<string>): string {
  let key = `r${round}/k${index}`;
  if (index % 5 === 4 && index > 10) {
    const earlier = `r${round}/k${context.prng.int(Math.min(index - 5, batchStart))}`;
    if (!batchKeys.has(earlier)) key = earlier;
  }
  batchKeys.add(key);
  return key;
}

/** Source reads this slow keep a rebalance busy for a while even at size 1. */
export const slowReadMs = 50;

export interface RebalancePoolStatus {
  status: string;
  lastError: string;
  progress: { objects: number };
}

export async function rebalancePool(target: Target, id = 0): Promise<RebalancePoolStatus | undefined> {
  const status = (await target.admin('GET', '/svc/admin/v3/rebalance/status')).body;
  return (status.pools as (RebalancePoolStatus & { id: number })[] | undefined)?.find((pool) => pool.id === id);
}

/** Polls the rebalance status of pool 0 until `done` holds (its last status either way). */
export async function waitForRebalance(target: Target, done: (pool: RebalancePoolStatus) => boolean, timeoutMs: number): Promise<RebalancePoolStatus | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pool = await rebalancePool(target);
    if (!pool || done(pool) || Date.now() > deadline) return pool;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
