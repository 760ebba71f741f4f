/**
 * The admin side of a running node, composed from one factory per service: peer links
 * (peer-links.ts), decommission, rebalance, heal, users and policies, bucket notices, lifecycle and
 * the pool status. Each factory takes its dependencies explicitly and owns its timers; `close`
 * stops them all. The peer handler table of these services is checked whole here (every peer
 * operation but the node's metrics, which observability.ts serves). Fault control is not wired
 * here: the composition root (src/main.ts) hands it in when SVC_FAULT_INJECTION=on.
 */
import type { Logger } from 'pino';
import type { ServerConfig } from '../cluster/server-config.js';
import type { StartedStorage } from '../cluster/startup.js';
import type { OwnEndpointTest } from '../cluster/own-endpoints.js';
import type { PeerCallObserver } from '../cluster/peer-client.js';
import type { DecommissionManager } from '../ops/decommission.js';
import type { RebalanceManager } from '../ops/rebalance.js';
import type { HealManager } from '../ops/heal.js';
import type { IamStore } from '../ops/iam-store.js';
import type { LifecycleScanner } from '../ops/lifecycle.js';
import { createExplorer } from '../ops/explorer.js';
import type { ConsoleOperation, ObservabilityOperation, PeerHandlerTable } from '../ops/peer-protocol.js';
import type { NamespaceLocker } from '../object/locks.js';
import type { AdminContext } from '../api/admin/context.js';
import type { Kms } from '../ops/kms/kms.js';
import type { Clock } from '../util/clock.js';
import type { EventNotifier } from '../ops/events/notifier.js';
import { createPeerLinks } from './peer-links.js';
import { createDecommissionService, type DecommissionService } from './decommission-service.js';
import { createRebalanceService, type RebalanceService } from './rebalance-service.js';
import { createHealService } from './heal-service.js';
import { createIamService } from './iam-service.js';
import { createBucketNotices } from './bucket-notices.js';
import { createLifecycleService } from './lifecycle-service.js';
import { createPoolStatus } from './pool-status.js';
import { createKmsKeysService } from './kms-keys-service.js';
import { createEventsService } from './events-service.js';
import type { TierService } from './tier-service.js';
import { createTierAdmin } from './tier-admin.js';
import { createUsageService } from './usage-service.js';
import { createReplicationService } from './replication-service.js';
import type { UsageScanner } from '../ops/usage-scanner.js';

export interface AdminServices {
  context: AdminContext;
  /** This node's part of the peer handler table: every operation but metrics. */
  peerHandlers: Omit<PeerHandlerTable, ObservabilityOperation | ConsoleOperation>;
  decommission: DecommissionManager;
  rebalance: RebalanceManager;
  heal: HealManager;
  /** Users and policies, the same on every node. */
  iam: IamStore;
  lifecycle: LifecycleScanner;
  /** The data-usage scanner (scheduled on the leader; every node reads its result). */
  usage: UsageScanner;
  close(): Promise<void>;
}

export interface AdminServicesOptions {
  config: ServerConfig;
  storage: StartedStorage;
  isOwn: OwnEndpointTest;
  /** This node holds the deployment's first endpoint: it runs decommission and rebalance. */
  leader: boolean;
  rpcKey: Buffer;
  launchHash: string;
  logger: Logger;
  /** Told of every peer call (metrics). */
  onPeerCall?: PeerCallObserver;
  /** The node's or the cluster's recent metrics (observability.ts). */
  metricsHistory?: AdminContext['metricsHistory'];
  /** The cluster-wide namespace locker (users and policies change under it). */
  locker?: NamespaceLocker;
  /** The clock of session, web identity and service account expiry. */
  identityClock: Clock;
  /** Fault control of this node's drives and identity clock (only with SVC_FAULT_INJECTION=on). */
  faults?: AdminContext['faults'];
  /** The KMS, when SVC_KMS_SECRET_KEY is set. */
  kms?: Kms;
  /** This node's bucket notifications: its event targets and live listeners. */
  events: EventNotifier;
  /** Bucket replication of this node. */
  replication?: AdminContext['replication'];
  /** The deployment's remote tiers and the transition the lifecycle scanner runs. */
  tiers?: TierService;
}

