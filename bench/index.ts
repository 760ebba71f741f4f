/**
 * `npm run bench`: S3 PUT and GET against the built server on 4 fs drives (EC 2+2), each figure
 * beside limits measured in the same round on the same machine:
 *
 * - raw write: the same bytes x N/K written by plain file writes with fsync (512 MiB, 1 MiB writes);
 * - raw read: 512 MiB read back by plain 1 MiB file reads from a file not in the page cache (as
 *   shard files are: they are written around it);
 * - durable creates: create + write + fsync + rename of 4 KiB files, 16 at a time (16 threads),
 *   divided by N;
 * - bare HTTP: the same load against a node:http server that discards PUT bodies and
 *   answers GETs from memory: what the client and HTTP cost on this machine before any storage;
 * - the s3rver package as a peer (it neither erasure-codes nor fsyncs), in a process of its own,
 *   and once more inside the load generator's process, sharing its thread, as s3rver figures are
 *   often quoted.
 *
 * Every server (svc, s3rver, the bare one) runs in a process of its own, and each object size's
 * load comes from a fresh process of its own (bench/load.ts), so no target inherits another's
 * heap, and the 64 MiB phases do not inherit the 4 KiB phases' (a load generator whose heap grew
 * over thousands of small requests spent twice the CPU per MB receiving 64 MiB GETs: the garbage
 * collector marked that heap again and again). The load is SigV4-signed node:http requests by
 * default; `--client=sdk` sends it through the AWS SDK's S3Client instead (bench/clients.ts says
 * what each costs).
 *
 * The machine's disk and CPU are shared with other machines and move from minute to minute, so
 * the whole comparison runs in rounds (`--rounds=N`, 3 by default), the targets in a different
 * order each round; every ratio is taken within its round, and the goals are judged on the
 * median of the rounds' ratios. Every loop is bounded in count and time. `--quick` makes one short
 * round (fewer operations) for a first look.
 *
 *   npm run bench [-- --quick] [-- --rounds=N] [-- --client=http|sdk]
 *
 * svc runs twice a round, on fresh drives each time, with the same KMS root key: plain, and with
 * every PUT asking for SSE-S3 (`svc SSE-S3`); the SSE figures are judged against the plain ones of
 * the same round (goal: 64 MiB PUT and GET at 0.85 x plain or better).
 *
 * `npm run bench -- --sse [--quick] [--rounds=N] [--cpu-prof=DIR]` runs only the two svc targets
 * (plain and SSE-S3), turn about, and prints the SSE lines, their CPU and the SSE goals; with
 * `--cpu-prof=DIR` both servers run under `node --cpu-prof`, writing their profiles under
 * DIR/svc and DIR/svcSse when they stop (bench/sse-profile.ts measures the same in one process).
 *
 * `npm run bench -- --cluster` compares one node with a four-node cluster instead (bench/cluster.ts);
 * `npm run bench -- --cluster --compare=<git ref>` this checkout's build with another commit's
 * (bench/cluster-compare.ts),
 * and `npm run bench -- --notify [--cpu-prof=DIR]` 4 KiB PUTs with and without a notification rule (bench/notify.ts).
 * `npm run bench -- --slow-drive` compares GETs with one drive of four 2 s late on reads against
 * GETs with every drive healthy (bench/slow-drive.ts).
 * After the rounds, the compression case (bench/compression.ts) runs; `--compression` runs it alone.
 */
