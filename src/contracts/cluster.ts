/**
 * The answers of the admin API's cluster routes (pools, drive slots, the cluster snapshot, the
 * capabilities document, background heal) as JSON, shared by the server, which produces them
 * (src/services, src/ops), and the console's browser code, which shows them (src/console/ui).
 * Imports only its sibling contracts.
 */
import type { DecommissionStatus, HealCounts, RebalanceStatus } from './operations.js';

/** One drive slot of a pool. */
export interface SlotInfo {
  set: number;
  slot: number;
  endpoint: string;
  local: boolean;
  /** The drive id this slot expects (format.json). */
  uuid: string;
  state: 'online' | 'offline';
  totalBytes: number;
  usedBytes: number;
  freeBytes: number;
}

export interface PoolInfo {
  id: number;
  cmdline: string;
  endpointCount: number;
  setCount: number;
  drivesPerSet: number;
  totalBytes: number;
  usedBytes: number;
  freeBytes: number;
  decommission: DecommissionStatus | null;
}

export interface PoolSnapshot extends PoolInfo {
  sets: { set: number; drives: SlotInfo[] }[];
}

/** A node (host:port of its drives' endpoints): online when any of its drives answers. */
export interface NodeSummary {
  endpoint: string;
  state: 'online' | 'offline';
  drives: number;
  drivesOnline: number;
}

/** The read-repair (MRF) queue of one node. */
export interface MrfStatus {
  queued: number;
  awaitingDrives: number;
  limit: number;
  processed: number;
  failed: number;
  dropped: number;
  retried: number;
  gaveUp: number;
  /** Reports not queued: read-repair is off (SVC_HEAL_MRF=off). */
  notQueued: number;
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

/** POST /svc/admin/v3/background-heal/status, and the heal part of the snapshot. */
export interface BackgroundHealStatus {
  mrf: MrfStatus;
  background: { task: string; status: string; pool?: number; set?: number; counts: HealCounts }[];
  healingDrives: HealingDrive[];
  /** State files under .svc.sys refused when read and quarantined since start. */
  stateFilesQuarantined: number;
}

/** GET /svc/admin/v4/cluster/snapshot. */
export interface ClusterSnapshot {
  deploymentId: string;
  generatedAt: string;
  thisNode: string;
  nodes: NodeSummary[];
  pools: PoolSnapshot[];
  operations: { rebalance: RebalanceStatus; decommission: DecommissionStatus[]; heal: BackgroundHealStatus };
}

/** GET /svc/admin/v4/runtime/capabilities. */
export interface Capabilities {
  server: string;
  version: string;
  adminApi: { v3: string[]; v4: string[] };
  driveBackends: string[];
  driveBackend: string;
  faultInjection: boolean;
  storageClasses: { pool: number; STANDARD: string; REDUCED_REDUNDANCY: string }[];
  listQuorum: string;
  limits: Record<string, number>;
}
