/**
 * Digests of an object body, computed over the bytes in order as they are coded: the MD5 that
 * becomes the ETag, and whichever of SHA-256, SHA-1, CRC-32, CRC-32C and CRC-64/NVME the caller asked for (a
 * signed payload hash, x-amz-checksum-* values). Values are lower-case hex of the digest bytes
 * (CRC values as their big-endian bytes: four, or eight for CRC-64/NVME).
 */
import { createHash, type Hash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { Crc32c } from '@aws-crypto/crc32c';
import { Crc64Nvme } from '../../util/crc.js';

export const digestAlgorithms = ['sha256', 'sha1', 'crc32', 'crc32c', 'crc64nvme'] as const;
export type DigestAlgorithm = (typeof digestAlgorithms)[number];

/** The MD5 (an empty string when it was not asked for), and the requested algorithms. */
export type DigestValues = { md5: string } & Partial<Record<DigestAlgorithm, string>>;

interface Incremental {
  update(data: Uint8Array): void;
  hex(): string;
}

function incremental(algorithm: DigestAlgorithm | 'md5'): Incremental {
  if (algorithm === 'crc32') {
    let value = 0;
    return { update: (data) => (value = crc32(data, value)), hex: () => u32Hex(value) };
  }
  if (algorithm === 'crc32c') {
    const crc = new Crc32c();
    return { update: (data) => void crc.update(data), hex: () => u32Hex(crc.digest()) };
  }
  if (algorithm === 'crc64nvme') {
    const crc = new Crc64Nvme();
    return { update: (data) => crc.update(data), hex: () => Buffer.from(crc.digest()).toString('hex') };
  }
  const hash: Hash = createHash(algorithm);
  return { update: (data) => void hash.update(data), hex: () => hash.digest('hex') };
}

function u32Hex(value: number): string {
  return (value >>> 0).toString(16).padStart(8, '0');
}

export class BodyDigests {
  private readonly hashes: [DigestAlgorithm | 'md5', Incremental][];

  /** `md5: false` leaves the MD5 out (its value is then ''): for bytes whose ETag comes from elsewhere. */
  constructor(algorithms: readonly DigestAlgorithm[] = [], options: { md5?: boolean } = {}) {
    const md5: readonly 'md5'[] = options.md5 === false ? [] : ['md5'];
    this.hashes = [...md5, ...new Set(algorithms)].map((algorithm) => [algorithm, incremental(algorithm)]);
  }

  update(data: Uint8Array): void {
    for (const [, hash] of this.hashes) hash.update(data);
  }

  /** The values; the object is spent afterwards. */
  finish(): DigestValues {
    return { md5: '', ...Object.fromEntries(this.hashes.map(([algorithm, hash]) => [algorithm, hash.hex()])) } as DigestValues;
  }
}
