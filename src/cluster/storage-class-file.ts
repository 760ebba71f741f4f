/**
 * The storage-class settings persisted at `.svc.sys/config/storage-class.json` on the first pool's
 * drives (docs/configuration.md): `{"version":1,"standard":{"kind":"explicit","parity":2},...}`,
 * the fields those of StorageClassSettings, each optional.
 *
 * The decoder is strict: a file over limits.maxStorageClassFileBytes, not JSON, of another
 * version, with a field not named here or one of the wrong type is refused (UnsupportedFormat for
 * the version, CorruptFormat otherwise); startup quarantines it and goes on from the other drives'
 * copies or the environment.
 */
import { SvcError } from '../errors/index.js';
import { parseJsonStateFile } from '../format/state-file.js';
import { limits } from '../util/limits.js';
import type { ParitySetting, StorageClassSettings } from './storage-class-config.js';

export const storageClassFileVersion = 1;

const corrupt = (message: string): SvcError => new SvcError('CorruptFormat', `storage-class.json: ${message}`);
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function paritySetting(value: unknown, name: string): ParitySetting {
  if (!isRecord(value)) throw corrupt(`${name} is not an object`);
  if (value.kind === 'auto' && Object.keys(value).length === 1) return { kind: 'auto' };
  if (value.kind === 'explicit' && Object.keys(value).length === 2 && Number.isSafeInteger(value.parity) && (value.parity as number) >= 0 && (value.parity as number) <= limits.maxSetDriveCount / 2) {
    return { kind: 'explicit', parity: value.parity as number };
  }
  throw corrupt(`${name} is neither {"kind":"auto"} nor {"kind":"explicit","parity":<n>}`);
}

export function encodeStorageClassFile(settings: StorageClassSettings): Uint8Array {
  return Buffer.from(`${JSON.stringify({ version: storageClassFileVersion, ...settings }, null, 2)}\n`);
}

export function decodeStorageClassFile(bytes: Uint8Array): StorageClassSettings {
  const parsed = parseJsonStateFile(bytes, limits.maxStorageClassFileBytes, 'storage-class.json');
  if (!isRecord(parsed)) throw corrupt('not an object');
  if (parsed.version !== storageClassFileVersion) throw new SvcError('UnsupportedFormat', `storage-class.json: version ${JSON.stringify(parsed.version) ?? 'missing'} is not supported`);
  const settings: StorageClassSettings = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (name === 'version') continue;
    if (name === 'standard' || name === 'rrs') settings[name] = paritySetting(value, name);
    else if (name === 'optimize' && typeof value === 'string' && value.length <= 256) settings.optimize = value;
    else if (name === 'inlineBlockBytes' && Number.isSafeInteger(value) && (value as number) >= 1) settings.inlineBlockBytes = value as number;
    else throw corrupt(`field '${name.slice(0, 64)}' is unknown or malformed`);
  }
  return settings;
}
