/**
 * Users and policies on a running node (ops/iam-store.ts, iam.bin), the same on every node: a
 * change is announced to every peer (answered once every reachable peer has reloaded, so a
 * disabled user is refused everywhere from then on), a peer told reloads, and every node rereads
 * iam.bin every limits.iamReloadIntervalMs in case a notice was lost.
 */
import type { Logger } from 'pino';
import type { ServerConfig } from '../cluster/server-config.js';
import type { StartedStorage } from '../cluster/startup.js';
import { IamStore, validateIamDocument, type IamDocument } from '../ops/iam-store.js';
import { StateStore } from '../ops/state-store.js';
import type { PeerHandlerTable } from '../ops/peer-protocol.js';
import type { NamespaceLocker } from '../object/locks.js';
import type { Clock } from '../util/clock.js';
import { limits } from '../util/limits.js';
import type { StateFileQuarantine } from '../cluster/state-quarantine.js';
import { followTimer, type PeerLinks } from './peer-links.js';

export interface IamService {
  iam: IamStore;
  peerHandlers: Pick<PeerHandlerTable, 'iam-changed'>;
  close(): Promise<void>;
}

export async function createIamService(options: {
  config: ServerConfig;
  storage: StartedStorage;
  links: PeerLinks;
  logger: Logger;
  /** Where refused state files go. */
  quarantine: StateFileQuarantine;
  /** The clock of session, web identity and service account expiry. */
  identityClock: Clock;
  /** The cluster-wide namespace locker (users and policies change under it). */
  locker?: NamespaceLocker;
}): Promise<IamService> {
  const { config, storage, links, locker } = options;
  const iam = new IamStore({
    store: new StateStore<IamDocument>({ name: 'iam.bin', magic: 'SVIA', drives: () => storage.setDrives.flat(2), validate: validateIamDocument, quarantine: options.quarantine }),
    root: { accessKey: config.accessKey, secretKey: config.secretKey },
    nowMs: () => Date.now(),
    expiryNowMs: () => options.identityClock.nowMs(),
    announce: async () => void (await links.notifyAll('iam-changed', {}, limits.changeNoticeTimeoutMs, 'users and policies change notice')),
    ...(locker ? { lock: () => locker.acquire('.svc.sys/iam.bin', 'write') } : {}),
  });
  await iam.reload();
  const follower = followTimer(limits.iamReloadIntervalMs, 'rereading iam.bin', () => iam.reload(), options.logger);
  follower.start();
  return {
    iam,
    peerHandlers: {
      'iam-changed': async () => {
        await iam.reload();
        return { reloaded: true };
      },
    },
    close: async () => follower.stop(),
  };
}
