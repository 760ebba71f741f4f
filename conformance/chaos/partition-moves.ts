/**
 * A node cut off while objects move between pools: `partition-rebalance` and
 * `partition-decommission` (run in the clients' namespace by partition.ts). Four nodes on hosts of
 * their own, two drives a node in each of two pools (pool 0 at `/p0`, pool 1 at `/p1`).
 *
 * The nodes start on pool 0 alone and the write checker's traffic fills it; they restart with
 * both pools, and every node's pool-0 drives answer reads 50 ms late, so the move runs a while.
 * Then the recorded workload of concurrent clients (recorded-phases.ts) runs in two phases:
 * - `moving, one node cut off`: the rebalance, or the decommission of pool 0, is started and has
 *   moved an object; at an operation drawn from the seed (among the first few) a node drawn from
 *   the seed (the leader, which runs the move, one time in four) is cut off from the other three,
 *   both ways, while the move runs;
 * - `healed`: the links are back.
 * Then the move must end: completed, or failed or stopped with a named reason, and then resumed
 * (started again) and completed. Judged: the history is linearizable and listings miss no
 * acknowledged key; every write the checker had acknowledged reads back with its bytes; no key is
 * held by both pools with two different latest versions, and after a decommission none is left in
 * pool 0 (read from the drives' `xl.meta` files); the closing heal fails on nothing and leaves
 * full redundancy.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { CreateBucketCommand, PutBucketVersioningCommand } from '@aws-sdk/client-s3';
import { decodeXlMeta } from '../../src/format/xl-meta.js';
import type { NetControl, NetHost } from '../harness/netns.js';
import type { SvcProcess } from '../harness/server-process.js';
import type { Target } from '../runner/check.js';
import { WriteChecker } from './checker.js';
import { runRecordedPhases, type RecordedResult } from './recorded-phases.js';
import { poolArgument, startNodes, type InsideRun } from './partition-hosts.js';
import { bucket, driveList, faultDrive, rebalancePool, slowReadMs, targetFor, traffic, volume, type ChaosContext } from './steps.js';

type MoveKind = 'partition-rebalance' | 'partition-decommission';

/** Where a move stands: its state, objects moved, and why it failed (empty when it did not). */
interface MoveState {
  state: string;
  objects: number;
  reason: string;
  unresolved: number;
}

/** Starting, reading and resuming one kind of move through the leader (the node of the first endpoint). */
interface Move {
  name: string;
  start(): Promise<{ status: number; body: unknown }>;
  status(): Promise<MoveState>;
  /** Starts it again after a failure or a stop. */
  resume(state: MoveState): Promise<{ status: number; body: unknown }>;
}

function moveOf(kind: MoveKind, leader: Target): Move {
  if (kind === 'partition-rebalance') {
    const start = () => leader.admin('POST', '/svc/admin/v3/rebalance/start');
    return {
      name: 'rebalance',
      start,
      async status() {
        const pool = await rebalancePool(leader);
        return { state: pool?.status ?? 'none', objects: pool?.progress.objects ?? 0, reason: pool?.lastError ?? '', unresolved: 0 };
      },
      resume: start,
    };
  }
  const query = 'pool=0&by-id=true';
  const start = () => leader.admin('POST', '/svc/admin/v3/pools/decommission', query);
  return {
    name: 'decommission of pool 0',
    start,
    async status() {
      const entry = (await leader.admin('GET', '/svc/admin/v3/decommission/status', query)).body.entries?.[0];
      return { state: entry?.state ?? 'none', objects: entry?.progress?.objects ?? 0, reason: entry?.reason ?? '', unresolved: entry?.unresolved?.length ?? 0 };
    },
    async resume(state) {
      // A failed entry with keys left unresolved starts again as it is; one without must be cleared first.
      if (state.unresolved === 0) {
        const cleared = await leader.admin('POST', '/svc/admin/v3/pools/clear', query);
        if (cleared.status !== 200) return cleared;
      }
      return start();
    },
  };
}

const running = (state: string): boolean => state === 'active' || state === 'queued' || state === 'stopping';

