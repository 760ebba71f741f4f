/**
 * The admin API's answers about the built-in KMS, as JSON: a key's status (src/ops/kms/kms.ts, the
 * console's KMS page) and the background re-wrap after a key rotation (src/ops/kms/rewrap.ts, `rc`).
 * This module imports nothing.
 */

export interface KmsKeyStatus {
  keyId: string;
  /** `root` for a root key (SVC_KMS_SECRET_KEY or a file of SVC_KMS_KEY_DIR), `named` for keys created through the admin API. */
  origin: 'root' | 'named';
  createdAt?: string;
  /** Whether requests may use the key. */
  enabled: boolean;
  /** The version that seals new data keys (1 until the key is first rotated). */
  version: number;
  /** When the newest version was made (after a rotation). */
  rotatedAt?: string;
  /** A round trip through the key (seal and unseal a probe) worked. */
  encryptionOk: boolean;
  decryptionOk: boolean;
}

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
