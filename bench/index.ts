/**
 * `npm run bench`: S3 PUT and GET against the built server on 4 fs drives (EC 2+2), each figure
 * beside limits measured in the same run on the same machine:
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
 * Every server (svc, s3rver, the bare one) runs in a process of its own, and the load for each
 * comes from a fresh process of its own (bench/load.ts), so no target inherits another's heap.
 * The load is SigV4-signed node:http requests by default; `--client=sdk` sends it through the AWS
 * SDK's S3Client instead (bench/clients.ts says what each costs).
 *
 * Then the goals are checked and printed. Every loop is bounded in count and time. The machine is
 * shared by the load generator and the server; figures move between runs, so read each against the
 * limits of its own run. `--quick` makes a short run (fewer operations) for a first look.
 *
 *   npm run bench [-- --quick] [-- --client=http|sdk]
 */
import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { existsSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { execFileSync, spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { once } from 'node:events';
import { join } from 'node:path';
import { startSvc, freePort, repoRoot, testCredentials } from '../conformance/harness/server-process.js';
import { openDirectWriter } from '../backends/fs/direct-io.js';
import type { ClientKind } from './clients.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const quick = process.argv.includes('--quick');
const client = clientFromArguments(process.argv.slice(2));
const smallOps = quick ? 600 : 3000;
const largeObjects = quick ? 4 : 16;
const drives = 4;
const dataShards = 2;

type Credentials = { accessKeyId: string; secretAccessKey: string };
const peerCredentials: Credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
const allPhases = ['small-put', 'small-get', 'large-put', 'large-get'];

interface S3Figures {
  smallPut: number;
  smallGet: number;
  largePut: number;
  largeGet: number;
  /** CPU ms per operation of each phase: the load generator's, and the server process's when it runs apart. */
  cpu: { client: Partial<Record<Phase, number>>; server?: Partial<Record<Phase, number>> };
}
type Phase = 'smallPut' | 'smallGet' | 'largePut' | 'largeGet';

const clockTicksPerSecond = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User + system CPU ms of process `pid` so far, from /proc (undefined where there is none). */
function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicksPerSecond;
  } catch {
    return undefined;
  }
}

/** Starts `node --import tsx bench/<script> ...args` in a process of its own, its stdout piped here. */
function spawnBenchScript(script: string, args: string[], env: NodeJS.ProcessEnv = process.env): ChildProcessByStdio<null, Readable, null> {
  return spawn(process.execPath, ['--import', 'tsx', `bench/${script}`, ...args], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'inherit'] });
}

/**
 * Runs a bench script to its end and resolves with its last line of output; `onLine` sees every
 * line as it comes. A non-zero exit fails with `what` named.
 */
