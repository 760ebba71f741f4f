/**
 * The built-in KMS (docs/encryption.md). Its root keys come from SVC_KMS_SECRET_KEY or the files of
 * SVC_KMS_KEY_DIR and are keys themselves (the default one's name is the default key id). Named
 * keys are 32 random bytes each, kept in `.svc.sys/kms.bin` on every drive sealed by the default
 * root key, with a check value that tells a root key other than the one they were sealed with
 * apart from a damaged file. kms.bin also holds every key's later versions (a rotation makes one,
 * sealed by the root key too) and the names of disabled keys. A key created on one node is found
 * by the others at their next look-up of an unknown key (they reread kms.bin); a rotation or a
 * disabled key is announced to them (`reload`).
 *
 * What `sealDataKey` returns (formats.md, "KMS-sealed data keys"): a sealed key of
 * format/sealed-key.ts as it is when the key's version 1 sealed it (its first byte is 1), or
 * `u8 2 | u32 key version | sealed key` for a later version.
 */
import { randomBytes } from 'node:crypto';
import { SvcError } from '../../errors/index.js';
import { deriveKey, sealKey, unsealKey } from '../../format/sealed-key.js';
import { isKmsKeyName } from '../../cluster/kms-config.js';
import type { StateStore } from '../state-store.js';
import { rootKeyNotDeletable, type Kms, type KmsKeyStatus } from './kms.js';

export interface KmsKeyRecord {
  keyId: string;
  createdAt: string;
  /** The key's 32 bytes sealed by the root key (base64, format/sealed-key.ts). */
  sealed: string;
}

/** Version 2 and later of a key (root or named): made by a rotation. */
export interface KmsKeyVersionRecord extends KmsKeyRecord {
  version: number;
}

export interface KmsDocument {
  generation: number;
  /** Name of the root key the keys are sealed with, and a check value derived from it (base64). */
  rootKeyId: string;
  rootCheck: string;
  keys: KmsKeyRecord[];
  /** Later versions of keys, each key's in order from 2; absent until a key is first rotated. */
  versions?: KmsKeyVersionRecord[];
  /** Disabled keys by name; absent when none ever was. */
  disabled?: string[];
  /** Deleted keys by name (their names are not given again); absent when none ever was. */
  deleted?: string[];
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const base64 = /^[A-Za-z0-9+/]+={0,2}$/;

function validateRecord(key: unknown, where: string, fields: string[], bad: (what: string) => never): KmsKeyRecord {
  if (!isObject(key) || Object.keys(key).some((name) => !fields.includes(name))) return bad(where);
  if (typeof key.keyId !== 'string' || !isKmsKeyName(key.keyId)) return bad(`${where}.keyId`);
  if (typeof key.createdAt !== 'string' || Number.isNaN(Date.parse(key.createdAt))) return bad(`${where}.createdAt`);
  if (typeof key.sealed !== 'string' || !base64.test(key.sealed)) return bad(`${where}.sealed`);
  return { keyId: key.keyId, createdAt: key.createdAt, sealed: key.sealed };
}

/** The strict decoder of kms.bin's payload: anything else is refused, never guessed. */
export function validateKmsDocument(value: unknown): KmsDocument {
  const bad = (what: string): never => {
    throw new SvcError('CorruptFormat', `kms.bin: ${what}`);
  };
  if (!isObject(value)) return bad('not an object');
  const known = new Set(['generation', 'rootKeyId', 'rootCheck', 'keys', 'versions', 'disabled', 'deleted']);
  for (const name of Object.keys(value)) if (!known.has(name)) bad(`unknown field ${name}`);
  if (!Number.isSafeInteger(value.generation) || (value.generation as number) < 0) bad('generation');
  if (typeof value.rootKeyId !== 'string' || !isKmsKeyName(value.rootKeyId)) bad('rootKeyId');
  if (typeof value.rootCheck !== 'string' || !base64.test(value.rootCheck)) bad('rootCheck');
  if (!Array.isArray(value.keys)) return bad('keys');
  const keys = value.keys.map((key, index) => validateRecord(key, `keys[${index}]`, ['keyId', 'createdAt', 'sealed'], bad));
  if (new Set(keys.map((key) => key.keyId)).size !== keys.length) bad('duplicate key id');
  if (value.versions !== undefined && !Array.isArray(value.versions)) bad('versions');
  const last = new Map<string, number>();
  const versions = ((value.versions ?? []) as unknown[]).map((entry, index): KmsKeyVersionRecord => {
    const record = validateRecord(entry, `versions[${index}]`, ['keyId', 'createdAt', 'sealed', 'version'], bad);
    const version = (entry as Record<string, unknown>).version;
    if (typeof version !== 'number' || version !== (last.get(record.keyId) ?? 1) + 1) return bad(`versions[${index}].version: each key's versions follow each other from 2`);
    last.set(record.keyId, version);
    return { ...record, version };
  });
  if (value.disabled !== undefined && (!Array.isArray(value.disabled) || value.disabled.some((name) => typeof name !== 'string' || !isKmsKeyName(name)))) bad('disabled');
  const disabled = value.disabled as string[] | undefined;
  if (disabled && new Set(disabled).size !== disabled.length) bad('duplicate disabled key');
  const deleted = namesOf(value.deleted, 'deleted', bad);
  if (deleted?.some((name) => keys.some((key) => key.keyId === name))) bad('deleted: a deleted key is still among the keys');
  return {
    generation: value.generation as number,
    rootKeyId: value.rootKeyId as string,
    rootCheck: value.rootCheck as string,
    keys,
    ...(value.versions !== undefined ? { versions } : {}),
    ...(disabled !== undefined ? { disabled } : {}),
    ...(deleted !== undefined ? { deleted } : {}),
  };
}

/** An optional list of distinct key names. */
function namesOf(value: unknown, field: string, bad: (what: string) => never): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((name) => typeof name !== 'string' || !isKmsKeyName(name))) return bad(field);
  if (new Set(value).size !== value.length) bad(`duplicate ${field} key`);
  return value as string[];
}

