/**
 * The logical content of `<drive>/.svc.sys/format.json`: the drive's identity and the pool layout
 * it belongs to. Encoding and validation in format-json.ts; fields in docs/formats.md.
 */
export interface FormatJson {
  /** Format version of this file; only 1 exists. */
  version: 1;
  /** 'erasure' for multi-drive pools, 'single' for the single-drive layout. */
  layout: 'erasure' | 'single';
  /** Shared by every drive of the deployment. */
  deploymentId: string;
  /** Zero-based pool position in the launch arguments. */
  poolIndex: number;
  /** This drive's own id (UUID). */
  driveId: string;
  /** sets[s][d] = drive id of slot d of erasure set s, for the whole pool. */
  sets: string[][];
  /** Placement hash: object -> set. */
  distributionAlgorithm: 'xxh64-deployment-id';
}
