/**
 * Wires the admin API to the running node: pool inspection from the started storage, and
 * decommission run by the leader (the node holding the deployment's first endpoint). Other nodes
 * forward decommission start, cancel, clear and status to the leader over internode RPC, follow
 * its `pool.bin` when told it changed (and every few seconds in case a notice was lost), and so
 * refuse writes to a pool being decommissioned just like the leader.
 */
import type { Logger } from 'pino';
import type { Drive } from './drive/index.js';
import type { ServerConfig } from './cluster/server-config.js';
import type { StartedStorage } from './cluster/startup.js';
import type { OwnEndpointTest } from './cluster/own-endpoints.js';
import type { Endpoint } from './cluster/endpoints.js';
import type { Peer, PeerCallObserver } from './cluster/peer-client.js';
import { askPeer, type PeerHandlerTable } from './ops/peer-protocol.js';
import { DecommissionManager, validatePoolMeta, type DecommissionStatus, type PoolMetaDocument } from './ops/decommission.js';
import { StateStore } from './ops/state-store.js';
import { RebalanceManager, validateRebalance, type RebalanceDocument, type RebalanceStatus } from './ops/rebalance.js';
import { HealManager, type HealPath, type HealSequenceStatus } from './ops/heal.js';
import { createExplorer, type SetView } from './ops/explorer.js';
import type { NamespaceLocker } from './object/locks.js';
import { IamStore, validateIamDocument, type IamDocument } from './ops/iam-store.js';
import { LifecycleScanner } from './ops/lifecycle.js';
import { createHash } from 'node:crypto';
import type { AdminContext, DecommissionControl, PoolInfo, RebalanceControl, SlotInfo } from './api/admin/context.js';
import { limits } from './util/limits.js';
import type { OffsetClock } from './util/clock.js';
import { SvcError } from './errors/index.js';
import { parseFaultOptions, type FaultyDrive } from '../fault-injection/faulty-drive.js';
import { packageVersion } from './util/version.js';

export interface AdminServices {
  context: AdminContext;
  /** This node's part of the peer handler table: every operation but metrics. */
  peerHandlers: Omit<PeerHandlerTable, 'metrics'>;
  decommission: DecommissionManager;
  rebalance: RebalanceManager;
  heal: HealManager;
  /** Users and policies, the same on every node. */
  iam: IamStore;
  lifecycle: LifecycleScanner;
  close(): Promise<void>;
}

const followIntervalMs = 5_000;