/** A key that was deleted: what it sealed stays sealed for good. */
const deletedKey = (keyId: string) => new SvcError('KMS.NotFoundException', `Invalid keyId ${keyId}: the KMS key was deleted, and what it sealed cannot be opened any more`, { keyId, deleted: true });

const keyContext = (keyId: string, version: number): string => (version === 1 ? `svc-kms-key|${keyId}` : `svc-kms-key|${keyId}|v${version}`);
const dataKeyContext = (keyId: string, context: string): string => `svc-dek-1|${keyId}|${context}`;

/** The form of a data key sealed by a later key version (formats.md). */
const versionedBlob = 2;

export function encodeKmsBlob(version: number, sealed: Uint8Array): Buffer {
  if (version === 1) return Buffer.from(sealed);
  const head = Buffer.alloc(5);
  head[0] = versionedBlob;
  head.writeUInt32BE(version, 1);
  return Buffer.concat([head, sealed]);
}

export function decodeKmsBlob(blob: Uint8Array): { version: number; sealed: Uint8Array } {
  if (blob.length > 0 && blob[0] === 1) return { version: 1, sealed: blob };
  if (blob.length > 5 && blob[0] === versionedBlob) {
    const version = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength).readUInt32BE(1);
    if (version >= 2) return { version, sealed: blob.subarray(5) };
  }
  throw new SvcError('CorruptFormat', 'KMS-sealed data key: unknown form');
}

/** What kms.bin says, opened: each key's key-encryption keys by version (index 0 is version 1). */
interface KeyState {
  versions: Map<string, Buffer[]>;
  createdAt: Map<string, string>;
  rotatedAt: Map<string, string>;
  named: Set<string>;
  disabled: Set<string>;
  deleted: Set<string>;
}

export interface RootKeys {
  /** The default key: it seals kms.bin's keys. */
  root: { name: string; key: Buffer };
  /** More root keys (a key directory's other files). */
  others?: { name: string; key: Buffer }[];
}

export class BuiltinKms implements Kms {
  readonly kind = 'builtin';
  private state: KeyState;
  private readonly rootKek: Buffer;
  private readonly rootCheck: string;
  private readonly roots: { name: string; key: Buffer }[];

  constructor(private readonly options: RootKeys & { store: StateStore<KmsDocument>; nowMs: () => number; lock?: () => Promise<() => void> }) {
    this.rootKek = deriveKey(options.root.key, 'svc-kms-root-kek');
    this.rootCheck = deriveKey(options.root.key, 'svc-kms-root-check').toString('base64');
    this.roots = [options.root, ...(options.others ?? [])];
    this.state = this.open(undefined);
  }

  get defaultKeyId(): string {
    return this.options.root.name;
  }

  /**
   * Reads kms.bin. A file sealed under another root key stops start-up with a clear error: the
   * keys in it (and the objects under them) need the root key they were made with.
   */
  async load(): Promise<void> {
    this.state = this.open(await this.options.store.load());
  }

  reload(): Promise<void> {
    return this.load();
  }

