/**
 * Steps every chaos scenario shares: the bucket, an S3 and admin client for a node, and the closing
 * heal that must fail on nothing and leave every object at full redundancy.
 */
import { Target } from '../runner/check.js';
import { testCredentials } from '../harness/server-process.js';
import type { Prng } from '../../src/util/prng.js';

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

/** Heals the bucket, then checks with a deep dry-run scan that every object is at full redundancy. */
export async function healAndCheckRedundancy(target: Target, context: ChaosContext): Promise<string[]> {
  // A deep heal reads every shard: its time grows with the traffic.
  const timeoutMs = 120_000 * Math.max(1, volume(context.size) / 5);
  // remove: versions left on a drive that was offline while a majority deleted them (moved objects) are dangling.
  const heal = await target.admin('POST', `/svc/admin/v3/heal/${bucket}`, '', { body: JSON.stringify({ scanMode: 'deep', remove: true }) });
  if (heal.status !== 200) return [`heal start answered ${heal.status} ${JSON.stringify(heal.body)}`];
  const healed = await waitForHeal(target, bucket, heal.body.clientToken, timeoutMs);
  context.note(`heal: ${healed.counts.objectsHealed} objects healed, ${healed.counts.shardsHealed} shards written, ${healed.counts.failures} failures`);
  const problems: string[] = [];
  for (const item of healed.items as any[]) if (item.outcome === 'failed' || item.outcome === 'unrecoverable') problems.push(`heal ${item.bucket}/${item.object ?? ''} (pool ${item.pool}, set ${item.set}): ${item.outcome} ${item.reason ?? ''}`);
  if (healed.counts.failures > 0 && problems.length === 0) problems.push(`the heal failed on ${healed.counts.failures} item(s)`);
  const scan = await target.admin('POST', `/svc/admin/v3/heal/${bucket}`, '', { body: JSON.stringify({ scanMode: 'deep', dryRun: true }) });
  const checked = await waitForHeal(target, bucket, scan.body.clientToken, timeoutMs);
  for (const item of checked.items as any[]) if (item.outcome !== 'healthy') problems.push(`after heal ${item.bucket}/${item.object}: ${item.outcome} ${item.reason ?? ''} (${(item.before ?? []).map((slot: any) => slot.state).join(',')})`);
  if (checked.counts.failures > 0) problems.push(`the redundancy scan failed on ${checked.counts.failures} object(s)`);
  return problems;
}

