/**
 * Bucket events on a running node, as the admin API and the peers see them:
 *
 *   - targets: those of the environment (fixed, opened by the composition root) and those added
 *     through the admin API, kept in `event-targets.bin` (ops/events/target-store.ts) and the same on
 *     every node: a change is made under the file's lock, saved, applied here, and announced to every
 *     peer, which rereads the file and applies it (every node also rereads it every
 *     limits.eventTargetsReloadIntervalMs in case a notice was lost). A target a bucket's rule
 *     names cannot be removed (EventTargetInUse), nor one of the environment (EventTargetReadOnly).
 *   - live listeners (`rc watch`), which follow every node through the `event-listen` peer
 *     operation (ops/events/listen.ts).
 */
import type { Logger } from 'pino';
import type { StartedStorage } from '../cluster/startup.js';
import type { AdminContext } from '../api/admin/context.js';
import { SvcError } from '../errors/index.js';
import { EventListenHub } from '../ops/events/listen.js';
import type { EventNotifier, TargetStatus } from '../ops/events/notifier.js';
import { apiTargetConfig } from '../ops/events/target-config.js';
import { configOf, emptyEventTargets, eventTargetsFileName, eventTargetsMagic, storedTarget, validateEventTargets, type EventTargetsDocument } from '../ops/events/target-store.js';
import { StateStore } from '../ops/state-store.js';
import type { StateFileQuarantine } from '../cluster/state-quarantine.js';
import type { NamespaceLocker } from '../object/locks.js';
import { askPeer, type PeerHandlerTable } from '../ops/peer-protocol.js';
import { systemTimers } from '../util/clock.js';
import { limits } from '../util/limits.js';
import { followTimer, type PeerLinks } from './peer-links.js';

export interface EventsService {
  context: NonNullable<AdminContext['events']>;
  peerHandlers: Pick<PeerHandlerTable, 'event-listen' | 'event-targets-changed'>;
  close(): Promise<void>;
}

/** What `rc admin event target add` sends. */
export interface TargetInput {
  type: string;
  id: string;
  settings: Record<string, string>;
  queueLimit?: number;
}

export async function createEventsService(options: {
  notifier: EventNotifier;
  storage: StartedStorage;
  links: PeerLinks;
  logger: Logger;
  quarantine: StateFileQuarantine;
  locker?: NamespaceLocker;
}): Promise<EventsService> {
  const { notifier, storage, links, logger } = options;
  const hub = new EventListenHub({
    watch: (watcher) => notifier.watch(watcher),
    bucketExists: async (bucket) => (await storage.objects.bucketRecord(bucket)) !== undefined,
    peers: links.peers.map((peer) => ({
      name: `${peer.host}:${peer.port}`,
      poll: (request) => askPeer(peer, 'event-listen', request, { ...links.rpc, timeoutMs: request.waitMs + limits.changeNoticeTimeoutMs }),
    })),
    timers: systemTimers,
    logger,
  });
  const store = new StateStore<EventTargetsDocument>({ name: eventTargetsFileName, magic: eventTargetsMagic, drives: () => storage.setDrives.flat(2), validate: validateEventTargets, quarantine: options.quarantine });
  const targets = new ApiTargets(notifier, store, logger);
  await targets.reload().catch((error: unknown) => logger.warn({ err: error }, `${eventTargetsFileName}: the targets added through the admin API could not be opened`));
  const follower = followTimer(limits.eventTargetsReloadIntervalMs, `rereading ${eventTargetsFileName}`, () => targets.reload(), logger);
  follower.start();
  const change = async (work: (document: EventTargetsDocument) => Promise<EventTargetsDocument>): Promise<void> => {
    const release = await options.locker?.acquire(`.svc.sys/${eventTargetsFileName}`, 'write');
    try {
      const document = await work((await store.load()) ?? emptyEventTargets());
      await store.save({ ...document, generation: document.generation + 1 });
      await targets.reload();
    } finally {
      release?.();
    }
    await links.notifyAll('event-targets-changed', {}, limits.changeNoticeTimeoutMs, 'event targets change notice');
  };
  return {
    context: {
      status: () => notifier.status(),
      listen: (filter) => hub.open(filter),
      listeners: () => hub.stats(),
      addTarget: async (input) => {
        const config = apiTargetConfig(input);
        if (!notifier.canQueue()) throw new SvcError('InvalidConfiguration', 'this node has no directory for event queues (no local drive on disk): set SVC_NOTIFY_QUEUE_DIR on every node', { variable: 'SVC_NOTIFY_QUEUE_DIR' });
        if (notifier.sourceOf(config.arn) === 'environment') throw new SvcError('EventTargetReadOnly', `${config.arn} is configured by the environment (SVC_NOTIFY_*): change it there`, { arn: config.arn });
        await change(async (document) => ({ ...document, targets: [...document.targets.filter((target) => configOf(target).arn !== config.arn), storedTarget(config)] }));
        return statusOf(notifier, config.arn);
      },
      removeTarget: async (arn) => {
        if (notifier.sourceOf(arn) === 'environment') throw new SvcError('EventTargetReadOnly', `${arn} is configured by the environment (SVC_NOTIFY_*): it cannot be removed through the API`, { arn });
        await change(async (document) => {
          if (!document.targets.some((target) => configOf(target).arn === arn)) throw new SvcError('NoSuchEventTarget', `no event target is ${arn}`, { arn });
          const users = (await storage.objects.listBuckets()).filter((bucket) => (bucket.notification ?? []).some((rule) => rule.arn === arn)).map((bucket) => bucket.name);
          if (users.length > 0) throw new SvcError('EventTargetInUse', `${arn} is named by the notification rules of bucket(s) ${users.join(', ')}: change their rules first`, { arn, buckets: users });
          return { ...document, targets: document.targets.filter((target) => configOf(target).arn !== arn) };
        });
      },
    },
    peerHandlers: {
      'event-listen': (request) => hub.poll(request),
      'event-targets-changed': async () => {
        await targets.reload();
        return { reloaded: true };
      },
    },
    close: async () => {
      follower.stop();
      hub.close();
    },
  };
}

function statusOf(notifier: EventNotifier, arn: string): TargetStatus {
  const status = notifier.status().find((target) => target.arn === arn);
  if (!status) throw new SvcError('InternalError', `${arn} was saved but is not open`);
  return status;
}

/** Applies event-targets.bin to the notifier: opens new or changed targets, closes removed ones. One reload at a time. */
class ApiTargets {
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly notifier: EventNotifier, private readonly store: StateStore<EventTargetsDocument>, private readonly logger: Logger) {}

  reload(): Promise<void> {
    this.running = this.running.catch(() => undefined).then(() => this.apply());
    return this.running;
  }

  private async apply(): Promise<void> {
    const document = (await this.store.load()) ?? emptyEventTargets();
    const wanted = document.targets.map(configOf).filter((config) => {
      if (this.notifier.sourceOf(config.arn) !== 'environment') return true;
      this.logger.warn({ arn: config.arn }, `${eventTargetsFileName} names a target of the environment: the environment's settings are kept`);
      return false;
    });
    const wantedArns = new Set(wanted.map((config) => config.arn));
    for (const arn of this.notifier.apiTargets()) if (!wantedArns.has(arn)) await this.notifier.removeTarget(arn);
    for (const config of wanted) await this.notifier.setTarget(config);
  }
}
