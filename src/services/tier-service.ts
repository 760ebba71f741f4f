/**
 * The node's remote tiers (lifecycle transitions): the registry over `tiers.bin` on every drive,
 * handed to the object layer as its tier gateway (read-through of transitioned versions, their
 * tier objects freed on delete), and the transition the lifecycle scanner runs.
 */
import type { Logger } from 'pino';
import type { ServerConfig } from '../cluster/server-config.js';
import type { StartedStorage } from '../cluster/startup.js';
import type { NamespaceLocker } from '../object/locks.js';
import { StateStore } from '../ops/state-store.js';
import { validateTierDocument, type TierDocument } from '../ops/tier/tier-document.js';
import { TierRegistry } from '../ops/tier/tiers.js';
import { transitionVersions, type TransitionVersion } from '../ops/tier/transition.js';

export interface TierService {
  tiers: TierRegistry;
  transition: TransitionVersion;
}

export async function createTierService(options: { config: ServerConfig; storage: StartedStorage; locker?: NamespaceLocker; logger: Logger }): Promise<TierService> {
  const { config, storage, locker } = options;
  const tiers = new TierRegistry({
    store: new StateStore<TierDocument>({ name: 'tiers.bin', magic: 'SVTR', drives: () => storage.setDrives.flat(2), validate: validateTierDocument, quarantine: storage.quarantine }),
    root: { accessKey: config.accessKey, secretKey: config.secretKey },
    nowMs: () => Date.now(),
    logger: options.logger,
    ...(locker ? { lock: () => locker.acquire('.svc.sys/tiers.bin', 'write') } : {}),
  });
  await tiers.load();
  await tiers.spread().catch((error: unknown) => options.logger.warn({ error: String(error) }, 'tiers.bin not written again on every drive: a pool added since keeps no copy yet'));
  storage.objects.setTierGateway(tiers);
  return { tiers, transition: transitionVersions({ objects: storage.objects, tiers, deploymentId: storage.deploymentId, nowMs: () => Date.now() }) };
}
