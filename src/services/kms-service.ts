/**
 * The node's KMS: the built-in one when SVC_KMS_SECRET_KEY or SVC_KMS_KEY_DIR is set (its named
 * keys in kms.bin on every drive), none otherwise. A kms.bin sealed under another root key stops
 * start-up.
 */
import type { ServerConfig } from '../cluster/server-config.js';
import type { StartedStorage } from '../cluster/startup.js';
import type { NamespaceLocker } from '../object/locks.js';
import { StateStore } from '../ops/state-store.js';
import { BuiltinKms, validateKmsDocument, type KmsDocument } from '../ops/kms/builtin-kms.js';
import type { Kms } from '../ops/kms/kms.js';

export async function createKms(options: { config: ServerConfig; storage: StartedStorage; locker?: NamespaceLocker }): Promise<Kms | undefined> {
  const root = options.config.kms.root;
  if (!root) return undefined;
  const { storage, locker } = options;
  const kms = new BuiltinKms({
    root,
    ...(options.config.kms.otherRoots ? { others: options.config.kms.otherRoots } : {}),
    store: new StateStore<KmsDocument>({ name: 'kms.bin', magic: 'SVKM', drives: () => storage.setDrives.flat(2), validate: validateKmsDocument, quarantine: storage.quarantine }),
    nowMs: () => Date.now(),
    ...(locker ? { lock: () => locker.acquire('.svc.sys/kms.bin', 'write') } : {}),
  });
  await kms.load();
  return kms;
}