export async function createAdminServices(options: AdminServicesOptions): Promise<AdminServices> {
  const { config, storage, logger, isOwn } = options;
  const links = createPeerLinks({ config, isOwn, isLeader: options.leader, rpcKey: options.rpcKey, launchHash: options.launchHash, logger, ...(options.onPeerCall ? { onPeerCall: options.onPeerCall } : {}) });
  // One quarantine for the node's refused state files (storage-class.json at startup; pool.bin, rebalance.bin, iam.bin, the read-repair queue, root-heal records).
  const { quarantine } = storage;
  // Decommission and rebalance each refuse to start while the other runs: each asks the other, once both exist.
  let rebalance: RebalanceService | undefined;
  const decommission: DecommissionService = await createDecommissionService({ config, storage, links, logger, quarantine, rebalanceRunning: () => rebalance?.manager.isRunning() ?? false });
  rebalance = await createRebalanceService({ config, storage, links, logger, quarantine, decommissionUnfinished: () => decommission.manager.hasUnfinished() });
  const heal = await createHealService({ config, storage, links, logger, quarantine });
  const buckets = createBucketNotices({ storage, links });
  const iam = await createIamService({ config, storage, links, logger, quarantine, identityClock: options.identityClock, ...(options.locker ? { locker: options.locker } : {}) });
  const lifecycle = createLifecycleService({ config, storage, isOwn, logger, events: options.events, ...(options.tiers ? { transition: options.tiers.transition, restores: options.tiers.restores } : {}) });
  const kmsKeys = await createKmsKeysService({ config, storage, links, logger, kms: options.kms });
  const events = await createEventsService({ notifier: options.events, storage, links, logger, quarantine, ...(options.locker ? { locker: options.locker } : {}) });
  const usage = createUsageService({ storage, leader: options.leader, logger });
  const replication = createReplicationService({ local: options.replication, links, logger });
  const tiers = createTierAdmin({ service: options.tiers, storage, links, logger });
  const pools = createPoolStatus({ config, storage, isOwn, decommission: decommission.manager, rebalance: rebalance.manager, heal: heal.manager });
  const peerHandlers = { ...decommission.peerHandlers, ...rebalance.peerHandlers, ...heal.peerHandlers, ...buckets.peerHandlers, ...iam.peerHandlers, ...kmsKeys.peerHandlers, ...events.peerHandlers, ...replication.peerHandlers, ...tiers.peerHandlers } satisfies Omit<PeerHandlerTable, ObservabilityOperation | ConsoleOperation>;
  const { setViews, ...poolStatus } = pools;
  const context: AdminContext = {
    ...poolStatus,
    explorer: createExplorer({
      objects: storage.objects,
      sets: setViews,
      parities: (pool) => ({ standard: storage.storageClass.standardParity(pool), rrs: storage.storageClass.rrsParity(pool) }),
    }),
    nowMs: () => Date.now(),
    decommission: decommission.control,
    rebalance: rebalance.control,
    heal: heal.manager,
    healSequence: heal.sequence,
    iam: iam.iam,
    lifecycle,
    usage,
    ...(options.metricsHistory ? { metricsHistory: options.metricsHistory } : {}),
    ...(options.faults ? { faults: options.faults } : {}),
    ...(options.kms ? { kms: options.kms } : {}),
    ...(kmsKeys.control ? { kmsKeys: kmsKeys.control } : {}),
    events: events.context,
    ...(options.replication ? { replication: replication.admin } : {}),
    ...(tiers.admin ? { tiers: tiers.admin } : {}),
  };
  const started = rebalance;
  return {
    context,
    peerHandlers,
    decommission: decommission.manager,
    rebalance: started.manager,
    heal: heal.manager,
    iam: iam.iam,
    lifecycle,
    usage,
    close: async () => {
      await iam.close();
      await Promise.all([decommission.close(), started.close(), heal.close(), lifecycle.close(), kmsKeys.close(), events.close(), usage.close()]);
    },
  };
}
