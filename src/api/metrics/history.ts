/**
 * A bounded in-process history of this node's metrics, for the console's graphs without a
 * Prometheus: every `intervalMs` (10 s) the recorder reads the node's counters (S3 requests and
 * their status classes, the request-duration histogram, bytes in and out, drive operations and
 * errors, heal and read-repair totals) and keeps what changed in that interval, in a ring of
 * `capacity` samples (an hour). Samples start on multiples of the interval, so the samples of
 * several nodes line up and add (mergeHistories: the cluster view, from each peer's own).
 */
import type { MetricFamilies } from './families.js';
import type { HealView } from './state.js';
import type { MetricsHistory, MetricsSample } from '../../contracts/metrics-history.js';

type Counts = Omit<MetricsSample, 'atMs' | 'latencyCounts'> & { latencyCumulative: number[] };

interface Readable {
  get(): Promise<{ values: { value: number; labels: Record<string, string | number>; metricName?: string }[] }>;
}

async function sumOf(metric: Readable, keep: (labels: Record<string, string | number>, name: string | undefined) => boolean = () => true): Promise<number> {
  const { values } = await metric.get();
  return values.reduce((sum, entry) => (keep(entry.labels, entry.metricName) ? sum + entry.value : sum), 0);
}

export interface MetricsHistoryOptions {
  families: MetricFamilies;
  latencyBoundsSeconds: readonly number[];
  heal: () => HealView | undefined;
  intervalMs: number;
  capacity: number;
  nowMs: () => number;
  node: string;
}

export class MetricsHistoryRecorder {
  private readonly samples: MetricsSample[] = [];
  private previous: Counts | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Heal counts by sequence token (sequences come and go; their counts only grow). */
  private readonly healSeen = new Map<string, { scanned: number; healed: number }>();
  private healTotals = { scanned: 0, healed: 0 };

  constructor(private readonly options: MetricsHistoryOptions) {}

  /** Samples at every multiple of the interval from now on. */
  start(): void {
    const { intervalMs, nowMs } = this.options;
    const tick = () => {
      const now = nowMs();
      this.timer = setTimeout(() => {
        void this.sample(Math.round(nowMs() / intervalMs) * intervalMs).finally(tick);
      }, intervalMs - (now % intervalMs));
      this.timer.unref();
    };
    void this.sample(Math.floor(nowMs() / intervalMs) * intervalMs).finally(tick);
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
  }

  /** Reads the counters at `boundaryMs` and keeps what changed since the last read (the first read only sets the base). */
  async sample(boundaryMs: number): Promise<void> {
    const counts = await this.read();
    const previous = this.previous;
    this.previous = counts;
    if (!previous) return;
    const delta = (now: number, before: number) => Math.max(0, now - before);
    const cumulative = counts.latencyCumulative.map((value, index) => delta(value, previous.latencyCumulative[index] ?? 0));
    this.samples.push({
      atMs: boundaryMs - this.options.intervalMs,
      requests: delta(counts.requests, previous.requests),
      clientErrors: delta(counts.clientErrors, previous.clientErrors),
      serverErrors: delta(counts.serverErrors, previous.serverErrors),
      latencyCounts: cumulative.map((value, index) => Math.max(0, value - (index === 0 ? 0 : cumulative[index - 1]!))),
      receivedBytes: delta(counts.receivedBytes, previous.receivedBytes),
      sentBytes: delta(counts.sentBytes, previous.sentBytes),
      driveOperations: delta(counts.driveOperations, previous.driveOperations),
      driveErrors: delta(counts.driveErrors, previous.driveErrors),
      healScannedObjects: delta(counts.healScannedObjects, previous.healScannedObjects),
      healedObjects: delta(counts.healedObjects, previous.healedObjects),
      readRepairs: delta(counts.readRepairs, previous.readRepairs),
    });
    if (this.samples.length > this.options.capacity) this.samples.splice(0, this.samples.length - this.options.capacity);
  }

