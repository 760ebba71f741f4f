/**
 * CRC arithmetic for S3 checksums: an incremental CRC-64/NVME (the `CRC64NVME` algorithm), and
 * the combination of two CRCs of adjacent byte runs into the CRC of their concatenation, which
 * gives a multipart object's full-object checksum from its parts' checksums without reading the
 * data again. The three S3 CRCs (CRC-32, CRC-32C, CRC-64/NVME) are reflected, start from all ones
 * and are complemented at the end; for such CRCs, crc(A‖B) = crc(A)·x^(8·|B|) mod P ⊕ crc(B).
 */

export type CrcAlgorithm = 'crc32' | 'crc32c' | 'crc64nvme';

interface CrcShape {
  widthBits: number;
  /** The polynomial, bit-reflected. */
  reflectedPoly: bigint;
}

const shapes: Record<CrcAlgorithm, CrcShape> = {
  crc32: { widthBits: 32, reflectedPoly: 0xedb88320n },
  crc32c: { widthBits: 32, reflectedPoly: 0x82f63b78n },
  crc64nvme: { widthBits: 64, reflectedPoly: 0x9a6c9329ac4bc9b5n },
};

// --- CRC-64/NVME, incremental ------------------------------------------------------------------

const crc64Low = new Uint32Array(256);
const crc64High = new Uint32Array(256);
for (let index = 0; index < 256; index += 1) {
  let value = BigInt(index);
  for (let bit = 0; bit < 8; bit += 1) value = value & 1n ? (value >> 1n) ^ shapes.crc64nvme.reflectedPoly : value >> 1n;
  crc64Low[index] = Number(value & 0xffffffffn);
  crc64High[index] = Number(value >> 32n);
}

/** CRC-64/NVME over bytes given in pieces; `digest` is its eight big-endian bytes. */
export class Crc64Nvme {
  private low = 0xffffffff;
  private high = 0xffffffff;

  update(data: Uint8Array): void {
    let low = this.low;
    let high = this.high;
    for (let offset = 0; offset < data.length; offset += 1) {
      const index = (low ^ data[offset]!) & 0xff;
      low = (((low >>> 8) | (high << 24)) ^ crc64Low[index]!) >>> 0;
      high = ((high >>> 8) ^ crc64High[index]!) >>> 0;
    }
    this.low = low;
    this.high = high;
  }

  digest(): Uint8Array {
    const out = Buffer.alloc(8);
    out.writeUInt32BE((this.high ^ 0xffffffff) >>> 0, 0);
    out.writeUInt32BE((this.low ^ 0xffffffff) >>> 0, 4);
    return out;
  }
}

// --- combination -------------------------------------------------------------------------------

/** a·b mod P, both in the reflected representation (the top bit is x^0). */
function multiplyModPoly(a: bigint, b: bigint, shape: CrcShape): bigint {
  let mask = 1n << BigInt(shape.widthBits - 1);
  let product = 0n;
  let multiplier = b;
  for (;;) {
    if (a & mask) {
      product ^= multiplier;
      if ((a & (mask - 1n)) === 0n) break;
    }
    mask >>= 1n;
    if (mask === 0n) break;
    multiplier = multiplier & 1n ? (multiplier >> 1n) ^ shape.reflectedPoly : multiplier >> 1n;
  }
  return product;
}

/** x^(8·lengthBytes) mod P, by squaring. */
function shiftOperator(lengthBytes: number, shape: CrcShape): bigint {
  let power = 1n << BigInt(shape.widthBits - 2); // x^1
  for (let square = 0; square < 3; square += 1) power = multiplyModPoly(power, power, shape); // x^8
  let result = 1n << BigInt(shape.widthBits - 1); // x^0
  let remaining = BigInt(lengthBytes);
  while (remaining > 0n) {
    if (remaining & 1n) result = multiplyModPoly(power, result, shape);
    power = multiplyModPoly(power, power, shape);
    remaining >>= 1n;
  }
  return result;
}

/** The CRC of A‖B from crc(A), crc(B) and B's length; values as their big-endian bytes. */
export function combineCrc(algorithm: CrcAlgorithm, first: Uint8Array, second: Uint8Array, secondLengthBytes: number): Uint8Array {
  const shape = shapes[algorithm];
  const firstValue = BigInt(`0x${Buffer.from(first).toString('hex')}`);
  const secondValue = BigInt(`0x${Buffer.from(second).toString('hex')}`);
  const combined = multiplyModPoly(shiftOperator(secondLengthBytes, shape), firstValue, shape) ^ secondValue;
  return Buffer.from(combined.toString(16).padStart(shape.widthBits / 4, '0'), 'hex');
}

/** The CRC of several runs in order from each run's CRC and length (at least one run). */
export function combineCrcs(algorithm: CrcAlgorithm, runs: readonly { crc: Uint8Array; lengthBytes: number }[]): Uint8Array {
  let combined = runs[0]!.crc;
  for (const run of runs.slice(1)) combined = combineCrc(algorithm, combined, run.crc, run.lengthBytes);
  return combined;
}

export function isCrcAlgorithm(algorithm: string): algorithm is CrcAlgorithm {
  return algorithm in shapes;
}
