/**
 * KMS key rotation, disabling and enabling on a running node (docs/encryption.md). Disabling and
 * enabling change kms.bin from any node; a rotation is forwarded to the leader, which makes the new
 * key version and runs the background re-wrap (ops/kms/rewrap.ts, kms-rewrap.bin); its status is
 * asked of the leader from any node. Every change is announced to every peer (`kms-changed`), which
 * rereads kms.bin, and every node rereads it every limits.leaderFollowIntervalMs as well, so a node
 * that missed a notice seals under the newest version and refuses a disabled key soon after.
 */
import type { Logger } from 'pino';
import type { ServerConfig } from '../cluster/server-config.js';
import type { StartedStorage } from '../cluster/startup.js';
import { defaultRewrapObjectsPerSecond } from '../cluster/kms-config.js';
import { SvcError } from '../errors/index.js';
import { rootKeyNotDeletable, type Kms } from '../ops/kms/kms.js';
import { RewrapManager, validateRewrap, type RewrapDocument } from '../ops/kms/rewrap.js';
import { StateStore } from '../ops/state-store.js';
import { askPeer, type PeerHandlerTable } from '../ops/peer-protocol.js';
import type { KmsKeyControl } from '../api/admin/context.js';
import { followTimer, type PeerLinks } from './peer-links.js';
import { leaderOnly } from './decommission-service.js';
import { limits } from '../util/limits.js';

export type KmsPeerOperations = 'kms-changed' | 'kms-rotate' | 'kms-rewrap-status';

export interface KmsKeysService {
  control: KmsKeyControl | undefined;
  peerHandlers: Pick<PeerHandlerTable, KmsPeerOperations>;
  close(): Promise<void>;
}

const notConfigured = async (): Promise<never> => {
  throw new SvcError('KMSNotConfigured');
};

/**
 * Why a key may not be deleted: it is unknown or a root key, a bucket's default encryption names
 * it (the bucket's next PUT would fail), or the caller did not confirm with `force` that what the
 * key sealed becomes unreadable. Objects are not counted: that would walk every version.
 */
async function refuseDeletion(kms: Kms, storage: StartedStorage, keyId: string, force: boolean): Promise<void> {
  const status = await kms.keyStatus(keyId);
  if (status.origin === 'root') throw rootKeyNotDeletable(keyId);
  const buckets = (await storage.objects.listBuckets()).filter((bucket) => bucket.encryption?.kmsKeyId === keyId).map((bucket) => bucket.name);
  if (buckets.length > 0) throw new SvcError('KMSKeyInUse', `the default encryption of bucket ${buckets.join(', ')} names KMS key ${keyId}: change or delete it first; the key stays`, { keyId, buckets });
  if (!force) throw new SvcError('KMSKeyDeletionNotConfirmed', `deleting KMS key ${keyId} makes every object and upload sealed under it unreadable for good: confirm with force=true (rc admin kms key rm --force); the key stays`, { keyId });
}

export async function createKmsKeysService(options: { config: ServerConfig; storage: StartedStorage; links: PeerLinks; logger: Logger; kms: Kms | undefined }): Promise<KmsKeysService> {
  const { kms, links, logger, storage } = options;
  if (!kms) return { control: undefined, peerHandlers: { 'kms-changed': async () => ({ reloaded: true }), 'kms-rotate': notConfigured, 'kms-rewrap-status': notConfigured }, close: async () => undefined };
  const manager = links.isLeader
    ? new RewrapManager({
        objects: storage.objects,
        kms,
        store: new StateStore<RewrapDocument>({ name: 'kms-rewrap.bin', magic: 'SVKR', drives: () => storage.setDrives.flat(2), validate: validateRewrap, quarantine: storage.quarantine }),
        objectsPerSecond: options.config.kms.rewrapObjectsPerSecond ?? defaultRewrapObjectsPerSecond,
        nowMs: () => Date.now(),
        logger,
      })
    : undefined;
  await manager?.load();
  const announce = () => links.notifyAll('kms-changed', {}, limits.rebalanceEventTimeoutMs, 'KMS key change');
  const rotateHere = async (keyId: string) => {
    const key = await kms.rotateKey(keyId);
    // Every node seals under the new version before the walk begins, so the walk leaves nothing behind.
    await announce();
    return { key, rewrap: await manager!.begin(keyId) };
  };
  const leader = links.leader;
  const control: KmsKeyControl = {
    rotate: (keyId) => (manager ? rotateHere(keyId) : askPeer(leader!, 'kms-rotate', { keyId }, links.rpc)),
    setEnabled: async (keyId, enabled) => {
      const status = await kms.setKeyEnabled(keyId, enabled);
      await announce();
      return status;
    },
    rewrapStatus: async () => (manager ? manager.status() : askPeer(leader!, 'kms-rewrap-status', {}, links.rpc)),
    deleteKey: async (keyId, force) => {
      await refuseDeletion(kms, storage, keyId, force);
      await kms.deleteKey(keyId);
      await announce();
      return { keyId, deleted: true };
    },
  };
  const follower = followTimer(limits.leaderFollowIntervalMs, 'rereading kms.bin', () => kms.reload(), logger);
  if (links.peers.length > 0) follower.start();
  return {
    control,
    peerHandlers: {
      'kms-changed': async () => {
        await kms.reload();
        return { reloaded: true };
      },
      'kms-rotate': async ({ keyId }) => {
        leaderOnly(links, 'KMS re-wrap');
        return rotateHere(keyId);
      },
      'kms-rewrap-status': async () => {
        leaderOnly(links, 'KMS re-wrap');
        return manager!.status();
      },
    },
    close: async () => {
      follower.stop();
      await manager?.close();
    },
  };
}
