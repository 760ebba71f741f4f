/**
 * The WebAssembly SIMD kernel (assembly/gf256-kernel.ts, embedded as bytes), or undefined where
 * the runtime lacks WebAssembly SIMD; the TypeScript kernel then computes the same bytes.
 * Regions are copied into the module's memory, multiplied, and copied out: one instance serves
 * every call, and no state survives a call except the reusable memory.
 */
import { gfMul } from './gf256.js';
import type { Matrix } from './matrix.js';
import type { GfKernel } from './ts-kernel.js';
import { gf256KernelWasmBase64 } from './wasm/gf256-kernel.generated.js';

const pageBytes = 65_536;
const firstFreeOffset = pageBytes; // below: the module's own stack and data
const regionAlignBytes = 64;

/** Split-nibble tables of every coefficient: 16 products of the low nibble, 16 of the high one. */
const nibbleTables: Uint8Array[] = Array.from({ length: 256 }, (_, coefficient) => {
  const table = new Uint8Array(32);
  for (let nibble = 0; nibble < 16; nibble += 1) {
    table[nibble] = gfMul(coefficient, nibble);
    table[16 + nibble] = gfMul(coefficient, nibble << 4);
  }
  return table;
});

/** The few WebAssembly APIs used here (the Node type definitions leave them to the DOM lib). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

interface KernelExports {
  memory: WasmMemory;
  mulMatrix(tables: number, rows: number, columns: number, inputs: number, outputs: number, length: number): void;
}

function instantiate(): KernelExports | undefined {
  try {
    const module = new wasm.Module(Buffer.from(gf256KernelWasmBase64, 'base64'));
    return new wasm.Instance(module, {}).exports as unknown as KernelExports;
  } catch {
    return undefined;
  }
}

function createWasmKernel(exports: KernelExports): GfKernel {
  const ensureMemory = (bytes: number): Uint8Array => {
    const missing = bytes - exports.memory.buffer.byteLength;
    if (missing > 0) exports.memory.grow(Math.ceil(missing / pageBytes));
    return new Uint8Array(exports.memory.buffer);
  };
  return {
    name: 'wasm-simd',
    matrixMultiply(coefficients: Matrix, inputs: Uint8Array[], outputs: Uint8Array[]): void {
      const rows = outputs.length;
      const columns = inputs.length;
      const length = outputs[0]?.length ?? 0;
      if (rows === 0 || length === 0) return;
      const padded = Math.ceil(length / regionAlignBytes) * regionAlignBytes;
      const tables = firstFreeOffset;
      const inputsAt = tables + Math.ceil((rows * columns * 32) / regionAlignBytes) * regionAlignBytes;
      const outputsAt = inputsAt + columns * padded;
      const memory = ensureMemory(outputsAt + rows * padded);
      for (let row = 0; row < rows; row += 1) {
        for (let column = 0; column < columns; column += 1) memory.set(nibbleTables[coefficients[row]![column]!]!, tables + (row * columns + column) * 32);
      }
      inputs.forEach((input, column) => memory.set(input, inputsAt + column * padded));
      exports.mulMatrix(tables, rows, columns, inputsAt, outputsAt, padded);
      outputs.forEach((output, row) => output.set(memory.subarray(outputsAt + row * padded, outputsAt + row * padded + length)));
    },
  };
}

const exports = instantiate();
export const wasmKernel: GfKernel | undefined = exports ? createWasmKernel(exports) : undefined;
