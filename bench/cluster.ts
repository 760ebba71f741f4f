/**
 * `npm run bench -- --cluster`: the same 16 fs drives (one set, EC:4, on the same disk) served by
 * one node and by a four-node cluster on 127.0.0.2-5 (four drives a node, the four-node command
 * of the README), in the same round, under the same load: 4 KiB objects 32 at a time, 64 MiB
 * objects 4 at a time, from the load generator of bench/load.ts in a process of its own (the AWS
 * SDK's S3Client by default; the cluster's load is spread over its four nodes in turn).
 *
 * For each phase it prints, per target: throughput, latency percentiles, server CPU per operation
 * (per MB for 64 MiB) of every server process and summed (user + system time from /proc), and the
 * internode round trips per S3 operation by service (drive, lock, peer), counted by the nodes
 * that answered them (`svc_rpc_received_requests_total`, read from each node's metrics route).
 * Before the load, a probe makes a few 4 KiB and 64 MiB PUTs and GETs one at a time through one
 * node and counts their round trips (less the nodes' background requests, measured idle just
 * before): the deterministic figure, which the machine's load does not move. The goals (four nodes against one: CPU per operation, throughput, 4 KiB GET p99) are
 * judged on the medians of the rounds' ratios, each ratio taken within its round.
 *
 *   npm run bench -- --cluster [--small=N] [--large=M] [--rounds=R] [--warmup=W] [--warmup-seconds=S] [--large-warmup=L] [--quick] [--probe=P] [--client=sdk|http] [--cpu-prof=DIR] [--json=FILE]
 *   npm run bench -- --cluster --probe-only     the four-node cluster's round trips per operation alone
 *   npm run bench -- --cluster --compare=<ref>  this checkout's build against another commit's (bench/cluster-compare.ts)
 *
 * --large=0 leaves out the 64 MiB phases (and their goals); --cpu-prof=DIR runs the servers with
 * `node --cpu-prof`, each writing its profile under DIR/one or DIR/four when it stops (wall-clock
 * samples: under contention they count time a process waits for a core). For CPU samples, run
 * `perf record -k CLOCK_MONOTONIC` alongside with the servers started under
 * BENCH_SERVER_NODE_OPTIONS=--perf-basic-prof, which names their JavaScript in perf's reports;
 * BENCH_PHASE_EDGES=1 prints each phase's edges on that clock without --cpu-prof.
 *
 * Each process of a target compiles its own hot code, and V8 optimizes a function only after
 * thousands of calls in that process; a four-node target's processes each coordinate a quarter of
 * the requests it serves. So the 4 KiB warm-up runs W pairs per node (at most S seconds per node):
 * every process coordinates the same number of requests before the timed phases, whichever the
 * target, and the four nodes are measured in the same steady state as the one node. Each round
 * also measures what moving bytes between two processes costs this machine (bench/loopback.ts)
 * and prints the floor that puts under the four nodes' 64 MiB CPU; each phase's server CPU is
 * split by thread (event loops, libuv's I/O pool, other threads).
 *
 * Defaults are quick-look sized (N=400, M=4, R=1, W=6000, S=120, L=16, P=20); `--quick` warms up
 * less (W=1500, S=15, L=4), for comparisons that must fit many rounds; the figures of
 * docs/benchmarks.md use --small=1000 --large=8 --rounds=3. Every timed phase starts after a
 * sync(1), on a disk done with the writes before it, and each phase's figures come with the
 * machine's load: the one-minute load average at its end, and the cores kept busy by every other
 * process meanwhile (/proc/stat less the servers' and the load generator's CPU).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { existsSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join, resolve } from 'node:path';
import { startSvc, repoRoot, testCredentials } from '../conformance/harness/server-process.js';
import { startProcessCluster } from '../conformance/harness/process-cluster.js';
import { createLoadClient, payloadOf, type ClientKind } from './clients.js';
import { machineCpuMs, median, processCpuMs, runBenchScript, threadCpuMs, type ThreadCpuMs } from './shared.js';
import { Turns } from './compare.js';
import type { ClusterBenchSummary } from './cluster-summary.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const largeMegabytes = (64 * MiB) / 1e6;

export type Phase = 'smallPut' | 'smallGet' | 'largePut' | 'largeGet';
export const phases: Phase[] = ['smallPut', 'smallGet', 'largePut', 'largeGet'];
export const phaseNames: Record<Phase, string> = { smallPut: '4 KiB PUT', smallGet: '4 KiB GET', largePut: '64 MiB PUT', largeGet: '64 MiB GET' };
const services = ['drive', 'lock', 'peer'] as const;
type RoundTrips = Record<(typeof services)[number], number>;
type Probed = RoundTrips & { serverCpuMs: number };

export interface Settings {
  smallOps: number;
  largeObjects: number;
  rounds: number;
  /** 4 KiB pairs of the warm-up per node of the target. */
  warmUpPairs: number;
  /** The longest the 4 KiB warm-up may run, per node of the target. */
  warmUpSeconds: number;
  /** 64 MiB pairs of the warm-up per node of the target. */
  largeWarmUpPairs: number;
  probeOps: number;
  client: ClientKind;
  /** Only the probe's round trips of the four-node cluster (no load, no goals). */
  probeOnly: boolean;
  /** Where the servers write V8 CPU profiles (node --cpu-prof), one directory per target; none when unset. */
  cpuProfileDir?: string;
  /** Where the medians go as JSON (cluster-summary.ts), for scripts/readme-figures.ts; none when unset. */
  jsonPath?: string;
}

