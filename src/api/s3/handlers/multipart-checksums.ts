/**
 * The checksum headers and XML fields of multipart uploads: CreateMultipartUpload's
 * `x-amz-checksum-algorithm` and `x-amz-checksum-type` (with AWS's rules on which algorithm takes
 * which type), the per-part `Checksum<ALGORITHM>` elements of CompleteMultipartUpload and
 * ListParts, and the object's checksum in the answer to Complete.
 */
import { SvcError } from '../../../errors/index.js';
import type { CompletionClaims, DigestAlgorithm, MultipartChecksum } from '../../../object/index.js';
import { headerValue } from '../context.js';
import { checksumAlgorithms, type ChecksumAlgorithm } from '../auth/checksums.js';

type Headers = Record<string, string | string[] | undefined>;

const fullObjectOnly: readonly DigestAlgorithm[] = ['crc64nvme'];
const compositeOnly: readonly DigestAlgorithm[] = ['sha1', 'sha256'];

/** The element name of an algorithm's checksum: ChecksumCRC32, ChecksumCRC64NVME, ... */
export function checksumField(algorithm: DigestAlgorithm): string {
  return `Checksum${algorithm.toUpperCase()}`;
}

/** CreateMultipartUpload's checksum: the algorithm, and the type (its default: FULL_OBJECT for CRC64NVME, else COMPOSITE). */
export function uploadChecksumOf(headers: Headers): MultipartChecksum | undefined {
  const algorithmText = headerValue(headers, 'x-amz-checksum-algorithm');
  const typeText = headerValue(headers, 'x-amz-checksum-type');
  if (algorithmText === undefined) {
    if (typeText !== undefined) throw new SvcError('InvalidRequest', 'The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.');
    return undefined;
  }
  const algorithm = algorithmText.toLowerCase() as ChecksumAlgorithm;
  if (!checksumAlgorithms.includes(algorithm)) throw new SvcError('InvalidRequest', `Checksum algorithm '${algorithmText}' is not supported: use CRC32, CRC32C, CRC64NVME, SHA1 or SHA256.`);
  const type = typeText?.toUpperCase() ?? (fullObjectOnly.includes(algorithm) ? 'FULL_OBJECT' : 'COMPOSITE');
  if (type !== 'FULL_OBJECT' && type !== 'COMPOSITE') throw new SvcError('InvalidRequest', `Checksum type '${typeText}' is not valid: use COMPOSITE or FULL_OBJECT.`);
  if (type === 'COMPOSITE' && fullObjectOnly.includes(algorithm)) throw new SvcError('InvalidRequest', `The COMPOSITE checksum type cannot be used with the ${algorithm} checksum algorithm.`);
  if (type === 'FULL_OBJECT' && compositeOnly.includes(algorithm)) throw new SvcError('InvalidRequest', `The FULL_OBJECT checksum type cannot be used with the ${algorithm} checksum algorithm.`);
  return { algorithm, type };
}

/** The headers that echo an upload's checksum (CreateMultipartUpload's answer). */
export function uploadChecksumHeaders(checksum: MultipartChecksum | undefined): Record<string, string> {
  return checksum ? { 'x-amz-checksum-algorithm': checksum.algorithm.toUpperCase(), 'x-amz-checksum-type': checksum.type } : {};
}

/** The checksums a CompleteMultipartUpload Part element lists. */
export function listedChecksumsOf(part: Record<string, unknown>): Partial<Record<DigestAlgorithm, string>> {
  const listed: Partial<Record<DigestAlgorithm, string>> = {};
  for (const algorithm of checksumAlgorithms) {
    const value = part[checksumField(algorithm)];
    if (typeof value === 'string') listed[algorithm] = value;
  }
  return listed;
}

/** What a CompleteMultipartUpload's headers say of the object: its checksum (type, value) and its size. */
export function completionClaimsOf(headers: Headers): CompletionClaims {
  const type = headerValue(headers, 'x-amz-checksum-type')?.toUpperCase();
  const values: Partial<Record<DigestAlgorithm, string>> = {};
  for (const algorithm of checksumAlgorithms) {
    const value = headerValue(headers, `x-amz-checksum-${algorithm}`);
    if (value !== undefined) values[algorithm] = value;
  }
  const sizeText = headerValue(headers, 'x-amz-mp-object-size');
  if (sizeText !== undefined && !/^\d{1,16}$/.test(sizeText)) throw new SvcError('InvalidArgument', `x-amz-mp-object-size '${sizeText}' is not a whole number of bytes.`);
  return { ...(type !== undefined ? { type } : {}), values, ...(sizeText !== undefined ? { sizeBytes: Number(sizeText) } : {}) };
}

/** A part's checksum element in ListParts (none when the upload keeps no checksum). */
export function partChecksumFields(checksum: MultipartChecksum | undefined, value: string | undefined): Record<string, string> {
  return checksum && value !== undefined ? { [checksumField(checksum.algorithm)]: value } : {};
}

/** The object's checksum and its type as elements (CompleteMultipartUploadResult, GetObjectAttributes' Checksum). */
export function objectChecksumFields(systemMetadata: Record<string, string>): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const algorithm of checksumAlgorithms) {
    const value = systemMetadata[`x-amz-checksum-${algorithm}`];
    if (value !== undefined) fields[checksumField(algorithm)] = value;
  }
  const type = systemMetadata['x-amz-checksum-type'];
  if (type !== undefined && Object.keys(fields).length > 0) fields.ChecksumType = type;
  return fields;
}
