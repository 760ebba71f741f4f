/**
 * The WebAssembly SIMD kernel, when built and supported; undefined otherwise (the TypeScript
 * kernel computes the same bytes).
 */
import type { GfKernel } from './ts-kernel.js';

export const wasmKernel: GfKernel | undefined = undefined;
