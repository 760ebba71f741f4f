/**
 * Brings drives online after startup. A slot whose drive was offline, unformatted or not yet
 * formatted when format quorum was reached is re-checked on an interval: once its format.json
 * names this deployment and the drive id the slot expects, the drive joins its erasure set. This
 * covers a peer that starts late, a fresh pool whose first node is still writing format.json to
 * its peers' drives, and a replaced drive formatted by heal.
 */
import { isSvcError } from '../errors/index.js';
import type { Drive } from '../drive/index.js';
import { decodeFormatJson } from '../format/format-json.js';
import { formatPath } from './format-bootstrap.js';

export interface PendingSlot {
  pool: number;
  set: number;
  /** The set's drive array, as the erasure set uses it; the monitor fills `slots[slot]`. */
  slots: (Drive | undefined)[];
  slot: number;
  drive: Drive;
  expectedDriveId: string;
  /** Why it was not online at startup: unreachable, or reachable without a format (a replaced drive). */
  reason: 'offline' | 'unformatted';
}

export interface DriveMonitorLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface DriveMonitor {
  /** Checks every pending slot once; resolves with the endpoints brought online. */
  checkNow(): Promise<string[]>;
  pendingCount(): number;
  /** The slots still waiting. */
  pendingSlots(): PendingSlot[];
  stop(): void;
}

export function startDriveMonitor(options: { pending: PendingSlot[]; deploymentId: string; intervalMs: number; logger: DriveMonitorLogger }): DriveMonitor {
  let pending = [...options.pending];
  const refused = new Set<string>();
  let running: Promise<string[]> | undefined;

  async function admit(entry: PendingSlot): Promise<boolean> {
    let bytes: Uint8Array;
    try {
      bytes = await entry.drive.readFile(formatPath);
    } catch (error) {
      if (!isSvcError(error, 'FileNotFound') && !isSvcError(error, 'DriveOffline')) options.logger.warn({ endpoint: entry.drive.endpoint, error: String(error) }, 'drive check failed');
      return false;
    }
    const format = decodeFormatJson(bytes);
    if (format.deploymentId === options.deploymentId && format.driveId === entry.expectedDriveId) return true;
    if (!refused.has(entry.drive.endpoint)) {
      refused.add(entry.drive.endpoint);
      options.logger.warn({ endpoint: entry.drive.endpoint }, `drive ${entry.drive.endpoint}: its format.json claims an identity this slot does not expect; it stays out`);
    }
    return false;
  }

  async function check(): Promise<string[]> {
    const results = await Promise.all(pending.map(async (entry) => ({ entry, online: await admit(entry).catch(() => false) })));
    const joined: string[] = [];
    for (const { entry, online } of results) {
      if (!online) continue;
      entry.slots[entry.slot] = entry.drive;
      joined.push(entry.drive.endpoint);
      options.logger.info({ endpoint: entry.drive.endpoint }, `drive ${entry.drive.endpoint} is online`);
    }
    pending = pending.filter((entry) => !joined.includes(entry.drive.endpoint));
    return joined;
  }

  const checkNow = (): Promise<string[]> => {
    running ??= check().finally(() => {
      running = undefined;
    });
    return running;
  };
  const timer = setInterval(() => {
    if (pending.length > 0) void checkNow();
  }, options.intervalMs);
  timer.unref();
  return { checkNow, pendingCount: () => pending.length, pendingSlots: () => [...pending], stop: () => clearInterval(timer) };
}
