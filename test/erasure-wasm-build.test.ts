import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module script without type declarations
import { compileKernel, generatedModule } from '../scripts/build-wasm.mjs';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

describe('the embedded WebAssembly kernel', () => {
  it('is exactly what assembly/gf256-kernel.ts compiles to', () => {
    const committed = readFileSync(fileURLToPath(new URL('../src/erasure/wasm/gf256-kernel.generated.ts', import.meta.url)), 'utf8');
    expect(committed).toBe((generatedModule as (bytes: Buffer) => string)((compileKernel as () => Buffer)()));
  });
});
