/**
 * The logical content of an `xl.meta` file (one per object per drive). The byte encoding is in
 * xl-meta.ts and documented field by field in docs/formats.md.
 */
export type StorageClass = 'STANDARD' | 'REDUCED_REDUNDANCY';

export interface ErasureInfo {
  /** Codec id (see src/erasure/codec.ts); an unknown id is refused with UnknownCodec. */
  codec: string;
  dataShards: number;
  parityShards: number;
  blockSizeBytes: number;
  /** 1-based shard index held by the drive this xl.meta lives on. */
  index: number;
  /** distribution[i] = 1-based shard index stored on the set's drive i. */
  distribution: number[];
  /** Bitrot hash of every shard chunk. */
  checksumAlgorithm: 'xxh64';
}

export interface ObjectPart {
  number: number;
  sizeBytes: number;
  etag: string;
  /** The part's checksum (base64) in the algorithm its upload named; absent when it named none. */
  checksum?: string;
}

/** How the client asked for its object to be encrypted. */
export type EncryptionKind = 'SSE-S3' | 'SSE-KMS' | 'SSE-C';

/**
 * An encrypted version (docs/formats.md): its stored bytes are sealed packages
 * (src/format/sse-packages.ts) under a per-version data key, kept here only sealed.
 */
export interface EncryptionInfo {
  kind: EncryptionKind;
  /** Package format: `aes-256-gcm-64k-v1`. */
  cipher: 'aes-256-gcm-64k-v1';
  /** KMS key that sealed the data key (SSE-S3, SSE-KMS); empty for SSE-C. */
  keyId: string;
  /** Sealed data key and nonce base, base64 (KMS-sealed, or sealed by the customer key for SSE-C). */
  sealedKey: string;
  /** SSE-KMS encryption context as the client gave it (JSON object of strings). */
  context?: Record<string, string>;
  /** SSE-C only: HMAC-SHA256 keyed by the customer key, base64; recognises the key, never stores it. */
  customerKeyHmac?: string;
  /** The client's object size (the stored size is `sizeBytes` of the version). */
  plainSizeBytes: number;
  /** Plaintext size of each part, in order; the stored bytes are their package sequences. */
  plainParts: PlainPart[];
}

/**
 * A compressed version (docs/formats.md): its stored stream is compressed blocks
 * (src/format/compressed-blocks.ts), then sealed when `encryption` is present too.
 */
export interface CompressionInfo {
  /** Block format: `zstd-1m-v1` (1 MiB of plain bytes per block, each a zstd frame or raw). */
  algorithm: 'zstd-1m-v1';
  /** The client's object size (what Content-Length, listings and ranges use). */
  plainSizeBytes: number;
  /** Size of the compressed stream: the stored size, or the plaintext size of its encryption. */
  storedSizeBytes: number;
  /** Stored length of each block, in order; a block stored at its plain length is raw. */
  blocks: number[];
  /**
   * Multipart objects: each part's number and client size, in order. Each part was compressed on
   * its own, so `blocks` holds the 1 MiB blocks of part 1, then those of part 2, and so on.
   */
  parts?: CompressedPart[];
}

/** One part of a compressed multipart version as the client sent it. */
export interface CompressedPart {
  number: number;
  plainSizeBytes: number;
}

/** One part of an encrypted version as the client sent it. */
export interface PlainPart {
  number: number;
  sizeBytes: number;
  /**
   * Multipart parts only: 16 random bytes (base64) from which the part's own package key is
   * derived, so a part uploaded again under the same number never reuses a nonce.
   */
  keySalt?: string;
}

/** The key half of an encryption record, known before any byte is stored (a multipart upload keeps it). */
export type EncryptionKeyRecord = Omit<EncryptionInfo, 'plainSizeBytes' | 'plainParts'>;

/**
 * A version whose data was moved to a remote tier by a lifecycle transition: the tier holds one
 * object with the version's stored bytes, and the drives keep only this metadata. A restored copy
 * (RestoreObject) brings the bytes back onto the drives until `restoreExpiryMs`; `dataDir` or the
 * inline data are then set again.
 */
export interface TransitionInfo {
  /** The tier's name (as `rc admin tier add` gave it). */
  tier: string;
  /** The object's key in the tier's bucket (under the tier's prefix). */
  remoteKey: string;
  /** The version the tier's bucket gave the object, when it keeps versions. */
  remoteVersionId?: string;
  transitionedMs: number;
  /** A restored copy is on the drives until this instant. */
  restoreExpiryMs?: number;
}

export interface ObjectVersion {
  /** 'null' for the null version (unversioned or suspended buckets), else a UUID. */
  versionId: string;
  modTimeMs: number;
  deleteMarker: boolean;
  sizeBytes: number;
  etag: string;
  contentType?: string;
  /** `x-amz-meta-*` headers, keys lower-cased without the prefix. */
  userMetadata: Record<string, string>;
  /** Other stored headers: content-encoding, cache-control, checksums, ... */
  systemMetadata: Record<string, string>;
  storageClass: StorageClass;
  /** Directory (UUID) holding this version's shard files; absent for delete markers and inline data. */
  dataDir?: string;
  /** Absent for delete markers. */
  erasure?: ErasureInfo;
  parts: ObjectPart[];
  /** Present when the stored bytes are encrypted; `sizeBytes` and `parts` are then the stored sizes. */
  encryption?: EncryptionInfo;
  /** Present when the stored bytes are compressed (before any encryption); the client's size is its `plainSizeBytes`. */
  compression?: CompressionInfo;
  /** This drive's own shard file (bitrot-framed), when the object is inline. */
  inlineData?: Uint8Array;
  /** Present when the data was moved to a remote tier (docs/lifecycle.md, "Tiers"). */
  transition?: TransitionInfo;
}

export interface XlMeta {
  /** Newest first (by modTimeMs, then version id). */
  versions: ObjectVersion[];
}