import { mkdir, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { join } from 'node:path';
import { startSvc, freePort, repoRoot, testCredentials } from '../conformance/harness/server-process.js';
import { openDirectWriter } from '../backends/fs/direct-io.js';
import type { ClientKind } from './clients.js';
import { median, processCpuMs, runBenchScript, spawnBenchScript } from './shared.js';
import { runCompressionBench } from './compression.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const quick = process.argv.includes('--quick');
/** `--cpu-prof=DIR` (with `--sse`): the svc servers write V8 CPU profiles there. */
const cpuProfileDir = process.argv.find((arg) => arg.startsWith('--cpu-prof='))?.slice('--cpu-prof='.length);
const client = clientFromArguments(process.argv.slice(2));
const rounds = quick ? 1 : roundsFromArguments(process.argv.slice(2));
const smallOps = quick ? 600 : 3000;
const largeObjects = quick ? 4 : 16;
const drives = 4;
const dataShards = 2;

type Credentials = { accessKeyId: string; secretAccessKey: string };
const peerCredentials: Credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

interface S3Figures {
  smallPut: number;
  smallGet: number;
  largePut: number;
  largeGet: number;
  /** CPU ms per operation of each phase: the load generator's, and the server process's when it runs apart. */
  cpu: { client: Partial<Record<Phase, number>>; server?: Partial<Record<Phase, number>> };
}
type Phase = 'smallPut' | 'smallGet' | 'largePut' | 'largeGet';

/**
 * Runs bench/load.ts in its own process against `endpoint`; resolves with its figures. Given the
 * server's pid, the server's CPU time is read at each phase's start and end line.
 */
async function runLoad(endpoint: string, credentials: Credentials, group: LoadGroup, serverPid?: number, env?: NodeJS.ProcessEnv): Promise<Partial<S3Figures>> {
  const server: Partial<Record<Phase, number>> = {};
  const started = new Map<string, number>();
  const markPhase = (line: string): void => {
    const mark = /^phase (\w+) (start|end)(?: (\d+))?$/.exec(line);
    const cpuMs = mark ? processCpuMs(serverPid) : undefined;
    if (!mark || cpuMs === undefined) return;
    const [, name, edge, done] = mark;
    if (edge === 'start') started.set(name!, cpuMs);
    else server[name as Phase] = (cpuMs - started.get(name!)!) / Math.max(1, Number(done));
  };
  const args = [endpoint, credentials.accessKeyId, credentials.secretAccessKey, String(smallOps), String(largeObjects), group.phases.join(','), client, String(group.threads)];
  const lastLine = await runBenchScript(`the load generator against ${endpoint}`, 'load.ts', args, { onLine: markPhase, ...(env ? { env } : {}) });
  const figures = JSON.parse(lastLine) as Omit<S3Figures, 'cpu'> & { cpu: Partial<Record<Phase, number>> };
  return { ...figures, cpu: { client: figures.cpu, ...(serverPid !== undefined ? { server } : {}) } };
}

/** Starts bench/peers.ts (`s3rver` or `bare`) in its own process; resolves once it listens. */
async function startPeer(kind: 's3rver' | 'bare', directory: string): Promise<{ endpoint: string; pid: number | undefined; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawnBenchScript('peers.ts', [kind, String(port), directory]);
  const exited = once(child, 'exit');
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
    void exited.then(() => reject(new Error(`the ${kind} server exited before it was ready`)));
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    pid: child.pid,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The phases one load process runs, and its load threads. */
interface LoadGroup {
  phases: string[];
  threads: number;
}

/**
 * 4 KiB objects from one process, 64 MiB objects from a fresh one. The 64 MiB load comes from two
 * threads: one thread receiving and checking GET bodies is busy at about 850 MB/s (a bare HTTP
 * server then reached 810-1,050 MB/s, with two threads 1,270-1,440 MB/s); the 4 KiB load from
 * one, which costs less CPU per request than two (0.36 against 0.68 ms per PUT).
 */
const smallPhases: LoadGroup = { phases: ['small-put', 'small-get'], threads: 1 };
const largePhases: LoadGroup = { phases: ['large-put', 'large-get'], threads: 2 };

/**
 * Runs each group of phases in a load process of its own against the endpoint `endpointOf` gives
 * for it, and merges the figures.
 */
async function runLoadGroups(endpointOf: (group: number) => string, credentials: Credentials, groups: LoadGroup[], serverPid?: number, env?: NodeJS.ProcessEnv): Promise<Partial<S3Figures>> {
  const merged: Partial<S3Figures> = { cpu: { client: {}, ...(serverPid !== undefined ? { server: {} } : {}) } };
  for (const [index, group] of groups.entries()) {
    const { cpu, ...figures } = await runLoad(endpointOf(index), credentials, group, serverPid, env);
    Object.assign(merged, figures);
    Object.assign(merged.cpu!.client, cpu?.client);
    if (cpu?.server) Object.assign(merged.cpu!.server!, cpu.server);
  }
  return merged;
}

async function peerFigures(kind: 's3rver' | 'bare', directory: string, credentials: Credentials, groups: LoadGroup[]): Promise<Partial<S3Figures>> {
  const peer = await startPeer(kind, directory);
  try {
    return await runLoadGroups(() => peer.endpoint, credentials, groups, peer.pid);
  } finally {
    await peer.stop();
  }
}

/** fsync'd sequential write rate of this disk through the page cache, MB/s. */
async function rawWriteMbPerSecond(dir: string, bytes: number): Promise<number> {
  const block = Buffer.alloc(MiB, 'w');
  const path = join(dir, 'raw-write.bin');
  const started = performance.now();
  const handle = await open(path, 'w');
  for (let written = 0; written < bytes; written += MiB) await handle.write(block);
  await handle.sync();
  await handle.close();
  const seconds = (performance.now() - started) / 1000;
  await rm(path);
  return bytes / seconds / 1e6;
}

/** Plain 1 MiB reads of a file whose pages are not in memory (written around the page cache), MB/s. */
async function rawReadMbPerSecond(dir: string, bytes: number): Promise<number> {
  const path = join(dir, 'raw-read.bin');
  const writer = await openDirectWriter(path);
  const block = Buffer.alloc(MiB, 'r');
  if (writer) {
    for (let written = 0; written < bytes; written += MiB) await writer.write(block);
    await writer.close();
  } else {
    const handle = await open(path, 'w'); // no O_DIRECT here: the reads may come from memory
    for (let written = 0; written < bytes; written += MiB) await handle.write(block);
    await handle.close();
  }
  const buffer = Buffer.allocUnsafe(MiB);
  const started = performance.now();
  const handle = await open(path, 'r');
  let total = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buffer, 0, MiB, null);
    if (bytesRead === 0) break;
    total += bytesRead;
  }
  await handle.close();
  const seconds = (performance.now() - started) / 1000;
  await rm(path);
  return total / seconds / 1e6;
}

