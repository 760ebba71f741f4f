/**
 * The built-in KMS's settings (docs/encryption.md): the root key from SVC_KMS_SECRET_KEY
 * (`<name>:<base64 of 32 bytes>`), and whether SSE-C is accepted over plain HTTP
 * (SVC_KMS_ALLOW_INSECURE_SSEC). The root key is never logged.
 */
import { SvcError } from '../errors/index.js';

export interface KmsSettings {
  /** Unset: no KMS (SSE-S3 and SSE-KMS refused with KMSNotConfigured; SSE-C still works). */
  root?: { name: string; key: Buffer };
  /** Accept SSE-C customer keys on plain-HTTP requests (AWS refuses them; off by default). */
  allowInsecureSsec: boolean;
}

const keyNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function isKmsKeyName(name: string): boolean {
  return keyNamePattern.test(name);
}

export function readKmsSettings(values: Record<string, string | undefined>): KmsSettings {
  const insecure = (values.SVC_KMS_ALLOW_INSECURE_SSEC ?? 'off').trim().toLowerCase();
  if (!['on', 'off', 'true', 'false', ''].includes(insecure)) {
    throw new SvcError('InvalidConfiguration', `SVC_KMS_ALLOW_INSECURE_SSEC=${JSON.stringify(values.SVC_KMS_ALLOW_INSECURE_SSEC)} is not one of on, off`, { variable: 'SVC_KMS_ALLOW_INSECURE_SSEC' });
  }
  const allowInsecureSsec = insecure === 'on' || insecure === 'true';
  const raw = values.SVC_KMS_SECRET_KEY?.trim();
  if (raw === undefined || raw === '') return { allowInsecureSsec };
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
  return { root: { name, key }, allowInsecureSsec };
}
