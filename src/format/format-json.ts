/**
 * `.svc.sys/format.json`: a drive's identity and its pool's layout, as stable pretty JSON
 * (fields in docs/formats.md). The decoder validates every field and never guesses.
 */
import { SvcError } from '../errors/index.js';
import type { FormatJson } from './format-json-types.js';

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function encodeFormatJson(format: FormatJson): Uint8Array {
  const ordered: FormatJson = {
    version: format.version,
    layout: format.layout,
    deploymentId: format.deploymentId,
    poolIndex: format.poolIndex,
    driveId: format.driveId,
    sets: format.sets,
    distributionAlgorithm: format.distributionAlgorithm,
  };
  return Buffer.from(`${JSON.stringify(ordered, null, 2)}\n`, 'utf8');
}

export function decodeFormatJson(bytes: Uint8Array): FormatJson {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch {
    throw new SvcError('CorruptFormat', 'format.json is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new SvcError('CorruptFormat', 'format.json is not an object');
  const f = value as Record<string, unknown>;
  if (f.version !== 1) throw new SvcError('UnsupportedFormat', `format.json version ${JSON.stringify(f.version)} is not supported`);
  const bad = (field: string): never => {
    throw new SvcError('CorruptFormat', `format.json: invalid field '${field}'`);
  };
  if (f.layout !== 'erasure' && f.layout !== 'single') bad('layout');
  if (typeof f.deploymentId !== 'string' || !uuidPattern.test(f.deploymentId)) bad('deploymentId');
  if (!Number.isSafeInteger(f.poolIndex) || (f.poolIndex as number) < 0) bad('poolIndex');
  if (typeof f.driveId !== 'string' || !uuidPattern.test(f.driveId)) bad('driveId');
  const sets = f.sets;
  if (!Array.isArray(sets) || sets.length === 0) bad('sets');
  const width = (sets as unknown[][])[0]?.length;
  const validSets = (sets as unknown[]).every(
    (set) => Array.isArray(set) && set.length === width && set.length >= 1 && set.length <= 16 && set.every((id) => typeof id === 'string' && uuidPattern.test(id)),
  );
  if (!validSets) bad('sets');
  const ids = (sets as string[][]).flat();
  if (new Set(ids).size !== ids.length) bad('sets (duplicate drive id)');
  if (!ids.includes(f.driveId as string)) bad('driveId (not in sets)');
  if (f.layout === 'single' && ids.length !== 1) bad('layout (single with several drives)');
  if (f.distributionAlgorithm !== 'xxh64-deployment-id') bad('distributionAlgorithm');
  return {
    version: 1,
    layout: f.layout as FormatJson['layout'],
    deploymentId: f.deploymentId as string,
    poolIndex: f.poolIndex as number,
    driveId: f.driveId as string,
    sets: sets as string[][],
    distributionAlgorithm: 'xxh64-deployment-id',
  };
}

export function findDriveSlot(format: FormatJson, driveId: string): { setIndex: number; slotIndex: number } | undefined {
  for (const [setIndex, set] of format.sets.entries()) {
    const slotIndex = set.indexOf(driveId);
    if (slotIndex >= 0) return { setIndex, slotIndex };
  }
  return undefined;
}

/** One new format per drive of a pool, in endpoint order (drive i = set floor(i / width), slot i % width). */
export function newFormats(options: {
  deploymentId: string;
  poolIndex: number;
  setCount: number;
  setDriveCount: number;
  layout: 'erasure' | 'single';
  newId: () => string;
}): FormatJson[] {
  const sets = Array.from({ length: options.setCount }, () => Array.from({ length: options.setDriveCount }, () => options.newId()));
  return sets.flat().map((driveId) => ({
    version: 1,
    layout: options.layout,
    deploymentId: options.deploymentId,
    poolIndex: options.poolIndex,
    driveId,
    sets,
    distributionAlgorithm: 'xxh64-deployment-id',
  }));
}
