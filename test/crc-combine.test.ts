/**
 * The CRC arithmetic behind multipart full-object checksums: CRC-64/NVME agrees with the AWS
 * SDK's, and combining the CRCs of adjacent runs gives the CRC of their concatenation for
 * CRC-32, CRC-32C and CRC-64/NVME. SVC_PROPERTY_SEED replays a failure (the seed is in the name).
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { crc32 } from 'node:zlib';
import { Crc32c } from '@aws-crypto/crc32c';
import { Crc64Nvme as SdkCrc64Nvme } from '@aws-sdk/crc64-nvme';
import { combineCrcs, Crc64Nvme, type CrcAlgorithm } from '../src/util/crc.js';

const seed = process.env.SVC_PROPERTY_SEED === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.SVC_PROPERTY_SEED);
const numRuns = Number(process.env.SVC_PROPERTY_RUNS ?? 200);

function crcOf(algorithm: CrcAlgorithm, bytes: Uint8Array): Uint8Array {
  if (algorithm === 'crc64nvme') {
    const crc = new Crc64Nvme();
    crc.update(bytes);
    return crc.digest();
  }
  const value = algorithm === 'crc32' ? crc32(bytes) : new Crc32c().update(bytes).digest();
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value >>> 0);
  return out;
}

describe('CRC arithmetic', () => {
  it('CRC-64/NVME has the standard check value and agrees with the AWS SDK in pieces', async () => {
    expect(Buffer.from(crcOf('crc64nvme', Buffer.from('123456789'))).toString('hex')).toBe('ae8b14860a799888');
    const bytes = Buffer.from(Array.from({ length: 10_000 }, (_, index) => (index * 7919) & 0xff));
    const sdk = new SdkCrc64Nvme();
    sdk.update(bytes);
    const ours = new Crc64Nvme();
    ours.update(bytes.subarray(0, 3333));
    ours.update(bytes.subarray(3333));
    expect(Buffer.from(ours.digest())).toEqual(Buffer.from(await sdk.digest()));
  });

  it(`combining the CRCs of runs gives the CRC of the whole (seed ${seed})`, () => {
    fc.assert(
      fc.property(fc.constantFrom<CrcAlgorithm>('crc32', 'crc32c', 'crc64nvme'), fc.array(fc.uint8Array({ maxLength: 300 }), { minLength: 1, maxLength: 6 }), (algorithm, runs) => {
        const combined = combineCrcs(algorithm, runs.map((run) => ({ crc: crcOf(algorithm, run), lengthBytes: run.length })));
        expect(Buffer.from(combined).toString('hex')).toBe(Buffer.from(crcOf(algorithm, Buffer.concat(runs))).toString('hex'));
      }),
      { seed, numRuns },
    );
  });
});
