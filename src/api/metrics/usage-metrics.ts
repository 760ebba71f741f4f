/**
 * The data-usage families, set from the scanner's last result when scraped. Only the node that
 * schedules scans reports them, so a sum over the cluster's series counts each bucket once. At
 * most limits.usageMetricsBucketsMax buckets are named (the largest by bytes): the totals count
 * every bucket, so the series stay bounded however many buckets there are.
 */
import type { UsageStatus } from '../../contracts/usage.js';
import { limits } from '../../util/limits.js';
import type { MetricFamilies } from './families.js';

export interface UsageSource {
  /** This node schedules scans (and so reports their result). */
  schedulesScans(): boolean;
  status(): Promise<UsageStatus>;
}

/** The scanner's answer to report: undefined when this node does not report usage. */
export async function readUsage(source: UsageSource | undefined): Promise<UsageStatus | null | undefined> {
  if (!source?.schedulesScans()) return undefined;
  return source.status().catch(() => null);
}

/** Sets the families from `status` (null: no result to show; undefined: not this node's to report). */
export function setUsageGauges(families: MetricFamilies, status: UsageStatus | null | undefined): void {
  const f = families;
  if (status === undefined) return;
  for (const family of [f.usageBucketObjects, f.usageBucketVersions, f.usageBucketDeleteMarkers, f.usageBucketBytes, f.usageBuckets, f.usageObjects, f.usageVersions, f.usageDeleteMarkers, f.usageBytes, f.usageScanAge]) family.reset();
  const last = status?.last;
  if (!last) return;
  const named = [...last.buckets].sort((a, b) => b.sizeBytes - a.sizeBytes || (a.bucket < b.bucket ? -1 : 1)).slice(0, limits.usageMetricsBucketsMax);
  for (const usage of named) {
    const labels = { bucket: usage.bucket };
    f.usageBucketObjects.set(labels, usage.objects);
    f.usageBucketVersions.set(labels, usage.versions);
    f.usageBucketDeleteMarkers.set(labels, usage.deleteMarkers);
    f.usageBucketBytes.set(labels, usage.sizeBytes);
  }
  f.usageBuckets.set(last.total.buckets);
  f.usageObjects.set(last.total.objects);
  f.usageVersions.set(last.total.versions);
  f.usageDeleteMarkers.set(last.total.deleteMarkers);
  f.usageBytes.set(last.total.sizeBytes);
  f.usageScanAge.set(status.ageSeconds ?? 0);
}
