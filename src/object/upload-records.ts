/**
 * Strict decoders of a multipart upload's records under `.svc.sys/multipart/` (docs/formats.md):
 * `upload.json` (the upload's geometry and metadata) and `part.<N>.json` (one uploaded part). A
 * copy that is not JSON, of another version, or with a field missing or of the wrong type is
 * refused with a named error (UnsupportedFormat, CorruptFormat) and casts no vote: the drives'
 * copies that decode decide, as for every other record of an erasure set.
 */
import { SvcError } from '../errors/index.js';
import type { CompressionInfo, EncryptionKeyRecord, StorageClass } from '../format/xl-meta-types.js';
import { blockCountOf, blockPlainLength, compressionAlgorithm } from '../format/compressed-blocks.js';
import type { MultipartChecksum } from './types.js';
import { digestAlgorithms } from './coding/digests.js';

export interface UploadRecord {
  /**
   * 1: a plain upload; 2: an encrypted one (`encryption` present); 3: a compressed one
   * (`compression` present, `encryption` too when encrypted). A decoder refuses a version it
   * predates, so an older build never stores a part of such an upload as sent.
   */
  version: 1 | 2 | 3;
  uploadId: string;
  bucket: string;
  key: string;
  initiatedMs: number;
  storageClass: StorageClass;
  contentType?: string;
  userMetadata: Record<string, string>;
  systemMetadata: Record<string, string>;
  dataShards: number;
  parityShards: number;
  distribution: number[];
  dataDir: string;
  /** The checksum every part and the object keep; absent when CreateMultipartUpload named none. */
  checksum?: MultipartChecksum;
  /** Encrypted uploads: the sealed data key every part is sealed under (for SSE-C its keyed hash, never the key). */
  encryption?: EncryptionKeyRecord;
  /** Compressed uploads: the block format every part is compressed in (before any sealing), decided at creation. */
  compression?: CompressionInfo['algorithm'];
}

export interface PartRecord {
  number: number;
  /** The client's size of the part (its plaintext when encrypted). */
  sizeBytes: number;
  /** The client's ETag (the plaintext's MD5, or an opaque value for SSE-KMS and SSE-C). */
  etag: string;
  modTimeMs: number;
  /** The part's checksum (base64) in its upload's algorithm. */
  checksum?: string;
  /** Encrypted or compressed parts: the size the drives hold (compressed, then sealed). */
  storedSizeBytes?: number;
  /** Encrypted parts: the salt of the part's own package key (base64, 16 bytes). */
  keySalt?: string;
  /** Compressed parts: the stored length of each 1 MiB block of the part, in order (compressed-blocks.ts). */
  compressedBlocks?: number[];
}

const corrupt = (file: string, message: string): SvcError => new SvcError('CorruptFormat', `${file}: ${message}`);
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isWhole = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
const isTextMap = (value: unknown): value is Record<string, string> => isRecord(value) && Object.values(value).every((entry) => typeof entry === 'string');
const storageClasses: readonly StorageClass[] = ['STANDARD', 'REDUCED_REDUNDANCY'];

const checksumAlgorithms: readonly string[] = digestAlgorithms;
const isUploadChecksum = (value: unknown): value is MultipartChecksum =>
  isRecord(value) && typeof value.algorithm === 'string' && checksumAlgorithms.includes(value.algorithm) && (value.type === 'COMPOSITE' || value.type === 'FULL_OBJECT');

const encryptionKinds: readonly string[] = ['SSE-S3', 'SSE-KMS', 'SSE-C'];
const isBase64 = (value: unknown): value is string => typeof value === 'string' && /^[A-Za-z0-9+/]+={0,2}$/.test(value);
const keyRecordFields = new Set(['kind', 'cipher', 'keyId', 'sealedKey', 'context', 'customerKeyHmac']);
/** The key half of an xl.meta encryption record: every member known, SSE-C's keyed hash present exactly for SSE-C. */
function isKeyRecord(value: unknown): value is EncryptionKeyRecord {
  if (!isRecord(value) || !Object.keys(value).every((name) => keyRecordFields.has(name))) return false;
  if (typeof value.kind !== 'string' || !encryptionKinds.includes(value.kind) || value.cipher !== 'aes-256-gcm-64k-v1') return false;
  if (typeof value.keyId !== 'string' || !isBase64(value.sealedKey)) return false;
  if (value.context !== undefined && !isTextMap(value.context)) return false;
  return (value.kind === 'SSE-C') === isBase64(value.customerKeyHmac) && (value.kind === 'SSE-C' || value.customerKeyHmac === undefined);
}

