/**
 * The `compression` field of an xl.meta version (docs/formats.md): decoded strictly (every member
 * checked, anything unknown refused, never guessed) and encoded in one fixed order.
 */
import { SvcError } from '../errors/index.js';
import { blockCountOf, blockPlainLengths, compressionAlgorithm } from './compressed-blocks.js';
import type { CompressedPart, CompressionInfo } from './xl-meta-types.js';

const known = new Set(['algorithm', 'plainSizeBytes', 'storedSizeBytes', 'blocks', 'parts']);
const knownPartMembers = new Set(['number', 'plainSizeBytes']);
const maxPartNumber = 10_000;
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
  const plainSizeBytes = c.plainSizeBytes;
  const parts = c.parts === undefined ? undefined : validateParts(c.parts, at, plainSizeBytes);
  // The block count is checked before the lengths are listed: a hostile size costs nothing.
  const blockCount = (parts ? parts.map((part) => part.plainSizeBytes) : [plainSizeBytes]).reduce((count, size) => count + blockCountOf(size), 0);
  if (!Array.isArray(c.blocks) || c.blocks.length !== blockCount) corrupt(`${at}.blocks: one stored length per 1 MiB block of ${parts ? 'each part' : 'plainSizeBytes'}`);
  const lengths = blockPlainLengths({ plainSizeBytes, ...(parts ? { parts } : {}) });
  let total = 0;
  const blocks = c.blocks.map((length: unknown, index) => {
    if (!isCount(length) || length < 1 || length > lengths[index]!) corrupt(`${at}.blocks[${index}]`);
    total += length;
    return length;
  });
  if (total !== c.storedSizeBytes) corrupt(`${at}: the blocks do not add up to storedSizeBytes`);
  if (c.storedSizeBytes !== compressedBytes) corrupt(`${at}.storedSizeBytes does not match the stored size`);
  return { algorithm: compressionAlgorithm, plainSizeBytes, storedSizeBytes: c.storedSizeBytes, blocks, ...(parts ? { parts } : {}) };
}

/** `parts`: at least one, ascending part numbers from 1 to 10000, client sizes adding up to plainSizeBytes. */
function validateParts(value: unknown, at: string, plainSizeBytes: number): CompressedPart[] {
  if (!Array.isArray(value) || value.length === 0) corrupt(`${at}.parts`);
  let previous = 0;
  let total = 0;
  const parts = value.map((part: unknown, index) => {
    const where = `${at}.parts[${index}]`;
    if (typeof part !== 'object' || part === null || Array.isArray(part)) corrupt(where);
    const p = part as Record<string, unknown>;
    for (const name of Object.keys(p)) if (!knownPartMembers.has(name)) corrupt(`${where}.${name} is unknown`);
    if (!isCount(p.number) || p.number <= previous || p.number > maxPartNumber) corrupt(`${where}.number`);
    if (!isCount(p.plainSizeBytes)) corrupt(`${where}.plainSizeBytes`);
    previous = p.number;
    total += p.plainSizeBytes;
    return { number: p.number, plainSizeBytes: p.plainSizeBytes };
  });
  if (total !== plainSizeBytes) corrupt(`${at}.parts do not add up to plainSizeBytes`);
  return parts;
}

export function canonicalCompression(c: CompressionInfo): CompressionInfo {
  return {
    algorithm: c.algorithm, plainSizeBytes: c.plainSizeBytes, storedSizeBytes: c.storedSizeBytes, blocks: [...c.blocks],
    ...(c.parts ? { parts: c.parts.map((part) => ({ number: part.number, plainSizeBytes: part.plainSizeBytes })) } : {}),
  };
}
