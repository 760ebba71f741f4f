/** Fault plans for the fault-injecting drive, and their validation (they also arrive as JSON). */
import { SvcError } from '../src/errors/index.js';

export const driveOperations = [
  'readFile', 'readRange', 'readStream', 'writeFile', 'writeFileAtomic', 'appendFile', 'openWriter', 'makeDir',
  'rename', 'deleteFile', 'deleteDir', 'deleteRecursive', 'listDir', 'walk', 'stat', 'diskInfo', '*',
] as const;

export type DriveOperation = (typeof driveOperations)[number];

export interface OperationFault {
  error?: 'EIO' | 'ENOSPC' | 'EACCES';
  /** Chance that the fault applies to one call, 0..1 (default 1), drawn from the seeded PRNG. */
  probability?: number;
  latencyMs?: number;
  /** Flips this many random bits in the bytes returned (the stored bytes stay clean). */
  corruptReads?: { bitFlips: number };
  /** Stores only this fraction of the data (a strict prefix), then fails with DriveFaulty. */
  tornWrite?: { fraction: number };
  /** Reports success but stores nothing. */
  silentDrop?: boolean;
  /** The call never returns while this plan is in force (a hung drive); a new plan or a clear releases it. */
  hang?: boolean;
  /** Applies only to paths containing this text (one file or one object hangs, the rest of the drive answers). */
  pathContains?: string;
}

export interface FaultOptions {
  seed?: number;
  /** No faults at all, whatever else is configured. */
  liveness?: boolean;
  offline?: boolean;
  operations?: Partial<Record<DriveOperation, OperationFault>>;
}

function invalid(message: string): never {
  throw new SvcError('InvalidArgument', `invalid fault plan: ${message}`);
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export function parseFaultOptions(value: unknown): FaultOptions {
  if (!isObject(value)) invalid('expected an object');
  for (const key of Object.keys(value)) if (!['seed', 'liveness', 'offline', 'operations'].includes(key)) invalid(`unknown field '${key}'`);
  const { seed, liveness, offline, operations } = value;
  if (seed !== undefined && !Number.isSafeInteger(seed)) invalid('seed must be an integer');
  if (liveness !== undefined && typeof liveness !== 'boolean') invalid('liveness must be a boolean');
  if (offline !== undefined && typeof offline !== 'boolean') invalid('offline must be a boolean');
  const parsed: FaultOptions = {
    ...(seed !== undefined ? { seed: seed as number } : {}),
    ...(liveness !== undefined ? { liveness } : {}),
    ...(offline !== undefined ? { offline } : {}),
  };
  if (operations !== undefined) {
    if (!isObject(operations)) invalid('operations must be an object');
    parsed.operations = {};
    for (const [name, fault] of Object.entries(operations)) {
      if (!(driveOperations as readonly string[]).includes(name)) invalid(`unknown operation '${name}'`);
      parsed.operations[name as DriveOperation] = parseOperationFault(name, fault);
    }
  }
  return parsed;
}

function parseOperationFault(name: string, value: unknown): OperationFault {
  if (!isObject(value)) invalid(`operations.${name} must be an object`);
  const allowed = ['error', 'probability', 'latencyMs', 'corruptReads', 'tornWrite', 'silentDrop', 'hang', 'pathContains'];
  for (const key of Object.keys(value)) if (!allowed.includes(key)) invalid(`unknown field operations.${name}.${key}`);
  const fault = value as OperationFault;
  if (fault.error !== undefined && !['EIO', 'ENOSPC', 'EACCES'].includes(fault.error)) invalid(`operations.${name}.error must be EIO, ENOSPC or EACCES`);
  if (fault.probability !== undefined && !(typeof fault.probability === 'number' && fault.probability >= 0 && fault.probability <= 1)) {
    invalid(`operations.${name}.probability must be between 0 and 1`);
  }
  if (fault.latencyMs !== undefined && !(Number.isSafeInteger(fault.latencyMs) && fault.latencyMs >= 0 && fault.latencyMs <= 600_000)) {
    invalid(`operations.${name}.latencyMs must be an integer from 0 to 600000`);
  }
  if (fault.corruptReads !== undefined && !(isObject(fault.corruptReads) && Number.isSafeInteger(fault.corruptReads.bitFlips) && fault.corruptReads.bitFlips >= 0)) {
    invalid(`operations.${name}.corruptReads.bitFlips must be a non-negative integer`);
  }
  if (fault.tornWrite !== undefined && !(isObject(fault.tornWrite) && typeof fault.tornWrite.fraction === 'number' && fault.tornWrite.fraction >= 0 && fault.tornWrite.fraction < 1)) {
    invalid(`operations.${name}.tornWrite.fraction must be in [0, 1)`);
  }
  if (fault.silentDrop !== undefined && typeof fault.silentDrop !== 'boolean') invalid(`operations.${name}.silentDrop must be a boolean`);
  if (fault.hang !== undefined && typeof fault.hang !== 'boolean') invalid(`operations.${name}.hang must be a boolean`);
  if (fault.pathContains !== undefined && !(typeof fault.pathContains === 'string' && fault.pathContains.length > 0 && fault.pathContains.length <= 1024)) {
    invalid(`operations.${name}.pathContains must be a non-empty string of at most 1024 characters`);
  }
  return { ...fault };
}
