/**
 * The admin API's answers about the built-in KMS's background re-wrap (after a key rotation), as
 * JSON, shared by the server (src/ops/kms/rewrap.ts) and `rc`. This module imports nothing.
 */

export type KmsRewrapState = 'none' | 'running' | 'finished' | 'failed';

export interface KmsRewrapStatus {
  /** The run's id; null when no rotation has run. */
  id: string | null;
  state: KmsRewrapState;
  /** The keys rotated for this run, in the order they were. */
  keyIds: string[];
  startedAt?: string;
  finishedAt?: string;
  /** Object versions looked at, data keys sealed again under their key's newest version, versions that failed. */
  versionsScanned: number;
  rewrapped: number;
  failed: number;
  /** Buckets walked through, of the buckets there were when the current pass began. */
  bucketsDone: number;
  bucketsTotal: number;
  /** The walk's position: the bucket, and the last key done in it. */
  currentBucket?: string;
  /** How many times a restart resumed the run where it was. */
  resumed: number;
  /** The last failure (bucket/key: error), when any. */
  lastError?: string;
}
