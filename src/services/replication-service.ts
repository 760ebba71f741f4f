/**
 * Bucket replication across the deployment (docs/replication.md): each node keeps its own queues
 * (the tasks of the requests it answered), so the status gathers every node's over the peer
 * protocol (`replication-status`) into one row per node plus the targets summed; a node that does
 * not answer is a row with its error, never a silent gap. Resyncs run on the leader (the node
 * holding the first endpoint): one started through another node is forwarded there
 * (`replication-resync`), so two admins asking two nodes get the same walk, not two.
 */
import type { Logger } from 'pino';
import type { Peer } from '../cluster/peer-client.js';
import { SvcError } from '../errors/index.js';
import { askPeer, type PeerHandlerTable } from '../ops/peer-protocol.js';
import type { NodeReplicationRow, NodeReplicationStatus, ReplicationAdmin, TargetReplicationStatus } from '../ops/replication/replicator.js';
import { limits } from '../util/limits.js';
import type { PeerLinks } from './peer-links.js';

export interface ReplicationService {
  /** The cluster-wide admin side. */
  admin: ReplicationAdmin;
  peerHandlers: Pick<PeerHandlerTable, 'replication-status' | 'replication-resync'>;
}

const peerName = (peer: Peer): string => `${peer.host}:${peer.port}`;

export function createReplicationService(options: { local: ReplicationAdmin | undefined; links: PeerLinks; logger: Logger }): ReplicationService {
  const { local, links, logger } = options;
  const here = (): ReplicationAdmin => {
    if (!local) throw new SvcError('NotImplemented', 'bucket replication is not running on this node');
    return local;
  };
  const ownName = links.ownNode >= 0 ? `${links.nodes[links.ownNode]!.host}:${links.nodes[links.ownNode]!.port}` : 'this node';
  const admin: ReplicationAdmin = {
    addTarget: (request) => here().addTarget(request),
    listTargets: (bucket) => here().listTargets(bucket),
    removeTarget: (bucket, arn) => here().removeTarget(bucket, arn),
    status: async (bucket) => {
      const own = here().status(bucket).then((status): NodeReplicationRow => ({ node: ownName, ...status }));
      const others = links.peers.map((peer) =>
        askPeer(peer, 'replication-status', bucket === undefined ? {} : { bucket }, { ...links.rpc, timeoutMs: limits.changeNoticeTimeoutMs }).then(
          (status): NodeReplicationRow => ({ node: peerName(peer), targets: status.targets, resyncs: status.resyncs }),
          (error: unknown): NodeReplicationRow => {
            logger.warn({ peer: peerName(peer), err: error }, 'replication status: a peer did not answer');
            return { node: peerName(peer), error: error instanceof Error ? error.message : String(error) };
          },
        ),
      );
      const nodes = await Promise.all([own, ...others]);
      return { targets: summed(nodes), resyncs: nodes.flatMap((row) => (row.resyncs ?? []).map((resync) => ({ ...resync, node: row.node }))), nodes };
    },
    resync: async (bucket, bucketArn) => {
      if (links.isLeader || !links.leader) return here().resync(bucket, bucketArn);
      const answer = await askPeer(links.leader, 'replication-resync', { bucket, ...(bucketArn !== undefined ? { bucketArn } : {}) }, links.rpc);
      return answer.resyncs;
    },
  };
  return {
    admin,
    peerHandlers: {
      'replication-status': async (request): Promise<NodeReplicationStatus> => here().status(request.bucket),
      'replication-resync': async (request) => ({ resyncs: await here().resync(request.bucket, request.bucketArn) }),
    },
  };
}

/** Each target's figures summed over the nodes that answered: counts added, the oldest task the oldest anywhere, the last error any node has. */
function summed(nodes: NodeReplicationRow[]): TargetReplicationStatus[] {
  const byArn = new Map<string, TargetReplicationStatus>();
  for (const target of nodes.flatMap((row) => row.targets ?? [])) {
    const sum = byArn.get(target.arn);
    if (!sum) {
      byArn.set(target.arn, { ...target });
      continue;
    }
    for (const field of ['depth', 'sent', 'failed', 'dropped', 'quarantined', 'completed', 'sentBytes', 'unsupported'] as const) sum[field] += target[field];
    if (target.oldestQueuedMs !== undefined) sum.oldestQueuedMs = Math.min(sum.oldestQueuedMs ?? Infinity, target.oldestQueuedMs);
    if (sum.lastError === undefined && target.lastError !== undefined) sum.lastError = target.lastError;
  }
  return [...byArn.values()];
}
