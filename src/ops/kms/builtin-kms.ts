/**
 * The built-in KMS (docs/encryption.md). Its root key comes from SVC_KMS_SECRET_KEY and is a key
 * itself (its name is the default key id). Named keys are 32 random bytes each, kept in
 * `.svc.sys/kms.bin` on every drive sealed by the root key, with a check value that tells a root
 * key other than the one they were sealed with apart from a damaged file. A key created on one
 * node is found by the others at their next look-up of an unknown key (they reread kms.bin).
 */
import { randomBytes } from 'node:crypto';
import { SvcError } from '../../errors/index.js';
import { deriveKey, sealKey, unsealKey } from '../../format/sealed-key.js';
import { isKmsKeyName } from '../../cluster/kms-config.js';
import type { StateStore } from '../state-store.js';
import type { Kms, KmsKeyStatus } from './kms.js';

export interface KmsKeyRecord {
  keyId: string;
  createdAt: string;
  /** The key's 32 bytes sealed by the root key (base64, format/sealed-key.ts). */
  sealed: string;
}

export interface KmsDocument {
  generation: number;
  /** Name of the root key the keys are sealed with, and a check value derived from it (base64). */
  rootKeyId: string;
  rootCheck: string;
  keys: KmsKeyRecord[];
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const base64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The strict decoder of kms.bin's payload: anything else is refused, never guessed. */
export function validateKmsDocument(value: unknown): KmsDocument {
  const bad = (what: string): never => {
    throw new SvcError('CorruptFormat', `kms.bin: ${what}`);
  };
  if (!isObject(value)) return bad('not an object');
  const known = new Set(['generation', 'rootKeyId', 'rootCheck', 'keys']);
  for (const name of Object.keys(value)) if (!known.has(name)) bad(`unknown field ${name}`);
  if (!Number.isSafeInteger(value.generation) || (value.generation as number) < 0) bad('generation');
  if (typeof value.rootKeyId !== 'string' || !isKmsKeyName(value.rootKeyId)) bad('rootKeyId');
  if (typeof value.rootCheck !== 'string' || !base64.test(value.rootCheck)) bad('rootCheck');
  if (!Array.isArray(value.keys)) return bad('keys');
  const keys = value.keys.map((key, index): KmsKeyRecord => {
    if (!isObject(key) || Object.keys(key).some((name) => !['keyId', 'createdAt', 'sealed'].includes(name))) return bad(`keys[${index}]`);
    if (typeof key.keyId !== 'string' || !isKmsKeyName(key.keyId)) return bad(`keys[${index}].keyId`);
    if (typeof key.createdAt !== 'string' || Number.isNaN(Date.parse(key.createdAt))) return bad(`keys[${index}].createdAt`);
    if (typeof key.sealed !== 'string' || !base64.test(key.sealed)) return bad(`keys[${index}].sealed`);
    return { keyId: key.keyId, createdAt: key.createdAt, sealed: key.sealed };
  });
  if (new Set(keys.map((key) => key.keyId)).size !== keys.length) bad('duplicate key id');
  return { generation: value.generation as number, rootKeyId: value.rootKeyId as string, rootCheck: value.rootCheck as string, keys };
}

const keyContext = (keyId: string): string => `svc-kms-key|${keyId}`;
const dataKeyContext = (keyId: string, context: string): string => `svc-dek-1|${keyId}|${context}`;

export class BuiltinKms implements Kms {
  readonly kind = 'builtin';
  private readonly keys = new Map<string, Buffer>();
  private readonly rootKek: Buffer;
  private readonly rootCheck: string;

  constructor(private readonly options: { root: { name: string; key: Buffer }; store: StateStore<KmsDocument>; nowMs: () => number; lock?: () => Promise<() => void> }) {
    this.rootKek = deriveKey(options.root.key, 'svc-kms-root-kek');
    this.rootCheck = deriveKey(options.root.key, 'svc-kms-root-check').toString('base64');
  }

  get defaultKeyId(): string {
    return this.options.root.name;
  }