  history(): MetricsHistory {
    return { intervalMs: this.options.intervalMs, latencyBoundsSeconds: [...this.options.latencyBoundsSeconds], nodes: [this.options.node], unreachable: [], samples: this.samples.map((sample) => ({ ...sample, latencyCounts: [...sample.latencyCounts] })) };
  }

  private async read(): Promise<Counts> {
    const f = this.options.families;
    const status = (wanted: string) => (labels: Record<string, string | number>) => labels.status_class === wanted;
    const bounds = this.options.latencyBoundsSeconds;
    const { values } = await (f.s3RequestDuration as unknown as Readable).get();
    const latencyCumulative = [...bounds, Infinity].map((bound) =>
      values.filter((entry) => entry.metricName?.endsWith('_bucket') && Number(entry.labels.le === '+Inf' ? Infinity : entry.labels.le) === bound).reduce((sum, entry) => sum + entry.value, 0),
    );
    const heal = this.readHeal();
    return {
      requests: await sumOf(f.s3Requests as unknown as Readable),
      clientErrors: await sumOf(f.s3Requests as unknown as Readable, status('4xx')),
      serverErrors: await sumOf(f.s3Requests as unknown as Readable, status('5xx')),
      latencyCumulative,
      receivedBytes: await sumOf(f.s3ReceivedBytes as unknown as Readable),
      sentBytes: await sumOf(f.s3SentBytes as unknown as Readable),
      driveOperations: await sumOf(f.driveOperationDuration as unknown as Readable, (_labels, name) => name?.endsWith('_count') === true),
      driveErrors: await sumOf(f.driveOperationErrors as unknown as Readable),
      healScannedObjects: heal.scanned,
      healedObjects: heal.healed,
      readRepairs: heal.readRepairs,
    };
  }

  /** Heal totals that only grow: each sequence's counts are added as they rise, and kept when it is forgotten. */
  private readHeal(): { scanned: number; healed: number; readRepairs: number } {
    const heal = this.options.heal();
    if (!heal) return { ...this.healTotals, readRepairs: 0 };
    for (const sequence of heal.sequenceList()) {
      const seen = this.healSeen.get(sequence.clientToken) ?? { scanned: 0, healed: 0 };
      const { objectsScanned, objectsHealed } = sequence.counts;
      this.healTotals.scanned += Math.max(0, objectsScanned - seen.scanned);
      this.healTotals.healed += Math.max(0, objectsHealed - seen.healed);
      this.healSeen.set(sequence.clientToken, { scanned: Math.max(seen.scanned, objectsScanned), healed: Math.max(seen.healed, objectsHealed) });
    }
    return { ...this.healTotals, readRepairs: heal.backgroundStatus().mrf.processed };
  }
}

/** The cluster's history: the samples of every node that answered, added interval by interval. */
export function mergeHistories(answers: { node: string; history: MetricsHistory | undefined }[], shape: { intervalMs: number; latencyBoundsSeconds: readonly number[]; capacity: number }): MetricsHistory {
  const byInterval = new Map<number, MetricsSample>();
  const nodes: string[] = [];
  const unreachable: string[] = [];
  for (const { node, history } of answers) {
    if (!history) {
      unreachable.push(node);
      continue;
    }
    nodes.push(node);
    for (const sample of history.samples) {
      const sum = byInterval.get(sample.atMs);
      if (!sum) {
        byInterval.set(sample.atMs, { ...sample, latencyCounts: [...sample.latencyCounts] });
        continue;
      }
      for (const key of ['requests', 'clientErrors', 'serverErrors', 'receivedBytes', 'sentBytes', 'driveOperations', 'driveErrors', 'healScannedObjects', 'healedObjects', 'readRepairs'] as const) sum[key] += sample[key];
      sample.latencyCounts.forEach((count, index) => (sum.latencyCounts[index] = (sum.latencyCounts[index] ?? 0) + count));
    }
  }
  const samples = [...byInterval.values()].sort((a, b) => a.atMs - b.atMs).slice(-shape.capacity);
  return { intervalMs: shape.intervalMs, latencyBoundsSeconds: [...shape.latencyBoundsSeconds], nodes, unreachable, samples };
}
