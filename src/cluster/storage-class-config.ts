/**
 * Storage-class configuration from the environment (SPEC "Startup configuration" and the
 * storage-class validity rules under "Errors"). Pure: startup validates it before any disk is
 * touched. An unset variable keeps the persisted value, an empty one restores the automatic
 * policy (and overrides a persisted value), `EC:<n>` sets an explicit parity.
 */
import { SvcError } from '../errors/index.js';
import { parseByteSize } from '../util/sizes.js';
import { defaultRrsParity, defaultStandardParity, inlineOverrideWarning, maxParity } from '../erasure/geometry.js';

export type ParitySetting = { kind: 'auto' } | { kind: 'explicit'; parity: number };

export interface StorageClassSettings {
  /** Undefined: not configured (a persisted value, if any, applies). */
  standard?: ParitySetting;
  rrs?: ParitySetting;
  optimize?: string;
  inlineBlockBytes?: number;
}

export interface ResolvedStorageClass {
  standardParity(poolIndex: number): number;
  rrsParity(poolIndex: number): number;
  inlineBlockBytes?: number;
  /** What was configured explicitly (to persist). */
  settings: StorageClassSettings;
  warnings: string[];
}

const envNames = {
  standard: 'SVC_STORAGE_CLASS_STANDARD',
  rrs: 'SVC_STORAGE_CLASS_RRS',
  optimize: 'SVC_STORAGE_CLASS_OPTIMIZE',
  inlineBlock: 'SVC_STORAGE_CLASS_INLINE_BLOCK',
} as const;

/** Legacy spellings that map onto the SVC_ names when those are unset. */
export const legacyEnvNames: Record<string, string> = {
  SVC_STORAGE_CLASS_STANDARD: 'MINIO_STORAGE_CLASS_STANDARD',
  SVC_STORAGE_CLASS_RRS: 'MINIO_STORAGE_CLASS_RRS',
  SVC_STORAGE_CLASS_OPTIMIZE: 'MINIO_STORAGE_CLASS_OPTIMIZE',
  SVC_STORAGE_CLASS_INLINE_BLOCK: 'MINIO_STORAGE_CLASS_INLINE_BLOCK',
  SVC_ERASURE_SET_DRIVE_COUNT: 'MINIO_ERASURE_SET_DRIVE_COUNT',
  SVC_VOLUMES: 'MINIO_VOLUMES',
};

/**
 * The effective environment: each SVC_ name, or its legacy spelling when the SVC_ one is unset.
 * When both are set the SVC_ value wins and a conflict line is returned for the startup log.
 */
export function effectiveEnv(env: Record<string, string | undefined>): { values: Record<string, string | undefined>; conflicts: string[] } {
  const values: Record<string, string | undefined> = { ...env };
  const conflicts: string[] = [];
  for (const [name, legacy] of Object.entries(legacyEnvNames)) {
    const own = env[name];
    const old = env[legacy];
    if (own === undefined && old !== undefined) values[name] = old;
    if (own !== undefined && old !== undefined && own !== old) conflicts.push(`${name}=${JSON.stringify(own)} wins over ${legacy}=${JSON.stringify(old)}`);
  }
  return { values, conflicts };
}

export function parseParity(name: string, value: string | undefined): ParitySetting | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === '') return { kind: 'auto' };
  const match = /^EC:(\d{1,2})$/.exec(value.trim());
  if (!match) throw new SvcError('InvalidConfiguration', `${name}=${JSON.stringify(value)} is invalid: expected EC:<parity>, for example EC:2, or empty for the automatic policy`, { variable: name, rule: 'storage-class-syntax' });
  return { kind: 'explicit', parity: Number(match[1]) };
}