async function runBenchScript(what: string, script: string, args: string[], options: { env?: NodeJS.ProcessEnv; onLine?: (line: string) => void } = {}): Promise<string> {
  const child = spawnBenchScript(script, args, options.env);
  let lastLine = '';
  createInterface({ input: child.stdout }).on('line', (line) => {
    options.onLine?.(line);
    if (line.trim()) lastLine = line;
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`${what} failed (exit ${code})`);
  return lastLine;
}

/**
 * Runs bench/load.ts in its own process against `endpoint`; resolves with its figures. Given the
 * server's pid, the server's CPU time is read at each phase's start and end line.
 */
async function runLoad(endpoint: string, credentials: Credentials, phases: string[], serverPid?: number): Promise<Partial<S3Figures>> {
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
  const args = [endpoint, credentials.accessKeyId, credentials.secretAccessKey, String(smallOps), String(largeObjects), phases.join(','), client];
  const lastLine = await runBenchScript(`the load generator against ${endpoint}`, 'load.ts', args, { onLine: markPhase });
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

async function peerFigures(kind: 's3rver' | 'bare', directory: string, credentials: Credentials, phases: string[]): Promise<Partial<S3Figures>> {
  const peer = await startPeer(kind, directory);
  try {
    return await runLoad(peer.endpoint, credentials, phases, peer.pid);
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

function row(what: string, value: number, unit: string, references: [string, number][]): string {
  const refs = references.map(([name, reference]) => `${name} ${reference.toFixed(0)} (x${(value / reference).toFixed(2)})`).join('; ');
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

function goal(what: string, value: number, target: number, targetText: string): string {
  const met = value >= target;
  return `${met ? 'met    ' : 'not met'}  ${what.padEnd(10)} ${value.toFixed(0).padStart(6)} >= ${targetText} = ${target.toFixed(0)} (x${(value / target).toFixed(2)})`;
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

async function main(): Promise<void> {
  if (!existsSync(join(repoRoot, 'dist/src/cli/svc.js'))) throw new Error('no build in dist/: run npm install (or npm run build) first');
  await warnIfRecent();
  const root = await mkdtemp(join(tmpdir(), 'svc-bench-'));
  try {
    const rawWrite = await rawWriteMbPerSecond(root, 512 * MiB);
    const rawRead = await rawReadMbPerSecond(root, 512 * MiB);
    const creates = await durableCreatesPerSecond(root);
    const bare = await peerFigures('bare', root, peerCredentials, ['small-put', 'small-get', 'large-get']);
    const peer = (await peerFigures('s3rver', join(root, 's3rver'), peerCredentials, allPhases)) as S3Figures;
    settleDisk();
    const peerInLoad = (await runLoad(`in-process-s3rver:${join(root, 's3rver-in-load')}`, peerCredentials, allPhases)) as S3Figures;
    settleDisk(); // s3rver leaves its writes in the page cache; they must not be flushed during our run
    const server = await startSvc({ entry: 'build', args: [join(root, `d{1...${drives}}`)], env: { SVC_OBS_LOGGER_LEVEL: 'warn', ...passThrough('UV_THREADPOOL_SIZE', 'SVC_CODING_THREADS') } });
    let ours: S3Figures;
    try {
      ours = (await runLoad(server.url, testCredentials, allPhases, server.child.pid)) as S3Figures;
    } finally {
      await server.stop();
    }
    const k = dataShards;
    const n = drives;
    const load = client === 'sdk' ? 'the AWS SDK' : 'SigV4-signed node:http requests';
    console.log(`machine: ${availableParallelism()} cores, node ${process.versions.node}; load: ${load} from a process of its own, 4 KiB x32 concurrent, 64 MiB x4 concurrent${quick ? ' (quick run)' : ''}`);
    console.log(`limits: fsync'd write ${rawWrite.toFixed(0)} MB/s, uncached read ${rawRead.toFixed(0)} MB/s, durable 4 KiB creates ${creates.toFixed(0)}/s, bare http 4 KiB PUT ${bare.smallPut!.toFixed(0)}/s, 4 KiB GET ${bare.smallGet!.toFixed(0)}/s, 64 MiB GET ${bare.largeGet!.toFixed(0)} MB/s`);
    console.log(`svc: ${n} fs drives, EC ${k}+${n - k}, built server\n`);
    const peers = (pick: (figures: S3Figures) => number): [string, number][] => [['s3rver', pick(peer)], ['s3rver in load process', pick(peerInLoad)]];
    console.log(row('small PUT (4 KiB)', ours.smallPut, 'op/s', [['durable creates / N', creates / n], ['bare http', bare.smallPut!], ...peers((f) => f.smallPut)]));
    console.log(row('small GET (4 KiB)', ours.smallGet, 'op/s', [['bare http', bare.smallGet!], ...peers((f) => f.smallGet)]));
    console.log(row('large PUT (64 MiB)', ours.largePut, 'MB/s', [["fsync'd write x K/N", (rawWrite * k) / n], ...peers((f) => f.largePut)]));
    console.log(row('large GET (64 MiB)', ours.largeGet, 'MB/s', [['uncached read', rawRead], ['bare http', bare.largeGet!], ...peers((f) => f.largeGet)]));
    console.log(`\nCPU per operation (64 MiB phases: per MB), server process + load generator, and the share of the ${availableParallelism()} cores both kept busy:`);
    const cpuTargets: [string, Partial<S3Figures>][] = [['svc', ours], ['s3rver', peer], ['s3rver in load', peerInLoad], ['bare http', bare]];
    console.log(cpuRow('small PUT', 'smallPut', 1, cpuTargets));
    console.log(cpuRow('small GET', 'smallGet', 1, cpuTargets));
    console.log(cpuRow('large PUT', 'largePut', (64 * MiB) / 1e6, cpuTargets));
    console.log(cpuRow('large GET', 'largeGet', (64 * MiB) / 1e6, cpuTargets));
    console.log('\ngoals (s3rver: in its own process / inside the load generator\'s process):');
    console.log(goal('small PUT', ours.smallPut, (0.7 * creates) / n, '0.70 x durable creates / N'));
    console.log(goal('small GET', ours.smallGet, 1.5 * peer.smallGet, '1.5 x s3rver'));
    console.log(goal('small GET', ours.smallGet, 1.5 * peerInLoad.smallGet, '1.5 x s3rver in load process'));
    console.log(goal('large PUT', ours.largePut, (0.6 * rawWrite * k) / n, "0.60 x fsync'd write x K/N"));
    console.log(goal('large PUT', ours.largePut, peer.largePut, 's3rver'));
    console.log(goal('large PUT', ours.largePut, peerInLoad.largePut, 's3rver in load process'));
    console.log(goal('large GET', ours.largeGet, peer.largeGet, 's3rver'));
    console.log(goal('large GET', ours.largeGet, peerInLoad.largeGet, 's3rver in load process'));
    console.log(goal('large GET', ours.largeGet, 0.5 * rawRead, '0.50 x uncached read'));
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

function passThrough(...names: string[]): Record<string, string> {
  return Object.fromEntries(names.flatMap((name) => (process.env[name] !== undefined ? [[name, process.env[name]!]] : [])));
}

await main();
