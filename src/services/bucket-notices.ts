/**
 * Bucket changes between nodes: each node caches its bucket records; when one changes here, every
 * peer is told to forget its cache (a peer that cannot be told, being down, has an empty cache when
 * it comes back).
 */
import type { StartedStorage } from '../cluster/startup.js';
import type { PeerHandlerTable } from '../ops/peer-protocol.js';
import { limits } from '../util/limits.js';
import type { PeerLinks } from './peer-links.js';

export function createBucketNotices(options: { storage: StartedStorage; links: PeerLinks }): { peerHandlers: Pick<PeerHandlerTable, 'buckets-changed'> } {
  const { storage, links } = options;
  storage.objects.onBucketsChanged(async (bucket) => void (await links.notifyAll('buckets-changed', { bucket }, limits.changeNoticeTimeoutMs, 'bucket change notice')));
  return {
    peerHandlers: {
      'buckets-changed': async () => {
        storage.objects.invalidateBuckets();
        return { invalidated: true };
      },
    },
  };
}
