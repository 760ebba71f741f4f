/**
 * Bucket replication for the composition root: the remote targets in `.svc.sys/replication.bin`
 * on every drive, and this node's queues and resyncs under `.svc.sys/replication` on its first
 * local drive (or SVC_REPLICATION_QUEUE_DIR); a node with neither (drives in memory) keeps them
 * in a temporary directory removed at stop, and says so.
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
import { RemoteTargets, validateTargetsDocument, type ReplicationTargetsDocument } from '../ops/replication/remote-targets.js';
import { Replicator } from '../ops/replication/replicator.js';
import type { EventSink } from '../ops/events/types.js';
import type { Kms } from '../ops/kms/kms.js';

export async function openReplication(options: { config: ServerConfig; env: Record<string, string | undefined>; storage: StartedStorage; localDrivePath: string | undefined; locker?: NamespaceLocker; logger: Logger; events?: EventSink; kms?: () => Kms | undefined }): Promise<Replicator> {
  const { config, storage, locker, logger } = options;
  const configured = options.env.SVC_REPLICATION_QUEUE_DIR?.trim();
  let directory = configured || (options.localDrivePath === undefined ? undefined : join(options.localDrivePath, '.svc.sys', 'replication'));
  // Drives in memory (memfs) keep nothing across a restart: nor do the queues, in a directory removed at stop.
  const temporary = directory === undefined;
  if (directory === undefined) {
    directory = await mkdtemp(join(tmpdir(), 'svc-replication-'));
    logger.warn({ directory }, 'bucket replication queues are in a temporary directory (no local drive on disk; set SVC_REPLICATION_QUEUE_DIR to keep them)');
  }
  const targets = new RemoteTargets({
    store: new StateStore<ReplicationTargetsDocument>({ name: 'replication.bin', magic: 'SVRT', drives: () => storage.setDrives.flat(2), validate: validateTargetsDocument, quarantine: storage.quarantine }),
    root: { accessKey: config.accessKey, secretKey: config.secretKey },
    nowMs: () => Date.now(),
    ...(locker ? { lock: () => locker.acquire('.svc.sys/replication.bin', 'write') } : {}),
  });
  return Replicator.open({
    objects: storage.objects,
    targets,
    directory,
    removeOnClose: temporary,
    timers: systemTimers,
    nowMs: () => Date.now(),
    logger,
    ...(options.events ? { events: options.events } : {}),
    ...(options.kms ? { kms: options.kms } : {}),
  });
}
