/**
 * Strict decoders of a multipart upload's records under `.svc.sys/multipart/` (docs/formats.md):
 * `upload.json` (the upload's geometry and metadata) and `part.<N>.json` (one uploaded part). A
 * copy that is not JSON, of another version, or with a field missing or of the wrong type is
 * refused with a named error (UnsupportedFormat, CorruptFormat) and casts no vote: the drives'
 * copies that decode decide, as for every other record of an erasure set.
 */
import { SvcError } from '../errors/index.js';
import type { StorageClass } from '../format/xl-meta-types.js';
import type { MultipartChecksum } from './types.js';
import { digestAlgorithms } from './coding/digests.js';

export interface UploadRecord {
  version: 1;
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
}

export interface PartRecord {
  number: number;
  sizeBytes: number;
  etag: string;
  modTimeMs: number;
  /** The part's checksum (base64) in its upload's algorithm. */
  checksum?: string;
}

const corrupt = (file: string, message: string): SvcError => new SvcError('CorruptFormat', `${file}: ${message}`);
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isWhole = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
const isTextMap = (value: unknown): value is Record<string, string> => isRecord(value) && Object.values(value).every((entry) => typeof entry === 'string');
const storageClasses: readonly StorageClass[] = ['STANDARD', 'REDUCED_REDUNDANCY'];

const checksumAlgorithms: readonly string[] = digestAlgorithms;
const isUploadChecksum = (value: unknown): value is MultipartChecksum =>
  isRecord(value) && typeof value.algorithm === 'string' && checksumAlgorithms.includes(value.algorithm) && (value.type === 'COMPOSITE' || value.type === 'FULL_OBJECT');

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
  if (value.version !== 1) throw new SvcError('UnsupportedFormat', `upload.json: version ${JSON.stringify(value.version) ?? 'missing'} is not supported`);
  const { uploadId, bucket, key, dataDir, initiatedMs, dataShards, parityShards, distribution, storageClass, contentType, userMetadata, systemMetadata } = value;
  if (typeof uploadId !== 'string' || typeof bucket !== 'string' || typeof key !== 'string' || typeof dataDir !== 'string') throw corrupt('upload.json', 'uploadId, bucket, key and dataDir must be strings');
  if (!isWhole(initiatedMs) || !isWhole(dataShards) || !isWhole(parityShards) || dataShards < 1) throw corrupt('upload.json', 'initiatedMs, dataShards and parityShards must be whole numbers');
  if (!Array.isArray(distribution) || distribution.length !== dataShards + parityShards || !distribution.every(isWhole)) throw corrupt('upload.json', 'distribution must list a whole number for each shard');
  if (!storageClasses.includes(storageClass as StorageClass)) throw corrupt('upload.json', 'storageClass is unknown');
  if (contentType !== undefined && typeof contentType !== 'string') throw corrupt('upload.json', 'contentType must be a string');
  if (!isTextMap(userMetadata) || !isTextMap(systemMetadata)) throw corrupt('upload.json', 'userMetadata and systemMetadata must map strings to strings');
  if (value.checksum !== undefined && !isUploadChecksum(value.checksum)) throw corrupt('upload.json', 'checksum must name a known algorithm and COMPOSITE or FULL_OBJECT');
  return value as unknown as UploadRecord;
}

export function decodePartRecord(text: string): PartRecord {
  const value = parsed(text, 'part record');
  if (!isWhole(value.number) || !isWhole(value.sizeBytes) || !isWhole(value.modTimeMs) || typeof value.etag !== 'string') throw corrupt('part record', 'number, sizeBytes and modTimeMs must be whole numbers and etag a string');
  if (value.checksum !== undefined && typeof value.checksum !== 'string') throw corrupt('part record', 'checksum must be a string');
  return value as unknown as PartRecord;
}