export async function startAdminServices(options: {
  config: ServerConfig;
  storage: StartedStorage;
  isOwn: OwnEndpointTest;
  /** This node's drives by endpoint path (fault-injecting wrappers when SVC_FAULT_INJECTION=on). */
  localDrives: Map<string, Drive>;
  leader: boolean;
  rpcKey: Buffer;
  launchHash: string;
  logger: Logger;
  /** Told of every peer call (metrics). */
  onPeerCall?: PeerCallObserver;
  /** The cluster-wide namespace locker (users and policies change under it). */
  locker?: NamespaceLocker;
  /** The clock of the IAM store (session and service account expiry); the fault-control route moves it. */
  identityClock: OffsetClock;
}): Promise<AdminServices> {
  const { config, storage, logger } = options;
  const rpc = { rpcKey: options.rpcKey, launchHash: options.launchHash, ...(options.onPeerCall ? { onCall: options.onPeerCall } : {}) };
  const peers = peersOf(config, options.isOwn);
  const leaderPeer = leaderOf(config);
  const allDrives = () => storage.setDrives.flat(2);
  const store = new StateStore<PoolMetaDocument>({ name: 'pool.bin', magic: 'SVPB', drives: allDrives, validate: validatePoolMeta });
  let rebalance: RebalanceManager | undefined;
  const manager = new DecommissionManager({
    rebalanceRunning: () => rebalance?.isRunning() ?? false,
    objects: storage.objects,
    pools: config.layout.pools.map((pool) => ({ index: pool.index, pattern: pool.pattern })),
    legacy: config.layout.legacy,
    store,
    leader: options.leader,
    bucketConcurrency: config.decommissionBucketConcurrency,
    entryConcurrency: config.decommissionEntryConcurrency,
    maxAttempts: config.rebalanceMaxAttempts,
    nowMs: () => Date.now(),
    logger,
    onChange: () => {
      for (const peer of peers) void askPeer(peer, 'pool-meta-changed', {}, { ...rpc, timeoutMs: 5_000 }).catch(() => undefined);
    },
  });
  await manager.load();
  rebalance = new RebalanceManager({
    objects: storage.objects,
    poolCount: config.layout.pools.length,
    legacy: config.layout.legacy,
    store: new StateStore<RebalanceDocument>({ name: 'rebalance.bin', magic: 'SVRB', drives: allDrives, validate: validateRebalance }),
    leader: options.leader,
    maxAttempts: config.rebalanceMaxAttempts,
    nowMs: () => Date.now(),
    logger,
    decommissionUnfinished: () => manager.hasUnfinished(),
    peers: {
      announce: async (event, id) => {
        const failed = await Promise.all(
          peers.map((peer) => askPeer(peer, 'rebalance-event', { event, id }, { ...rpc, timeoutMs: 10_000 }).then(() => undefined, () => `${peer.host}:${peer.port}`)),
        );
        return failed.filter((peer): peer is string => peer !== undefined);
      },
    },
  });
  await rebalance.load();
  const rebalancer = rebalance;
  // Nodes in launch order (the same list on every node): a heal's client token names its node.
  const nodes = nodeEndpointsOf(config);
  const ownNode = nodes.findIndex((endpoint) => options.isOwn(endpoint));
  const heal = new HealManager({ storage, nodeName: `${config.address.host}-${config.address.port}`, ...(nodes.length > 1 && ownNode >= 0 ? { tokenSuffix: `@${ownNode}` } : {}), nowMs: () => Date.now(), logger });
  await heal.start();
  // A peer that cannot be told (down) has an empty cache when it comes back.
  storage.objects.onBucketsChanged(async (bucket) => {
    await Promise.all(peers.map((peer) => askPeer(peer, 'buckets-changed', { bucket }, { ...rpc, timeoutMs: 2_000 }).catch(() => undefined)));
  });
  const iam = new IamStore({
    store: new StateStore<IamDocument>({ name: 'iam.bin', magic: 'SVIA', drives: allDrives, validate: validateIamDocument }),
    root: { accessKey: config.accessKey, secretKey: config.secretKey },
    nowMs: () => Date.now(),
    expiryNowMs: () => options.identityClock.nowMs(),
    // Answered once every reachable peer has reloaded: a disabled user is refused everywhere from then on.
    announce: async () => void (await Promise.all(peers.map((peer) => askPeer(peer, 'iam-changed', {}, { ...rpc, timeoutMs: 2_000 }).catch(() => undefined)))),
    ...(options.locker ? { lock: () => options.locker!.acquire('.svc.sys/iam.bin', 'write') } : {}),
  });
  await iam.reload();
  const lifecycle = startLifecycle(config, storage, options.isOwn, logger);
  const iamFollower = setInterval(() => void iam.reload().catch(() => undefined), limits.iamReloadIntervalMs);
  iamFollower.unref();
  const follower = options.leader ? undefined : setInterval(() => void Promise.all([manager.reload(), rebalancer.reload()]).catch(() => undefined), followIntervalMs);
  follower?.unref();

  /** A decommission call forwarded to the leader; this node then follows the leader's pool.bin at once. */
  const forward = async <Answer>(asked: Promise<Answer>): Promise<Answer> => {
    const answer = await asked;
    await manager.reload().catch(() => undefined);
    return answer;
  };
  const decommission: DecommissionControl = options.leader
    ? { start: (pools) => manager.start(pools), cancel: (pool) => manager.cancel(pool), clear: (pool) => manager.clear(pool), status: async (pool) => manager.status(pool) }
    : {
        start: async (pools) => (await forward(askPeer(leaderPeer!, 'decommission-start', { pools }, rpc))).entries,
        cancel: async (pool) => (await forward(askPeer(leaderPeer!, 'decommission-cancel', { pool }, rpc))).entry,
        clear: async (pool) => void (await forward(askPeer(leaderPeer!, 'decommission-clear', { pool }, rpc))),
        status: async (pool) => (await forward(askPeer(leaderPeer!, 'decommission-status', pool === undefined ? {} : { pool }, rpc))).entries,
      };

  const rebalanceControl: RebalanceControl = options.leader
    ? { start: () => rebalancer.start(), status: async () => rebalancer.status(), stop: () => rebalancer.stop() }
    : {
        start: () => askPeer(leaderPeer!, 'rebalance-start', {}, rpc),
        status: () => askPeer(leaderPeer!, 'rebalance-status', {}, rpc),
        stop: () => askPeer(leaderPeer!, 'rebalance-stop', {}, rpc),
      };

  /** A heal by client token: here, or on the node its token names. */
  const healSequence = async (clientToken: string, path: HealPath, stop: boolean): Promise<HealSequenceStatus> => {
    const owner = /@(\d+)$/.exec(clientToken);
    if (!owner || Number(owner[1]) === ownNode) return heal.sequenceFor(clientToken, path, stop);
    const node = nodes[Number(owner[1])];
    if (!node) throw new SvcError('NoSuchHealSequence', undefined, { clientToken });
    return askPeer({ host: node.host, port: node.port }, 'heal-sequence', { clientToken, path, stop }, rpc);
  };

  /** Only the leader runs decommission and rebalance; a peer that is not refuses what is forwarded to it. */
  const leaderOnly = (what: string): void => {
    if (!options.leader) throw new SvcError('InvalidConfiguration', `this node is not the ${what} leader`);
  };
  const peerHandlers = {
    'heal-sequence': async ({ clientToken, path, stop }) => heal.sequenceFor(clientToken, path, stop),
    'rebalance-event': async () => {
      // The admission fence: this node now knows the rebalance (and refuses what conflicts with it).
      await rebalancer.reload();
      return { acknowledged: true };
    },
    'rebalance-start': async () => (leaderOnly('rebalance'), rebalancer.start()),
    'rebalance-stop': async () => (leaderOnly('rebalance'), rebalancer.stop()),
    'rebalance-status': async () => (leaderOnly('rebalance'), rebalancer.status()),
    'iam-changed': async () => {
      await iam.reload();
      return { reloaded: true };
    },
    'buckets-changed': async () => {
      storage.objects.invalidateBuckets();
      return { invalidated: true };
    },
    'pool-meta-changed': async () => {
      await manager.reload();
      return { reloaded: true };
    },
    'decommission-start': async ({ pools }) => (leaderOnly('decommission'), { entries: await manager.start(pools) }),
    'decommission-cancel': async ({ pool }) => (leaderOnly('decommission'), { entry: await manager.cancel(pool) }),
    'decommission-clear': async ({ pool }) => {
      leaderOnly('decommission');
      await manager.clear(pool);
      return { cleared: true };
    },
    'decommission-status': async ({ pool }) => (leaderOnly('decommission'), { entries: manager.status(pool) }),
  } satisfies Omit<PeerHandlerTable, 'metrics'>;

  /** Pool records from the drives' answers (one answer per drive, asked once). */
  const poolInfos = (slots: SlotInfo[][]): PoolInfo[] =>
    config.layout.pools.map((pool) => {
      const sum = (field: 'totalBytes' | 'usedBytes' | 'freeBytes') => slots[pool.index]!.reduce((total, slot) => total + slot[field], 0);
      return {
        id: pool.index,
        cmdline: pool.pattern,
        endpointCount: pool.endpoints.length,
        setCount: pool.setCount,
        drivesPerSet: pool.setDriveCount,
        totalBytes: sum('totalBytes'),
        usedBytes: sum('usedBytes'),
        freeBytes: sum('freeBytes'),
        decommission: manager.status(pool.index)[0] ?? null,
      };
    });

  const explorer = createExplorer({
    objects: storage.objects,
    sets: () => setViewsOf(config, storage, options.isOwn),
    parities: (pool) => ({ standard: storage.storageClass.standardParity(pool), rrs: storage.storageClass.rrsParity(pool) }),
  });

  const context: AdminContext = {
    explorer,
    poolPatterns: config.layout.pools.map((pool) => pool.pattern),
    nowMs: () => Date.now(),
    slots: (pool) => slotsOf(config, storage, options.isOwn, pool),
    pools: async () => {
      const slots = await Promise.all(config.layout.pools.map((pool) => slotsOf(config, storage, options.isOwn, pool.index)));
      return poolInfos(slots);
    },
    decommission,
    rebalance: rebalanceControl,
    heal,
    healSequence,
    iam,
    lifecycle,
    setCounts: config.layout.pools.map((pool) => pool.setCount),
    ...(config.faultInjection ? { faults: faultControl(options.localDrives, options.identityClock) } : {}),
    snapshot: async () => {
      const slots = await Promise.all(config.layout.pools.map((pool) => slotsOf(config, storage, options.isOwn, pool.index)));
      const pools = poolInfos(slots);
      return {
        deploymentId: storage.deploymentId,
        generatedAt: new Date().toISOString(),
        thisNode: `${config.address.host}:${config.address.port}`,
        nodes: nodesOf(slots.flat()),
        pools: pools.map((pool, index) => ({ ...pool, sets: Array.from({ length: pool.setCount }, (_, set) => ({ set, drives: slots[index]!.filter((slot) => slot.set === set) })) })),
        operations: { rebalance: rebalancer.status(), decommission: manager.status(), heal: heal.backgroundStatus() },
      };
    },
    capabilities: () => ({
      server: 'svc',
      version: packageVersion(),
      adminApi: { v3: ['pools', 'decommission', 'rebalance', 'heal', 'background-heal', 'info'], v4: ['cluster/snapshot', 'runtime/capabilities', 'heal/replacement-recovery', 'object/placement', 'simulate/failure', 'iam', 'lifecycle'] },
      driveBackends: ['fs', 'memfs', 'remote'],
      driveBackend: config.driveBackend,
      faultInjection: config.faultInjection,
      storageClasses: config.layout.pools.map((pool) => ({ pool: pool.index, STANDARD: `EC:${storage.storageClass.standardParity(pool.index)}`, REDUCED_REDUNDANCY: `EC:${storage.storageClass.rrsParity(pool.index)}` })),
      listQuorum: config.listQuorum,
      limits: {
        erasureBlockSizeBytes: limits.erasureBlockSizeBytes,
        minPartSizeBytes: limits.minPartSizeBytes,
        maxPartNumber: limits.maxPartNumber,
        lockExpiryMs: limits.lockExpiryMs,
        mrfQueueLimit: limits.mrfQueueLimit,
        decommissionBucketConcurrency: config.decommissionBucketConcurrency,
        decommissionEntryConcurrency: config.decommissionEntryConcurrency,
        rebalanceMaxAttempts: config.rebalanceMaxAttempts,
        lifecycleObjectsPerSecond: config.lifecycleObjectsPerSecond,
        lifecycleIntervalMs: config.lifecycleIntervalMs,
      },
    }),
    serversInfo: async () => {
      const slots = (await Promise.all(config.layout.pools.map((pool) => slotsOf(config, storage, options.isOwn, pool.index)))).flatMap((list, pool) => list.map((slot) => ({ pool, ...slot })));
      return { servers: nodesOf(slots).map((node) => ({ ...node, drives: slots.filter((slot) => hostOfEndpoint(slot.endpoint) === node.endpoint) })) };
    },
  };

  return {
    context,
    peerHandlers,
    decommission: manager,
    rebalance: rebalancer,
    heal,
    iam,
    lifecycle,
    close: async () => {
      clearInterval(iamFollower);
      if (follower) clearInterval(follower);
      await Promise.all([manager.close(), rebalancer.close(), heal.close(), lifecycle.close()]);
    },
  };
}

