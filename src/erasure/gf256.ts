/**
 * Arithmetic in GF(2^8) with the polynomial x^8 + x^4 + x^3 + x^2 + 1 (0x11D), the field of the
 * Vandermonde-systematic Reed-Solomon construction used across the industry.
 */
const polynomial = 0x11d;

export const expTable = new Uint8Array(512);
export const logTable = new Uint8Array(256);

{
  let value = 1;
  for (let power = 0; power < 255; power += 1) {
    expTable[power] = value;
    logTable[value] = power;
    value <<= 1;
    if (value & 0x100) value ^= polynomial;
  }
  for (let power = 255; power < 512; power += 1) expTable[power] = expTable[power - 255]!;
}

export function gfMul(a: number, b: number): number {
  if (a === 0 || b === 0) return 0;
  return expTable[logTable[a]! + logTable[b]!]!;
}

export function gfInverse(a: number): number {
  if (a === 0) throw new RangeError('zero has no inverse in GF(2^8)');
  return expTable[255 - logTable[a]!]!;
}

export function gfPow(base: number, exponent: number): number {
  if (exponent === 0) return 1;
  if (base === 0) return 0;
  return expTable[(logTable[base]! * exponent) % 255]!;
}

/** mulTables[c] is the 256-entry table of c * x. */
export const mulTables: Uint8Array[] = Array.from({ length: 256 }, (_, c) => {
  const table = new Uint8Array(256);
  for (let x = 0; x < 256; x += 1) table[x] = gfMul(c, x);
  return table;
});
