/**
 * Checksums of multipart uploads: each part's checksum is computed as it is stored (in the
 * algorithm the upload named); at completion the parts the client lists must carry the same
 * checksums, and the object's checksum is made from them: COMPOSITE is the algorithm's digest of
 * the parts' raw checksums in order, written `<base64>-<parts>`; FULL_OBJECT is the CRC of the
 * whole body, combined from the parts' CRCs and sizes without reading the data again.
 */
import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { Crc32c } from '@aws-crypto/crc32c';
import { SvcError } from '../errors/index.js';
import { combineCrcs, Crc64Nvme, isCrcAlgorithm } from '../util/crc.js';
import type { DigestAlgorithm } from './coding/digests.js';
import type { MultipartChecksum } from './types.js';

/** What one part of a CompleteMultipartUpload names besides its number and ETag. */
export interface RequestedPart {
  number: number;
  etag: string;
  /** Checksums the client listed for the part, by algorithm (base64). */
  checksums?: Partial<Record<DigestAlgorithm, string>>;
}

interface ChosenPart {
  number: number;
  sizeBytes: number;
  checksum?: string;
}

/** Refuses a part whose listed checksum is not the one stored for it (InvalidPart), or of another algorithm (InvalidRequest). */
export function checkListedChecksums(checksum: MultipartChecksum | undefined, requested: readonly RequestedPart[], chosen: readonly ChosenPart[]): void {
  requested.forEach((item, index) => {
    for (const [algorithm, value] of Object.entries(item.checksums ?? {})) {
      if (checksum === undefined || algorithm !== checksum.algorithm) {
        throw new SvcError('InvalidRequest', `Part ${item.number} names a ${algorithm.toUpperCase()} checksum, but the upload was created with ${checksum ? checksum.algorithm.toUpperCase() : 'no checksum algorithm'}.`, { partNumber: item.number });
      }
      if (chosen[index]!.checksum !== value) throw new SvcError('InvalidPart', `The checksum of part ${item.number} does not match the uploaded part's.`, { partNumber: item.number });
    }
  });
}

/** What a CompleteMultipartUpload request says of the object: its checksum type and value, its size (`x-amz-mp-object-size`). */
export interface CompletionClaims {
  type?: string;
  values?: Partial<Record<DigestAlgorithm, string>>;
  sizeBytes?: number;
}

/**
 * Refuses a completion that names another checksum type than the upload's or another size than
 * its parts make (InvalidRequest), or an object checksum other than the one its parts make (BadDigest).
 */
export function checkCompletionClaims(checksum: MultipartChecksum | undefined, stated: CompletionClaims | undefined, computed: Record<string, string>, sizeBytes: number): void {
  if (stated?.sizeBytes !== undefined && stated.sizeBytes !== sizeBytes) throw new SvcError('InvalidRequest', `The object is ${sizeBytes} bytes, not the ${stated.sizeBytes} x-amz-mp-object-size names.`);
  if (stated?.type !== undefined && stated.type !== checksum?.type) {
    throw new SvcError('InvalidRequest', `The upload was created with checksum type ${checksum?.type ?? 'none'}, but CompleteMultipartUpload names ${stated.type}.`);
  }
  for (const [algorithm, value] of Object.entries(stated?.values ?? {})) {
    const ours = computed[`x-amz-checksum-${algorithm}`];
    if (ours === undefined) throw new SvcError('InvalidRequest', `The upload keeps no ${algorithm.toUpperCase()} checksum.`);
    if (value !== ours && value !== ours.replace(/-\d+$/, '')) throw new SvcError('BadDigest', `The ${algorithm.toUpperCase()} you specified did not match the calculated checksum.`);
  }
}

/** The object's stored checksum entries (`x-amz-checksum-<algorithm>`, `x-amz-checksum-type`) from its parts. */
export function objectChecksumOf(checksum: MultipartChecksum | undefined, chosen: readonly ChosenPart[]): Record<string, string> {
  if (checksum === undefined || chosen.some((part) => part.checksum === undefined)) return {};
  const raw = chosen.map((part) => Buffer.from(part.checksum!, 'base64'));
  let value: string;
  if (checksum.type === 'FULL_OBJECT') {
    if (!isCrcAlgorithm(checksum.algorithm)) throw new SvcError('InvalidRequest', `The FULL_OBJECT checksum type cannot be used with ${checksum.algorithm.toUpperCase()}.`);
    value = Buffer.from(combineCrcs(checksum.algorithm, raw.map((crc, index) => ({ crc, lengthBytes: chosen[index]!.sizeBytes })))).toString('base64');
  } else {
    value = `${digestOf(checksum.algorithm, Buffer.concat(raw)).toString('base64')}-${chosen.length}`;
  }
  return { [`x-amz-checksum-${checksum.algorithm}`]: value, 'x-amz-checksum-type': checksum.type };
}

function digestOf(algorithm: DigestAlgorithm, bytes: Buffer): Buffer {
  const word = (value: number): Buffer => {
    const out = Buffer.alloc(4);
    out.writeUInt32BE(value >>> 0);
    return out;
  };
  if (algorithm === 'crc32') return word(crc32(bytes));
  if (algorithm === 'crc32c') return word(new Crc32c().update(bytes).digest());
  if (algorithm === 'crc64nvme') {
    const crc = new Crc64Nvme();
    crc.update(bytes);
    return Buffer.from(crc.digest());
  }
  return createHash(algorithm).update(bytes).digest();
}
