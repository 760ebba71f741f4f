/**
 * A key management service: named keys that seal and unseal the per-object data keys. Only the
 * built-in KMS (builtin-kms.ts) exists; an external one (KES, Vault, a cloud KMS) would implement
 * this interface.
 */
export interface KmsKeyStatus {
  keyId: string;
  /** `root` for the root key itself (SVC_KMS_SECRET_KEY), `named` for keys created through the admin API. */
  origin: 'root' | 'named';
  createdAt?: string;
  /** A round trip through the key (seal and unseal a probe) worked. */
  encryptionOk: boolean;
  decryptionOk: boolean;
}

export interface Kms {
  readonly kind: 'builtin';
  /** The key SSE-S3 uses and SSE-KMS falls back to without a key id. */
  readonly defaultKeyId: string;
  createKey(keyId: string): Promise<KmsKeyStatus>;
  listKeys(): Promise<KmsKeyStatus[]>;
  /** Status of one key; `KMS.NotFoundException` when there is none. */
  keyStatus(keyId: string): Promise<KmsKeyStatus>;
  /** Seals a data key under `keyId`, bound to `context`; `KMS.NotFoundException` for an unknown key. */
  sealDataKey(keyId: string, dataKey: Uint8Array, context: string): Promise<Uint8Array>;
  /** Unseals a data key; `KMSKeyUnsealFailed` when the key or context differs from the sealing's. */
  unsealDataKey(keyId: string, sealed: Uint8Array, context: string): Promise<Buffer>;
}