/** One running target: its server processes and their S3 endpoints. */
interface Servers {
  /** What the bench's lines call it: `one node`, `four nodes`, and the build's name when several run. */
  label: string;
  pids: number[];
  urls: string[];
  stop(): Promise<void>;
}

export interface PhaseFigures {
  /** op/s (4 KiB) or MB/s (64 MiB). */
  rate: number;
  latencyMs: { p50: number; p90: number; p99: number };
  /** Server CPU ms per operation, per server process. */
  serverCpuMs: number[];
  /** Server CPU ms per operation, summed over the servers, by kind of thread. */
  threadCpuMs: ThreadCpuMs;
  clientCpuMs: number;
  roundTrips: RoundTrips;
  /** The machine's one-minute load average at the phase's end (this bench's processes count in it). */
  loadAverage: number;
  /** Cores kept busy during the phase by every process but the target's servers and the load generator. */
  otherCores: number;
}

export interface TargetFigures {
  phases: Record<Phase, PhaseFigures>;
  /** Round trips and server CPU (ms, summed over the servers) per operation, one operation at a time through the first node (absent when not probed). */
  probe?: Record<Phase, Probed>;
}

export type TargetName = 'one' | 'four';
type Round = Record<TargetName, TargetFigures> & {
  /** CPU ms per MB (both ends) of moving bytes between two processes over loopback, measured in the round. */
  loopbackMsPerMb: number;
};

const serverEnv = { SVC_OBS_LOGGER_LEVEL: 'warn', SVC_PROMETHEUS_AUTH_TYPE: 'public', SVC_CONSOLE_ENABLE: 'false' };

/** A build of the server the bench runs, and the environment it adds to the servers'. */
export interface Build {
  name: string;
  /** Another build's `dist/src/cli/svc.js`; this checkout's build when unset. */
  script?: string;
  env?: Record<string, string>;
}

export const thisBuild: Build = { name: 'this checkout' };

export const targetLabels: Record<TargetName, string> = { one: 'one node', four: 'four nodes' };

async function startTarget(target: TargetName, dir: string, build: Build, cpuProfileDir: string | undefined, label: string): Promise<Servers> {
  // Node options for the servers: BENCH_SERVER_NODE_OPTIONS as given, and --cpu-prof with --cpu-prof=DIR.
  const nodeOptions = [process.env.BENCH_SERVER_NODE_OPTIONS, cpuProfileDir === undefined ? undefined : `--cpu-prof --cpu-prof-dir=${join(cpuProfileDir, target)}`].filter(Boolean).join(' ');
  const env: Record<string, string> = { ...serverEnv, ...build.env };
  if (nodeOptions !== '') env.NODE_OPTIONS = nodeOptions;
  const program = { entry: 'build' as const, ...(build.script === undefined ? {} : { script: build.script }) };
  if (target === 'one') {
    await mkdir(join(dir, 'one'), { recursive: true });
    const server = await startSvc({ ...program, args: [join(dir, 'one', 'd{1...16}')], env });
    return { label, pids: [server.child.pid!], urls: [server.url], stop: async () => void (await server.stop()) };
  }
  const cluster = await startProcessCluster({ ...program, nodes: 4, drivesPerNode: 4, env });
  return {
    label,
    pids: cluster.nodes.map((node) => node!.child.pid!),
    urls: cluster.urls,
    stop: async () => {
      await Promise.all(cluster.nodes.map((_, index) => cluster.stop(index)));
      await cluster.destroy();
    },
  };
}

