/** The reference Reed-Solomon implementation (WebAssembly), loaded fresh for every use. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ReedSolomonErasure } from '@digitaldefiance/reed-solomon-erasure.wasm';

const require = createRequire(import.meta.url);
const wasmPath = join(dirname(require.resolve('@digitaldefiance/reed-solomon-erasure.wasm')), 'reed_solomon_erasure_bg.wasm');
const wasmBytes = readFileSync(wasmPath);

/** A new instance: reusing one for reconstruct is known to corrupt its state. */
export function freshReference(): ReedSolomonErasure {
  return ReedSolomonErasure.fromBytes(wasmBytes);
}

export { ReedSolomonErasure };
