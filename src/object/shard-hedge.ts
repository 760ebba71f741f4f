/**
 * Hedged shard reads. A GET asks K shards of a block (data shards first); when they have not all
 * answered within the hedge delay, it asks one more shard for each read still out, and decodes
 * from the first K answers that verify. A late read is not cancelled (a drive call cannot be):
 * its answer is dropped when it comes, and its buffer goes back then.
 *
 * The delay follows the set's drives: `limits.shardReadHedgeLatencyMultiple` times the typical
 * recent shard-read latency (the lower median of the drives' smoothed latencies, so one slow
 * drive does not set it), within `limits.shardReadHedgeFloorMs` and
 * `limits.shardReadHedgeCeilingMs`. A drive whose read was late is asked last by the reads that
 * follow (they take parity instead), until `limits.shardReadLateRetryMs` after it was last asked,
 * when one read asks it in its turn again; an answer within the delay puts it back in its place.
 */
import type { Drive } from '../drive/index.js';
import { limits } from '../util/limits.js';

/** Weight of the newest sample in a drive's smoothed shard-read latency. */
const latencySmoothing = 0.2;

interface DriveReadTimes {
  /** Smoothed latency of the drive's shard reads that answered, in ms; none before the first. */
  smoothedMs?: number;
  /** A read of it was still out when a hedge was decided, and none answered within the delay since. */
  late: boolean;
  /** When a read last asked it (performance.now() ms). */
  askedAtMs: number;
}

/** What a node knows of its drives' reads (shard reads, and whether their xl.meta answers come late), and the reads hedging asked for. */
export class ShardReadStats {
  private readonly drives = new WeakMap<Drive, DriveReadTimes>();
  /** Shard reads asked beyond the first K because a shard was late. */
  hedgedReads = 0;
  /** Metadata reads that settled without some drive's answer (meta-io.ts): that drive's shards are not asked. */
  metaReadsWithoutDrive = 0;

  private timesOf(drive: Drive): DriveReadTimes {
    let times = this.drives.get(drive);
    if (!times) {
      times = { late: false, askedAtMs: -Infinity };
      this.drives.set(drive, times);
    }
    return times;
  }

  /** How long a read of these drives waits for K answers before it asks more shards. */
  hedgeDelayMs(drives: Drive[]): number {
    const known = drives.flatMap((drive) => {
      const smoothed = this.drives.get(drive)?.smoothedMs;
      return smoothed === undefined ? [] : [smoothed];
    });
    known.sort((a, b) => a - b);
    const typical = known.length === 0 ? 0 : known[Math.floor((known.length - 1) / 2)]!;
    return Math.min(limits.shardReadHedgeCeilingMs, Math.max(limits.shardReadHedgeFloorMs, limits.shardReadHedgeLatencyMultiple * typical));
  }

  /** Whether a read should ask this drive last: it was late, and was asked less than shardReadLateRetryMs ago. */
  asksLast(drive: Drive, nowMs: number): boolean {
    const times = this.drives.get(drive);
    return times !== undefined && times.late && nowMs - times.askedAtMs < limits.shardReadLateRetryMs;
  }

  asked(drive: Drive, nowMs: number): void {
    this.timesOf(drive).askedAtMs = nowMs;
  }

  /**
   * A read of the drive answered after `elapsedMs`. Within `hedgeDelayMs` it clears the drive's
   * lateness; beyond, it leaves it as it was: only a read still out when a hedge was decided makes
   * a drive late (an answer merely seen late, the event loop busy elsewhere, does not).
   */
  answered(drive: Drive, elapsedMs: number, hedgeDelayMs: number): void {
    const times = this.timesOf(drive);
    times.smoothedMs = times.smoothedMs === undefined ? elapsedMs : times.smoothedMs + latencySmoothing * (elapsedMs - times.smoothedMs);
    if (elapsedMs <= hedgeDelayMs) times.late = false;
  }

  /** A read of the drive was still out when a hedge was decided. */
  wasLate(drive: Drive): void {
    this.timesOf(drive).late = true;
  }