/** Internode requests answered so far, summed over the nodes, by service. */
async function roundTripsSoFar(urls: string[]): Promise<RoundTrips> {
  const total: RoundTrips = { drive: 0, lock: 0, peer: 0 };
  for (const url of urls) {
    const text = await (await fetch(`${url}/svc/metrics/node`)).text();
    for (const match of text.matchAll(/^svc_rpc_received_requests_total\{service="(\w+)"\} (\d+(?:\.\d+)?)/gm)) {
      const service = match[1] as keyof RoundTrips;
      if (service in total) total[service] += Number(match[2]);
    }
  }
  return total;
}

function perOperation(before: RoundTrips, after: RoundTrips, operations: number): RoundTrips {
  const each = (service: keyof RoundTrips): number => (after[service] - before[service]) / Math.max(1, operations);
  return { drive: each('drive'), lock: each('lock'), peer: each('peer') };
}

/**
 * Internode requests per second while nothing is asked of the servers (each node re-reads its
 * IAM store and pool state every 5 s), measured over `seconds`.
 */
async function idleRoundTrips(servers: Servers, seconds: number): Promise<Probed> {
  const before = await roundTripsSoFar(servers.urls);
  const cpuBefore = sum(servers.pids.map((pid) => processCpuMs(pid) ?? 0));
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const cpuAfter = sum(servers.pids.map((pid) => processCpuMs(pid) ?? 0));
  return { ...perOperation(before, await roundTripsSoFar(servers.urls), seconds), serverCpuMs: (cpuAfter - cpuBefore) / seconds };
}

/**
 * A few PUTs then GETs of each size, one at a time through the first node, with their round
 * trips counted; the idle rate measured just before is taken off for the time each phase took.
 */
async function probe(servers: Servers, settings: Settings): Promise<Record<Phase, Probed>> {
  const idle = await idleRoundTrips(servers, 10);
  console.log(`  idle: ${servers.pids.length} server(s) use ${idle.serverCpuMs.toFixed(1)} ms of CPU a second, summed, and make ${tripsText(idle)} round trips a second`);
  const client = await createLoadClient('http', { endpoint: servers.urls[0]!, ...testCredentials });
  const bucket = `probe-${Date.now().toString(36)}`;
  const cpuMs = (): number => sum(servers.pids.map((pid) => processCpuMs(pid) ?? 0));
  const counted = async (count: number, work: (index: number) => Promise<unknown>): Promise<Probed> => {
    const before = await roundTripsSoFar(servers.urls);
    const cpuBefore = cpuMs();
    const started = performance.now();
    for (let index = 0; index < count; index += 1) await work(index);
    const seconds = (performance.now() - started) / 1000;
    const cpuAfter = cpuMs();
    const after = await roundTripsSoFar(servers.urls);
    const less = (service: keyof RoundTrips): number => Math.max(0, after[service] - before[service] - idle[service] * seconds) / count;
    return { drive: less('drive'), lock: less('lock'), peer: less('peer'), serverCpuMs: (cpuAfter - cpuBefore) / count };
  };
  try {
    await client.createBucket(bucket);
    const result = {} as Record<Phase, Probed>;
    const sizes = [['small', Buffer.alloc(4 * KiB, 'p'), settings.probeOps], ['large', Buffer.alloc(64 * MiB, 'P'), 2]] as const;
    for (const [size, bytes, count] of sizes.filter(([size]) => size === 'small' || settings.largeObjects > 0)) {
      const payload = payloadOf(bytes);
      result[`${size}Put`] = await counted(count, (index) => client.put(bucket, `${size}-${index}`, payload));
      result[`${size}Get`] = await counted(count, (index) => client.get(bucket, `${size}-${index}`));
    }
    return result;
  } finally {
    client.destroy();
  }
}

/**
 * How a load process takes turns with those of other builds: before each timed phase it waits
 * until `before(phase)` resolves; `after(phase)` is called once the phase's end is read.
 */
interface LoadSteps {
  before(phase: Phase): Promise<void>;
  after(phase: Phase): void;
}

