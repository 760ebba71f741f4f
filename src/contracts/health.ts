/**
 * The console's health model (GET /svc/console/api/health), as the server builds it
 * (src/console/health.ts) and the browser shows it (src/console/ui/health.tsx). Import-free.
 */

export type HealthStatus = 'ok' | 'degraded' | 'critical';
export type DriveHealth = 'online' | 'offline' | 'healing';

export interface ClassMargin {
  storageClass: 'STANDARD' | 'REDUCED_REDUNDANCY';
  parity: number;
  readQuorum: number;
  writeQuorum: number;
  /** Drives online beyond the read quorum (negative: the quorum is lost). */
  readMargin: number;
  writeMargin: number;
  status: HealthStatus;
}

export interface SetHealth {
  pool: number;
  set: number;
  drivesOnline: number;
  drivesTotal: number;
  drives: { endpoint: string; slot: number; state: DriveHealth }[];
  classes: ClassMargin[];
  status: HealthStatus;
}

export interface HealthModel {
  status: HealthStatus;
  generatedAt: string;
  /** One sentence for the banner. */
  summary: string;
  nodes: { endpoint: string; state: 'online' | 'offline'; drives: number; drivesOnline: number }[];
  drives: { online: number; offline: number; healing: number; total: number };
  sets: SetHealth[];
  operations: { kind: string; detail: string }[];
  errors: { source: string; message: string }[];
  /** What to do: a runbook section, when something is wrong. */
  runbook?: { title: string; section: string };
}