  private open(document: KmsDocument | undefined): KeyState {
    const state: KeyState = { versions: new Map(), createdAt: new Map(), rotatedAt: new Map(), named: new Set(), disabled: new Set(document?.disabled ?? []), deleted: new Set(document?.deleted ?? []) };
    for (const root of this.roots) state.versions.set(root.name, [deriveKey(root.key, `svc-kms-kek|${root.name}`)]);
    if (!document) return state;
    if (document.rootCheck !== this.rootCheck) {
      throw new SvcError('InvalidConfiguration', `SVC_KMS_SECRET_KEY is not the root key this deployment's KMS keys were sealed with (they were sealed by root key '${document.rootKeyId}'); start with that key`, { variable: 'SVC_KMS_SECRET_KEY' });
    }
    const opened = (record: KmsKeyRecord, version: number): Buffer => {
      const material = unsealKey(this.rootKek, Buffer.from(record.sealed, 'base64'), keyContext(record.keyId, version));
      if (!material || material.length !== 32) throw new SvcError('CorruptFormat', `kms.bin: key ${record.keyId} (version ${version}) does not unseal`);
      return material;
    };
    for (const record of document.keys) {
      if (state.versions.has(record.keyId)) throw new SvcError('InvalidConfiguration', `the root key '${record.keyId}' has the name of a named KMS key of kms.bin: rename its key file`, { variable: 'SVC_KMS_KEY_DIR' });
      state.versions.set(record.keyId, [opened(record, 1)]);
      state.createdAt.set(record.keyId, record.createdAt);
      state.named.add(record.keyId);
    }
    for (const record of document.versions ?? []) {
      const list = state.versions.get(record.keyId);
      // A version of a key this start has not (a key file taken out of the directory): unusable, kept in kms.bin.
      if (!list || list.length + 1 !== record.version) continue;
      list.push(opened(record, record.version));
      state.rotatedAt.set(record.keyId, record.createdAt);
    }
    return state;
  }

  /** Changes kms.bin under its cluster-wide lock, then takes the saved document as the state. */
  private async change(mutate: (document: KmsDocument) => KmsDocument): Promise<void> {
    const release = (await this.options.lock?.()) ?? (() => undefined);
    try {
      const document = (await this.options.store.load()) ?? { generation: 0, rootKeyId: this.options.root.name, rootCheck: this.rootCheck, keys: [] };
      if (document.rootCheck !== this.rootCheck) throw new SvcError('KMSKeyUnsealFailed', 'kms.bin was sealed by another root key');
      const changed = { ...mutate(document), generation: document.generation + 1 };
      await this.options.store.save(changed);
      this.state = this.open(changed);
    } finally {
      release();
    }
  }

  async createKey(keyId: string): Promise<KmsKeyStatus> {
    if (!isKmsKeyName(keyId)) throw new SvcError('InvalidArgument', 'A KMS key name is 1 to 64 letters, digits and ._- starting with a letter or digit.');
    await this.change((document) => {
      if (this.roots.some((root) => root.name === keyId) || document.keys.some((key) => key.keyId === keyId)) throw new SvcError('KMSKeyExists', undefined, { keyId });
      if ((document.deleted ?? []).includes(keyId)) throw new SvcError('KMSKeyExists', `${keyId} was the name of a deleted key: names are not given again, so that objects sealed under the deleted key are never taken for another's`, { keyId });
      const record: KmsKeyRecord = { keyId, createdAt: new Date(this.options.nowMs()).toISOString(), sealed: sealKey(this.rootKek, randomBytes(32), keyContext(keyId, 1)).toString('base64') };
      return { ...document, keys: [...document.keys, record] };
    });
    return this.statusOf(keyId);
  }

  async rotateKey(keyId: string): Promise<KmsKeyStatus> {
    await this.versionsOf(keyId);
    await this.change((document) => {
      if ((document.disabled ?? []).includes(keyId)) throw new SvcError('KMS.DisabledException', `${keyId} is disabled: enable it before rotating it`, { keyId });
      const version = (document.versions ?? []).filter((record) => record.keyId === keyId).length + 2;
      const record: KmsKeyVersionRecord = { keyId, version, createdAt: new Date(this.options.nowMs()).toISOString(), sealed: sealKey(this.rootKek, randomBytes(32), keyContext(keyId, version)).toString('base64') };
      return { ...document, versions: [...(document.versions ?? []), record] };
    });
    return this.statusOf(keyId);
  }

  async setKeyEnabled(keyId: string, enabled: boolean): Promise<KmsKeyStatus> {
    await this.versionsOf(keyId);
    if (!enabled && keyId === this.defaultKeyId) throw new SvcError('InvalidArgument', `${keyId} is the default key (SSE-S3 and bucket default encryption use it): it cannot be disabled`);
    await this.change((document) => {
      const others = (document.disabled ?? []).filter((name) => name !== keyId);
      return { ...document, disabled: enabled ? others : [...others, keyId] };
    });
    return this.statusOf(keyId);
  }