/** What is read at a phase's edge. */
interface Edge {
  cpuMs: number[];
  threads: ThreadCpuMs;
  trips: RoundTrips;
  machineMs: number;
  atMs: number;
}

const run = promisify(execFile);

/** One load process (bench/load.ts) over `phaseList`; the servers' CPU and round trips are read at each phase's edges. */
async function runLoad(servers: Servers, settings: Settings, phaseList: string[], threads: number, steps: LoadSteps): Promise<Partial<Record<Phase, PhaseFigures>>> {
  const edges = new Map<string, Promise<Edge>>();
  const done = new Map<string, number>();
  const loadAverages = new Map<string, number>();
  const onLine = (line: string): void => {
    if (line.startsWith('warm-up ') || line.startsWith('large warm-up ') || line.startsWith('large shapes ')) console.log(`  ${servers.label}: ${line}`);
    const mark = /^phase (\w+) (start|end)(?: (\d+))?$/.exec(line);
    if (!mark) return;
    const cpuMs = servers.pids.map((pid) => processCpuMs(pid) ?? 0);
    const threads = sumThreads(servers.pids.map((pid) => threadCpuMs(pid) ?? { eventLoop: 0, ioPool: 0, otherThreads: 0 }));
    const machineMs = machineCpuMs();
    const atMs = performance.now();
    // The profiles' clock is the monotonic one: a phase's samples are those between its edges.
    if (settings.cpuProfileDir !== undefined || process.env.BENCH_PHASE_EDGES === '1') console.log(`phase edge: ${mark[1]} ${mark[2]} at ${process.hrtime.bigint() / 1000n} µs`);
    const edge = roundTripsSoFar(servers.urls).then((trips) => ({ cpuMs, threads, trips, machineMs, atMs }));
    edges.set(`${mark[1]} ${mark[2]}`, edge);
    if (mark[3] !== undefined) done.set(mark[1]!, Number(mark[3]));
    if (mark[2] === 'end') {
      loadAverages.set(mark[1]!, loadavg()[0]!);
      // The next turn starts once this phase's figures are read, whether or not that worked (a failed reading fails below).
      const after = (): void => steps.after(mark[1] as Phase);
      void edge.then(after, after);
    }
  };
  // Each phase starts on a disk done with what came before (the last phase's writes, another build's included): sync(1).
  const reply = (line: string): Promise<string> | undefined => {
    const ready = /^ready (\w+)$/.exec(line);
    return ready ? steps.before(ready[1] as Phase).then(() => run('sync')).then(() => 'go\n') : undefined;
  };
  const args = [servers.urls.join(','), testCredentials.accessKeyId, testCredentials.secretAccessKey, String(settings.smallOps), String(settings.largeObjects), phaseList.join(','), settings.client, String(threads), String(settings.warmUpPairs * servers.pids.length), String(settings.warmUpSeconds * servers.pids.length), String(settings.largeWarmUpPairs)];
  const lastLine = await runBenchScript(`the load generator of ${servers.label}`, 'load.ts', args, { onLine, reply, env: { ...process.env, BENCH_LOAD_STEPPED: '1' } });
  const output = JSON.parse(lastLine) as Partial<Record<Phase, number>> & { cpu: Record<string, number>; latencyMs: Record<string, PhaseFigures['latencyMs']> };
  const figures: Partial<Record<Phase, PhaseFigures>> = {};
  for (const phase of phases) {
    if (output[phase] === undefined) continue;
    const start = await edges.get(`${phase} start`)!;
    const end = await edges.get(`${phase} end`)!;
    const operations = Math.max(1, done.get(phase) ?? 1);
    const serverCpuMs = end.cpuMs.map((cpuMs, index) => cpuMs - start.cpuMs[index]!);
    const othersMs = end.machineMs - start.machineMs - sum(serverCpuMs) - output.cpu[phase]! * operations;
    figures[phase] = {
      rate: output[phase]!,
      latencyMs: output.latencyMs[phase]!,
      serverCpuMs: serverCpuMs.map((cpuMs) => cpuMs / operations),
      threadCpuMs: threadsPerOperation(start.threads, end.threads, operations),
      clientCpuMs: output.cpu[phase]!,
      roundTrips: perOperation(start.trips, end.trips, operations),
      loadAverage: loadAverages.get(phase)!,
      otherCores: Math.max(0, othersMs) / Math.max(1, end.atMs - start.atMs),
    };
  }
  return figures;
}

