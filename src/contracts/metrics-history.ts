/**
 * The recent metrics history a node keeps in memory (src/api/metrics/history.ts), as the admin
 * route and the console's graphs read it: one sample per interval, each the counts of that
 * interval (not rates, not cumulative), so samples of several nodes add up. Imports nothing.
 */

export interface MetricsSample {
  /** Start of the interval, in milliseconds since 1970 (a multiple of the interval on every node). */
  atMs: number;
  /** S3 requests answered in the interval, and those answered 4xx and 5xx. */
  requests: number;
  clientErrors: number;
  serverErrors: number;
  /** S3 requests by duration: one count per bucket of `latencyBoundsSeconds`, then one for longer. */
  latencyCounts: number[];
  /** Request body bytes received and answer bytes sent. */
  receivedBytes: number;
  sentBytes: number;
  /** Drive operations of the node's own drives, and those that failed. */
  driveOperations: number;
  driveErrors: number;
  /** Objects heal sequences scanned and healed, and read repairs done. */
  healScannedObjects: number;
  healedObjects: number;
  readRepairs: number;
}

export interface MetricsHistory {
  intervalMs: number;
  /** Upper bounds of the latency buckets (seconds). */
  latencyBoundsSeconds: number[];
  /** The nodes whose samples are summed here, and those that did not answer. */
  nodes: string[];
  unreachable: string[];
  /** Oldest first; at most an hour. */
  samples: MetricsSample[];
}
