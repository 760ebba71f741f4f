/**
 * The pools and nodes of a running deployment as the admin API shows them: pool records with their
 * capacity and decommission state, every drive slot asked once, the cluster snapshot, the servers
 * list, the capabilities document, and the sets the object explorer walks.
 */
import type { ServerConfig } from '../cluster/server-config.js';
import type { StartedStorage } from '../cluster/startup.js';
import type { OwnEndpointTest } from '../cluster/own-endpoints.js';
import type { Drive } from '../drive/index.js';
import type { DecommissionManager } from '../ops/decommission.js';
import type { RebalanceManager } from '../ops/rebalance.js';
import type { HealManager } from '../ops/heal.js';
import type { SetView } from '../ops/explorer.js';
import type { AdminContext, PoolInfo, SlotInfo } from '../api/admin/context.js';
import { limits } from '../util/limits.js';
import { packageVersion } from '../util/version.js';
import { hostOfEndpoint } from './peer-links.js';

export type PoolStatus = Pick<AdminContext, 'poolPatterns' | 'setCounts' | 'slots' | 'pools' | 'snapshot' | 'capabilities' | 'serversInfo'> & {
  /** Every set of every pool with its drives (state asked now), for the object explorer. */
  setViews(): Promise<SetView[]>;
};

export function createPoolStatus(options: { config: ServerConfig; storage: StartedStorage; isOwn: OwnEndpointTest; decommission: DecommissionManager; rebalance: RebalanceManager; heal: HealManager }): PoolStatus {
  const { config, storage, isOwn, decommission, rebalance, heal } = options;
  const allSlots = () => Promise.all(config.layout.pools.map((pool) => slotsOf(config, storage, isOwn, pool.index)));
  /** Pool records from the drives' answers (one answer per drive, asked once). */
  const poolInfos = (slots: SlotInfo[][]): PoolInfo[] =>
    config.layout.pools.map((pool) => {
      const distinct = distinctFilesystems(slots[pool.index]!);
      const sum = (field: 'totalBytes' | 'usedBytes' | 'freeBytes') => distinct.reduce((total, slot) => total + slot[field], 0);
      return {
        id: pool.index,
        cmdline: pool.pattern,
        endpointCount: pool.endpoints.length,
        setCount: pool.setCount,
        drivesPerSet: pool.setDriveCount,
        totalBytes: sum('totalBytes'),
        usedBytes: sum('usedBytes'),
        freeBytes: sum('freeBytes'),
        decommission: decommission.status(pool.index)[0] ?? null,
      };
    });
  return {
    poolPatterns: config.layout.pools.map((pool) => pool.pattern),
    setCounts: config.layout.pools.map((pool) => pool.setCount),
    slots: (pool) => slotsOf(config, storage, isOwn, pool),
    pools: async () => poolInfos(await allSlots()),
    setViews: () => setViewsOf(config, storage, isOwn),
    snapshot: async () => {
      const slots = await allSlots();
      const pools = poolInfos(slots);
      return {
        deploymentId: storage.deploymentId,
        generatedAt: new Date().toISOString(),
        thisNode: `${config.address.host}:${config.address.port}`,
        nodes: nodesOf(slots.flat()),
        pools: pools.map((pool, index) => ({ ...pool, sets: Array.from({ length: pool.setCount }, (_, set) => ({ set, drives: slots[index]!.filter((slot) => slot.set === set) })) })),
        operations: { rebalance: rebalance.status(), decommission: decommission.status(), heal: heal.backgroundStatus() },
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
      const slots = (await allSlots()).flatMap((list, pool) => list.map((slot) => ({ pool, ...slot })));
      return { servers: nodesOf(slots).map((node) => ({ ...node, drives: slots.filter((slot) => hostOfEndpoint(slot.endpoint) === node.endpoint) })) };
    },
  };
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

/** The file system each slot's drive sits on, when its backend said (not part of the answers). */
const filesystemOf = new WeakMap<SlotInfo, string>();

/** The slots with each file system once: directories of one disk share its capacity. */
function distinctFilesystems(slots: SlotInfo[]): SlotInfo[] {
  const seen = new Set<string>();
  return slots.filter((slot) => {
    const filesystem = filesystemOf.get(slot);
    if (filesystem === undefined) return true;
    if (seen.has(filesystem)) return false;
    seen.add(filesystem);
    return true;
  });
}

async function slotsOf(config: ServerConfig, storage: StartedStorage, isOwn: OwnEndpointTest, poolIndex: number): Promise<SlotInfo[]> {
  const pool = config.layout.pools[poolIndex]!;
  const format = storage.formats[poolIndex]!;
  return Promise.all(
    pool.endpoints.map(async (endpoint, index) => {
      const set = Math.floor(index / pool.setDriveCount);
      const slot = index % pool.setDriveCount;
      const drive: Drive | undefined = storage.setDrives[poolIndex]![set]![slot];
      // a drive that does not answer is shown offline: its state is the answer
      const info = await drive?.diskInfo().catch(() => undefined);
      const online = info?.online === true;
      const slotInfo: SlotInfo = {
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
      if (online && info.filesystemId !== undefined) filesystemOf.set(slotInfo, info.filesystemId);
      return slotInfo;
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
