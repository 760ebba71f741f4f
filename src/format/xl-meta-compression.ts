/**
 * The `compression` field of an xl.meta version (docs/formats.md): decoded strictly (every member
 * checked, anything unknown refused, never guessed) and encoded in one fixed order.
 */
import { SvcError } from '../errors/index.js';
import { blockCountOf, blockPlainLength, compressionAlgorithm } from './compressed-blocks.js';
import type { CompressionInfo } from './xl-meta-types.js';

const known = new Set(['algorithm', 'plainSizeBytes', 'storedSizeBytes', 'blocks']);
const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

function corrupt(reason: string): never {
  throw new SvcError('CorruptFormat', `xl.meta: ${reason}`);
}

/**
 * The record at `where`.compression; `compressedBytes` is the size its stream must have (the
 * version's stored size, or its encryption's plaintext size).
 */
export function validateCompression(value: unknown, where: string, compressedBytes: number): CompressionInfo {
  const at = `${where}.compression`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) corrupt(at);
  const c = value as Record<string, unknown>;
  for (const name of Object.keys(c)) if (!known.has(name)) corrupt(`${at}.${name} is unknown`);
  if (c.algorithm !== compressionAlgorithm) throw new SvcError('UnsupportedFormat', `xl.meta: ${at}.algorithm ${String(c.algorithm)} is not known to this build`);
  if (!isCount(c.plainSizeBytes)) corrupt(`${at}.plainSizeBytes`);
  if (!isCount(c.storedSizeBytes)) corrupt(`${at}.storedSizeBytes`);
  if (!Array.isArray(c.blocks) || c.blocks.length !== blockCountOf(c.plainSizeBytes)) corrupt(`${at}.blocks: one stored length per 1 MiB block of plainSizeBytes`);
  let total = 0;
  const plainSizeBytes = c.plainSizeBytes;
  const blocks = c.blocks.map((length: unknown, index) => {
    if (!isCount(length) || length < 1 || length > blockPlainLength(plainSizeBytes, index)) corrupt(`${at}.blocks[${index}]`);
    total += length;
    return length;
  });
  if (total !== c.storedSizeBytes) corrupt(`${at}: the blocks do not add up to storedSizeBytes`);
  if (c.storedSizeBytes !== compressedBytes) corrupt(`${at}.storedSizeBytes does not match the stored size`);
  return { algorithm: compressionAlgorithm, plainSizeBytes, storedSizeBytes: c.storedSizeBytes, blocks };
}

export function canonicalCompression(c: CompressionInfo): CompressionInfo {
  return { algorithm: c.algorithm, plainSizeBytes: c.plainSizeBytes, storedSizeBytes: c.storedSizeBytes, blocks: [...c.blocks] };
}