  /** Drives whose xl.meta answer a settled read went on without (src/object/meta-io.ts). */
  private readonly metaLateDrives = new WeakSet<Drive>();

  metaLate(drive: Drive): boolean {
    return this.metaLateDrives.has(drive);
  }

  /** The drive's xl.meta answer came in time (within the read's grace), or a read went on without it. */
  metaAnswered(drive: Drive, inTime: boolean): void {
    if (inTime) this.metaLateDrives.delete(drive);
    else this.metaLateDrives.add(drive);
  }
}

/** Sets built without a node's stats (tests, tools) keep their own. */
const ownStats = new WeakMap<object, ShardReadStats>();

/** The stats a set's reads feed: the node's (SetConfig.shardReads), or the set's own. */
export function shardReadStatsOf(config: { shardReads?: ShardReadStats }): ShardReadStats {
  if (config.shardReads) return config.shardReads;
  let stats = ownStats.get(config);
  if (!stats) {
    stats = new ShardReadStats();
    ownStats.set(config, stats);
  }
  return stats;
}

export interface HedgedGather<T> {
  /** What may be asked, in the order it is asked. */
  candidates: readonly number[];
  /** Answers wanted. */
  needed: number;
  /** After this long without `needed` answers, one more candidate is asked for each read still out (and again after as long); Infinity: never. */
  delayMs: number;
  /** One read; undefined (or a rejection) when the candidate has no good answer. */
  read(candidate: number): Promise<T | undefined>;
  /** An answer that came after `needed` others did: it is not used, and what it holds goes back. */
  onUnused(answer: T): void;
  /** Reads still out when a delay ran out. */
  onLate(candidates: number[]): void;
}

export interface Gathered<T> {
  /** At most `needed` answers, by candidate; fewer when so many failed that the rest could not make up `needed`. */
  answers: Map<number, T>;
  /** Candidates whose read failed. */
  failed: number[];
  /** Reads asked because others were late. */
  hedged: number;
}

/**
 * Asks the first `needed` candidates, asks the next one at once for each that fails, and one more
 * for each read still out whenever the delay runs out; resolves once `needed` answers are in, or
 * as soon as the reads out and the candidates left could no longer make them up (without waiting
 * for a late read that could not help).
 */
export function gatherFirst<T>(gather: HedgedGather<T>): Promise<Gathered<T>> {
  const { candidates, needed, delayMs } = gather;
  return new Promise((resolve) => {
    const answers = new Map<number, T>();
    const failed: number[] = [];
    const out = new Set<number>();
    let next = 0;
    let hedged = 0;
    let done = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finish = (): void => {
      done = true;
      if (timer !== undefined) clearTimeout(timer);
      resolve({ answers, failed, hedged });
    };
    // Fails closed as soon as the reads out and the candidates left could not make up K any more.
    const finishIfShort = (): void => {
      if (!done && answers.size + out.size + (candidates.length - next) < needed) finish();
    };
    const ask = (): void => {
      const candidate = candidates[next]!;
      next += 1;
      out.add(candidate);
      gather.read(candidate).then(undefined, () => undefined).then((answer) => {
        out.delete(candidate);
        if (done) {
          if (answer !== undefined) gather.onUnused(answer);
          return;
        }
        if (answer === undefined) {
          failed.push(candidate);
          while (answers.size + out.size < needed && next < candidates.length) ask();
        } else {
          answers.set(candidate, answer);
        }
        if (answers.size >= needed) finish();
        else finishIfShort();
      });
    };
    const hedge = (): void => {
      if (done) return;
      const late = [...out];
      gather.onLate(late);
      for (let asked = 0; asked < late.length && next < candidates.length; asked += 1) {
        hedged += 1;
        ask();
      }
      arm();
    };
    // The decision waits for the I/O callbacks of the same turn of the event loop: a read that
    // finished while the loop was busy elsewhere is not late, whatever the timer says.
    const arm = (): void => {
      if (delayMs === Infinity || next >= candidates.length) return;
      timer = setTimeout(() => setImmediate(hedge), delayMs);
    };
    while (out.size < needed && next < candidates.length) ask();
    finishIfShort();
    if (!done) arm();
  });
}
