import type { CompressionInfo, EncryptionInfo, ObjectPart, StorageClass, TransitionInfo } from '../format/xl-meta-types.js';
import type { DigestAlgorithm, DigestValues } from './coding/digests.js';

/** What a writer learns about the body it sent once all of it is stored in tmp. */
export interface ReceivedBody {
  md5Hex: string;
  sizeBytes: number;
  /** MD5 and the digests asked for in `digests`, hex. */
  digests: DigestValues;
}

export type BucketVersioning = 'unversioned' | 'enabled' | 'suspended';

/**
 * The checksum a multipart upload keeps (CreateMultipartUpload's `x-amz-checksum-algorithm` and
 * `x-amz-checksum-type`): every part's, and at completion the object's, either of the parts'
 * checksums (COMPOSITE, `<base64>-<parts>`) or of the whole body (FULL_OBJECT, CRCs only).
 */
export interface MultipartChecksum {
  algorithm: DigestAlgorithm;
  type: 'COMPOSITE' | 'FULL_OBJECT';
}

/** What callers learn about one object version. */
export interface ObjectInfo {
  bucket: string;
  key: string;
  versionId: string;
  isLatest: boolean;
  deleteMarker: boolean;
  sizeBytes: number;
  etag: string;
  modTimeMs: number;
  contentType?: string;
  userMetadata: Record<string, string>;
  systemMetadata: Record<string, string>;
  storageClass: StorageClass;
  parts: ObjectPart[];
  /** Shards kept inside xl.meta. */
  inline: boolean;
  dataShards: number;
  parityShards: number;
  /**
   * Set when the stored bytes are encrypted: `sizeBytes` and `parts` are then the client's
   * (plaintext) sizes and `storedSizeBytes` what the drives hold.
   */
  encryption?: EncryptionInfo;
  storedSizeBytes?: number;
  /** Set when the stored bytes are compressed: `sizeBytes` and `parts` are the client's, `storedSizeBytes` what the drives hold. */
  compression?: CompressionInfo;
  /** Encrypted or compressed versions: the parts as the drives hold them (sealed or compressed sizes). */
  storedParts?: ObjectPart[];
  /** Set when the data was moved to a remote tier (a restored copy may be on the drives too). */
  transition?: TransitionInfo;
}

export interface PutObjectOptions {
  storageClass: StorageClass;
  versioning: BucketVersioning;
  /** When known (Content-Length), the stream must deliver exactly this many bytes. */
  sizeBytes?: number;
  contentType?: string;
  userMetadata?: Record<string, string>;
  systemMetadata?: Record<string, string>;
  /** Fixed modification time (data movement keeps the source's). */
  modTimeMs?: number;
  /** Fixed version id (data movement keeps the source's). */
  versionId?: string;
  /** Fixed ETag (data movement keeps a multipart object's `<md5>-<parts>`; encryption keeps the plaintext's). */
  etag?: string;
  /** The body is sealed packages (src/format/sse-packages.ts) described by this; `sizeBytes` is then the stored size. */
  encryption?: EncryptionInfo;
  /**
   * Like `encryption`, for a body sealed as it streams in: called once the body is staged and
   * `beforeCommit` passed, it gives the encryption record and the plaintext's ETag.
   */
  sealing?: () => { etag: string; encryption: EncryptionInfo };
  /** The body is compressed blocks (src/format/compressed-blocks.ts) described by this (data movement). */
  compression?: CompressionInfo;
  /**
   * Like `compression`, for a body compressed as it streams in: called once the body is staged
   * and `beforeCommit` passed, it gives the client's ETag and the record (none when no block shrank).
   */
  compressing?: () => { etag: string; compression?: CompressionInfo };
  /**
   * Data movement of a multipart object: the stored parts to keep (numbers, stored sizes, ETags,
   * checksums). The body is their bytes one after another; each part is written to its own
   * shard files, as its upload wrote it, so the copy keeps its part list.
   */
  parts?: ObjectPart[];
  /** The caller already holds the object's write lock (data movement). */
  lockHeld?: boolean;
  /**
   * Called after the whole body was received and erasure-written to tmp, before anything is
   * visible. Throwing aborts the put with nothing committed (BadDigest, checksum mismatches).
   * May return extra system metadata to store (checksums).
   */
  beforeCommit?: (received: ReceivedBody) => Promise<Record<string, string> | void> | Record<string, string> | void;
  /** Digests to compute over the body besides MD5 (payload hash, x-amz-checksum-*), handed to beforeCommit. */
  digests?: readonly DigestAlgorithm[];
  /**
   * The caller gives the version's ETag (`etag`, `sealing` or `compressing`), so the MD5 of the
   * stored bytes is not taken: a sealed or compressed body's MD5 is no one's ETag. `beforeCommit`
   * then sees an empty `md5Hex` (and `digests.md5`). Without an ETag from the caller the put fails.
   */
  skipStoredMd5?: boolean;
  /**
   * A condition on the object's current version (undefined: none, or a delete marker), checked
   * under the write lock just before publishing; throwing aborts with nothing committed.
   */
  precondition?: (current: ObjectInfo | undefined) => void;
}

export interface GetObjectOptions {
  versionId?: string;
  /** Byte range already validated against the object size by the caller, or resolved here. */
  range?: { offset: number; length: number };
  /**
   * Runs once the version is known, before any data is read (under the read lock): checks
   * preconditions (throwing aborts the read) and may choose the range from the object's size.
   */
  prepare?: (info: ObjectInfo) => { offset: number; length: number } | undefined;
  /** The caller already holds the object's lock (data movement). */
  lockHeld?: boolean;
  /**
   * The caller takes an encrypted version's stored (sealed) bytes: `range` and the range
   * `prepare` returns are then in stored bytes. Without it an encrypted version is refused, so
   * no path hands sealed bytes on as if they were the object. A compressed version is
   * decompressed unless this is set (its stored bytes are then handed on as they are).
   */
  sealed?: boolean;
}

export interface DeleteObjectOptions {
  versionId?: string;
  versioning: BucketVersioning;
  /** Writes a delete marker with this id and time (data movement copies a marker). */
  marker?: { versionId: string; modTimeMs: number };
  /** The caller already holds the object's write lock (data movement). */
  lockHeld?: boolean;
  /**
   * A condition on the object's current version (If-Match, x-amz-if-match-*), checked under the
   * write lock before anything changes; throwing refuses the delete.
   */
  precondition?: (current: ObjectInfo | undefined) => void;
  /** Removing a version under GOVERNANCE retention is allowed (the caller asked for and may bypass it). */
  bypassGovernance?: boolean;
  /**
   * Data movement only (rebalance, decommission): the version was copied to another pool and
   * this removes the source copy, so object lock does not refuse it, and a transitioned
   * version's tier object stays (the copy names it). Never set for a user's delete.
   */
  ignoreObjectLock?: boolean;
}

export interface DeleteObjectResult {
  /** The version removed, or the delete marker created. */
  versionId: string;
  deleteMarker: boolean;
}

/** Listing entry: every version of one key, newest first, resolved by quorum. */
export interface ListedObject {
  key: string;
  versions: ObjectInfo[];
}
