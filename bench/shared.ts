/** What bench/index.ts and bench/cluster.ts share: child scripts, process CPU time, medians. */
import { execFileSync, spawn, type ChildProcessByStdio } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { once } from 'node:events';
import { repoRoot } from '../conformance/harness/server-process.js';

const clockTicksPerSecond = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User + system CPU ms of a process or thread so far, from its /proc `stat` line (fields after the name in parentheses). */
function cpuMsOfStat(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicksPerSecond;
}

/** User + system CPU ms of process `pid` so far, from /proc (undefined where there is none). */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    return cpuMsOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Starts `node --import tsx bench/<script> ...args` in a process of its own, its stdin and stdout piped here. */
export function spawnBenchScript(script: string, args: string[], env: NodeJS.ProcessEnv = process.env): ChildProcessByStdio<Writable, Readable, null> {
  return spawn(process.execPath, ['--import', 'tsx', `bench/${script}`, ...args], { cwd: repoRoot, env, stdio: ['pipe', 'pipe', 'inherit'] });
}

export interface BenchScriptOptions {
  env?: NodeJS.ProcessEnv;
  /** Sees every line of output as it comes. */
  onLine?: (line: string) => void;
  /**
   * Answers a line of output: the text it resolves to is written to the script's input. When it
   * fails, the script is stopped and the run fails with that error.
   */
  reply?: (line: string) => Promise<string> | undefined;
}

/**
 * Runs a bench script to its end and resolves with its last line of output. A non-zero exit
 * fails with `what` named.
 */
export async function runBenchScript(what: string, script: string, args: string[], options: BenchScriptOptions = {}): Promise<string> {
  const child = spawnBenchScript(script, args, options.env);
  // A reply written after the script ended fails (EPIPE): the script's exit code tells what happened.
  child.stdin.on('error', () => undefined);
  let lastLine = '';
  const failures: unknown[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    options.onLine?.(line);
    if (line.trim()) lastLine = line;
    options.reply?.(line)?.then(
      (text) => child.stdin.write(text),
      (error: unknown) => {
        failures.push(error);
        child.kill('SIGTERM');
      },
    );
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  if (failures.length > 0) throw failures[0];
  if (code !== 0) throw new Error(`${what} failed (exit ${code})`);
  return lastLine;
}

/** CPU ms every process of the machine has used so far, all cores summed (user, nice, system, interrupts, steal: /proc/stat). */
export function machineCpuMs(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return ((user + nice + system + irq + softirq + steal) * 1000) / clockTicksPerSecond;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** A process's CPU ms so far by kind of thread. */
export interface ThreadCpuMs {
  /** The main thread: JavaScript, promise continuations, socket and file-call hand-offs. */
  eventLoop: number;
  /** libuv's pool (file-system calls). */
  ioPool: number;
  /** Every other thread: V8's compiler and collector helpers, worker threads (file reads, coding). */
  otherThreads: number;
}

/** CPU ms so far of each kind of thread of process `pid`, from /proc (undefined where there is none). */
export function threadCpuMs(pid: number | undefined): ThreadCpuMs | undefined {
  if (pid === undefined) return undefined;
  const total: ThreadCpuMs = { eventLoop: 0, ioPool: 0, otherThreads: 0 };
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  for (const thread of threads) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${thread}/stat`, 'utf8');
    } catch {
      continue; // the thread ended in between
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const kind: keyof ThreadCpuMs = thread === String(pid) ? 'eventLoop' : name.startsWith('libuv-worker') ? 'ioPool' : 'otherThreads';
    total[kind] += cpuMsOfStat(stat);
  }
  return total;
}
