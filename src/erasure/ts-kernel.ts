/**
 * The portable GF(2^8) region kernel in plain TypeScript: table lookups, one byte at a time,
 * unrolled by 8. Same math as the SIMD kernel; used where WebAssembly SIMD is unavailable.
 */
import { mulTables } from './gf256.js';
import type { Matrix } from './matrix.js';

export interface GfKernel {
  readonly name: 'wasm-simd' | 'typescript';
  /** outputs[r][i] = XOR over j of coefficients[r][j] * inputs[j][i], for i < length of the regions. */
  matrixMultiply(coefficients: Matrix, inputs: Uint8Array[], outputs: Uint8Array[]): void;
}

export const typescriptKernel: GfKernel = {
  name: 'typescript',
  matrixMultiply(coefficients, inputs, outputs) {
    for (let row = 0; row < outputs.length; row += 1) {
      const out = outputs[row]!;
      out.fill(0);
      const factors = coefficients[row]!;
      for (let column = 0; column < inputs.length; column += 1) {
        const factor = factors[column]!;
        if (factor !== 0) mulAddRegion(mulTables[factor]!, inputs[column]!, out);
      }
    }
  },
};

function mulAddRegion(table: Uint8Array, input: Uint8Array, out: Uint8Array): void {
  const length = out.length;
  const whole = length - (length % 8);
  let index = 0;
  for (; index < whole; index += 8) {
    out[index] = out[index]! ^ table[input[index]!]!;
    out[index + 1] = out[index + 1]! ^ table[input[index + 1]!]!;
    out[index + 2] = out[index + 2]! ^ table[input[index + 2]!]!;
    out[index + 3] = out[index + 3]! ^ table[input[index + 3]!]!;
    out[index + 4] = out[index + 4]! ^ table[input[index + 4]!]!;
    out[index + 5] = out[index + 5]! ^ table[input[index + 5]!]!;
    out[index + 6] = out[index + 6]! ^ table[input[index + 6]!]!;
    out[index + 7] = out[index + 7]! ^ table[input[index + 7]!]!;
  }
  for (; index < length; index += 1) out[index] = out[index]! ^ table[input[index]!]!;
}
