/**
 * Payload integrity: SHA-256 of the body (x-amz-content-sha256), Content-MD5, and the
 * x-amz-checksum-{crc32,crc32c,sha1,sha256,crc64nvme} values from headers or aws-chunked trailers.
 * The object layer computes the digests while it codes the body; `verify` runs before the write
 * commits.
 */
import { SvcError } from '../../../errors/index.js';
import type { DigestAlgorithm, ReceivedBody } from '../../../object/index.js';

export const checksumAlgorithms = ['crc32', 'crc32c', 'sha1', 'sha256', 'crc64nvme'] as const;
export type ChecksumAlgorithm = (typeof checksumAlgorithms)[number] & DigestAlgorithm;

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
  if (checksums.size > 1) throw new SvcError('InvalidRequest', 'Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.');
  return { ...(contentMd5 !== undefined ? { contentMd5Base64: contentMd5 } : {}), checksums };
}

/**
 * Checks what a request promised about its body against the digests the object layer computed
 * while storing it (in tmp, before anything is visible).
 */
export class PayloadVerifier {
  constructor(private readonly expectations: PayloadExpectations) {}

  /** The digests to compute over the body besides MD5. */
  get algorithms(): DigestAlgorithm[] {
    const algorithms = new Set<DigestAlgorithm>(this.expectations.checksums.keys());
    if (this.expectations.sha256Hex !== undefined) algorithms.add('sha256');
    return [...algorithms];
  }

  /** Checks every promise against the bytes received; returns the checksums to store. */
  verify(received: ReceivedBody): Record<string, string> {
    const { contentMd5Base64, sha256Hex } = this.expectations;
    if (contentMd5Base64 !== undefined && hexToBase64(received.md5Hex) !== contentMd5Base64) throw new SvcError('BadDigest');
    if (sha256Hex !== undefined && received.digests.sha256 !== sha256Hex) throw new SvcError('XAmzContentSHA256Mismatch');
    const stored: Record<string, string> = {};
    for (const [algorithm, expected] of this.expectations.checksums) {
      const actual = hexToBase64(received.digests[algorithm]!);
      const promised = expected();
      if (promised === undefined) throw new SvcError('InvalidRequest', `the x-amz-checksum-${algorithm} trailer was announced but not sent`);
      if (promised !== actual) throw new SvcError('BadDigest', `The ${algorithm.toUpperCase()} you specified did not match the calculated checksum.`);
      stored[`x-amz-checksum-${algorithm}`] = actual;
    }
    return stored;
  }
}

function hexToBase64(hex: string): string {
  return Buffer.from(hex, 'hex').toString('base64');
}
