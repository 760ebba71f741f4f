/**
 * Chaos scenarios: bounded traffic recorded by a WriteChecker while faults are injected at points
 * of the workload's progress drawn from the seed (before the n-th write, after the rebalance moved
 * an object), never at wall-clock times. At the end: every acknowledged write reads back
 * identical, nothing unacknowledged is half-visible, the heal fails on nothing, and after it every
 * object is at full redundancy (a deep scan finds every shard).
 *
 * How much: each scenario writes its base traffic (40 to 46 PUTs) times `volume(size)`
 * (steps.ts): the size itself up to 2, half its square above, so size 1 writes the base, size 2
 * (CI) twice it and size 10 fifty times it (2,000 to 2,300 PUTs a run). Fault points are drawn as
 * fractions of that traffic (a fill drawn among writes 4 to 12 of 40 at size 1 is drawn among
 * 200 to 600 of 2,000 at size 10), and the room and waits grow with it. PUTs go out in batches,
 * 4 at a time up to size 2 and 8 above. (power-cut.ts sizes its own workload.)
 *
 * What a seed fixes: keys, bodies, overwrites, victims, fault points, corrupted files. What it
 * does not: the order in which the concurrent PUTs of a batch and background work (rebalance,
 * decommission, read-repair, a heal racing corruption) interleave, the ids a process server draws
 * itself (the deployment id, which keys the pool choice of a new object; version and data-dir ids)
 * and latencies; so a replay meets the same faults at the same points of the traffic, not always
 * the same interleaving. The power-cut scenario (power-cut.ts) runs its server in this process and
 * seeds those ids too.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { WriteChecker } from './checker.js';
import type { Target } from '../runner/check.js';
import { startSvc, type SvcProcess } from '../harness/server-process.js';
import { startProcessCluster } from '../harness/process-cluster.js';
import { createPrng } from '../../src/util/prng.js';
import { bucket, driveList, faultDrive, healAndCheckRedundancy, rebalancePool, slowReadMs, targetFor, traffic, volume, waitForHeal, waitForRebalance, type ChaosContext } from './steps.js';
import type { Tally } from './history-checker.js';
import { powerCut } from './power-cut.js';
import { partitionKinds, partitionScenario, partitionWorkKinds } from './partition.js';
import { RecordedSidecar } from './recorded-phases.js';
import { killNodeReplicating } from './replication-events.js';
import { clockSkew } from './clock-skew.js';
import { driveFaultKinds, driveFaultScenario } from './drive-faults.js';

export type { ChaosContext } from './steps.js';

export interface ChaosResult {
  scenario: string;
  seed: number;
  problems: string[];
  timeline: string[];
  acknowledged: number;
  refused: number;
  refusals: Record<string, number>;
}

export type Scenario = (context: ChaosContext) => Promise<{ problems: string[]; checker: Tally }>;

async function withRoot<T>(action: (root: string) => Promise<T>): Promise<T> {
  const root = await mkdtemp(join(tmpdir(), 'svc-chaos-'));
  try {
    return await action(root);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

async function singleNode(root: string, args: string[], env: Record<string, string> = {}): Promise<{ process: SvcProcess; target: Target }> {
  const process = await startSvc({ args, env: { SVC_CONSOLE_ENABLE: 'false', SVC_FAULT_INJECTION: 'on', ...env } });
  void root;
  return { process, target: targetFor(process.url, 1) };
}

export const scenarios: Record<string, Scenario> = {
  /**
   * A fuller pool rebalances into an empty one (each on its own tmpfs, sized with the traffic so
   * that neither fills) while a drive of the source goes offline. The source's drives answer
   * reads slowly, so the rebalance is still moving objects when the drive goes: the drive is
   * taken once the rebalance has moved an object, before a write of the traffic drawn from the seed.
   * Beside that traffic two clients' operations on shared keys are recorded and judged by the
   * linearizability checker (recorded-phases.ts, RecordedSidecar).
   */
  'kill-drives-mid-rebalance': async (context) =>
    withRoot(async (root) => {
      const scale = volume(context.size);
      const mounts: string[] = [];
      try {
        for (const pool of ['p0', 'p1']) {
          await mkdir(join(root, pool));
          execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${96 * scale}m`, 'tmpfs', join(root, pool)]);
          mounts.push(join(root, pool));
        }
        const pool0 = join(root, 'p0/d{1...4}');
        const pool1 = join(root, 'p1/d{1...4}');
        let node = await singleNode(root, [pool0]);
        const checker = new WriteChecker(bucket);
        await node.target.s3.send(new CreateBucketCommand({ Bucket: bucket }));
        await traffic(context, checker, () => [node.target.s3], 24 * scale);
        await node.process.stop();
        node = await singleNode(root, [pool0, pool1]);
        const target = node.target;
        const sources = (await driveList(target)).filter((drive) => drive.includes('/p0/'));
        for (const drive of sources) await faultDrive(target, drive, { operations: { readRange: { latencyMs: slowReadMs } } });
        const problems: string[] = [];
        const started = await target.admin('POST', '/svc/admin/v3/rebalance/start');
        context.note(`source reads slowed by ${slowReadMs} ms; rebalance start: ${started.status}`);
        if (started.status !== 200) problems.push(`rebalance start answered ${started.status} ${JSON.stringify(started.body)}`);
        const moving = started.status === 200 ? await waitForRebalance(target, (pool) => pool.progress.objects > 0 || pool.status !== 'active', 30_000 * context.size) : undefined;
        if (!moving || moving.progress.objects === 0) problems.push(`the rebalance moved nothing (pool 0: ${JSON.stringify(moving ?? null)})`);
        const victim = sources[context.prng.int(sources.length)]!;
        const killAt = context.prng.int(8 * scale);
        const readers = [target.s3, targetFor(node.process.url, context.seed).s3];
        const sidecar = new RecordedSidecar(context, () => readers);
        await traffic(context, checker, () => [target.s3], 16 * scale, async (index) => {
          if (index !== killAt) return;
          await faultDrive(target, victim, { offline: true });
          const pool = await rebalancePool(target);
          context.note(`write ${index}: drive ${victim.slice(root.length)} offline`);
          if (pool?.status !== 'active') problems.push(`the rebalance was not running when the drive went offline (pool 0: ${pool?.status ?? 'none'})`);
        }, () => sidecar.burst());
        const ended = started.status === 200 ? await waitForRebalance(target, (pool) => pool.status !== 'active' && pool.status !== 'stopping', 60_000 * scale) : undefined;
        context.note(`rebalance of pool 0 ended: ${ended ? `${ended.status}, ${ended.progress.objects} objects moved` : 'never started'}`);
        if (ended && (ended.status !== 'completed' || ended.progress.objects === 0)) problems.push(`the rebalance ended ${ended.status} after moving ${ended.progress.objects} object(s) ${ended.lastError}`);
        for (const drive of sources) await faultDrive(target, drive, {});
        context.note('faults cleared');
        problems.push(...(await checker.verify(target.s3)), ...(await sidecar.judge()), ...(await healAndCheckRedundancy(target, context)));
        await node.process.stop();
        return { problems, checker };
      } finally {
        for (const mount of mounts) execFileSync('umount', ['-l', mount]);
      }
    }),

  /**
   * A four-node cluster (each pool one drive per node, EC:2) decommissions pool 0 under traffic;
   * node 2 is SIGKILLed and restarted mid-way. Beside the traffic, one client per node up records
   * operations on shared keys, judged by the linearizability checker.
   */
  'kill-node-mid-decommission': async (context) => {
    const cluster = await startProcessCluster({ nodes: 4, drivesPerNode: 1, poolPaths: ['/p0'], env: { SVC_DECOMMISSION_ENTRY_CONCURRENCY: '1' } });
    try {
      const checker = new WriteChecker(bucket);
      const targets = cluster.urls.map((url) => targetFor(url, context.seed));
      const first = targets[0]!;
      await first.s3.send(new CreateBucketCommand({ Bucket: bucket }));
      const scale = volume(context.size);
      await traffic(context, checker, () => [first.s3], 30 * scale);
      await Promise.all(cluster.urls.map((_, index) => cluster.stop(index)));
      cluster.setPools(['/p0', '/p1']);
      await Promise.all(cluster.urls.map((_, index) => cluster.start(index)));
      const started = await first.admin('POST', '/svc/admin/v3/pools/decommission', 'pool=0&by-id=true');
      context.note(`decommission start: ${started.status}`);
      const killAt = 2 * scale + context.prng.int(6 * scale);
      const sidecar = new RecordedSidecar(context, () => targets.filter((_, index) => cluster.nodes[index]).map((target) => target.s3));
      await traffic(context, checker, () => [first.s3], 16 * scale, async (index) => {
        if (index === killAt) {
          await cluster.kill(1);
          context.note(`write ${index}: node 2 SIGKILLed`);
        }
        if (index === killAt + 4 * scale) {
          await cluster.start(1);
          context.note(`write ${index}: node 2 restarted`);
        }
      }, () => sidecar.burst());
      if (!cluster.nodes[1]) await cluster.start(1);
      const deadline = Date.now() + 90_000 * scale;
      let state = '';
      while (Date.now() < deadline) {
        state = (await first.admin('GET', '/svc/admin/v3/decommission/status', 'pool=0&by-id=true')).body.entries?.[0]?.state ?? 'none';
        if (state !== 'queued' && state !== 'active') break;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      context.note(`decommission ended: ${state}`);
      const problems = state === 'completed' ? [] : [`the decommission ended '${state}', not completed`];
      problems.push(...(await checker.verify(first.s3)), ...(await sidecar.judge()), ...(await healAndCheckRedundancy(first, context)));
      return { problems, checker };
    } finally {
      await cluster.destroy();
    }
  },

  /** A drive is wiped and a bucket heal runs while shard files on another drive are corrupted. */
  'corrupt-shards-during-heal': async (context) =>
    withRoot(async (root) => {
      const node = await singleNode(root, [join(root, 'd{1...4}')]);
      try {
        const checker = new WriteChecker(bucket);
        await node.target.s3.send(new CreateBucketCommand({ Bucket: bucket }));
        await traffic(context, checker, () => [node.target.s3], 40 * volume(context.size));
        const wiped = 1 + context.prng.int(3);
        const corrupted = (wiped % 4) + 1;
        await rm(join(root, `d${wiped}`, bucket), { recursive: true, force: true });
        context.note(`drive d${wiped}: bucket wiped`);
        const heal = await node.target.admin('POST', `/svc/admin/v3/heal/${bucket}`, '', { body: JSON.stringify({}) });
        const files: string[] = [];
        for (const entry of await readdir(join(root, `d${corrupted}`, bucket), { withFileTypes: true, recursive: true })) if (entry.isFile() && entry.name.startsWith('part.')) files.push(join(entry.parentPath, entry.name));
        // In key order (data dirs are random ids), so the seed picks the same shards every run.
        const keyOf = (file: string) => file.split('/').slice(0, -2).join('/');
        files.sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
        for (const file of files.filter(() => context.prng.next() < 0.5)) {
          const bytes = await readFile(file);
          if (bytes.length === 0) continue;
          const at = context.prng.int(bytes.length);
          bytes[at] = bytes[at]! ^ 0xa5;
          await writeFile(file, bytes);
          context.note(`corrupted ${keyOf(file).slice(root.length)}/<data dir>/${file.split('/').at(-1)}`);
        }
        await waitForHeal(node.target, bucket, heal.body.clientToken);
        const problems = [...(await checker.verify(node.target.s3)), ...(await healAndCheckRedundancy(node.target, context))];
        return { problems, checker };
      } finally {
        await node.process.stop();
      }
    }),

  /** One drive reports ENOSPC on every write for a stretch of PUT traffic. */
  'fill-drive-during-put': async (context) =>
    withRoot(async (root) => {
      const node = await singleNode(root, [join(root, 'd{1...4}')]);
      try {
        const checker = new WriteChecker(bucket);
        await node.target.s3.send(new CreateBucketCommand({ Bucket: bucket }));
        const slot = context.prng.int(4);
        const drive = (await driveList(node.target))[slot]!;
        const full = { operations: { writeFile: { error: 'ENOSPC' }, writeFileAtomic: { error: 'ENOSPC' }, appendFile: { error: 'ENOSPC' }, openWriter: { error: 'ENOSPC' }, makeDir: { error: 'ENOSPC' } } };
        const scale = volume(context.size);
        const fillAt = 4 * scale + context.prng.int(8 * scale);
        await traffic(context, checker, () => [node.target.s3], 40 * scale, async (index) => {
          if (index === fillAt) {
            await faultDrive(node.target, drive, full);
            context.note(`write ${index}: drive ${slot + 1} full (ENOSPC)`);
          }
          if (index === fillAt + 16 * scale) {
            await faultDrive(node.target, drive, {});
            context.note(`write ${index}: drive ${slot + 1} has room again`);
          }
        });
        await faultDrive(node.target, drive, {});
        const problems = [...(await checker.verify(node.target.s3)), ...(await healAndCheckRedundancy(node.target, context))];
        if (checker.refused > 0) problems.push(`${checker.refused} PUT(s) refused although only one drive was full (within parity)`);
        return { problems, checker };
      } finally {
        await node.process.stop();
      }
    }),

  /**
   * Every node of a four-node cluster is restarted in turn under traffic: stopped (SIGTERM) before
   * one write, back and ready before the write half a turn later. Beside the traffic, one client
   * per node up records operations on shared keys, judged by the linearizability checker.
   */
  'rolling-restart': async (context) => {
    const cluster = await startProcessCluster({ nodes: 4, drivesPerNode: 2 });
    try {
      const checker = new WriteChecker(bucket);
      const targets = cluster.urls.map((url) => targetFor(url, context.seed));
      await targets[0]!.s3.send(new CreateBucketCommand({ Bucket: bucket }));
      const order = [0, 1, 2, 3].sort(() => context.prng.next() - 0.5);
      const per = 10 * volume(context.size);
      const up = () => targets.filter((_, index) => cluster.nodes[index]).map((target) => target.s3);
      const sidecar = new RecordedSidecar(context, up);
      await traffic(context, checker, up, per * order.length, async (index) => {
        const node = order[Math.floor(index / per)]!;
        if (index % per === 0) {
          await cluster.stop(node);
          context.note(`write ${index}: node ${node + 1} stopped`);
        }
        if (index % per === Math.floor(per / 2)) {
          await cluster.start(node);
          context.note(`write ${index}: node ${node + 1} back`);
        }
      }, () => sidecar.burst());
      const problems = [...(await checker.verify(targets[1]!.s3)), ...(await sidecar.judge()), ...(await healAndCheckRedundancy(targets[0]!, context))];
      return { problems, checker };
    } finally {
      await cluster.destroy();
    }
  },

  /** Power cuts at points drawn from the seed, each followed by a restart on what survived (power-cut.ts). */
  'power-cut': powerCut(),
  /** The same with every write SSE-S3 (the bucket's default encryption). */
  'power-cut-sse': powerCut({ sse: true }),
  'power-cut-cluster': async (context) => (await import('./power-cut-cluster.js')).powerCutCluster()(context),
  /** Links between the nodes cut on real network namespaces, judged by the linearizability checker (partition.ts). */
  ...Object.fromEntries(partitionKinds.map((kind) => [kind, partitionScenario(kind)])),
  /** One node cut off during multipart uploads, a rebalance or a decommission (partition.ts, partition-moves.ts). */
  ...Object.fromEntries(partitionWorkKinds.map((kind) => [kind, partitionScenario(kind)])),
  /** A node SIGKILLed while bucket replication and notifications are busy (replication-events.ts). */
  'kill-node-replicating': killNodeReplicating(),
  /** Nodes' clocks apart (and one jumping back), judged by the linearizability checker (clock-skew.ts). */
  'clock-skew': clockSkew(),
  /** One drive answering every call seconds late, or never, judged by the linearizability checker (drive-faults.ts). */
  ...Object.fromEntries(driveFaultKinds.map((kind) => [kind, driveFaultScenario(kind)])),
};

export async function runScenario(name: string, seed: number, size = 1): Promise<ChaosResult> {
  const scenario = scenarios[name];
  if (!scenario) throw new Error(`unknown scenario '${name}' (${Object.keys(scenarios).join(', ')})`);
  const started = Date.now();
  const timeline: string[] = [];
  const context: ChaosContext = { seed, prng: createPrng(seed), size, timeline, round: 0, note: (event) => timeline.push(`+${((Date.now() - started) / 1000).toFixed(1)}s ${event}`) };
  const { problems, checker } = await scenario(context);
  return { scenario: name, seed, problems, timeline, acknowledged: checker.acknowledged, refused: checker.refused, refusals: Object.fromEntries(checker.refusals) };
}
