/**
 * The families read from the node's state when scraped: drive states and capacity, erasure-set
 * health against quorum, pool capacity, decommission, rebalance, heal and read repair. Each scrape
 * asks every drive once (a drive that does not answer within limits.metricsDriveInfoTimeoutMs is
 * offline), then sets the gauges in one synchronous step, so a scrape never sees half an update.
 */
import type { Drive, DiskInfo } from '../../drive/index.js';
import { readQuorum, writeQuorum } from '../../erasure/geometry.js';
import type { HealCounts } from '../../ops/heal.js';
import type { BackgroundHealStatus } from '../../contracts/cluster.js';
import type { RebalanceStatus } from '../../ops/rebalance.js';
import type { DecommissionStatus } from '../../ops/decommission.js';
import { limits } from '../../util/limits.js';
import type { MetricFamilies } from './families.js';
import { readUsage, setUsageGauges, type UsageSource } from './usage-metrics.js';

export interface SlotView {
  pool: number;
  set: number;
  slot: number;
  endpoint: string;
  /** A drive of this node (drive families cover only these; every node reports its own). */
  local: boolean;
  /** Undefined while the slot is not part of its set (offline or unformatted since start). */
  drive: Drive | undefined;
}

export interface HealView {
  /** Every sequence the heal manager still knows (running and recently ended). */
  sequenceList(): { clientToken: string; status: string; counts: HealCounts }[];
  backgroundStatus(): BackgroundHealStatus;
}

export interface StateSources {
  slots(): SlotView[];
  setDriveCount(pool: number): number;
  standardParity(pool: number): number;
  heal(): HealView | undefined;
  rebalance(): RebalanceStatus | undefined;
  decommission(): DecommissionStatus[] | undefined;
  /** The data-usage scanner (its last result); undefined before the admin services start. */
  usage?(): UsageSource | undefined;
  startedAtMs: number;
  version: string;
}

type SetHealth = 'healthy' | 'degraded' | 'read_only' | 'unavailable';
const setHealthStates: SetHealth[] = ['healthy', 'degraded', 'read_only', 'unavailable'];
const driveStates = ['online', 'offline', 'healing'] as const;
const decommissionStates = ['none', 'queued', 'active', 'completed', 'failed', 'canceled'] as const;
const rebalanceStates = ['none', 'active', 'stopping', 'completed', 'stopped', 'failed'] as const;

async function askDrive(drive: Drive | undefined): Promise<DiskInfo | undefined> {
  if (!drive) return undefined;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, limits.metricsDriveInfoTimeoutMs, undefined)));
  try {
    const info = await Promise.race([drive.diskInfo().catch(() => undefined), timeout]);
    return info?.online === true ? info : undefined;
  } finally {
    clearTimeout(timer);
  }
}

function oneHot(gauge: { set(labels: Record<string, string>, value: number): void }, labels: Record<string, string>, states: readonly string[], current: string): void {
  for (const state of states) gauge.set({ ...labels, state }, state === current ? 1 : 0);
}

/** Reads everything, then updates the gauges. Counters fed from cumulative totals go through `DeltaCounters`. */
export class StateCollector {
  private readonly totals = new DeltaCounters();

  constructor(private readonly families: MetricFamilies, private readonly sources: StateSources) {}

  async refresh(): Promise<void> {
    const slots = this.sources.slots();
    const [infos, usage] = await Promise.all([Promise.all(slots.map((slot) => askDrive(slot.drive))), readUsage(this.sources.usage?.())]);
    const healing = this.healingDrives();
    this.setDrives(slots, infos, healing);
    this.setSetsAndPools(slots, infos);
    this.setOperations();
    this.setHeal();
    setUsageGauges(this.families, usage);
    this.families.nodeUptime.set((Date.now() - this.sources.startedAtMs) / 1000);
    this.families.nodeInfo.set({ version: this.sources.version }, 1);
  }

  private healingDrives(): Map<string, { state: string; objectsHealed: number; objectsFailed: number }> {
    const status = this.sources.heal()?.backgroundStatus();
    const drives = (status?.healingDrives ?? []) as { endpoint: string; state: string; objectsHealed: number; objectsFailed: number }[];
    return new Map(drives.map((drive) => [drive.endpoint, drive]));
  }

  private setDrives(slots: SlotView[], infos: (DiskInfo | undefined)[], healing: Map<string, { state: string; objectsHealed: number; objectsFailed: number }>): void {
    const f = this.families;
    for (const family of [f.driveState, f.driveTotalBytes, f.driveUsedBytes, f.driveFreeBytes, f.driveHealObjectsHealed, f.driveHealObjectsFailed]) family.reset();
    slots.forEach((slot, index) => {
      if (!slot.local) return;
      const info = infos[index];
      const heal = healing.get(slot.endpoint);
      const state = heal?.state === 'healing' ? 'healing' : info ? 'online' : 'offline';
      oneHot(f.driveState, { drive: slot.endpoint, pool: String(slot.pool), set: String(slot.set) }, driveStates, state);
      f.driveTotalBytes.set({ drive: slot.endpoint }, info?.totalBytes ?? 0);
      f.driveUsedBytes.set({ drive: slot.endpoint }, info?.usedBytes ?? 0);
      f.driveFreeBytes.set({ drive: slot.endpoint }, info?.freeBytes ?? 0);
      if (heal) {
        f.driveHealObjectsHealed.set({ drive: slot.endpoint }, heal.objectsHealed);
        f.driveHealObjectsFailed.set({ drive: slot.endpoint }, heal.objectsFailed);
      }
    });
  }

