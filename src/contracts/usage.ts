/**
 * The data-usage scanner's answer (GET /svc/admin/v4/data-usage, the console's usage figures and
 * `rc du`), shared by the server, which produces it (src/ops/usage-scanner.ts), and the console's
 * browser code, which shows it. This module imports nothing.
 */

/** What one bucket holds, as the last scan walked it. */
export interface BucketUsage {
  bucket: string;
  /** Keys whose current version is not a delete marker (what a listing shows). */
  objects: number;
  /** Stored versions that are not delete markers, current and noncurrent. */
  versions: number;
  deleteMarkers: number;
  /** Bytes of every stored version (the clients' sizes, before erasure coding). */
  sizeBytes: number;
  /** Bytes of the current versions only. */
  currentSizeBytes: number;
}

/** The sums over every bucket. */
export interface UsageTotals extends Omit<BucketUsage, 'bucket'> {
  buckets: number;
}

/** One finished scan. */
export interface UsageSnapshot {
  startedAt: string;
  finishedAt: string;
  /** Times the scan was taken up again from its checkpoint (after a restart or a stop). */
  resumes: number;
  buckets: BucketUsage[];
  total: UsageTotals;
}

/** A scan under way, as its last checkpoint records it. */
export interface UsageScanProgress {
  startedAt: string;
  /** When the checkpoint was last saved. */
  savedAt: string;
  /** The bucket being walked (null between buckets). */
  bucket: string | null;
  bucketsDone: number;
  bucketsTotal: number;
  /** Keys walked by the whole scan so far, across resumes. */
  keysWalked: number;
  resumes: number;
}

export interface UsageStatus {
  generatedAt: string;
  /** A scan runs on this node now. */
  running: boolean;
  /** Keys a second the scanner walks at most. */
  objectsPerSecond: number;
  /** Time between the end of a scheduled scan and the start of the next. */
  intervalMs: number;
  /** When this node starts its next scheduled scan (null when it does not schedule scans, or one runs). */
  nextScanAt: string | null;
  /** The last finished scan (null before the first one ends). */
  last: UsageSnapshot | null;
  /** Seconds since the last scan finished (null with no scan). */
  ageSeconds: number | null;
  /** A scan started and not finished, on this node or another (from its checkpoint). */
  current: UsageScanProgress | null;
}