export function readStorageClassEnv(values: Record<string, string | undefined>): StorageClassSettings {
  const settings: StorageClassSettings = {};
  const standard = parseParity(envNames.standard, values[envNames.standard]);
  const rrs = parseParity(envNames.rrs, values[envNames.rrs]);
  if (standard) settings.standard = standard;
  if (rrs) settings.rrs = rrs;
  if (values[envNames.optimize] !== undefined) settings.optimize = values[envNames.optimize]!;
  const inline = values[envNames.inlineBlock];
  if (inline !== undefined && inline.trim() !== '') {
    try {
      settings.inlineBlockBytes = parseByteSize(inline);
    } catch {
      throw new SvcError('InvalidConfiguration', `${envNames.inlineBlock}=${JSON.stringify(inline)} is not a byte size such as 128KiB`, { variable: envNames.inlineBlock, rule: 'inline-block-syntax' });
    }
    if (settings.inlineBlockBytes < 1) throw new SvcError('InvalidConfiguration', `${envNames.inlineBlock} must be at least 1 byte`, { variable: envNames.inlineBlock, rule: 'inline-block-syntax' });
  }
  return settings;
}

/**
 * Applies the validity rules to every pool. `poolSetWidths[i]` is pool i's set width (1 for the
 * single-drive layout). The configured values win over persisted ones; auto clears persisted.
 */
export function validateStorageClass(settings: StorageClassSettings, poolSetWidths: number[], persisted: StorageClassSettings = {}): ResolvedStorageClass {
  const standard = settings.standard ?? persisted.standard ?? { kind: 'auto' };
  const rrs = settings.rrs ?? persisted.rrs ?? { kind: 'auto' };
  const narrowest = Math.min(...poolSetWidths);
  for (const [name, setting] of [[envNames.standard, standard], [envNames.rrs, rrs]] as const) {
    if (setting.kind === 'explicit' && setting.parity > maxParity(narrowest)) {
      throw new SvcError('InvalidConfiguration', `${name}=EC:${setting.parity} is invalid: parity must be at most N/2 = ${maxParity(narrowest)} for the narrowest set (${narrowest} drives)`, { variable: name, rule: 'parity-at-most-half' });
    }
  }
  if (rrs.kind === 'explicit' && narrowest === 1) {
    throw new SvcError('InvalidConfiguration', `${envNames.rrs}=EC:${rrs.parity} is invalid on a single drive: reduced redundancy needs at least 2 drives`, { variable: envNames.rrs, rule: 'rrs-on-single-drive' });
  }
  const standardParity = (pool: number): number => (standard.kind === 'explicit' ? standard.parity : defaultStandardParity(poolSetWidths[pool]!));
  const rrsParity = (pool: number): number => (rrs.kind === 'explicit' ? rrs.parity : defaultRrsParity(poolSetWidths[pool]!));
  poolSetWidths.forEach((_, pool) => {
    const s = standardParity(pool);
    const r = rrsParity(pool);
    if (s > 0 && r > 0 && s < r) {
      throw new SvcError('InvalidConfiguration', `STANDARD parity EC:${s} is below REDUCED_REDUNDANCY parity EC:${r} on pool ${pool}; STANDARD must be at least RRS when both are non-zero`, { rule: 'standard-at-least-rrs', pool });
    }
  });
  const warnings: string[] = [];
  poolSetWidths.forEach((width, pool) => {
    if (standard.kind === 'auto' && standardParity(pool) === 0) warnings.push(`pool ${pool}: automatic parity is 0 on a ${width}-drive set: no redundancy, a lost drive loses data`);
  });
  const inlineBlockBytes = settings.inlineBlockBytes ?? persisted.inlineBlockBytes;
  const inlineWarning = inlineBlockBytes === undefined ? undefined : inlineOverrideWarning(inlineBlockBytes);
  if (inlineWarning) warnings.push(inlineWarning);
  const effective: StorageClassSettings = {
    ...(standard.kind === 'explicit' ? { standard } : {}),
    ...(rrs.kind === 'explicit' ? { rrs } : {}),
    ...(settings.optimize ?? persisted.optimize ? { optimize: settings.optimize ?? persisted.optimize! } : {}),
    ...(inlineBlockBytes !== undefined ? { inlineBlockBytes } : {}),
  };
  return { standardParity, rrsParity, ...(inlineBlockBytes !== undefined ? { inlineBlockBytes } : {}), settings: effective, warnings };
}
