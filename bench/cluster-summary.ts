/**
 * The cluster bench's result as JSON (`npm run bench -- --cluster ... --json=FILE`): per phase,
 * the median rate of each target over the rounds and the medians of the rounds' four-to-one
 * ratios. scripts/readme-figures.ts reads it to rewrite the README's table, so the README's
 * figures come from one bench run and from nothing else.
 */

export type SummaryPhase = 'smallPut' | 'smallGet' | 'largePut' | 'largeGet';

export const summaryPhases: readonly SummaryPhase[] = ['smallPut', 'smallGet', 'largePut', 'largeGet'];

export interface PhaseSummary {
  /** `op/s` for 4 KiB objects, `MB/s` for 64 MiB ones. */
  unit: 'op/s' | 'MB/s';
  /** Median rate over the rounds: one node, four nodes. */
  one: number;
  four: number;
  /** Medians of the rounds' ratios, four nodes over one: throughput, and server CPU per operation summed. */
  rateRatio: number;
  cpuRatio: number;
}

export interface ClusterBenchSummary {
  kind: 'svc-cluster-bench';
  version: 1;
  /** When the bench ended (ISO 8601). */
  finishedAt: string;
  cores: number;
  rounds: number;
  settings: { smallOps: number; largeObjects: number; warmUpPairs: number; client: string };
  /** The phases measured (the 64 MiB ones are absent with --large=0). */
  phases: Partial<Record<SummaryPhase, PhaseSummary>>;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isPositive = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value > 0;

/** A summary read back strictly: anything else is an Error naming what is wrong. */
export function parseClusterBenchSummary(value: unknown): ClusterBenchSummary {
  if (!isRecord(value) || value.kind !== 'svc-cluster-bench') throw new Error('not a cluster bench summary (kind svc-cluster-bench)');
  if (value.version !== 1) throw new Error(`cluster bench summary version ${String(value.version)} is not supported`);
  if (typeof value.finishedAt !== 'string' || Number.isNaN(Date.parse(value.finishedAt))) throw new Error('finishedAt must be a date');
  if (!Number.isInteger(value.rounds) || (value.rounds as number) < 1) throw new Error('rounds must be a whole number of at least 1');
  if (!Number.isInteger(value.cores) || (value.cores as number) < 1) throw new Error('cores must be a whole number of at least 1');
  const settings = value.settings;
  if (!isRecord(settings) || !Number.isInteger(settings.smallOps) || !Number.isInteger(settings.largeObjects) || !Number.isInteger(settings.warmUpPairs) || typeof settings.client !== 'string') throw new Error('settings are malformed');
  if (!isRecord(value.phases)) throw new Error('phases must be an object');
  for (const [name, phase] of Object.entries(value.phases)) {
    if (!summaryPhases.includes(name as SummaryPhase)) throw new Error(`unknown phase ${name}`);
    if (!isRecord(phase) || (phase.unit !== 'op/s' && phase.unit !== 'MB/s') || ![phase.one, phase.four, phase.rateRatio, phase.cpuRatio].every(isPositive)) throw new Error(`phase ${name} is malformed`);
  }
  return value as unknown as ClusterBenchSummary;
}
