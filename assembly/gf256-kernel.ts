// GF(2^8) region kernel for WebAssembly SIMD (AssemblyScript source; see scripts/build-wasm.mjs).
//
// outputs[r] = XOR over c of coefficient[r][c] * inputs[c], 16 bytes at a time, using the
// split-nibble method: a product c * x is table_lo[c][x & 15] ^ table_hi[c][x >> 4], and each
// 16-entry table is one v128 looked up with i8x16.swizzle.
//
// Memory layout, chosen by the caller:
//   tables:  rows * columns entries of 32 bytes (16 low-nibble products, 16 high-nibble products)
//   inputs:  columns regions of `length` bytes, back to back
//   outputs: rows regions of `length` bytes, back to back
// `length` is a multiple of 64.

export function mulMatrix(tables: usize, rows: i32, columns: i32, inputs: usize, outputs: usize, length: i32): void {
  const mask = i8x16.splat(0x0f);
  for (let row = 0; row < rows; row++) {
    const out = outputs + <usize>(row * length);
    const rowTables = tables + <usize>(row * columns * 32);
    for (let offset = 0; offset < length; offset += 64) {
      let acc0 = i8x16.splat(0);
      let acc1 = i8x16.splat(0);
      let acc2 = i8x16.splat(0);
      let acc3 = i8x16.splat(0);
      for (let column = 0; column < columns; column++) {
        const table = rowTables + <usize>(column * 32);
        const low = v128.load(table);
        const high = v128.load(table, 16);
        const source = inputs + <usize>(column * length + offset);
        const x0 = v128.load(source);
        const x1 = v128.load(source, 16);
        const x2 = v128.load(source, 32);
        const x3 = v128.load(source, 48);
        acc0 = v128.xor(acc0, v128.xor(i8x16.swizzle(low, v128.and(x0, mask)), i8x16.swizzle(high, i8x16.shr_u(x0, 4))));
        acc1 = v128.xor(acc1, v128.xor(i8x16.swizzle(low, v128.and(x1, mask)), i8x16.swizzle(high, i8x16.shr_u(x1, 4))));
        acc2 = v128.xor(acc2, v128.xor(i8x16.swizzle(low, v128.and(x2, mask)), i8x16.swizzle(high, i8x16.shr_u(x2, 4))));
        acc3 = v128.xor(acc3, v128.xor(i8x16.swizzle(low, v128.and(x3, mask)), i8x16.swizzle(high, i8x16.shr_u(x3, 4))));
      }
      const target = out + <usize>offset;
      v128.store(target, acc0);
      v128.store(target, acc1, 16);
      v128.store(target, acc2, 32);
      v128.store(target, acc3, 48);
    }
  }
}
