/**
 * The built-in KMS's settings (docs/encryption.md): the root key from SVC_KMS_SECRET_KEY
 * (`<name>:<base64 of 32 bytes>`) or root keys from the files of SVC_KMS_KEY_DIR (kms-key-dir.ts,
 * the default one named by SVC_KMS_DEFAULT_KEY), and whether SSE-C is accepted over plain HTTP
 * (SVC_KMS_ALLOW_INSECURE_SSEC). A root key is never logged.
 */
import { SvcError } from '../errors/index.js';
import { isKmsKeyName, readKeyDirectory, type RootKey } from './kms-key-dir.js';

export interface KmsSettings {
  /** Unset: no KMS (SSE-S3 and SSE-KMS refused with KMSNotConfigured; SSE-C still works). */
  root?: RootKey;
  /** The key directory's other keys (usable as SSE-KMS key ids); none with SVC_KMS_SECRET_KEY. */
  otherRoots?: RootKey[];
  /** Accept SSE-C customer keys on plain-HTTP requests (AWS refuses them; off by default). */
  allowInsecureSsec: boolean;
  /** Object keys the background re-wrap after a rotation walks per second at most (0: no limit). */
  rewrapObjectsPerSecond?: number;
}

export const defaultRewrapObjectsPerSecond = 1000;

function rewrapRate(values: Record<string, string | undefined>): number {
  const raw = values.SVC_KMS_REWRAP_OBJECTS_PER_SECOND?.trim();
  if (raw === undefined || raw === '') return defaultRewrapObjectsPerSecond;
  const rate = /^\d{1,7}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(rate)) throw new SvcError('InvalidConfiguration', `SVC_KMS_REWRAP_OBJECTS_PER_SECOND=${JSON.stringify(raw.slice(0, 32))} is not a whole number of objects a second (0: no limit)`, { variable: 'SVC_KMS_REWRAP_OBJECTS_PER_SECOND' });
  return rate;
}

export { isKmsKeyName };

export function readKmsSettings(values: Record<string, string | undefined>): KmsSettings {
  const insecure = (values.SVC_KMS_ALLOW_INSECURE_SSEC ?? 'off').trim().toLowerCase();
  if (!['on', 'off', 'true', 'false', ''].includes(insecure)) {
    throw new SvcError('InvalidConfiguration', `SVC_KMS_ALLOW_INSECURE_SSEC=${JSON.stringify(values.SVC_KMS_ALLOW_INSECURE_SSEC)} is not one of on, off`, { variable: 'SVC_KMS_ALLOW_INSECURE_SSEC' });
  }
  const allowInsecureSsec = insecure === 'on' || insecure === 'true';
  const rewrapObjectsPerSecond = rewrapRate(values);
  const raw = values.SVC_KMS_SECRET_KEY?.trim();
  const dir = values.SVC_KMS_KEY_DIR?.trim();
  const defaultName = values.SVC_KMS_DEFAULT_KEY?.trim() || undefined;
  if (dir && raw) throw new SvcError('InvalidConfiguration', 'SVC_KMS_SECRET_KEY and SVC_KMS_KEY_DIR are both set: the root key comes from one of them; unset the other', { variable: 'SVC_KMS_KEY_DIR' });
  if (defaultName !== undefined && !dir) throw new SvcError('InvalidConfiguration', 'SVC_KMS_DEFAULT_KEY names a key of SVC_KMS_KEY_DIR, which is not set', { variable: 'SVC_KMS_DEFAULT_KEY' });
  if (dir) {
    const { root, others } = readKeyDirectory(dir, defaultName);
    return { root, otherRoots: others, allowInsecureSsec, rewrapObjectsPerSecond };
  }
  if (raw === undefined || raw === '') return { allowInsecureSsec, rewrapObjectsPerSecond };
  const colon = raw.indexOf(':');
  const name = colon < 0 ? '' : raw.slice(0, colon);
  const encoded = colon < 0 ? '' : raw.slice(colon + 1);
  if (!isKmsKeyName(name)) {
    throw new SvcError('InvalidConfiguration', 'SVC_KMS_SECRET_KEY must be <name>:<base64 of 32 bytes>, the name of 1 to 64 letters, digits and ._- (the value is not shown)', { variable: 'SVC_KMS_SECRET_KEY' });
  }
  const key = /^[A-Za-z0-9+/]+={0,2}$/.test(encoded) ? Buffer.from(encoded, 'base64') : Buffer.alloc(0);
  if (key.length !== 32) {
    throw new SvcError('InvalidConfiguration', `SVC_KMS_SECRET_KEY: the key of '${name}' must be 32 bytes in base64 (openssl rand -base64 32); the value is not shown`, { variable: 'SVC_KMS_SECRET_KEY' });
  }
  return { root: { name, key }, allowInsecureSsec, rewrapObjectsPerSecond };
}