/**
 * The lifecycle scanner of this node: it scans on schedule the buckets whose name hashes to this
 * node among the deployment's nodes, each under a cluster-wide lock. Its clock is the wall clock,
 * moved forward by SVC_LIFECYCLE_CLOCK_OFFSET (set by the test harness only).
 */
function startLifecycle(config: ServerConfig, storage: StartedStorage, isOwn: OwnEndpointTest, logger: Logger): LifecycleScanner {
  const nodes = [...new Set(config.layout.pools.flatMap((pool) => pool.endpoints).flatMap((endpoint) => (endpoint.kind === 'url' ? [`${endpoint.host}:${endpoint.port}`] : [])))].sort();
  const own = config.layout.pools.flatMap((pool) => pool.endpoints).find((endpoint) => endpoint.kind === 'url' && isOwn(endpoint));
  const ownIndex = own?.kind === 'url' ? nodes.indexOf(`${own.host}:${own.port}`) : 0;
  const ownerOf = (bucket: string): number => (nodes.length <= 1 ? 0 : createHash('sha256').update(bucket).digest().readUInt32BE(0) % nodes.length);
  const locker = storage.objects.allSets()[0]!.config.locker;
  const scanner = new LifecycleScanner({
    objects: storage.objects,
    now: () => Date.now() + config.lifecycleClockOffsetMs,
    objectsPerSecond: config.lifecycleObjectsPerSecond,
    intervalMs: config.lifecycleIntervalMs,
    ownsBucket: (bucket) => ownerOf(bucket) === ownIndex,
    lockBucket: (bucket) => locker.acquire(`.svc.sys/lifecycle/${bucket}`, 'write', limits.lifecycleBucketLockTimeoutMs).catch(() => undefined),
    logger,
  });
  if (config.lifecycleClockOffsetMs > 0) logger.warn({ offsetMs: config.lifecycleClockOffsetMs }, 'SVC_LIFECYCLE_CLOCK_OFFSET is set: lifecycle rules are judged ahead of the wall clock (a test harness setting)');
  scanner.start();
  return scanner;
}

