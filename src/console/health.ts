/**
 * The deployment's health in one model, built from the cluster snapshot and the storage classes
 * (both the admin API's): every node, every set with its drives, the quorum margin of each set per
 * storage class, the operations running and the last errors they reported, and one verdict:
 *
 * - `ok`: every drive of every set online and none healing;
 * - `degraded` (amber): a set has a drive offline or healing, so its margin has shrunk, but every
 *   set still has read and write quorum for every class;
 * - `critical` (red): some set lost write or read quorum for a storage class.
 *
 * Quorums are the object layer's: read needs K = N − parity drives, write K (K + 1 when K equals
 * the parity). A margin is how many more drives the set can lose before that quorum is gone.
 */

import type { ClassMargin, DriveHealth, HealthModel, HealthStatus, SetHealth } from '../contracts/health.js';

export type { ClassMargin, DriveHealth, HealthModel, HealthStatus, SetHealth } from '../contracts/health.js';

/** The parts of the admin cluster snapshot the model reads. */
export interface SnapshotView {
  generatedAt: string;
  nodes: HealthModel['nodes'];
  pools: { id: number; drivesPerSet: number; sets: { set: number; drives: { slot: number; endpoint: string; state: 'online' | 'offline' }[] }[] }[];
  operations: {
    rebalance: { pools: { id: number; status: string; stopping: boolean; lastError: string }[] };
    decommission: { pool: number; state: string; reason?: string }[];
    heal: {
      mrf: { queued: number };
      background: { task: string; status: string; pool?: number; set?: number }[];
      healingDrives: { endpoint: string; pool: number; set: number; slot: number; state: string; objectsHealed: number }[];
    };
  };
}

export interface StorageClassView {
  pool: number;
  STANDARD: string;
  REDUCED_REDUNDANCY: string;
}

const parityOf = (text: string | undefined): number => Number(/^EC:(\d+)$/.exec(text ?? '')?.[1] ?? NaN);
const worst = (states: HealthStatus[]): HealthStatus => (states.includes('critical') ? 'critical' : states.includes('degraded') ? 'degraded' : 'ok');

export function classMargin(storageClass: ClassMargin['storageClass'], parity: number, drivesTotal: number, drivesOnline: number, shrunk: boolean): ClassMargin {
  const readQuorum = drivesTotal - parity;
  const writeQuorum = readQuorum === parity ? readQuorum + 1 : readQuorum;
  const readMargin = drivesOnline - readQuorum;
  const writeMargin = drivesOnline - writeQuorum;
  const status: HealthStatus = readMargin < 0 || writeMargin < 0 ? 'critical' : shrunk ? 'degraded' : 'ok';
  return { storageClass, parity, readQuorum, writeQuorum, readMargin, writeMargin, status };
}

function setsOf(snapshot: SnapshotView, classes: StorageClassView[]): SetHealth[] {
  const healing = snapshot.operations.heal.healingDrives.filter((drive) => drive.state !== 'healed');
  return snapshot.pools.flatMap((pool) => {
    const poolClasses = classes.find((entry) => entry.pool === pool.id);
    return pool.sets.map((set) => {
      const drives = set.drives.map((drive) => {
        const healingHere = healing.some((entry) => entry.pool === pool.id && entry.set === set.set && entry.slot === drive.slot);
        const state: DriveHealth = drive.state === 'offline' ? 'offline' : healingHere ? 'healing' : 'online';
        return { endpoint: drive.endpoint, slot: drive.slot, state };
      });
      // A healing drive answers but does not yet hold every shard: it counts for neither quorum.
      const drivesOnline = drives.filter((drive) => drive.state === 'online').length;
      const shrunk = drivesOnline < drives.length;
      const margins = (['STANDARD', 'REDUCED_REDUNDANCY'] as const)
        .map((name) => ({ name, parity: parityOf(poolClasses?.[name]) }))
        .filter((entry) => Number.isFinite(entry.parity))
        .map((entry) => classMargin(entry.name, entry.parity, drives.length, drivesOnline, shrunk));
      return { pool: pool.id, set: set.set, drivesOnline, drivesTotal: drives.length, drives, classes: margins, status: worst([shrunk ? 'degraded' : 'ok', ...margins.map((margin) => margin.status)]) };
    });
  });
}

