/** Shapes of the admin answers the console shows (the cluster snapshot and operation statuses). */
export interface Slot {
  set: number;
  slot: number;
  endpoint: string;
  local: boolean;
  uuid: string;
  state: 'online' | 'offline';
  totalBytes: number;
  usedBytes: number;
  freeBytes: number;
}

export interface DecommissionEntry {
  pool: number;
  pattern: string;
  id: string;
  state: 'queued' | 'active' | 'completed' | 'failed' | 'canceled';
  reason?: string;
  unresolved: string[];
  progress: { objects: number; versions: number; bytes: number; totalObjects: number; currentBucket?: string; currentObject?: string };
  elapsedMs?: number;
  etaMs?: number;
}

export interface PoolSnapshot {
  id: number;
  cmdline: string;
  endpointCount: number;
  setCount: number;
  drivesPerSet: number;
  totalBytes: number;
  usedBytes: number;
  freeBytes: number;
  decommission: DecommissionEntry | null;
  sets: { set: number; drives: Slot[] }[];
}

export interface RebalancePool {
  id: number;
  status: string;
  stopping: boolean;
  used: number;
  lastError: string;
  cleanupWarnings: string[];
  progress: { objects: number; versions: number; bytes: number; bytesToMove: number; remainingBuckets: number; currentBucket?: string; currentObject?: string; elapsedMs: number; etaMs?: number };
}

export interface RebalanceStatus {
  id: string | null;
  goalUsed?: number;
  startedAt?: string;
  stoppedAt?: string | null;
  stopPropagation?: { complete: boolean; failedPeers: string[] } | null;
  pools: RebalancePool[];
}

export interface HealingDrive {
  endpoint: string;
  pool: number;
  set: number;
  slot: number;
  state: 'healed' | 'healing' | 'waiting';
  objectsHealed: number;
  objectsFailed: number;
}

export interface BackgroundHeal {
  mrf: { queued: number; limit: number; [name: string]: number };
  background: { task: string; status: string; pool?: number; set?: number; counts: HealCounts }[];
  healingDrives: HealingDrive[];
}

export interface HealCounts {
  objectsScanned: number;
  objectsHealed: number;
  objectsUnrecoverable: number;
  shardsHealed: number;
  failures: number;
}

export interface Snapshot {
  deploymentId: string;
  generatedAt: string;
  thisNode: string;
  nodes: { endpoint: string; state: 'online' | 'offline'; drives: number; drivesOnline: number }[];
  pools: PoolSnapshot[];
  operations: { rebalance: RebalanceStatus; decommission: DecommissionEntry[]; heal: BackgroundHeal };
}

export interface Capabilities {
  storageClasses: { pool: number; STANDARD: string; REDUCED_REDUNDANCY: string }[];
  version: string;
}

/** A drive's state as the console shows it: healing when a replacement heal is working on its slot. */
export function driveState(slot: Slot, pool: number, healing: HealingDrive[]): string {
  const heal = healing.find((drive) => drive.pool === pool && drive.set === slot.set && drive.slot === slot.slot);
  if (heal && heal.state !== 'healed') return 'healing';
  return slot.state;
}

/** The heal this browser tab started last (its client token), shown on Overview and Operations. */
export const healTokenKey = 'svc-heal-token';

export interface HealSequence {
  clientToken: string;
  path: { bucket?: string; prefix?: string };
  status: string;
  startedAt: string;
  finishedAt?: string;
  counts: HealCounts;
  lastError?: string;
  items: { type: string; pool: number; set: number; bucket?: string; object?: string; outcome: string; reason?: string; before?: { endpoint: string; state: string }[]; after?: { endpoint: string; state: string }[] }[];
}

/** GET /svc/admin/v4/lifecycle/status (this node's lifecycle scanner). */
export interface LifecycleCycle {
  trigger: 'schedule' | 'manual';
  startedAt: string;
  finishedAt: string | null;
  bucketsScanned: number;
  objectsScanned: number;
  expired: { currentVersions: number; noncurrentVersions: number; deleteMarkers: number; multipartUploads: number };
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
