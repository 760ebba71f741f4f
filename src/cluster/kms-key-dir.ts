/**
 * The built-in KMS's root keys from a directory (SVC_KMS_KEY_DIR, docs/encryption.md): one key per
 * file, the file name the key's name, the content the base64 of 32 bytes (trailing white space
 * ignored, so `openssl rand -base64 32 > dir/name` makes one). Names starting with a dot are
 * skipped (editors' and mounts' files). Anything else that is not such a file stops start-up with
 * an error naming the file; a key's value is never shown.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SvcError } from '../errors/index.js';

export interface RootKey {
  name: string;
  key: Buffer;
}

const keyNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** A KMS key's name: 1 to 64 letters, digits and ._-, starting with a letter or digit. */
export function isKmsKeyName(name: string): boolean {
  return keyNamePattern.test(name);
}
const base64Pattern = /^[A-Za-z0-9+/]+={0,2}$/;
/** A key file is 44 characters and a line end; anything much larger is not a key file. */
const maxKeyFileBytes = 1024;

const refuse = (message: string): never => {
  throw new SvcError('InvalidConfiguration', `SVC_KMS_KEY_DIR: ${message}`, { variable: 'SVC_KMS_KEY_DIR' });
};

/** One key file: its name checked, its content 32 bytes in base64. */
function readKeyFile(dir: string, name: string): RootKey {
  const path = join(dir, name);
  if (!isKmsKeyName(name)) refuse(`${path}: a key file's name is the key's name, 1 to 64 letters, digits and ._- starting with a letter or digit`);
  let bytes: Buffer;
  try {
    const stats = statSync(path);
    if (!stats.isFile()) refuse(`${path} is not a regular file`);
    if (stats.size > maxKeyFileBytes) refuse(`${path} is ${stats.size} bytes: a key file holds the base64 of 32 bytes (the value is not shown)`);
    bytes = readFileSync(path);
  } catch (error) {
    if (error instanceof SvcError) throw error;
    return refuse(`${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const text = bytes.toString('utf8').trimEnd();
  const key = base64Pattern.test(text) ? Buffer.from(text, 'base64') : Buffer.alloc(0);
  if (key.length !== 32) refuse(`${path} must hold the base64 of exactly 32 bytes (openssl rand -base64 32); the value is not shown`);
  return { name, key };
}

/**
 * Every key of the directory, and the default one: `defaultName` when given (it must name one of
 * them), else the only key; a directory of several keys without a default is refused.
 */
export function readKeyDirectory(dir: string, defaultName: string | undefined): { root: RootKey; others: RootKey[] } {
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => !name.startsWith('.')).sort();
  } catch (error) {
    return refuse(`${dir} cannot be read as a directory (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const keys = names.map((name) => readKeyFile(dir, name));
  if (keys.length === 0) refuse(`${dir} holds no key file (one file per key: its name the key's name, its content the base64 of 32 bytes)`);
  if (defaultName === undefined && keys.length > 1) refuse(`${dir} holds several keys (${names.join(', ')}): set SVC_KMS_DEFAULT_KEY to the one SSE-S3 uses`);
  const chosen = defaultName ?? keys[0]!.name;
  const root = keys.find((key) => key.name === chosen);
  if (!root) {
    throw new SvcError('InvalidConfiguration', `SVC_KMS_DEFAULT_KEY=${JSON.stringify(chosen)} names no key file of ${dir} (${names.join(', ')})`, { variable: 'SVC_KMS_DEFAULT_KEY' });
  }
  return { root, others: keys.filter((key) => key !== root) };
}
