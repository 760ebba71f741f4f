/**
 * Rebalance on a running node: the leader runs it (ops/rebalance.ts, rebalance.bin) and announces
 * its events to every peer (the admission fence); any other node forwards start, stop and status
 * to the leader, reloads rebalance.bin when told, and every limits.leaderFollowIntervalMs.
 */
import type { Logger } from 'pino';
import type { ServerConfig } from '../cluster/server-config.js';
import type { StartedStorage } from '../cluster/startup.js';
import { RebalanceManager, validateRebalance, type RebalanceDocument } from '../ops/rebalance.js';
import { StateStore } from '../ops/state-store.js';
import { askPeer, type PeerHandlerTable } from '../ops/peer-protocol.js';
import type { RebalanceControl } from '../api/admin/context.js';
import type { StateFileQuarantine } from '../cluster/state-quarantine.js';
import { leaderRunService, type PeerLinks } from './peer-links.js';
import { leaderOnly } from './decommission-service.js';
import { limits } from '../util/limits.js';

export type RebalancePeerOperations = 'rebalance-start' | 'rebalance-stop' | 'rebalance-status' | 'rebalance-event';

export interface RebalanceService {
  manager: RebalanceManager;
  /** What the admin API calls: the manager on the leader, forwarded to it elsewhere. */
  control: RebalanceControl;
  peerHandlers: Pick<PeerHandlerTable, RebalancePeerOperations>;
  close(): Promise<void>;
}

export async function createRebalanceService(options: {
  config: ServerConfig;
  storage: StartedStorage;
  links: PeerLinks;
  logger: Logger;
  /** Where refused state files go. */
  quarantine: StateFileQuarantine;
  /** A decommission is queued or running (a rebalance does not start meanwhile). */
  decommissionUnfinished(): boolean;
}): Promise<RebalanceService> {
  const { config, storage, links, logger } = options;
  const manager = new RebalanceManager({
    objects: storage.objects,
    poolCount: config.layout.pools.length,
    legacy: config.layout.legacy,
    store: new StateStore<RebalanceDocument>({ name: 'rebalance.bin', magic: 'SVRB', drives: () => storage.setDrives.flat(2), validate: validateRebalance, quarantine: options.quarantine }),
    leader: links.isLeader,
    maxAttempts: config.rebalanceMaxAttempts,
    nowMs: () => Date.now(),
    logger,
    decommissionUnfinished: options.decommissionUnfinished,
    peers: { announce: (event, id) => links.notifyAll('rebalance-event', { event, id }, limits.rebalanceEventTimeoutMs, `rebalance ${event} event`) },
  });
  await manager.load();
  const leader = links.leader!;
  const control: RebalanceControl = links.isLeader
    ? { start: () => manager.start(), status: async () => manager.status(), stop: () => manager.stop() }
    : {
        start: () => askPeer(leader, 'rebalance-start', {}, links.rpc),
        status: () => askPeer(leader, 'rebalance-status', {}, links.rpc),
        stop: () => askPeer(leader, 'rebalance-stop', {}, links.rpc),
      };
  const peerHandlers: RebalanceService['peerHandlers'] = {
    'rebalance-start': async () => {
      leaderOnly(links, 'rebalance');
      return manager.start();
    },
    'rebalance-stop': async () => {
      leaderOnly(links, 'rebalance');
      return manager.stop();
    },
    'rebalance-status': async () => {
      leaderOnly(links, 'rebalance');
      return manager.status();
    },
    'rebalance-event': async () => {
      // The admission fence: this node now knows the rebalance (and refuses what conflicts with it).
      await manager.reload();
      return { acknowledged: true };
    },
  };
  return leaderRunService(links, manager, 'rebalance.bin', logger, { control, peerHandlers });
}