async function pollMove(move: Move, done: (state: MoveState) => boolean, timeoutMs: number): Promise<MoveState> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await move.status();
    if (done(state) || Date.now() > deadline) return state;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function partitionMovesInside(kind: MoveKind, run: InsideRun, context: ChaosContext, net: NetControl, nodes: NetHost[]): Promise<RecordedResult> {
  const scale = volume(context.size);
  const pool0 = poolArgument(nodes, '/p0/d{1...2}');
  const pool1 = poolArgument(nodes, '/p1/d{1...2}');
  const env = { SVC_FAULT_INJECTION: 'on', ...(kind === 'partition-decommission' ? { SVC_DECOMMISSION_ENTRY_CONCURRENCY: '1' } : {}) };
  let servers: SvcProcess[] = await startNodes(run, net, nodes, [pool0], env);
  const checker = new WriteChecker(bucket);
  try {
    const versioned = run.versioned ?? context.prng.int(2) === 1;
    const first = targetFor(servers[0]!.url, context.seed);
    await first.s3.send(new CreateBucketCommand({ Bucket: bucket }));
    if (versioned) await first.s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
    const fillTargets = servers.map((server) => targetFor(server.url, context.seed));
    await traffic(context, checker, () => fillTargets.map((target) => target.s3), 24 * scale);
    context.note(`pool 0 filled: ${checker.acknowledged} PUTs acknowledged`);
    await Promise.all(servers.map((server) => server.stop()));
    servers = await startNodes(run, net, nodes, [pool0, pool1], env);
    const targets = servers.map((server) => targetFor(server.url, context.seed));
    for (const target of targets) {
      for (const drive of (await driveList(target)).filter((path) => path.includes('/p0/'))) await faultDrive(target, drive, { operations: { readRange: { latencyMs: slowReadMs } } });
    }
    context.note(`restarted with pools 0 and 1; pool 0 reads slowed by ${slowReadMs} ms`);
    const move = moveOf(kind, targets[0]!);
    const victim = nodes[context.prng.int(nodes.length)]!;
    const problems: string[] = [];
    const cutAt = 1 + context.prng.int(4);
    const result = await runRecordedPhases(context, servers, nodes.map((node) => node.name), [
      {
        name: 'moving, one node cut off',
        before: async () => {
          const started = await move.start();
          if (started.status !== 200) problems.push(`the ${move.name} did not start: ${started.status} ${JSON.stringify(started.body)}`);
          const state = await pollMove(move, (now) => now.objects > 0 || !running(now.state), 30_000 * scale);
          if (state.objects === 0) problems.push(`the ${move.name} moved nothing before the cut (${JSON.stringify(state)})`);
          return `${move.name} started (${started.status}); ${state.state}, ${state.objects} object(s) moved`;
        },
        beforeOperation: async (count) => {
          if (count !== cutAt) return undefined;
          const state = await move.status();
          if (!running(state.state)) problems.push(`the ${move.name} was no longer running when ${victim.name} was to be cut off (${state.state})`);
          await net.partition([victim], nodes.filter((node) => node !== victim));
          return `operation ${count}: ${victim.name}${victim === nodes[0] ? ' (the leader)' : ''} cut off from the others; the ${move.name} ${state.state}, ${state.objects} object(s) moved`;
        },
      },
      {
        name: 'healed',
        before: async () => {
          await net.heal();
          return 'links healed';
        },
      },
    ], {
      versioned,
      bucketReady: true,
      beforeHeal: async () => {
        for (const target of targets) {
          for (const drive of (await driveList(target)).filter((path) => path.includes('/p0/'))) await faultDrive(target, drive, {});
        }
        problems.push(...(await finishMove(move, context, 120_000 * scale)));
        problems.push(...(await checker.verify(first.s3)));
        problems.push(...(await poolCopies(run.root, nodes, kind)));
        return problems;
      },
    });
    const refusals = { ...result.refusals };
    for (const [name, count] of checker.refusals) refusals[name] = (refusals[name] ?? 0) + count;
    return { ...result, acknowledged: result.acknowledged + checker.acknowledged, refused: result.refused + checker.refused, refusals };
  } finally {
    await Promise.all(servers.map((server) => server.kill()));
  }
}