/**
 * Durable 4 KiB creates per second (bench/creates.ts), in a process of its own whose libuv pool
 * has 16 threads: each create holds a thread through its fsync, so with Node's default of 4 only
 * 4 of the 16 would be in flight.
 */
async function durableCreatesPerSecond(dir: string): Promise<number> {
  return Number(await runBenchScript('the durable-create measurement', 'creates.ts', [dir], { env: { ...process.env, UV_THREADPOOL_SIZE: '16' } }));
}

/** One figure beside its references: `[name, reference, ratio of the figure to it]`. */
function row(what: string, value: number, unit: string, references: [string, number, number][]): string {
  const refs = references.map(([name, reference, ratio]) => `${name} ${reference.toFixed(0)} (x${ratio.toFixed(2)})`).join('; ');
  return `${what.padEnd(19)} ${value.toFixed(0).padStart(6)} ${unit.padEnd(5)} ${refs}`;
}

/**
 * One phase's CPU cost per operation (or per MB: `unitsPerOp` MB per operation) for each target
 * that ran it: `server + client ms (busy %)`; a server inside the load process shows one figure.
 */
function cpuRow(what: string, phase: Phase, unitsPerOp: number, targets: [string, Partial<S3Figures>][]): string {
  const cells = targets.flatMap(([name, figures]) => {
    const client = figures.cpu?.client[phase];
    const rate = figures[phase];
    if (client === undefined || rate === undefined) return [];
    const server = figures.cpu?.server?.[phase];
    const perUnit = (ms: number): string => (ms / unitsPerOp).toFixed(2);
    const busy = (((server ?? 0) + client) * (rate / unitsPerOp)) / 1000 / availableParallelism();
    return [`${name} ${server === undefined ? perUnit(client) : `${perUnit(server)} + ${perUnit(client)}`} (${(busy * 100).toFixed(0)}%)`];
  });
  return `${what.padEnd(10)} ${cells.join('; ')}`;
}

/**
 * Where the last run's end is noted. Right after a run deletes its thousands of files, ext4 is
 * slower to find free inodes for some minutes (it skips recently freed ones), which lowers every
 * small-object figure and the durable-create limit of the next run.
 */
const lastRunMarker = join(tmpdir(), 'svc-bench-last-run');
const settleMinutes = 5;

async function warnIfRecent(): Promise<void> {
  const endedMs = Number(await readFile(lastRunMarker, 'utf8').catch(() => '0'));
  const minutes = (Date.now() - endedMs) / 60_000;
  if (minutes < settleMinutes) console.log(`note: the last run ended ${minutes.toFixed(1)} minutes ago; small-object figures read low for about ${settleMinutes} minutes after a run deletes its files\n`);
}

