/** Small matrices over GF(2^8): the encoding matrix and the inverses used to reconstruct. */
import { gfInverse, gfMul, gfPow } from './gf256.js';

export type Matrix = Uint8Array[];

export function identity(size: number): Matrix {
  return Array.from({ length: size }, (_, row) => {
    const line = new Uint8Array(size);
    line[row] = 1;
    return line;
  });
}

export function multiply(left: Matrix, right: Matrix): Matrix {
  const columns = right[0]!.length;
  return left.map((row) => {
    const out = new Uint8Array(columns);
    for (let column = 0; column < columns; column += 1) {
      let value = 0;
      for (let index = 0; index < row.length; index += 1) value ^= gfMul(row[index]!, right[index]![column]!);
      out[column] = value;
    }
    return out;
  });
}

/** Gauss-Jordan inversion; throws when the matrix is singular (which a valid shard choice never is). */
export function invert(matrix: Matrix): Matrix {
  const size = matrix.length;
  const work = matrix.map((row, index) => {
    const line = new Uint8Array(2 * size);
    line.set(row);
    line[size + index] = 1;
    return line;
  });
  for (let column = 0; column < size; column += 1) {
    const pivot = work.findIndex((row, index) => index >= column && row[column] !== 0);
    if (pivot < 0) throw new Error('singular matrix');
    [work[column], work[pivot]] = [work[pivot]!, work[column]!];
    const pivotRow = work[column]!;
    const scale = gfInverse(pivotRow[column]!);
    for (let index = 0; index < 2 * size; index += 1) pivotRow[index] = gfMul(pivotRow[index]!, scale);
    for (let row = 0; row < size; row += 1) {
      const factor = work[row]![column]!;
      if (row === column || factor === 0) continue;
      const target = work[row]!;
      for (let index = 0; index < 2 * size; index += 1) target[index] = target[index]! ^ gfMul(factor, pivotRow[index]!);
    }
  }
  return work.map((row) => row.slice(size));
}

/**
 * The N x K systematic encoding matrix: a Vandermonde matrix (row r = r^0, r^1, ...) multiplied
 * by the inverse of its top K x K square, so the first K rows are the identity.
 */
export function encodingMatrix(dataShards: number, totalShards: number): Matrix {
  const vandermonde = Array.from({ length: totalShards }, (_, row) => {
    const line = new Uint8Array(dataShards);
    for (let column = 0; column < dataShards; column += 1) line[column] = gfPow(row, column);
    return line;
  });
  return multiply(vandermonde, invert(vandermonde.slice(0, dataShards)));
}