function operationsOf(snapshot: SnapshotView): { operations: HealthModel['operations']; errors: HealthModel['errors'] } {
  const { rebalance, decommission, heal } = snapshot.operations;
  const operations: HealthModel['operations'] = [];
  const errors: HealthModel['errors'] = [];
  for (const pool of rebalance.pools) {
    if (pool.status === 'active' || pool.stopping) operations.push({ kind: 'rebalance', detail: `pool ${pool.id} ${pool.stopping ? 'stopping' : 'moving objects'}` });
    if (pool.lastError) errors.push({ source: `rebalance of pool ${pool.id}`, message: pool.lastError });
  }
  for (const entry of decommission) {
    if (entry.state === 'active' || entry.state === 'queued') operations.push({ kind: 'decommission', detail: `pool ${entry.pool} ${entry.state}` });
    if (entry.state === 'failed') errors.push({ source: `decommission of pool ${entry.pool}`, message: entry.reason ?? 'failed' });
  }
  for (const task of heal.background.filter((item) => item.status === 'running')) operations.push({ kind: 'heal', detail: `pool ${task.pool ?? '–'} set ${task.set ?? '–'}` });
  for (const drive of heal.healingDrives.filter((item) => item.state !== 'healed')) operations.push({ kind: 'drive replacement', detail: `${drive.endpoint} ${drive.state}, ${drive.objectsHealed} objects healed` });
  if (heal.mrf.queued > 0) operations.push({ kind: 'read repair', detail: `${heal.mrf.queued} object(s) waiting` });
  return { operations, errors };
}

function summaryOf(status: HealthStatus, sets: SetHealth[], drives: HealthModel['drives'], nodesOffline: number): string {
  if (status === 'ok') return 'All drives online: every erasure set has its full margin.';
  const lost = sets.filter((set) => set.status === 'critical');
  const parts = [`${drives.offline} of ${drives.total} drive(s) offline`];
  if (drives.healing > 0) parts.push(`${drives.healing} healing`);
  if (nodesOffline > 0) parts.push(`${nodesOffline} node(s) offline`);
  if (status === 'critical') {
    const what = (set: SetHealth): string => {
      const unreadable = set.classes.some((margin) => margin.readMargin < 0);
      const readableSome = set.classes.some((margin) => margin.readMargin >= 0);
      const reads = !unreadable ? 'reads still work' : readableSome ? 'some objects cannot be read' : 'objects cannot be read';
      return `pool ${set.pool} set ${set.set} lost write quorum (${reads})`;
    };
    const lostWrite = lost.filter((set) => set.classes.some((margin) => margin.writeMargin < 0));
    const lostRead = lost.filter((set) => !lostWrite.includes(set));
    const named = [...lostWrite.map(what), ...lostRead.map((set) => `pool ${set.pool} set ${set.set} lost read quorum`)];
    return `${parts.join(', ')}: ${named.join('; ')}.`;
  }
  const least = Math.min(...sets.flatMap((set) => set.classes.map((margin) => margin.writeMargin)));
  return `${parts.join(', ')}: every set keeps quorum, the smallest write margin is ${least} drive(s).`;
}

export function healthModel(snapshot: SnapshotView, classes: StorageClassView[]): HealthModel {
  const sets = setsOf(snapshot, classes);
  const all = sets.flatMap((set) => set.drives);
  const drives = { online: all.filter((drive) => drive.state === 'online').length, offline: all.filter((drive) => drive.state === 'offline').length, healing: all.filter((drive) => drive.state === 'healing').length, total: all.length };
  const nodesOffline = snapshot.nodes.filter((node) => node.state === 'offline').length;
  const status = worst([...sets.map((set) => set.status), nodesOffline > 0 ? 'degraded' : 'ok']);
  const { operations, errors } = operationsOf(snapshot);
  const model: HealthModel = { status, generatedAt: snapshot.generatedAt, summary: summaryOf(status, sets, drives, nodesOffline), nodes: snapshot.nodes, drives, sets, operations, errors };
  if (status !== 'ok') model.runbook = drives.offline > 0 || drives.healing > 0 ? { title: 'Replacing a drive', section: '4. Replacing a drive' } : { title: 'Recovering after an unclean shutdown', section: '5. Recovering after an unclean shutdown' };
  return model;
}