  private setSetsAndPools(slots: SlotView[], infos: (DiskInfo | undefined)[]): void {
    const f = this.families;
    const sets = new Map<string, { pool: number; set: number; online: number; drives: number }>();
    const pools = new Map<number, { total: number; used: number; free: number }>();
    slots.forEach((slot, index) => {
      const key = `${slot.pool}/${slot.set}`;
      const entry = sets.get(key) ?? { pool: slot.pool, set: slot.set, online: 0, drives: 0 };
      const pool = pools.get(slot.pool) ?? { total: 0, used: 0, free: 0 };
      const info = infos[index];
      entry.drives += 1;
      if (info) {
        entry.online += 1;
        pool.total += info.totalBytes;
        pool.used += info.usedBytes;
        pool.free += info.freeBytes;
      }
      sets.set(key, entry);
      pools.set(slot.pool, pool);
    });
    for (const { pool, set, online, drives } of sets.values()) {
      const labels = { pool: String(pool), set: String(set) };
      const parity = this.sources.standardParity(pool);
      const data = this.sources.setDriveCount(pool) - parity;
      const read = readQuorum(data, parity);
      const write = writeQuorum(data, parity);
      f.setDrives.set(labels, drives);
      f.setDrivesOnline.set(labels, online);
      f.setReadQuorumDrives.set(labels, read);
      f.setWriteQuorumDrives.set(labels, write);
      const health: SetHealth = online === drives ? 'healthy' : online >= write ? 'degraded' : online >= read ? 'read_only' : 'unavailable';
      oneHot(f.setHealth, labels, setHealthStates, health);
    }
    for (const [pool, capacity] of pools) {
      f.poolTotalBytes.set({ pool: String(pool) }, capacity.total);
      f.poolUsedBytes.set({ pool: String(pool) }, capacity.used);
      f.poolFreeBytes.set({ pool: String(pool) }, capacity.free);
    }
  }

  private setOperations(): void {
    const f = this.families;
    const pools = [...new Set(this.sources.slots().map((slot) => slot.pool))];
    const decommission = this.sources.decommission() ?? [];
    const rebalance = this.sources.rebalance();
    for (const pool of pools) {
      const labels = { pool: String(pool) };
      const entry = decommission.find((candidate) => candidate.pool === pool);
      oneHot(f.poolDecommissionState, labels, decommissionStates, entry?.state ?? 'none');
      f.poolDecommissionMovedObjects.set(labels, entry?.progress.objects ?? 0);
      f.poolDecommissionMovedBytes.set(labels, entry?.progress.bytes ?? 0);
      f.poolDecommissionProgressRatio.set(labels, entry ? ratio(entry.progress.objects, entry.progress.totalObjects, entry.state === 'completed') : 0);
      const moving = rebalance?.pools.find((candidate) => candidate.id === pool);
      oneHot(f.rebalanceState, labels, rebalanceStates, moving?.status ?? 'none');
      f.rebalanceMovedObjects.set(labels, moving?.progress.objects ?? 0);
      f.rebalanceMovedBytes.set(labels, moving?.progress.bytes ?? 0);
      f.rebalanceProgressRatio.set(labels, moving ? ratio(moving.progress.bytes, moving.progress.bytesToMove, moving.status === 'completed') : 0);
    }
  }

  private setHeal(): void {
    const heal = this.sources.heal();
    if (!heal) return;
    const f = this.families;
    const sequences = heal.sequenceList();
    f.healSequencesRunning.set(sequences.filter((sequence) => sequence.status === 'running').length);
    for (const sequence of sequences) {
      const { objectsScanned, objectsHealed, objectsUnrecoverable, failures, shardsHealed } = sequence.counts;
      this.totals.advance(f.healObjectsScanned, `${sequence.clientToken}/scanned`, objectsScanned);
      this.totals.advance(f.healObjectsHealed, `${sequence.clientToken}/healed`, objectsHealed);
      this.totals.advance(f.healObjectsFailed, `${sequence.clientToken}/failed`, objectsUnrecoverable + failures);
      this.totals.advance(f.healShardsHealed, `${sequence.clientToken}/shards`, shardsHealed);
    }
    this.totals.forgetExcept(new Set(sequences.map((sequence) => sequence.clientToken)));
    const background = heal.backgroundStatus();
    const { mrf } = background;
    f.readRepairQueueLength.set(mrf.queued);
    this.totals.advance(f.readRepairDropped, 'mrf/dropped', mrf.dropped);
    this.totals.advance(f.readRepairProcessed, 'mrf/processed', mrf.processed);
    this.totals.advance(f.readRepairFailed, 'mrf/failed', mrf.failed);
    this.totals.advance(f.stateFilesQuarantined, 'mrf/state-files-quarantined', background.stateFilesQuarantined);
  }
}

function ratio(done: number, total: number, finished: boolean): number {
  if (finished) return 1;
  return total > 0 ? Math.min(1, done / total) : 0;
}

/** Turns running totals kept elsewhere (a heal sequence's counts) into counter increments. */
class DeltaCounters {
  private readonly seen = new Map<string, number>();

  advance(counter: { inc(value: number): void }, key: string, total: number): void {
    const before = this.seen.get(key) ?? 0;
    if (total > before) counter.inc(total - before);
    this.seen.set(key, Math.max(before, total));
  }

  /** Drops what is kept for sequences the manager no longer lists (their counts were counted). */
  forgetExcept(tokens: Set<string>): void {
    for (const key of this.seen.keys()) {
      const token = key.slice(0, key.lastIndexOf('/'));
      if (token !== 'mrf' && !tokens.has(token)) this.seen.delete(key);
    }
  }
}