type Target = 'bare' | 's3rver' | 's3rverInLoad' | 'svc' | 'svcSse';
const targetOrder: Target[] = ['bare', 's3rver', 's3rverInLoad', 'svc', 'svcSse'];
/** The KMS root key of both svc targets (the plain one has it too, so only the SSE header differs). */
const benchKmsKey = `bench-root:${randomBytes(32).toString('base64')}`;

/** One round: the limits, then every target, in an order that moves one step each round. */
interface Round {
  rawWrite: number;
  rawRead: number;
  creates: number;
  figures: Record<Target, S3Figures>;
}

/**
 * Measures one round in `<root>/round-<n>`. Its files stay until the run ends (about 5 GiB a
 * round): deleting thousands of small files would slow the next target's creates.
 */
async function measureRound(root: string, index: number): Promise<Round> {
  const dir = join(root, `round-${index + 1}`);
  await mkdir(dir, { recursive: true });
  const rawWrite = await rawWriteMbPerSecond(dir, 512 * MiB);
  const rawRead = await rawReadMbPerSecond(dir, 512 * MiB);
  const creates = await durableCreatesPerSecond(dir);
  const figures = {} as Record<Target, S3Figures>;
  const order = targetOrder.map((_, position) => targetOrder[(position + index) % targetOrder.length]!);
  for (const target of order) {
    figures[target] = (await measureTarget(target, dir)) as S3Figures;
    settleDisk(); // s3rver leaves its writes in the page cache; they must not be flushed during the next target
  }
  return { rawWrite, rawRead, creates, figures };
}

