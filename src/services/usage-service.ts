/**
 * The data-usage scanner of this node (src/ops/usage-scanner.ts): its result and checkpoint in
 * `usage.bin` on every drive, its scans under a cluster-wide lock, and scheduled scans on the node
 * that holds the deployment's first endpoint only (the others read the persisted result).
 */
import type { Logger } from 'pino';
import type { StartedStorage } from '../cluster/startup.js';
import { StateStore } from '../ops/state-store.js';
import { UsageScanner } from '../ops/usage-scanner.js';
import { storedUsageDocument, usageFileMagic, usageFileName, validateUsageDocument, type StoredUsageDocument } from '../ops/usage-file.js';
import { limits } from '../util/limits.js';

export function createUsageService(options: { storage: StartedStorage; leader: boolean; logger: Logger }): UsageScanner {
  const { storage, logger } = options;
  const store = new StateStore<StoredUsageDocument>({ name: usageFileName, magic: usageFileMagic, drives: () => storage.setDrives.flat(2), validate: validateUsageDocument, quarantine: storage.quarantine });
  const locker = storage.objects.allSets()[0]!.config.locker;
  const scanner = new UsageScanner({
    objects: storage.objects,
    store: { load: () => store.load(), save: (document) => store.save(storedUsageDocument(document)) },
    objectsPerSecond: limits.usageScanObjectsPerSecond,
    intervalMs: limits.usageScanIntervalMs,
    firstDelayMs: limits.usageScanFirstDelayMs,
    checkpointEveryKeys: limits.usageCheckpointEveryKeys,
    checkpointIntervalMs: limits.usageCheckpointIntervalMs,
    schedules: options.leader,
    lockScan: () =>
      locker.acquire(`.svc.sys/${usageFileName}`, 'write', limits.usageScanLockTimeoutMs).catch((error: unknown) => {
        logger.debug({ err: error }, 'data-usage scan lock not granted: another node scans');
        return undefined;
      }),
    nowMs: () => Date.now(),
    logger,
  });
  void scanner.start().catch((error: unknown) => logger.warn({ err: error }, 'data-usage scanner not scheduled'));
  return scanner;
}
