/**
 * A key management service: named keys that seal and unseal the per-object data keys. Only the
 * built-in KMS (builtin-kms.ts) exists; an external one (KES, Vault, a cloud KMS) would implement
 * this interface.
 *
 * A key has versions: rotating it makes a new version that seals from then on, while the older
 * ones stay to unseal what they sealed (and to re-wrap it, `rewrapDataKey`). A disabled key
 * neither seals nor unseals for requests (`KMS.DisabledException`) until it is enabled again. A
 * deleted key is gone for good: what it sealed cannot be unsealed any more (`KMS.NotFoundException`
 * naming the deletion), and its name is not given to a new key.
 */
import { SvcError } from '../../errors/index.js';

/** The refusal to delete a root key: it comes from the settings, not from the KMS. */
export const rootKeyNotDeletable = (keyId: string) =>
  new SvcError('InvalidArgument', `${keyId} is a root key (SVC_KMS_SECRET_KEY or a file of SVC_KMS_KEY_DIR): only keys created through the admin API can be deleted`, { keyId });

import type { KmsKeyStatus } from '../../contracts/kms.js';
export type { KmsKeyStatus };

export interface Kms {
  readonly kind: 'builtin';
  /** The key SSE-S3 uses and SSE-KMS falls back to without a key id. */
  readonly defaultKeyId: string;
  createKey(keyId: string): Promise<KmsKeyStatus>;
  listKeys(): Promise<KmsKeyStatus[]>;
  /** Status of one key; `KMS.NotFoundException` when there is none. */
  keyStatus(keyId: string): Promise<KmsKeyStatus>;
  /** Seals a data key under `keyId`'s newest version, bound to `context`; `KMS.NotFoundException` for an unknown key, `KMS.DisabledException` for a disabled one. */
  sealDataKey(keyId: string, dataKey: Uint8Array, context: string): Promise<Uint8Array>;
  /** Unseals a data key; `KMSKeyUnsealFailed` when the key or context differs from the sealing's, `KMS.DisabledException` when the key is disabled. */
  unsealDataKey(keyId: string, sealed: Uint8Array, context: string): Promise<Buffer>;
  /** A new version of the key (`KMS.DisabledException` when it is disabled). */
  rotateKey(keyId: string): Promise<KmsKeyStatus>;
  /** Disables or enables a key; the default key cannot be disabled (`InvalidArgument`). */
  setKeyEnabled(keyId: string, enabled: boolean): Promise<KmsKeyStatus>;
  /**
   * The data key sealed again under the key's newest version, or undefined when `sealed` is under
   * it already. Used by the background re-wrap; it works on disabled keys too (nothing leaves it).
   */
  rewrapDataKey(keyId: string, sealed: Uint8Array, context: string): Promise<Uint8Array | undefined>;
  /**
   * Deletes a named key and every version of it, at once and for good (`InvalidArgument` for a root
   * key, `KMS.NotFoundException` for an unknown one). Whether anything still uses it is the caller's
   * to decide before.
   */
  deleteKey(keyId: string): Promise<void>;
  /** Rereads the keys' state (another node rotated, disabled, enabled or deleted a key). */
  reload(): Promise<void>;
}