/**
 * Measures `target` for each build, all of them running at once: their load processes take turns,
 * each warm-up and then each timed phase run by one build after another in the order given, so
 * that the builds' figures of a phase are taken moments apart, under the same background load,
 * while the other builds' servers idle. With one build (the plain bench) no turn waits.
 */
export async function measureTarget(target: TargetName, dir: string, settings: Settings, builds: Build[] = [thisBuild], options: { probe: boolean } = { probe: true }): Promise<TargetFigures[]> {
  const running: Servers[] = [];
  const several = builds.length > 1;
  try {
    for (const [index, build] of builds.entries()) {
      const profiles = settings.cpuProfileDir === undefined || !several ? settings.cpuProfileDir : join(settings.cpuProfileDir, `build-${index + 1}`);
      running.push(await startTarget(target, join(dir, `build-${index + 1}`), build, profiles, several ? `${targetLabels[target]}, ${build.name}` : targetLabels[target]));
    }
    const probes: (Record<Phase, Probed> | undefined)[] = [];
    for (const servers of running) probes.push(options.probe ? await probe(servers, settings) : undefined);
    // With 64 MiB phases to come, a few 64 MiB pairs go before the 4 KiB warm-up (see load.ts).
    const small = await inTurns(running, ['smallPut', 'smallGet'], (servers, steps) => runLoad(servers, settings, [...(settings.largeObjects > 0 ? ['large-shapes'] : []), 'small-put', 'small-get'], 1, steps));
    const large = settings.largeObjects > 0 ? await inTurns(running, ['largePut', 'largeGet'], (servers, steps) => runLoad(servers, settings, ['large-put', 'large-get'], 2, steps)) : running.map(() => ({}));
    return running.map((_, index) => ({ phases: { ...small[index], ...large[index] } as Record<Phase, PhaseFigures>, ...(probes[index] ? { probe: probes[index] } : {}) }));
  } finally {
    await Promise.all(running.map((servers) => servers.stop()));
  }
}

type LoadFigures = Partial<Record<Phase, PhaseFigures>>;

/**
 * One load process per running target, taking turns: first their warm-ups (a process's warm-up
 * ends when it is ready for its first timed phase), then each phase of `timed`, one process after
 * another. A failure of one stops the others.
 */
async function inTurns(running: Servers[], timed: Phase[], load: (servers: Servers, steps: LoadSteps) => Promise<LoadFigures>): Promise<LoadFigures[]> {
  const turns = new Turns(running.map((_, index) => index), ['warm-up', ...timed]);
  const results = await Promise.allSettled(
    running.map(async (servers, index) => {
      let warmingUp = true;
      const steps: LoadSteps = {
        before: async (phase) => {
          if (warmingUp) turns.end(index, 'warm-up');
          warmingUp = false;
          await turns.take(index, phase);
        },
        after: (phase) => turns.end(index, phase),
      };
      try {
        await turns.take(index, 'warm-up');
        return await load(servers, steps);
      } catch (error) {
        turns.fail(error);
        throw error;
      }
    }),
  );
  const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((result) => (result as PromiseFulfilledResult<LoadFigures>).value);
}

const sum = (values: number[]): number => values.reduce((total, value) => total + value, 0);
/** A figure for each kind of thread, from `figure(kind)`. */
const byThread = (figure: (kind: keyof ThreadCpuMs) => number): ThreadCpuMs => ({ eventLoop: figure('eventLoop'), ioPool: figure('ioPool'), otherThreads: figure('otherThreads') });
const sumThreads = (each: ThreadCpuMs[]): ThreadCpuMs => byThread((kind) => sum(each.map((threads) => threads[kind])));
const threadsPerOperation = (start: ThreadCpuMs, end: ThreadCpuMs, operations: number): ThreadCpuMs => byThread((kind) => (end[kind] - start[kind]) / operations);
const tripsText = (trips: RoundTrips): string => `${(trips.drive + trips.lock + trips.peer).toFixed(1)} (drive ${trips.drive.toFixed(1)}, lock ${trips.lock.toFixed(1)}, peer ${trips.peer.toFixed(1)})`;
/** CPU per operation, or per MB for 64 MiB objects. */
const perUnit = (phase: Phase, ms: number): number => (phase.startsWith('large') ? ms / largeMegabytes : ms);

