/**
 * The node's remote tiers (lifecycle transitions): the registry over `tiers.bin` on every drive,
 * handed to the object layer as its tier gateway (read-through of transitioned versions, their
 * tier objects freed on delete through this node's deletion queues), and the transition the
 * lifecycle scanner runs.
 *
 * Each erasure set's restored copies are indexed in `restored.bin` on its drives
 * (ops/tier/restore-index.ts), so the lifecycle scanner ends them without walking the keys.
 *
 * The deletion queues live under `.svc.sys/tier-deletions` on this node's first local drive; a
 * node without one (drives in memory) keeps them in a temporary directory removed at stop, and
 * says so.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { ServerConfig } from '../cluster/server-config.js';
import type { StartedStorage } from '../cluster/startup.js';
import type { NamespaceLocker } from '../object/locks.js';
import { systemTimers } from '../util/clock.js';
import { StateStore } from '../ops/state-store.js';
import { validateTierDocument, type TierDocument } from '../ops/tier/tier-document.js';
import { TierRegistry } from '../ops/tier/tiers.js';
import { transitionVersions, type TransitionVersion } from '../ops/tier/transition.js';
import { RestoreIndex } from '../ops/tier/restore-index.js';

export interface TierService {
  tiers: TierRegistry;
  transition: TransitionVersion;
  /** Every set's restored copies (RestoreObject) with their expiry: the lifecycle scanner ends them from it. */
  restores: RestoreIndex;
  close(): Promise<void>;
}

export async function createTierService(options: { config: ServerConfig; storage: StartedStorage; localDrivePath: string | undefined; locker?: NamespaceLocker; logger: Logger }): Promise<TierService> {
  const { config, storage, locker } = options;
  const lock = locker ? { lock: () => locker.acquire('.svc.sys/tiers.bin', 'write') } : {};
  const tiers = new TierRegistry({
    store: new StateStore<TierDocument>({ name: 'tiers.bin', magic: 'SVTR', drives: () => storage.setDrives.flat(2), validate: validateTierDocument, quarantine: storage.quarantine, ...lock }),
    root: { accessKey: config.accessKey, secretKey: config.secretKey },
    nowMs: () => Date.now(),
    logger: options.logger,
    ...lock,
  });
  await tiers.load();
  const temporary = options.localDrivePath === undefined;
  const directory = temporary ? await mkdtemp(join(tmpdir(), 'svc-tier-deletions-')) : join(options.localDrivePath!, '.svc.sys', 'tier-deletions');
  if (temporary) options.logger.warn({ directory }, 'tier deletion queues are in a temporary directory (no local drive on disk): deletions pending at stop are forgotten');
  await tiers.openDeletions({ directory, removeOnClose: temporary, timers: systemTimers, nowMs: () => Date.now() });
  storage.objects.setTierGateway(tiers);
  const setLocker = storage.objects.allSets()[0]!.config.locker;
  const restores = new RestoreIndex({
    sets: storage.objects.allSets().map((set) => ({ poolIndex: set.config.poolIndex, setIndex: set.config.setIndex, drives: () => set.config.drives })),
    quarantine: storage.quarantine,
    lock: (resource) => setLocker.acquire(resource, 'write'),
    logger: options.logger,
  });
  storage.objects.setRestoredCopyRecorders((poolIndex, setIndex) => restores.recorderFor(poolIndex, setIndex));
  return {
    tiers,
    restores,
    transition: transitionVersions({ objects: storage.objects, tiers, deploymentId: storage.deploymentId, nowMs: () => Date.now(), multipartThresholdBytes: config.tierMultipartThresholdBytes }),
    close: () => tiers.close(),
  };
}
