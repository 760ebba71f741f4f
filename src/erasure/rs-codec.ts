/**
 * Reed-Solomon over GF(2^8) with the Vandermonde-systematic encoding matrix: K data shards,
 * M parity shards, any K of the N shards rebuild the rest. Codec id 'rs-vandermonde-gf8'.
 * Stateless apart from caches of immutable matrices, so one instance may be reused freely.
 */
import { SvcError, assert } from '../errors/index.js';
import type { ErasureCodec } from './codec.js';
import { encodingMatrix, invert, type Matrix } from './matrix.js';
import { typescriptKernel, type GfKernel } from './ts-kernel.js';
import { wasmKernel } from './wasm-kernel.js';
import { limits } from '../util/limits.js';

export const reedSolomonCodecId = 'rs-vandermonde-gf8';
const maxTotalShards = 256;

export interface ReedSolomonOptions {
  kernel?: 'wasm' | 'typescript';
}

export function createReedSolomonCodec(dataShards: number, parityShards: number, options: ReedSolomonOptions = {}): ErasureCodec {
  if (!Number.isInteger(dataShards) || !Number.isInteger(parityShards) || dataShards < 1 || parityShards < 0 || dataShards + parityShards > maxTotalShards) {
    throw new SvcError('InvalidArgument', `invalid erasure geometry ${dataShards}+${parityShards} (need K >= 1, M >= 0, K + M <= ${maxTotalShards})`);
  }
  const kernel = pickKernel(options.kernel);
  return new ReedSolomonCodec(dataShards, parityShards, kernel);
}

function pickKernel(choice: ReedSolomonOptions['kernel']): GfKernel {
  if (choice === 'typescript') return typescriptKernel;
  if (choice === 'wasm') {
    if (!wasmKernel) throw new SvcError('InvalidArgument', 'the WebAssembly SIMD kernel is not available on this runtime');
    return wasmKernel;
  }
  return wasmKernel ?? typescriptKernel;
}

class ReedSolomonCodec implements ErasureCodec {
  readonly id = reedSolomonCodecId;
  private readonly matrix: Matrix;
  private readonly parityRows: Matrix;
  private readonly decodeCache = new Map<string, Matrix>();

  constructor(readonly dataShards: number, readonly parityShards: number, private readonly kernel: GfKernel) {
    this.matrix = encodingMatrix(dataShards, dataShards + parityShards);
    this.parityRows = this.matrix.slice(dataShards);
  }

  get kernelName(): string {
    return this.kernel.name;
  }

  encode(shards: Uint8Array[]): void {
    this.checkShards(shards);
    if (this.parityShards === 0) return;
    this.kernel.matrixMultiply(this.parityRows, shards.slice(0, this.dataShards), shards.slice(this.dataShards));
  }

  reconstruct(shards: (Uint8Array | null)[], options: { dataOnly?: boolean } = {}): Uint8Array[] {
    const total = this.dataShards + this.parityShards;
    assert(shards.length === total, `expected ${total} shards, got ${shards.length}`);
    const present = shards.flatMap((shard, index) => (shard ? [index] : []));
    if (present.length < this.dataShards) {
      throw new SvcError('ErasureReadQuorum', `only ${present.length} of the ${this.dataShards} shards needed are available`);
    }
    const length = shards[present[0]!]!.length;
    assert(present.every((index) => shards[index]!.length === length), 'shards differ in length');
    const missingData = range(this.dataShards).filter((index) => !shards[index]);
    if (missingData.length > 0) {
      const chosen = present.slice(0, this.dataShards);
      const decode = this.decodeMatrix(chosen);
      const outputs = missingData.map(() => new Uint8Array(length));
      this.kernel.matrixMultiply(missingData.map((index) => decode[index]!), chosen.map((index) => shards[index]!), outputs);
      missingData.forEach((index, position) => (shards[index] = outputs[position]!));
    }
    const missingParity = options.dataOnly ? [] : range(total).filter((index) => index >= this.dataShards && !shards[index]);
    if (missingParity.length > 0) {
      const outputs = missingParity.map(() => new Uint8Array(length));
      this.kernel.matrixMultiply(missingParity.map((index) => this.matrix[index]!), shards.slice(0, this.dataShards) as Uint8Array[], outputs);
      missingParity.forEach((index, position) => (shards[index] = outputs[position]!));
    }
    return shards.map((shard) => shard ?? new Uint8Array(0));
  }

  private decodeMatrix(chosen: number[]): Matrix {
    const cacheKey = chosen.join(',');
    let decode = this.decodeCache.get(cacheKey);
    if (!decode) {
      decode = invert(chosen.map((index) => this.matrix[index]!));
      if (this.decodeCache.size >= limits.decodeMatricesCached) this.decodeCache.delete(this.decodeCache.keys().next().value!);
      this.decodeCache.set(cacheKey, decode);
    }
    return decode;
  }

  private checkShards(shards: Uint8Array[]): void {
    assert(shards.length === this.dataShards + this.parityShards, `expected ${this.dataShards + this.parityShards} shards, got ${shards.length}`);
    const length = shards[0]!.length;
    assert(shards.every((shard) => shard.length === length), 'shards differ in length');
  }
}

function range(count: number): number[] {
  return Array.from({ length: count }, (_, index) => index);
}