export function printTarget(name: string, figures: TargetFigures): void {
  console.log(`  ${name}`);
  for (const phase of phases) {
    const f = figures.phases[phase];
    if (!f) continue;
    const unit = phase.startsWith('small') ? 'op/s' : 'MB/s';
    const cpuUnit = phase.startsWith('small') ? 'ms/op' : 'ms/MB';
    const probed = figures.probe?.[phase];
    const perNode = f.serverCpuMs.length > 1 ? ` (${f.serverCpuMs.map((ms) => perUnit(phase, ms).toFixed(2)).join(' + ')})` : '';
    console.log(
      `    ${phaseNames[phase].padEnd(10)} ${f.rate.toFixed(0).padStart(5)} ${unit}  p50 ${f.latencyMs.p50.toFixed(1)} p90 ${f.latencyMs.p90.toFixed(1)} p99 ${f.latencyMs.p99.toFixed(1)} ms` +
        `  server CPU ${perUnit(phase, sum(f.serverCpuMs)).toFixed(2)} ${cpuUnit}${perNode}, load ${perUnit(phase, f.clientCpuMs).toFixed(2)}` +
        `  round trips/op:${probed ? ` one at a time ${tripsText(probed)},` : ''} under load ${tripsText(f.roundTrips)}` +
        (probed ? `  one at a time: server CPU ${perUnit(phase, probed.serverCpuMs).toFixed(2)} ${cpuUnit}` : ''),
    );
    const threads = f.threadCpuMs;
    console.log(`${' '.repeat(17)}server CPU by thread: event loops ${perUnit(phase, threads.eventLoop).toFixed(2)}, I/O pool ${perUnit(phase, threads.ioPool).toFixed(2)}, other threads ${perUnit(phase, threads.otherThreads).toFixed(2)} ${cpuUnit}`);
    console.log(`${' '.repeat(17)}machine: load average ${f.loadAverage.toFixed(1)} at the end, other processes kept ${f.otherCores.toFixed(2)} of ${availableParallelism()} cores busy`);
  }
}

/**
 * The least a four-node 64 MiB operation can cost beyond one node's: the shard bytes that must
 * cross between processes, at the loopback cost measured in the round. Of the 16 shards (K = 12)
 * a PUT sends the 12 on the other nodes' drives, each 1/K of the object: 12/12 of the object's
 * bytes. A GET needs K shards, at most 4 of them on the serving node's drives: at least 8/12.
 */
const crossingShare: Partial<Record<Phase, number>> = { largePut: (16 - 4) / 12, largeGet: (12 - 4) / 12 };

/** Four nodes' CPU ratio to one node's if nothing but the crossing bytes cost more (64 MiB phases). */
function floorRatio(round: Round, phase: Phase): number | undefined {
  const share = crossingShare[phase];
  const one = round.one.phases[phase];
  if (share === undefined || !one) return undefined;
  const oneMsPerMb = perUnit(phase, sum(one.serverCpuMs));
  return (oneMsPerMb + share * round.loopbackMsPerMb) / oneMsPerMb;
}

function printFloor(round: Round): void {
  const parts = (['largePut', 'largeGet'] as const).flatMap((phase) => {
    const ratio = floorRatio(round, phase);
    return ratio === undefined ? [] : [`${phaseNames[phase]} one node's + ${crossingShare[phase]!.toFixed(2)} x that (x${ratio.toFixed(2)})`];
  });
  if (parts.length === 0) return;
  console.log(`  transport floor: loopback TCP between two processes costs ${round.loopbackMsPerMb.toFixed(2)} ms/MB, both ends; four nodes' CPU is at least ${parts.join(', ')}`);
}

/** Loopback TCP between two processes, CPU ms per MB at both ends (bench/loopback.ts). */
async function measureLoopback(): Promise<number> {
  const result = JSON.parse(await runBenchScript('the loopback measurement', 'loopback.ts', ['2048'])) as { senderMsPerMb: number; receiverMsPerMb: number };
  return result.senderMsPerMb + result.receiverMsPerMb;
}

interface Goal {
  what: string;
  /** The phase whose transport floor bounds this goal's ratio (64 MiB CPU goals). */
  floorOf?: Phase;
  /** The round measured what the goal needs (no 64 MiB phases with --large=0). */
  applies: (round: Round) => boolean;
  /** The four-node figure over the one-node figure, within one round. */
  ratio: (round: Round) => number;
  bound: number;
  atMost: boolean;
}