function faultControl(drives: Map<string, Drive>, identityClock: OffsetClock): NonNullable<AdminContext['faults']> {
  const faulty = (path: string): FaultyDrive => {
    const drive = drives.get(path);
    if (!drive || !('setFaults' in drive)) throw new SvcError('NoSuchDrive', `no drive of this node is at '${path}'`, { drive: path });
    return drive as FaultyDrive;
  };
  return {
    list: () => [...drives].map(([path, drive]) => ({ drive: path, endpoint: drive.endpoint, faults: (drive as Partial<FaultyDrive>).faults ?? {} })),
    set: (path, plan) => {
      const drive = faulty(path);
      drive.setFaults(parseFaultOptions(plan));
      return { drive: path, faults: drive.faults };
    },
    clock: () => ({ offsetMs: identityClock.offsetMs }),
    setClock: (offsetMs) => {
      identityClock.offsetMs = offsetMs;
      return { offsetMs: identityClock.offsetMs };
    },
  };
}

export function hostOfEndpoint(endpoint: string): string {
  return /^https?:\/\//.test(endpoint) ? new URL(endpoint).host : 'local';
}

/** Nodes (host:port of their drives' endpoints): online when any of their drives answers. */
function nodesOf(slots: SlotInfo[]): { endpoint: string; state: 'online' | 'offline'; drives: number; drivesOnline: number }[] {
  const nodes = new Map<string, { endpoint: string; state: 'online' | 'offline'; drives: number; drivesOnline: number }>();
  for (const slot of slots) {
    const endpoint = hostOfEndpoint(slot.endpoint);
    const node = nodes.get(endpoint) ?? { endpoint, state: 'offline' as 'online' | 'offline', drives: 0, drivesOnline: 0 };
    node.drives += 1;
    if (slot.state === 'online') {
      node.drivesOnline += 1;
      node.state = 'online';
    }
    nodes.set(endpoint, node);
  }
  return [...nodes.values()];
}