async function measureTarget(target: Target, dir: string): Promise<Partial<S3Figures>> {
  if (target === 'bare') return peerFigures('bare', dir, peerCredentials, [smallPhases, { ...largePhases, phases: ['large-get'] }]);
  if (target === 's3rver') return peerFigures('s3rver', join(dir, 's3rver'), peerCredentials, [smallPhases, largePhases]);
  if (target === 's3rverInLoad') {
    // s3rver shares the load's thread here, so the load has just the one.
    return runLoadGroups((group) => `in-process-s3rver:${join(dir, `s3rver-in-load-${group}`)}`, peerCredentials, [smallPhases, { ...largePhases, threads: 1 }]);
  }
  const profiling: Record<string, string> = cpuProfileDir === undefined ? {} : { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${join(cpuProfileDir, target)}` };
  const server = await startSvc({ entry: 'build', args: [join(dir, `${target}{1...${drives}}`)], env: { SVC_OBS_LOGGER_LEVEL: 'warn', SVC_KMS_SECRET_KEY: benchKmsKey, ...passThrough('UV_THREADPOOL_SIZE', 'SVC_CODING_THREADS'), ...profiling } });
  try {
    return await runLoadGroups(() => server.url, testCredentials, [smallPhases, largePhases], server.child.pid, target === 'svcSse' ? { ...process.env, BENCH_SSE: 'AES256' } : undefined);
  } finally {
    await server.stop();
  }
}

/** The figures a row or goal compares, read from one round. */
type Pick = (round: Round) => number;
const k = dataShards;
const n = drives;
const svcOf = (phase: Phase): Pick => (round) => round.figures.svc[phase];
const s3rverOf = (phase: Phase): Pick => (round) => round.figures.s3rver[phase];
const s3rverInLoadOf = (phase: Phase): Pick => (round) => round.figures.s3rverInLoad[phase];
const bareOf = (phase: Phase): Pick => (round) => round.figures.bare[phase];
const svcSseOf = (phase: Phase): Pick => (round) => round.figures.svcSse[phase];

interface Line {
  what: string;
  phase: Phase;
  unit: string;
  references: [string, Pick][];
}

const lines: Line[] = [
  { what: 'small PUT (4 KiB)', phase: 'smallPut', unit: 'op/s', references: [['durable creates / N', (round) => round.creates / n], ['bare http', bareOf('smallPut')], ['s3rver', s3rverOf('smallPut')], ['s3rver in load process', s3rverInLoadOf('smallPut')]] },
  { what: 'small GET (4 KiB)', phase: 'smallGet', unit: 'op/s', references: [['bare http', bareOf('smallGet')], ['s3rver', s3rverOf('smallGet')], ['s3rver in load process', s3rverInLoadOf('smallGet')]] },
  { what: 'large PUT (64 MiB)', phase: 'largePut', unit: 'MB/s', references: [["fsync'd write x K/N", (round) => (round.rawWrite * k) / n], ['s3rver', s3rverOf('largePut')], ['s3rver in load process', s3rverInLoadOf('largePut')]] },
  { what: 'large GET (64 MiB)', phase: 'largeGet', unit: 'MB/s', references: [['uncached read', (round) => round.rawRead], ['bare http', bareOf('largeGet')], ['s3rver', s3rverOf('largeGet')], ['s3rver in load process', s3rverInLoadOf('largeGet')]] },
];

interface Goal {
  what: string;
  value: Pick;
  target: Pick;
  targetText: string;
  /**
   * Printed for comparison, not judged: s3rver inside the load generator's process is not a
   * server as a peer is run (its thread is the load's), and it serves GETs from the page cache
   * its unsynced PUTs filled.
   */
  reference?: boolean;
}

const goals: Goal[] = [
  { what: 'small PUT', value: svcOf('smallPut'), target: (round) => (0.7 * round.creates) / n, targetText: '0.70 x durable creates / N' },
  { what: 'small GET', value: svcOf('smallGet'), target: (round) => 1.5 * s3rverOf('smallGet')(round), targetText: '1.5 x s3rver' },
  { what: 'small GET', value: svcOf('smallGet'), target: (round) => 1.5 * s3rverInLoadOf('smallGet')(round), targetText: '1.5 x s3rver in load process', reference: true },
  { what: 'large PUT', value: svcOf('largePut'), target: (round) => (0.6 * round.rawWrite * k) / n, targetText: "0.60 x fsync'd write x K/N" },
  { what: 'large PUT', value: svcOf('largePut'), target: s3rverOf('largePut'), targetText: 's3rver' },
  { what: 'large PUT', value: svcOf('largePut'), target: s3rverInLoadOf('largePut'), targetText: 's3rver in load process', reference: true },
  { what: 'large GET', value: svcOf('largeGet'), target: s3rverOf('largeGet'), targetText: 's3rver' },
  { what: 'large GET', value: svcOf('largeGet'), target: s3rverInLoadOf('largeGet'), targetText: 's3rver in load process', reference: true },
  { what: 'large GET', value: svcOf('largeGet'), target: (round) => 0.5 * round.rawRead, targetText: '0.50 x uncached read' },
  { what: 'SSE PUT', value: svcSseOf('largePut'), target: (round) => 0.85 * svcOf('largePut')(round), targetText: '0.85 x plain 64 MiB PUT' },
  { what: 'SSE GET', value: svcSseOf('largeGet'), target: (round) => 0.85 * svcOf('largeGet')(round), targetText: '0.85 x plain 64 MiB GET' },
];

/** svc with SSE-S3 against svc plain, phase by phase: `[what, phase, unit]`. */
const sseLines: [string, Phase, string][] = [['SSE-S3 PUT (4 KiB)', 'smallPut', 'op/s'], ['SSE-S3 GET (4 KiB)', 'smallGet', 'op/s'], ['SSE-S3 PUT (64 MiB)', 'largePut', 'MB/s'], ['SSE-S3 GET (64 MiB)', 'largeGet', 'MB/s']];

function printRound(round: Round, index: number): void {
  console.log(`round ${index + 1} of ${rounds}: fsync'd write ${round.rawWrite.toFixed(0)} MB/s, uncached read ${round.rawRead.toFixed(0)} MB/s, durable 4 KiB creates ${round.creates.toFixed(0)}/s`);
  for (const line of lines) {
    const value = svcOf(line.phase)(round);
    console.log(`  ${row(line.what, value, line.unit, line.references.map(([name, pick]) => [name, pick(round), value / pick(round)]))}`);
  }
  for (const [what, phase, unit] of sseLines) console.log(`  ${row(what, svcSseOf(phase)(round), unit, [['plain', svcOf(phase)(round), svcSseOf(phase)(round) / svcOf(phase)(round)]])}`);
}

/** Medians over the rounds: each figure's, and each ratio's (taken within its round). */
function printSummary(all: Round[]): void {
  const of = (pick: Pick): number => median(all.map(pick));
  console.log(`${all.length === 1 ? '' : `\nmedian of ${all.length} rounds `}(ratios taken within each round):`);
  console.log(`limits: fsync'd write ${of((r) => r.rawWrite).toFixed(0)} MB/s, uncached read ${of((r) => r.rawRead).toFixed(0)} MB/s, durable 4 KiB creates ${of((r) => r.creates).toFixed(0)}/s`);
  for (const line of lines) {
    const value = svcOf(line.phase);
    console.log(row(line.what, of(value), line.unit, line.references.map(([name, pick]) => [name, of(pick), of((r) => value(r) / pick(r))])));
  }
  for (const [what, phase, unit] of sseLines) console.log(row(what, of(svcSseOf(phase)), unit, [['plain', of(svcOf(phase)), of((r) => svcSseOf(phase)(r) / svcOf(phase)(r))]]));
  console.log(`\nCPU per operation (64 MiB phases: per MB), server process + load generator, and the share of the ${availableParallelism()} cores both kept busy (medians):`);
  const cpuTargets: [string, Target][] = [['svc', 'svc'], ['svc SSE-S3', 'svcSse'], ['s3rver', 's3rver'], ['s3rver in load', 's3rverInLoad'], ['bare http', 'bare']];
  for (const [what, phase, unitsPerOp] of [['small PUT', 'smallPut', 1], ['small GET', 'smallGet', 1], ['large PUT', 'largePut', (64 * MiB) / 1e6], ['large GET', 'largeGet', (64 * MiB) / 1e6]] as const) {
    console.log(cpuRow(what, phase, unitsPerOp, cpuTargets.map(([name, target]) => [name, medianFigures(all.map((round) => round.figures[target]))])));
  }
  console.log(`\ngoals, on the median of the rounds' ratios:`);
  for (const entry of goals.filter((candidate) => !candidate.reference)) console.log(goal(entry, all));
  console.log(`\nfor reference (not goals): s3rver inside the load generator's process, sharing its thread`);
  for (const entry of goals.filter((candidate) => candidate.reference)) console.log(goal(entry, all));
}

/** The median of each figure and CPU cost over rounds (a phase missing from a target stays missing). */
function medianFigures(all: S3Figures[]): Partial<S3Figures> {
  const phases: Phase[] = ['smallPut', 'smallGet', 'largePut', 'largeGet'];
  const pick = (read: (figures: S3Figures) => number | undefined): number | undefined => {
    const values = all.map(read).filter((value): value is number => value !== undefined);
    return values.length === 0 ? undefined : median(values);
  };
  const result: Partial<S3Figures> = { cpu: { client: {}, server: {} } };
  for (const phase of phases) {
    const rate = pick((figures) => figures[phase]);
    if (rate !== undefined) result[phase] = rate;
    const client = pick((figures) => figures.cpu.client[phase]);
    const server = pick((figures) => figures.cpu.server?.[phase]);
    if (client !== undefined) result.cpu!.client[phase] = client;
    if (server !== undefined) result.cpu!.server![phase] = server;
  }
  if (Object.keys(result.cpu!.server!).length === 0) delete result.cpu!.server;
  return result;
}

function goal(entry: Goal, all: Round[]): string {
  const ratios = all.map((round) => entry.value(round) / entry.target(round));
  const ratio = median(ratios);
  const perRound = all.length > 1 ? ` (rounds: ${ratios.map((r) => `x${r.toFixed(2)}`).join(', ')})` : '';
  const value = median(all.map(entry.value));
  const target = median(all.map(entry.target));
  const verdict = entry.reference ? '       ' : ratio >= 1 ? 'met    ' : 'not met';
  return `${verdict}  ${entry.what.padEnd(10)} ${value.toFixed(0).padStart(6)} >= ${entry.targetText} = ${target.toFixed(0)}: x${ratio.toFixed(2)}${perRound}`;
}

async function main(): Promise<void> {
  if (!existsSync(join(repoRoot, 'dist/src/cli/svc.js'))) throw new Error('no build in dist/: run npm install (or npm run build) first');
  await warnIfRecent();
  const load = client === 'sdk' ? 'the AWS SDK' : 'SigV4-signed node:http requests';
  console.log(`machine: ${availableParallelism()} cores, node ${process.versions.node}; load: ${load} from a process of its own per object size, 4 KiB x32 concurrent, 64 MiB x4 concurrent${quick ? ' (quick run)' : ''}`);
  console.log(`svc: ${n} fs drives, EC ${k}+${n - k}, built server; ${rounds} round${rounds === 1 ? '' : 's'}, targets in a different order each round\n`);
  const root = await mkdtemp(join(tmpdir(), 'svc-bench-'));
  try {
    const all: Round[] = [];
    for (let index = 0; index < rounds; index += 1) {
      const round = await measureRound(root, index);
      if (rounds > 1) printRound(round, index);
      all.push(round);
    }
    printSummary(all);
    await runCompressionBench(root, { quick, client });
  } finally {
    await rm(root, { recursive: true, force: true });
    await writeFile(lastRunMarker, String(Date.now()));
  }
}

/** Writes out every dirty page of the machine (sync(1)), so one phase's writes do not land in the next. */
function settleDisk(): void {
  execFileSync('sync');
}

function clientFromArguments(args: string[]): ClientKind {
  const given = args.find((arg) => arg.startsWith('--client='))?.slice('--client='.length) ?? 'http';
  if (given !== 'http' && given !== 'sdk') throw new Error(`--client=${given}: the load generator's client is http (the default) or sdk`);
  return given;
}

function roundsFromArguments(args: string[]): number {
  const given = args.find((arg) => arg.startsWith('--rounds='))?.slice('--rounds='.length) ?? '3';
  const value = Number(given);
  if (!Number.isInteger(value) || value < 1 || value > 9) throw new Error(`--rounds=${given}: the rounds are a whole number from 1 to 9`);
  return value;
}

function passThrough(...names: string[]): Record<string, string> {
  return Object.fromEntries(names.flatMap((name) => (process.env[name] !== undefined ? [[name, process.env[name]!]] : [])));
}

if (process.argv.includes('--cluster') && process.argv.some((arg) => arg.startsWith('--compare') || arg.startsWith('--targets='))) await (await import('./cluster-compare.js')).runClusterCompare(process.argv.slice(2));
else if (process.argv.includes('--cluster')) await (await import('./cluster.js')).runClusterBench(process.argv.slice(2));
else if (process.argv.includes('--notify')) await (await import('./notify.js')).runNotifyBench(process.argv.slice(2));
else if (process.argv.includes('--slow-drive')) await (await import('./slow-drive.js')).runSlowDriveBench(process.argv.slice(2));
else if (process.argv.includes('--compression')) await compressionOnly();
else if (process.argv.includes('--sse')) await sseOnly();
else await main();

/** `--sse`: svc plain and svc SSE-S3 only, turn about each round, judged as in the full run. */
async function sseOnly(): Promise<void> {
  if (!existsSync(join(repoRoot, 'dist/src/cli/svc.js'))) throw new Error('no build in dist/: run npm install (or npm run build) first');
  console.log(`machine: ${availableParallelism()} cores, node ${process.versions.node}; svc plain against svc SSE-S3, ${rounds} round${rounds === 1 ? '' : 's'}${quick ? ' (quick run)' : ''}\n`);
  const root = await mkdtemp(join(tmpdir(), 'svc-bench-'));
  try {
    const all: Round[] = [];
    for (let index = 0; index < rounds; index += 1) {
      const dir = join(root, `round-${index + 1}`);
      await mkdir(dir, { recursive: true });
      const figures = {} as Record<Target, S3Figures>;
      for (const target of (index % 2 === 0 ? ['svc', 'svcSse'] : ['svcSse', 'svc']) as Target[]) {
        figures[target] = (await measureTarget(target, dir)) as S3Figures;
        settleDisk();
      }
      all.push({ rawWrite: 0, rawRead: 0, creates: 0, figures });
    }
    const of = (pick: Pick): number => median(all.map(pick));
    for (const [what, phase, unit] of sseLines) console.log(row(what, of(svcSseOf(phase)), unit, [['plain', of(svcOf(phase)), of((r) => svcSseOf(phase)(r) / svcOf(phase)(r))]]));
    console.log('\nCPU per MB of the 64 MiB phases, server process + load generator (medians):');
    const targets: [string, Partial<S3Figures>][] = [['svc', medianFigures(all.map((round) => round.figures.svc))], ['svc SSE-S3', medianFigures(all.map((round) => round.figures.svcSse))]];
    for (const [what, phase] of [['large PUT', 'largePut'], ['large GET', 'largeGet']] as const) console.log(cpuRow(what, phase, (64 * MiB) / 1e6, targets));
    console.log('\ngoals, on the median of the rounds\' ratios:');
    for (const entry of goals.filter((candidate) => candidate.what.startsWith('SSE'))) console.log(goal(entry, all));
  } finally {
    await rm(root, { recursive: true, force: true });
    await writeFile(lastRunMarker, String(Date.now()));
  }
}

/** `--compression`: the compression case alone. */
async function compressionOnly(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'svc-bench-'));
  try {
    await runCompressionBench(root, { quick, client });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
