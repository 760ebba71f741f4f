/**
 * Shapes of the admin answers the console shows (the cluster snapshot and operation statuses):
 * the server's own answer types from src/contracts (import-free), under the names the pages use,
 * so the pages and the routes cannot drift apart.
 */
import type { HealingDrive, SlotInfo } from '../../contracts/cluster';

export type {
  BackgroundHealStatus as BackgroundHeal,
  Capabilities,
  ClusterSnapshot as Snapshot,
  HealingDrive,
  PoolSnapshot,
  SlotInfo as Slot,
} from '../../contracts/cluster';
export type {
  DecommissionStatus as DecommissionEntry,
  HealCounts,
  HealSequenceStatus as HealSequence,
  LifecycleCycle,
  LifecycleStatus,
  RebalancePool,
  RebalanceStatus,
} from '../../contracts/operations';

/** A drive's state as the console shows it: healing when a replacement heal is working on its slot. */
export function driveState(slot: SlotInfo, pool: number, healing: HealingDrive[]): string {
  const heal = healing.find((drive) => drive.pool === pool && drive.set === slot.set && drive.slot === slot.slot);
  if (heal && heal.state !== 'healed') return 'healing';
  return slot.state;
}

/** The heal this browser tab started last (its client token), shown on Overview and Operations. */
export const healTokenKey = 'svc-heal-token';