/** A compressed part's block index: one stored length per 1 MiB block of `plainSizeBytes`, each from 1 to the block's plain length. */
function isPartBlocks(value: unknown, plainSizeBytes: number): value is number[] {
  if (!Array.isArray(value) || value.length !== blockCountOf(plainSizeBytes)) return false;
  return value.every((length, index) => isWhole(length) && length >= 1 && length <= blockPlainLength(plainSizeBytes, index));
}

function parsed(text: string, file: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw corrupt(file, 'not JSON');
  }
  if (!isRecord(value)) throw corrupt(file, 'not an object');
  return value;
}

export function decodeUploadRecord(text: string): UploadRecord {
  const value = parsed(text, 'upload.json');
  if (value.version !== 1 && value.version !== 2 && value.version !== 3) throw new SvcError('UnsupportedFormat', `upload.json: version ${JSON.stringify(value.version) ?? 'missing'} is not supported`);
  const { uploadId, bucket, key, dataDir, initiatedMs, dataShards, parityShards, distribution, storageClass, contentType, userMetadata, systemMetadata } = value;
  if (typeof uploadId !== 'string' || typeof bucket !== 'string' || typeof key !== 'string' || typeof dataDir !== 'string') throw corrupt('upload.json', 'uploadId, bucket, key and dataDir must be strings');
  if (!isWhole(initiatedMs) || !isWhole(dataShards) || !isWhole(parityShards) || dataShards < 1) throw corrupt('upload.json', 'initiatedMs, dataShards and parityShards must be whole numbers');
  if (!Array.isArray(distribution) || distribution.length !== dataShards + parityShards || !distribution.every(isWhole)) throw corrupt('upload.json', 'distribution must list a whole number for each shard');
  if (!storageClasses.includes(storageClass as StorageClass)) throw corrupt('upload.json', 'storageClass is unknown');
  if (contentType !== undefined && typeof contentType !== 'string') throw corrupt('upload.json', 'contentType must be a string');
  if (!isTextMap(userMetadata) || !isTextMap(systemMetadata)) throw corrupt('upload.json', 'userMetadata and systemMetadata must map strings to strings');
  if (value.checksum !== undefined && !isUploadChecksum(value.checksum)) throw corrupt('upload.json', 'checksum must name a known algorithm and COMPOSITE or FULL_OBJECT');
  if ((value.version === 3) !== (value.compression !== undefined)) throw corrupt('upload.json', 'compression must be present exactly in version 3');
  if (value.compression !== undefined && value.compression !== compressionAlgorithm) throw new SvcError('UnsupportedFormat', `upload.json: compression ${JSON.stringify(value.compression)} is not known to this build`);
  if (value.version !== 3 && (value.version === 2) !== (value.encryption !== undefined)) throw corrupt('upload.json', 'encryption must be present exactly in version 2 (or in version 3 when encrypted)');
  if (value.encryption !== undefined && !isKeyRecord(value.encryption)) throw corrupt('upload.json', 'encryption must be a sealed key record');
  return value as unknown as UploadRecord;
}

export function decodePartRecord(text: string): PartRecord {
  const value = parsed(text, 'part record');
  if (!isWhole(value.number) || !isWhole(value.sizeBytes) || !isWhole(value.modTimeMs) || typeof value.etag !== 'string') throw corrupt('part record', 'number, sizeBytes and modTimeMs must be whole numbers and etag a string');
  if (value.checksum !== undefined && typeof value.checksum !== 'string') throw corrupt('part record', 'checksum must be a string');
  const transformed = value.keySalt !== undefined || value.compressedBlocks !== undefined;
  if ((value.storedSizeBytes === undefined) === transformed) throw corrupt('part record', 'storedSizeBytes comes exactly with keySalt or compressedBlocks');
  if (value.storedSizeBytes !== undefined && !isWhole(value.storedSizeBytes)) throw corrupt('part record', 'storedSizeBytes must be a whole number');
  if (value.keySalt !== undefined && !isBase64(value.keySalt)) throw corrupt('part record', 'keySalt must be base64');
  if (value.compressedBlocks !== undefined && !isPartBlocks(value.compressedBlocks, value.sizeBytes)) throw corrupt('part record', 'compressedBlocks must give a stored length from 1 to its plain length for each 1 MiB block of the part');
  return value as unknown as PartRecord;
}