async function slotsOf(config: ServerConfig, storage: StartedStorage, isOwn: OwnEndpointTest, poolIndex: number): Promise<SlotInfo[]> {
  const pool = config.layout.pools[poolIndex]!;
  const format = storage.formats[poolIndex]!;
  return Promise.all(
    pool.endpoints.map(async (endpoint, index) => {
      const set = Math.floor(index / pool.setDriveCount);
      const slot = index % pool.setDriveCount;
      const drive: Drive | undefined = storage.setDrives[poolIndex]![set]![slot];
      const info = await drive?.diskInfo().catch(() => undefined);
      const online = info?.online === true;
      return {
        set,
        slot,
        endpoint: endpoint.raw,
        local: endpoint.kind === 'local' || isOwn(endpoint),
        uuid: format.sets[set]![slot]!,
        state: online ? 'online' : 'offline',
        totalBytes: online ? info.totalBytes : 0,
        freeBytes: online ? info.freeBytes : 0,
        usedBytes: online ? info.totalBytes - info.freeBytes : 0,
      };
    }),
  );
}

/** Every set of every pool, its erasure set and its drives as the explorer sees them (state asked now). */
async function setViewsOf(config: ServerConfig, storage: StartedStorage, isOwn: OwnEndpointTest): Promise<SetView[]> {
  const pools = await Promise.all(config.layout.pools.map((pool) => slotsOf(config, storage, isOwn, pool.index)));
  return storage.objects.pools.flatMap((pool) =>
    pool.sets.map((erasureSet, set) => ({
      pool: pool.index,
      set,
      erasureSet,
      drives: pools[pool.index]!.filter((slot) => slot.set === set).map((slot) => ({ endpoint: slot.endpoint, node: hostOfEndpoint(slot.endpoint), driveId: slot.uuid, state: slot.state })),
    })),
  );
}

type UrlEndpoint = Extract<Endpoint, { kind: 'url' }>;

/** One URL endpoint per node (distinct host:port), in launch order. */
function nodeEndpointsOf(config: ServerConfig): UrlEndpoint[] {
  const nodes = new Map<string, UrlEndpoint>();
  for (const endpoint of config.layout.pools.flatMap((pool) => pool.endpoints)) {
    if (endpoint.kind === 'url' && !nodes.has(`${endpoint.host}:${endpoint.port}`)) nodes.set(`${endpoint.host}:${endpoint.port}`, endpoint);
  }
  return [...nodes.values()];
}

/** Every other node of the deployment (distinct host:port of URL endpoints that are not ours). */
export function peersOf(config: ServerConfig, isOwn: OwnEndpointTest): Peer[] {
  return nodeEndpointsOf(config)
    .filter((endpoint) => !isOwn(endpoint))
    .map((endpoint) => ({ host: endpoint.host, port: endpoint.port }));
}

function leaderOf(config: ServerConfig): Peer | undefined {
  const first = config.layout.pools[0]!.endpoints[0]!;
  return first.kind === 'url' ? { host: first.host, port: first.port } : undefined;
}
