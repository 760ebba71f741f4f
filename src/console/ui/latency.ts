/** Latency percentiles from a metrics sample's duration buckets (charts.tsx). */
import type { MetricsSample } from '../../contracts/metrics-history.js';

/** The `quantile` of a sample's request durations, in milliseconds (the bucket's upper bound); null without requests. */
export function latencyQuantileMs(sample: MetricsSample, boundsSeconds: number[], quantile: number): number | null {
  const total = sample.latencyCounts.reduce((sum, count) => sum + count, 0);
  if (total === 0) return null;
  let seen = 0;
  for (let index = 0; index < sample.latencyCounts.length; index += 1) {
    seen += sample.latencyCounts[index]!;
    if (seen >= quantile * total) return (boundsSeconds[index] ?? boundsSeconds[boundsSeconds.length - 1]! * 2) * 1000;
  }
  return null;
}