  async deleteKey(keyId: string): Promise<void> {
    await this.versionsOf(keyId);
    if (!this.state.named.has(keyId)) throw rootKeyNotDeletable(keyId);
    await this.change((document) => {
      if (!document.keys.some((key) => key.keyId === keyId)) throw new SvcError('KMS.NotFoundException', `Invalid keyId ${keyId}`, { keyId });
      const others = <T extends { keyId: string }>(records: T[]) => records.filter((record) => record.keyId !== keyId);
      return {
        ...document,
        keys: others(document.keys),
        ...(document.versions !== undefined ? { versions: others(document.versions) } : {}),
        ...(document.disabled !== undefined ? { disabled: document.disabled.filter((name) => name !== keyId) } : {}),
        deleted: [...(document.deleted ?? []), keyId],
      };
    });
  }

  async listKeys(): Promise<KmsKeyStatus[]> {
    await this.load();
    return [...this.state.versions.keys()].map((keyId) => this.statusOf(keyId));
  }

  async keyStatus(keyId: string): Promise<KmsKeyStatus> {
    await this.versionsOf(keyId);
    return this.statusOf(keyId);
  }

  async sealDataKey(keyId: string, dataKey: Uint8Array, context: string): Promise<Uint8Array> {
    const versions = await this.versionsOf(keyId);
    this.requireEnabled(keyId);
    return encodeKmsBlob(versions.length, sealKey(versions.at(-1)!, dataKey, dataKeyContext(keyId, context)));
  }

  async unsealDataKey(keyId: string, sealed: Uint8Array, context: string): Promise<Buffer> {
    const kek = await this.kekFor(keyId, sealed);
    this.requireEnabled(keyId);
    const dataKey = unsealKey(kek.kek, kek.sealed, dataKeyContext(keyId, context));
    if (!dataKey) throw new SvcError('KMSKeyUnsealFailed', undefined, { keyId });
    return dataKey;
  }

  async rewrapDataKey(keyId: string, sealed: Uint8Array, context: string): Promise<Uint8Array | undefined> {
    const kek = await this.kekFor(keyId, sealed);
    const versions = this.state.versions.get(keyId)!;
    if (kek.version === versions.length) return undefined;
    const dataKey = unsealKey(kek.kek, kek.sealed, dataKeyContext(keyId, context));
    if (!dataKey) throw new SvcError('KMSKeyUnsealFailed', undefined, { keyId });
    return encodeKmsBlob(versions.length, sealKey(versions.at(-1)!, dataKey, dataKeyContext(keyId, context)));
  }

  /** The key version that sealed `blob`, rereading kms.bin once for a version this node does not know yet. */
  private async kekFor(keyId: string, blob: Uint8Array): Promise<{ kek: Buffer; sealed: Uint8Array; version: number }> {
    const { version, sealed } = decodeKmsBlob(blob);
    const unknown = (error?: unknown): never => {
      if (this.state.deleted.has(keyId)) throw deletedKey(keyId);
      // A key the data names but this KMS does not have: the root key (or kms.bin) is not the one it was written with.
      throw new SvcError('KMSKeyUnsealFailed', `the KMS has no key '${keyId}' (version ${version}), which sealed this object's key`, { keyId }, error === undefined ? undefined : { cause: error });
    };
    let versions = await this.versionsOf(keyId).catch(unknown);
    if (version > versions.length) {
      await this.load();
      versions = this.state.versions.get(keyId) ?? [];
    }
    const kek = versions[version - 1];
    return kek ? { kek, sealed, version } : unknown();
  }

  private requireEnabled(keyId: string): void {
    if (this.state.disabled.has(keyId)) throw new SvcError('KMS.DisabledException', `${keyId} is disabled.`, { keyId });
  }

  private async versionsOf(keyId: string): Promise<Buffer[]> {
    if (!this.state.versions.has(keyId)) await this.load();
    const versions = this.state.versions.get(keyId);
    if (!versions && this.state.deleted.has(keyId)) throw deletedKey(keyId);
    if (!versions) throw new SvcError('KMS.NotFoundException', `Invalid keyId ${keyId}`, { keyId });
    return versions;
  }

  private statusOf(keyId: string): KmsKeyStatus {
    const versions = this.state.versions.get(keyId)!;
    const kek = versions.at(-1)!;
    const probe = randomBytes(32);
    const sealed = sealKey(kek, probe, 'svc-kms-probe');
    const opened = unsealKey(kek, sealed, 'svc-kms-probe');
    const createdAt = this.state.createdAt.get(keyId);
    const rotatedAt = this.state.rotatedAt.get(keyId);
    return {
      keyId,
      origin: this.state.named.has(keyId) ? 'named' : 'root',
      ...(createdAt ? { createdAt } : {}),
      enabled: !this.state.disabled.has(keyId),
      version: versions.length,
      ...(rotatedAt ? { rotatedAt } : {}),
      encryptionOk: true,
      decryptionOk: opened?.equals(probe) ?? false,
    };
  }
}