const cpuRatio = (phase: Phase) => (round: Round) => sum(round.four.phases[phase].serverCpuMs) / sum(round.one.phases[phase].serverCpuMs);
const rateRatio = (phase: Phase) => (round: Round) => round.four.phases[phase].rate / round.one.phases[phase].rate;

const measured = (phase: Phase) => (round: Round) => round.one.phases[phase] !== undefined && round.four.phases[phase] !== undefined;

const goals: Goal[] = [
  ...(['smallPut', 'smallGet'] as const).map((phase) => ({ what: `${phaseNames[phase]} server CPU per op, summed`, applies: measured(phase), ratio: cpuRatio(phase), bound: 1.3, atMost: true })),
  ...(['largePut', 'largeGet'] as const).map((phase) => ({ what: `${phaseNames[phase]} server CPU per op, summed`, floorOf: phase, applies: measured(phase), ratio: cpuRatio(phase), bound: 1.15, atMost: true })),
  ...(['smallPut', 'smallGet'] as const).map((phase) => ({ what: `${phaseNames[phase]} throughput`, applies: measured(phase), ratio: rateRatio(phase), bound: 0.8, atMost: false })),
  ...(['largePut', 'largeGet'] as const).map((phase) => ({ what: `${phaseNames[phase]} throughput`, applies: measured(phase), ratio: rateRatio(phase), bound: 0.9, atMost: false })),
  { what: '4 KiB GET p99 latency', applies: measured('smallGet'), ratio: (round) => round.four.phases.smallGet.latencyMs.p99 / round.one.phases.smallGet.latencyMs.p99, bound: 2, atMost: true },
];

function printGoals(rounds: Round[]): void {
  console.log(`\ngoals, four nodes against one, on the median of the rounds' ratios:`);
  for (const goal of goals) {
    if (!rounds.every(goal.applies)) continue;
    const ratios = rounds.map(goal.ratio);
    const ratio = median(ratios);
    const met = goal.atMost ? ratio <= goal.bound : ratio >= goal.bound;
    const perRound = rounds.length > 1 ? ` (rounds: ${ratios.map((value) => `x${value.toFixed(2)}`).join(', ')})` : '';
    const floors = goal.floorOf ? rounds.map((round) => floorRatio(round, goal.floorOf!)!) : [];
    const floor = floors.length > 0 ? `; transport floor x${median(floors).toFixed(2)}${median(floors) > goal.bound ? ', above the goal on this machine' : ''}` : '';
    console.log(`${met ? 'met    ' : 'not met'}  ${goal.what.padEnd(38)} x${ratio.toFixed(2)} ${goal.atMost ? '<=' : '>='} x${goal.bound.toFixed(2)}${perRound}${floor}`);
  }
}

/** The medians of the rounds, for the README (cluster-summary.ts). */
function summaryOf(rounds: Round[], settings: Settings): ClusterBenchSummary {
  const summary: ClusterBenchSummary = {
    kind: 'svc-cluster-bench',
    version: 1,
    finishedAt: new Date().toISOString(),
    cores: availableParallelism(),
    rounds: rounds.length,
    settings: { smallOps: settings.smallOps, largeObjects: settings.largeObjects, warmUpPairs: settings.warmUpPairs, client: settings.client },
    phases: {},
  };
  for (const phase of phases) {
    if (!rounds.every(measured(phase))) continue;
    summary.phases[phase] = {
      unit: phase.startsWith('small') ? 'op/s' : 'MB/s',
      one: median(rounds.map((round) => round.one.phases[phase].rate)),
      four: median(rounds.map((round) => round.four.phases[phase].rate)),
      rateRatio: median(rounds.map(rateRatio(phase))),
      cpuRatio: median(rounds.map(cpuRatio(phase))),
    };
  }
  return summary;
}

function numberFlag(args: string[], name: string, fallback: number, max: number, min = 1): number {
  const given = args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
  if (given === undefined) return fallback;
  const value = Number(given);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`--${name}=${given}: a whole number from ${min} to ${max}`);
  return value;
}