/** Waits for the move to end; a failure or stop must be named, and the move resumed until it completes. */
async function finishMove(move: Move, context: ChaosContext, timeoutMs: number): Promise<string[]> {
  const problems: string[] = [];
  let state = await pollMove(move, (now) => !running(now.state), timeoutMs);
  for (let resumed = 0; state.state !== 'completed' && resumed < 3; resumed += 1) {
    if (running(state.state)) {
      problems.push(`the ${move.name} did not end within ${timeoutMs / 1000} s (${state.state}, ${state.objects} object(s) moved)`);
      return problems;
    }
    context.note(`the ${move.name} ended ${state.state}: ${state.reason || '(no reason given)'}`);
    if (!state.reason) problems.push(`the ${move.name} ended ${state.state} without a named reason`);
    const resumedAnswer = await move.resume(state);
    context.note(`the ${move.name} resumed: ${resumedAnswer.status}`);
    if (resumedAnswer.status !== 200) {
      problems.push(`the ${move.name} could not be resumed: ${resumedAnswer.status} ${JSON.stringify(resumedAnswer.body)}`);
      return problems;
    }
    state = await pollMove(move, (now) => !running(now.state), timeoutMs);
  }
  context.note(`the ${move.name} ended ${state.state}, ${state.objects} object(s) moved in its last run`);
  if (state.state !== 'completed') problems.push(`the ${move.name} ended ${state.state}, not completed: ${state.reason}`);
  return problems;
}

/**
 * Reads every `xl.meta` of the bucket on every drive and takes, per pool, the latest version a
 * read quorum of its drives (half of them) agrees on. A key two pools hold with different latest
 * versions is a problem; so is any key left in pool 0 after its decommission.
 */
async function poolCopies(root: string, nodes: NetHost[], kind: MoveKind): Promise<string[]> {
  const pools = ['p0', 'p1'];
  // pool -> key -> latest version as each drive has it -> drives
  const seen = new Map<string, Map<string, Map<string, number>>>();
  const drivesPerPool = new Map<string, number>();
  for (const pool of pools) {
    const byKey = new Map<string, Map<string, number>>();
    seen.set(pool, byKey);
    for (const node of nodes) {
      const poolDir = join(root, node.name, pool);
      const drives = (await readdir(poolDir).catch(() => [] as string[])).filter((name) => name.startsWith('d'));
      drivesPerPool.set(pool, (drivesPerPool.get(pool) ?? 0) + drives.length);
      for (const drive of drives) {
        const bucketDir = join(poolDir, drive, bucket);
        const entries = await readdir(bucketDir, { recursive: true, withFileTypes: true }).catch(() => []);
        for (const entry of entries) {
          if (!entry.isFile() || entry.name !== 'xl.meta') continue;
          const key = relative(bucketDir, entry.parentPath);
          let latest: string;
          try {
            const version = decodeXlMeta(await readFile(join(entry.parentPath, entry.name))).versions[0];
            if (!version) continue;
            latest = version.deleteMarker ? `delete marker ${version.versionId}` : `version ${version.versionId} (${version.etag}, ${version.modTimeMs})`;
          } catch (error) {
            latest = `unreadable xl.meta (${(error as Error).message})`;
          }
          const versions = byKey.get(key) ?? new Map<string, number>();
          versions.set(latest, (versions.get(latest) ?? 0) + 1);
          byKey.set(key, versions);
        }
      }
    }
  }
  const held = (pool: string, key: string): string | undefined => {
    const quorum = Math.ceil((drivesPerPool.get(pool) ?? 0) / 2);
    const versions = [...(seen.get(pool)?.get(key) ?? new Map<string, number>())].sort((a, b) => b[1] - a[1]);
    return versions[0] && versions[0][1] >= quorum ? versions[0][0] : undefined;
  };
  const problems: string[] = [];
  const keys = new Set([...seen.get('p0')!.keys(), ...seen.get('p1')!.keys()]);
  for (const key of [...keys].sort()) {
    const [inFirst, inSecond] = [held('p0', key), held('p1', key)];
    if (inFirst !== undefined && inSecond !== undefined && inFirst !== inSecond) problems.push(`${key} is in both pools with different latest versions: pool 0 ${inFirst}, pool 1 ${inSecond}`);
    if (kind === 'partition-decommission' && inFirst !== undefined) problems.push(`${key} is still in pool 0 after its decommission completed (${inFirst})`);
  }
  return problems;
}
