/**
 * The tiers as the admin routes see them (docs/s3-api.md, "Tiers"). Removal looks for what still
 * uses the tier. A tier's deletion queues are each node's own (the node that deleted, overwrote
 * or expired a transitioned version queued its tier object), so `info` gathers them over the
 * peer protocol (`tier-deletions`): one row per node in launch order, a node that does not answer
 * listed as unreachable with its error (never left out), and the rows that answered summed.
 */
import type { Logger } from 'pino';
import type { StartedStorage } from '../cluster/startup.js';
import type { Peer } from '../cluster/peer-client.js';
import type { AdminContext } from '../api/admin/context.js';
import { SvcError } from '../errors/index.js';
import { askPeer, type PeerHandlerTable } from '../ops/peer-protocol.js';
import { summedDeletions, type TierDeletionNodeRow, type TierDeletionStats } from '../ops/tier/deletion-queue.js';
import { tierUser } from '../ops/tier/transition.js';
import { limits } from '../util/limits.js';
import type { PeerLinks } from './peer-links.js';
import type { TierService } from './tier-service.js';

export interface TierAdminService {
  /** Undefined when the node runs no tiers. */
  admin: AdminContext['tiers'];
  peerHandlers: Pick<PeerHandlerTable, 'tier-deletions'>;
}

const peerName = (peer: Peer): string => `${peer.host}:${peer.port}`;

export function createTierAdmin(options: { service: TierService | undefined; storage: StartedStorage; links: PeerLinks; logger: Logger }): TierAdminService {
  const { service, storage, links, logger } = options;
  const ownStats = (tier: string): TierDeletionStats => {
    if (!service) throw new SvcError('NotImplemented', 'this server has no remote tiers');
    return service.tiers.deletionStats(tier);
  };
  const peerHandlers: TierAdminService['peerHandlers'] = { 'tier-deletions': async (request) => ({ deletions: ownStats(request.tier) }) };
  if (!service) return { admin: undefined, peerHandlers };
  const { tiers } = service;
  const ownName = links.ownNode >= 0 ? `${links.nodes[links.ownNode]!.host}:${links.nodes[links.ownNode]!.port}` : 'this node';
  // The figures named, and only those (a peer's answer may carry more).
  const answered = (node: string, stats: TierDeletionStats): TierDeletionNodeRow => ({
    node,
    state: 'answered',
    pending: stats.pending,
    deleted: stats.deleted,
    failed: stats.failed,
    dropped: stats.dropped,
    ...(stats.oldestQueuedAt !== undefined ? { oldestQueuedAt: stats.oldestQueuedAt } : {}),
    ...(stats.lastError !== undefined ? { lastError: stats.lastError } : {}),
  });
  const peerRow = (peer: Peer, tier: string): Promise<TierDeletionNodeRow> =>
    askPeer(peer, 'tier-deletions', { tier }, { ...links.rpc, timeoutMs: limits.changeNoticeTimeoutMs }).then(
      (answer) => answered(peerName(peer), answer.deletions),
      (error: unknown): TierDeletionNodeRow => {
        logger.warn({ peer: peerName(peer), tier, err: error }, 'tier info: a peer did not answer');
        return { node: peerName(peer), state: 'unreachable', error: error instanceof Error ? error.message : String(error) };
      },
    );
  return {
    peerHandlers,
    admin: {
      list: async () => {
        await tiers.load();
        return tiers.list();
      },
      info: (name) => tiers.info(name),
      deletions: async (name) => {
        const tier = name.toUpperCase();
        const nodes = await Promise.all([Promise.resolve(answered(ownName, tiers.deletionStats(tier))), ...links.peers.map((peer) => peerRow(peer, tier))]);
        // Launch order, so every node answers with the same rows in the same order.
        const order = links.nodes.map((node) => `${node.host}:${node.port}`);
        nodes.sort((a, b) => order.indexOf(a.node) - order.indexOf(b.node));
        return { deletions: summedDeletions(tier, nodes), nodes };
      },
      add: (input) => tiers.add(input),
      remove: (name) => tiers.remove(name, (tier) => tierUser(storage.objects, tier)),
    },
  };
}
