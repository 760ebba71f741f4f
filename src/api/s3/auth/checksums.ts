/**
 * Payload integrity: SHA-256 of the body (x-amz-content-sha256), Content-MD5, and the
 * x-amz-checksum-{crc32,crc32c,sha1,sha256} values from headers or aws-chunked trailers.
 * The body is hashed as it streams; `verify` runs before the write commits.
 */
import { createHash, type Hash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { Crc32c } from '@aws-crypto/crc32c';
import { SvcError } from '../../../errors/index.js';

export const checksumAlgorithms = ['crc32', 'crc32c', 'sha1', 'sha256'] as const;
export type ChecksumAlgorithm = (typeof checksumAlgorithms)[number];

interface Incremental {
  update(data: Uint8Array): void;
  base64(): string;
}

function hasher(algorithm: ChecksumAlgorithm): Incremental {
  if (algorithm === 'crc32') {
    let value = 0;
    return { update: (data) => (value = crc32(data, value)), base64: () => u32Base64(value) };
  }
  if (algorithm === 'crc32c') {
    const crc = new Crc32c();
    return { update: (data) => void crc.update(data), base64: () => u32Base64(crc.digest()) };
  }
  const hash: Hash = createHash(algorithm);
  return { update: (data) => void hash.update(data), base64: () => hash.digest('base64') };
}

function u32Base64(value: number): string {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value >>> 0);
  return bytes.toString('base64');
}

export interface PayloadExpectations {
  contentMd5Base64?: string;
  sha256Hex?: string;
  /** Algorithms whose value comes in a header now or a trailer later. */
  checksums: Map<ChecksumAlgorithm, () => string | undefined>;
}

/** Reads what the request promises about its body from its headers (and trailer names). */
export function expectationsFrom(headers: Record<string, string | string[] | undefined>, trailers: Map<string, string> | undefined): PayloadExpectations {
  const get = (name: string): string | undefined => {
    const value = headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const contentMd5 = get('content-md5');
  if (contentMd5 !== undefined && !/^[A-Za-z0-9+/]{22}==$/.test(contentMd5)) throw new SvcError('InvalidDigest');
  const checksums = new Map<ChecksumAlgorithm, () => string | undefined>();
  for (const algorithm of checksumAlgorithms) {
    const name = `x-amz-checksum-${algorithm}`;
    const value = get(name);
    if (value !== undefined) checksums.set(algorithm, () => value);
  }
  for (const name of (get('x-amz-trailer') ?? '').split(',').map((part) => part.trim().toLowerCase()).filter(Boolean)) {
    const algorithm = name.replace('x-amz-checksum-', '') as ChecksumAlgorithm;
    if (!name.startsWith('x-amz-checksum-') || !checksumAlgorithms.includes(algorithm)) throw new SvcError('InvalidArgument', `unsupported trailer '${name}'`);
    checksums.set(algorithm, () => trailers?.get(name));
  }
  return { ...(contentMd5 !== undefined ? { contentMd5Base64: contentMd5 } : {}), checksums };
}

export class PayloadVerifier {
  private readonly sha256?: Hash;
  private readonly hashers = new Map<ChecksumAlgorithm, Incremental>();

  constructor(private readonly expectations: PayloadExpectations) {
    if (expectations.sha256Hex) this.sha256 = createHash('sha256');
    for (const algorithm of expectations.checksums.keys()) this.hashers.set(algorithm, hasher(algorithm));
  }

  async *wrap(body: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
    for await (const chunk of body) {
      this.sha256?.update(chunk);
      for (const hash of this.hashers.values()) hash.update(chunk);
      yield chunk;
    }
  }

  /** Checks every promise against the bytes received; returns the checksums to store. */
  verify(md5Hex: string): Record<string, string> {
    const { contentMd5Base64, sha256Hex } = this.expectations;
    if (contentMd5Base64 !== undefined && Buffer.from(md5Hex, 'hex').toString('base64') !== contentMd5Base64) throw new SvcError('BadDigest');
    if (sha256Hex !== undefined && this.sha256!.digest('hex') !== sha256Hex) throw new SvcError('XAmzContentSHA256Mismatch');
    const stored: Record<string, string> = {};
    for (const [algorithm, expected] of this.expectations.checksums) {
      const actual = this.hashers.get(algorithm)!.base64();
      const promised = expected();
      if (promised === undefined) throw new SvcError('InvalidRequest', `the x-amz-checksum-${algorithm} trailer was announced but not sent`);
      if (promised !== actual) throw new SvcError('BadDigest', `The ${algorithm.toUpperCase()} you specified did not match the calculated checksum.`);
      stored[`x-amz-checksum-${algorithm}`] = actual;
    }
    return stored;
  }
}