export function settingsOf(args: string[]): Settings {
  const client = args.find((arg) => arg.startsWith('--client='))?.slice('--client='.length) ?? 'sdk';
  if (client !== 'sdk' && client !== 'http') throw new Error(`--client=${client}: the load generator's client is sdk (the default here) or http`);
  const cpuProfileDir = args.find((arg) => arg.startsWith('--cpu-prof='))?.slice('--cpu-prof='.length);
  const jsonPath = args.find((arg) => arg.startsWith('--json='))?.slice('--json='.length);
  const quick = args.includes('--quick');
  return {
    smallOps: numberFlag(args, 'small', 400, 100_000),
    largeObjects: numberFlag(args, 'large', 4, 64, 0),
    rounds: numberFlag(args, 'rounds', 1, 9),
    // V8 optimizes a function after 3,000 calls in its process (--invocation-count-for-turbofan):
    // with as many pairs, what a GET or a PUT calls once was still unoptimized when timing began.
    // --quick: a shorter warm-up, for comparisons that must fit many rounds (both sides warmed alike).
    warmUpPairs: numberFlag(args, 'warmup', quick ? 1500 : 6000, 20_000),
    warmUpSeconds: numberFlag(args, 'warmup-seconds', quick ? 15 : 120, 300),
    largeWarmUpPairs: numberFlag(args, 'large-warmup', quick ? 4 : 16, 64, 0),
    probeOps: numberFlag(args, 'probe', 20, 1000),
    client,
    probeOnly: args.includes('--probe-only'),
    ...(cpuProfileDir ? { cpuProfileDir: resolve(cpuProfileDir) } : {}),
    ...(jsonPath ? { jsonPath: resolve(jsonPath) } : {}),
  };
}

async function printProbe(root: string, settings: Settings): Promise<void> {
  const servers = await startTarget('four', root, thisBuild, settings.cpuProfileDir, targetLabels.four);
  try {
    const probed = await probe(servers, settings);
    console.log('four nodes, internode round trips per operation, one at a time through the first node:');
    for (const phase of phases) if (probed[phase]) console.log(`  ${phaseNames[phase].padEnd(10)} ${tripsText(probed[phase])}, server CPU ${perUnit(phase, probed[phase].serverCpuMs).toFixed(2)} ms/${phase.startsWith('small') ? 'op' : 'MB'} summed`);
  } finally {
    await servers.stop();
  }
}

/** The machine and the load, as the bench's first lines. */
export function printSetup(settings: Settings): void {
  console.log(`machine: ${availableParallelism()} cores, node ${process.versions.node}; 16 fs drives, one set, EC:4, on one disk: one node, and four nodes on 127.0.0.2-5 with four drives each`);
  console.log(`load (${settings.client === 'sdk' ? 'AWS SDK' : 'SigV4-signed node:http'}): 4 KiB x ${settings.smallOps} at 32 concurrent, 64 MiB x ${settings.largeObjects} at 4 concurrent, after ${settings.warmUpPairs} untimed 4 KiB pairs per node (at most ${settings.warmUpSeconds} s per node) and ${settings.largeWarmUpPairs} 64 MiB pairs per node; ${settings.rounds} round(s); probe: ${settings.probeOps} 4 KiB and 2 64 MiB PUTs and GETs one at a time through the first node\n`);
}

export async function runClusterBench(args: string[]): Promise<void> {
  if (!existsSync(join(repoRoot, 'dist/src/cli/svc.js'))) throw new Error('no build in dist/: run npm install (or npm run build) first');
  const settings = settingsOf(args);
  printSetup(settings);
  const root = await mkdtemp(join(tmpdir(), 'svc-bench-cluster-'));
  try {
    if (settings.probeOnly) return await printProbe(root, settings);
    const rounds: Round[] = [];
    for (let index = 0; index < settings.rounds; index += 1) {
      const order: TargetName[] = index % 2 === 0 ? ['one', 'four'] : ['four', 'one'];
      const round = {} as Round;
      for (const target of order) [round[target]] = (await measureTarget(target, join(root, `round-${index + 1}`, target), settings)) as [TargetFigures];
      round.loopbackMsPerMb = settings.largeObjects > 0 ? await measureLoopback() : 0;
      console.log(`round ${index + 1} of ${settings.rounds} (${order.join(' first, then ')})`);
      printTarget('one node', round.one);
      printTarget('four nodes', round.four);
      printFloor(round);
      rounds.push(round);
    }
    printGoals(rounds);
    if (settings.jsonPath !== undefined) {
      await writeFile(settings.jsonPath, `${JSON.stringify(summaryOf(rounds, settings), null, 2)}\n`);
      console.log(`\nmedians written to ${settings.jsonPath} (npm run readme:figures -- ${settings.jsonPath} puts them in the README)`);
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