  /**
   * Reads kms.bin. A file sealed under another root key stops start-up with a clear error: the
   * keys in it (and the objects under them) need the root key they were made with.
   */
  async load(): Promise<void> {
    const document = await this.options.store.load();
    if (!document) return;
    if (document.rootCheck !== this.rootCheck) {
      throw new SvcError('InvalidConfiguration', `SVC_KMS_SECRET_KEY is not the root key this deployment's KMS keys were sealed with (they were sealed by root key '${document.rootKeyId}'); start with that key`, { variable: 'SVC_KMS_SECRET_KEY' });
    }
    for (const record of document.keys) {
      if (this.keys.has(record.keyId)) continue;
      const material = unsealKey(this.rootKek, Buffer.from(record.sealed, 'base64'), keyContext(record.keyId));
      if (!material || material.length !== 32) throw new SvcError('CorruptFormat', `kms.bin: key ${record.keyId} does not unseal`);
      this.keys.set(record.keyId, material);
    }
  }

  async createKey(keyId: string): Promise<KmsKeyStatus> {
    if (!isKmsKeyName(keyId)) throw new SvcError('InvalidArgument', 'A KMS key name is 1 to 64 letters, digits and ._- starting with a letter or digit.');
    const release = (await this.options.lock?.()) ?? (() => undefined);
    try {
      const document = (await this.options.store.load()) ?? { generation: 0, rootKeyId: this.options.root.name, rootCheck: this.rootCheck, keys: [] };
      if (document.rootCheck !== this.rootCheck) throw new SvcError('KMSKeyUnsealFailed', 'kms.bin was sealed by another root key');
      if (keyId === this.options.root.name || document.keys.some((key) => key.keyId === keyId)) throw new SvcError('KMSKeyExists', undefined, { keyId });
      const material = randomBytes(32);
      const record: KmsKeyRecord = { keyId, createdAt: new Date(this.options.nowMs()).toISOString(), sealed: sealKey(this.rootKek, material, keyContext(keyId)).toString('base64') };
      await this.options.store.save({ ...document, generation: document.generation + 1, keys: [...document.keys, record] });
      this.keys.set(keyId, material);
      return this.statusOf(keyId, record.createdAt);
    } finally {
      release();
    }
  }

  async listKeys(): Promise<KmsKeyStatus[]> {
    await this.load();
    const document = await this.options.store.load();
    const named = (document?.keys ?? []).map((record) => this.statusOf(record.keyId, record.createdAt));
    return [this.statusOf(this.options.root.name), ...named];
  }

  async keyStatus(keyId: string): Promise<KmsKeyStatus> {
    await this.kekOf(keyId);
    const created = keyId === this.options.root.name ? undefined : (await this.options.store.load())?.keys.find((key) => key.keyId === keyId)?.createdAt;
    return this.statusOf(keyId, created);
  }

  async sealDataKey(keyId: string, dataKey: Uint8Array, context: string): Promise<Uint8Array> {
    return sealKey(await this.kekOf(keyId), dataKey, dataKeyContext(keyId, context));
  }

  async unsealDataKey(keyId: string, sealed: Uint8Array, context: string): Promise<Buffer> {
    const kek = await this.kekOf(keyId).catch((error: unknown) => {
      // A key the data names but this KMS does not have: the root key (or kms.bin) is not the one it was written with.
      throw new SvcError('KMSKeyUnsealFailed', `the KMS has no key '${keyId}', which sealed this object's key`, { keyId }, { cause: error });
    });
    const dataKey = unsealKey(kek, sealed, dataKeyContext(keyId, context));
    if (!dataKey) throw new SvcError('KMSKeyUnsealFailed', undefined, { keyId });
    return dataKey;
  }

  private async kekOf(keyId: string): Promise<Buffer> {
    if (keyId === this.options.root.name) return deriveKey(this.options.root.key, `svc-kms-kek|${keyId}`);
    if (!this.keys.has(keyId)) await this.load();
    const material = this.keys.get(keyId);
    if (!material) throw new SvcError('KMS.NotFoundException', `Invalid keyId ${keyId}`, { keyId });
    return material;
  }

  private statusOf(keyId: string, createdAt?: string): KmsKeyStatus {
    const kek = keyId === this.options.root.name ? deriveKey(this.options.root.key, `svc-kms-kek|${keyId}`) : this.keys.get(keyId);
    const probe = randomBytes(32);
    const sealed = kek ? sealKey(kek, probe, 'svc-kms-probe') : undefined;
    const opened = kek && sealed ? unsealKey(kek, sealed, 'svc-kms-probe') : undefined;
    return { keyId, origin: keyId === this.options.root.name ? 'root' : 'named', ...(createdAt ? { createdAt } : {}), encryptionOk: sealed !== undefined, decryptionOk: opened?.equals(probe) ?? false };
  }
}
