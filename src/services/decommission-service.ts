/**
 * Decommission on a running node: the leader runs the queue (ops/decommission.ts, pool.bin) and
 * tells the peers when pool.bin changes; any other node forwards start, cancel, clear and status
 * to the leader, follows pool.bin when told (and every limits.leaderFollowIntervalMs in case a notice was
 * lost), and so refuses writes to a pool being decommissioned just like the leader.
 */
import type { Logger } from 'pino';
import type { ServerConfig } from '../cluster/server-config.js';
import type { StartedStorage } from '../cluster/startup.js';
import { DecommissionManager, validatePoolMeta, type PoolMetaDocument } from '../ops/decommission.js';
import { StateStore } from '../ops/state-store.js';
import { askPeer, type PeerHandlerTable } from '../ops/peer-protocol.js';
import type { DecommissionControl } from '../api/admin/context.js';
import { SvcError } from '../errors/index.js';
import type { StateFileQuarantine } from '../cluster/state-quarantine.js';
import { leaderRunService, type PeerLinks } from './peer-links.js';
import { limits } from '../util/limits.js';

export type DecommissionPeerOperations = 'decommission-start' | 'decommission-cancel' | 'decommission-clear' | 'decommission-status' | 'pool-meta-changed';

export interface DecommissionService {
  manager: DecommissionManager;
  /** What the admin API calls: the manager on the leader, forwarded to it elsewhere. */
  control: DecommissionControl;
  peerHandlers: Pick<PeerHandlerTable, DecommissionPeerOperations>;
  close(): Promise<void>;
}

/** Refuses what is forwarded to a node that is not the leader. */
export function leaderOnly(links: PeerLinks, what: string): void {
  if (!links.isLeader) throw new SvcError('InvalidConfiguration', `this node is not the ${what} leader`);
}

export async function createDecommissionService(options: {
  config: ServerConfig;
  storage: StartedStorage;
  links: PeerLinks;
  logger: Logger;
  /** Where refused state files go. */
  quarantine: StateFileQuarantine;
  /** A rebalance is running (a decommission does not start meanwhile). */
  rebalanceRunning(): boolean;
}): Promise<DecommissionService> {
  const { config, storage, links, logger } = options;
  const manager = new DecommissionManager({
    rebalanceRunning: options.rebalanceRunning,
    objects: storage.objects,
    pools: config.layout.pools.map((pool) => ({ index: pool.index, pattern: pool.pattern })),
    legacy: config.layout.legacy,
    store: new StateStore<PoolMetaDocument>({ name: 'pool.bin', magic: 'SVPB', drives: () => storage.setDrives.flat(2), validate: validatePoolMeta, quarantine: options.quarantine }),
    leader: links.isLeader,
    bucketConcurrency: config.decommissionBucketConcurrency,
    entryConcurrency: config.decommissionEntryConcurrency,
    maxAttempts: config.rebalanceMaxAttempts,
    nowMs: () => Date.now(),
    logger,
    onChange: () => void links.notifyAll('pool-meta-changed', {}, limits.poolMetaNoticeTimeoutMs, 'pool.bin change notice'),
  });
  await manager.load();

  /** A call forwarded to the leader; this node then follows the leader's pool.bin at once. */
  const forward = async <Answer>(asked: Promise<Answer>): Promise<Answer> => {
    const answer = await asked;
    await manager.reload().catch((error: unknown) => logger.warn({ err: error }, 'pool.bin reload after a forwarded decommission call failed'));
    return answer;
  };
  const leader = links.leader!;
  const control: DecommissionControl = links.isLeader
    ? { start: (pools) => manager.start(pools), cancel: (pool) => manager.cancel(pool), clear: (pool) => manager.clear(pool), status: async (pool) => manager.status(pool) }
    : {
        start: async (pools) => (await forward(askPeer(leader, 'decommission-start', { pools }, links.rpc))).entries,
        cancel: async (pool) => (await forward(askPeer(leader, 'decommission-cancel', { pool }, links.rpc))).entry,
        clear: async (pool) => void (await forward(askPeer(leader, 'decommission-clear', { pool }, links.rpc))),
        status: async (pool) => (await forward(askPeer(leader, 'decommission-status', pool === undefined ? {} : { pool }, links.rpc))).entries,
      };

  const peerHandlers: DecommissionService['peerHandlers'] = {
    'decommission-start': async ({ pools }) => {
      leaderOnly(links, 'decommission');
      return { entries: await manager.start(pools) };
    },
    'decommission-cancel': async ({ pool }) => {
      leaderOnly(links, 'decommission');
      return { entry: await manager.cancel(pool) };
    },
    'decommission-clear': async ({ pool }) => {
      leaderOnly(links, 'decommission');
      await manager.clear(pool);
      return { cleared: true };
    },
    'decommission-status': async ({ pool }) => {
      leaderOnly(links, 'decommission');
      return { entries: manager.status(pool) };
    },
    'pool-meta-changed': async () => {
      await manager.reload();
      return { reloaded: true };
    },
  };
  return leaderRunService(links, manager, 'pool.bin', logger, { control, peerHandlers });
}
