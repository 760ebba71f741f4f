/**
 * The answers of the admin API's operation routes (decommission, rebalance, heal, lifecycle) as
 * JSON, shared by the server, which produces them (src/ops), and the console's browser code, which
 * shows them (src/console/ui). This module imports nothing: a change here is a change on both
 * sides, and a field one side drops or renames fails the compiler on the other.
 */

// --- decommission ---

export type DecommissionState = 'queued' | 'active' | 'completed' | 'failed' | 'canceled';

export interface DecommissionProgress {
  /** Objects (keys) moved, with their versions and bytes. */
  objects: number;
  versions: number;
  bytes: number;
  /** Objects found in the pool when the run started (the basis of the ETA). */
  totalObjects: number;
  currentBucket?: string;
  currentObject?: string;
}

export interface DecommissionEntry {
  pool: number;
  pattern: string;
  /** One run of the entry; a retry of a failed entry gets a new id. */
  id: string;
  state: DecommissionState;
  queuedMs: number;
  startedMs?: number;
  finishedMs?: number;
  updatedMs: number;
  reason?: string;
  /** Listing entries (bucket/key) that could not be moved after every attempt. */
  unresolved: string[];
  progress: DecommissionProgress;
}

export interface DecommissionStatus extends DecommissionEntry {
  elapsedMs?: number;
  etaMs?: number;
  /** Objects being moved now, and the most at once, in this process's last run of the entry (not persisted). */
  entriesInFlight?: number;
  entriesInFlightPeak?: number;
}

// --- rebalance ---

export type RebalancePoolState = 'active' | 'stopping' | 'completed' | 'stopped' | 'failed';

export interface RebalanceProgress {
  objects: number;
  versions: number;
  bytes: number;
  /** Bytes this pool had to shed at start to reach the goal (the basis of the ETA). */
  bytesToMove: number;
  remainingBuckets: number;
  currentBucket?: string;
  currentObject?: string;
  elapsedMs: number;
  etaMs?: number;
}

export interface RebalancePool {
  id: number;
  status: RebalancePoolState;
  stopping: boolean;
  /** Used fraction (0..1) at the last measurement. */
  used: number;
  lastError: string;
  cleanupWarnings: string[];
  progress: RebalanceProgress;
}

export interface RebalanceStatus {
  id: string | null;
  goalUsed?: number;
  startedAt?: string;
  stoppedAt?: string | null;
  stopPropagation?: { complete: boolean; failedPeers: string[] } | null;
  pools: RebalancePool[];
}

// --- heal ---

export interface HealOptions {
  recursive: boolean;
  dryRun: boolean;
  remove: boolean;
  recreate: boolean;
  scanMode: 'normal' | 'deep';
  updateParity: boolean;
  pool?: number;
  set?: number;
}

export interface HealPath {
  bucket?: string;
  prefix?: string;
}

export interface HealItem {
  type: 'format' | 'bucket' | 'object' | 'upload';
  pool: number;
  set: number;
  bucket?: string;
  object?: string;
  outcome: string;
  reason?: string;
  before?: { endpoint: string; state: string }[];
  after?: { endpoint: string; state: string }[];
  shardsHealed?: number;
}

export interface HealCounts {
  objectsScanned: number;
  objectsHealed: number;
  objectsUnrecoverable: number;
  shardsHealed: number;
  failures: number;
}

export interface HealSequenceStatus {
  clientToken: string;
  path: HealPath;
  options: HealOptions;
  status: 'running' | 'finished' | 'stopped' | 'failed';
  startedAt: string;
  finishedAt?: string;
  counts: HealCounts;
  lastError?: string;
  /** The latest items (at most limits.healItemsKept). */
  items: HealItem[];
}

// --- lifecycle ---

export interface LifecycleCycle {
  trigger: 'schedule' | 'manual';
  startedAt: string;
  finishedAt: string | null;
  /** The lifecycle clock's time the rules were judged at (differs from startedAt only under a test clock). */
  judgedAt: string;
  currentBucket: string | null;
  bucketsScanned: number;
  /** Buckets whose scan lock another node held. */
  bucketsSkipped: number;
  objectsScanned: number;
  versionsScanned: number;
  expired: { currentVersions: number; noncurrentVersions: number; deleteMarkers: number; multipartUploads: number };
  /** Versions whose data was moved to a remote tier (Transition, NoncurrentVersionTransition). */
  transitioned: number;
  /** Restored copies (RestoreObject) past their expiry whose local bytes were removed. */
  restoredCopiesEnded: number;
  /** Every key of every bucket was walked to rebuild a restored-copy index marked for repair. */
  repairWalk: boolean;
  /** Versions a rule would have removed but object lock kept. */
  lockedVersionsKept: number;
  errors: number;
  recentErrors: string[];
}

export interface LifecycleStatus {
  running: boolean;
  intervalMs: number;
  objectsPerSecond: number;
  nextCycleAt: string | null;
  current: LifecycleCycle | null;
  last: LifecycleCycle | null;
}
