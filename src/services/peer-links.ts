/**
 * How the admin services reach the other nodes: the deployment's nodes in launch order, the
 * peers (every node but this one), the leader (the node holding the first endpoint), the options
 * of a peer call, and change notices sent to every peer whose failures are logged by name.
 *
 * The timeouts of the notices and the followers' cadence are in util/limits.ts.
 */
import type { Logger } from 'pino';
import type { ServerConfig } from '../cluster/server-config.js';
import type { OwnEndpointTest } from '../cluster/own-endpoints.js';
import type { Endpoint } from '../cluster/endpoints.js';
import type { Peer, PeerCallObserver, PeerCallOptions } from '../cluster/peer-client.js';
import { askPeer, type PeerOperation, type PeerRequest } from '../ops/peer-protocol.js';
import { limits } from '../util/limits.js';

type UrlEndpoint = Extract<Endpoint, { kind: 'url' }>;

export interface PeerLinks {
  /** One URL endpoint per node (distinct host:port), in launch order: the same list on every node. */
  nodes: UrlEndpoint[];
  /** This node's index in `nodes` (-1 for a single-node deployment of local paths). */
  ownNode: number;
  /** Every other node. */
  peers: Peer[];
  /** The node holding the deployment's first endpoint (undefined when it is a local path). */
  leader: Peer | undefined;
  /** Whether this node is the leader. */
  isLeader: boolean;
  rpc: PeerCallOptions;
  /** Sends `op` to every peer; resolves with the peers that failed (each failure logged with `what`). */
  notifyAll<Op extends PeerOperation>(op: Op, body: PeerRequest<Op>, timeoutMs: number, what: string): Promise<string[]>;
}

export function createPeerLinks(options: { config: ServerConfig; isOwn: OwnEndpointTest; isLeader: boolean; rpcKey: Buffer; launchHash: string; onPeerCall?: PeerCallObserver; logger: Logger }): PeerLinks {
  const { config, isOwn, logger } = options;
  const nodes = nodeEndpointsOf(config);
  const peers = peersOf(config, isOwn);
  const rpc: PeerCallOptions = { rpcKey: options.rpcKey, launchHash: options.launchHash, ...(options.onPeerCall ? { onCall: options.onPeerCall } : {}) };
  return {
    nodes,
    ownNode: nodes.findIndex((endpoint) => isOwn(endpoint)),
    peers,
    leader: leaderOf(config),
    isLeader: options.isLeader,
    rpc,
    notifyAll: async (op, body, timeoutMs, what) => {
      const failed = await Promise.all(
        peers.map((peer) =>
          askPeer(peer, op, body, { ...rpc, timeoutMs }).then(
            () => undefined,
            (error: unknown) => {
              const name = `${peer.host}:${peer.port}`;
              logger.warn({ peer: name, operation: op, err: error }, `${what}: a peer was not told`);
              return name;
            },
          ),
        ),
      );
      return failed.filter((peer): peer is string => peer !== undefined);
    },
  };
}

/** One URL endpoint per node (distinct host:port), in launch order. */
export function nodeEndpointsOf(config: ServerConfig): UrlEndpoint[] {
  const nodes = new Map<string, UrlEndpoint>();
  for (const endpoint of config.layout.pools.flatMap((pool) => pool.endpoints)) {
    if (endpoint.kind === 'url' && !nodes.has(`${endpoint.host}:${endpoint.port}`)) nodes.set(`${endpoint.host}:${endpoint.port}`, endpoint);
  }
  return [...nodes.values()];
}

/** Every other node of the deployment (distinct host:port of URL endpoints that are not ours). */
export function peersOf(config: ServerConfig, isOwn: OwnEndpointTest): Peer[] {
  return nodeEndpointsOf(config)
    .filter((endpoint) => !isOwn(endpoint))
    .map((endpoint) => ({ host: endpoint.host, port: endpoint.port }));
}

function leaderOf(config: ServerConfig): Peer | undefined {
  const first = config.layout.pools[0]!.endpoints[0]!;
  return first.kind === 'url' ? { host: first.host, port: first.port } : undefined;
}

export function hostOfEndpoint(endpoint: string): string {
  return /^https?:\/\//.test(endpoint) ? new URL(endpoint).host : 'local';
}

/** A timer that runs `tick` every `intervalMs` once started, never overlapping itself, until stopped; a failed tick is logged as `what`. */
export function followTimer(intervalMs: number, what: string, tick: () => Promise<unknown>, logger: Logger): { start(): void; stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  return {
    start: () => {
      timer ??= setInterval(() => {
        if (running) return;
        running = true;
        tick()
          .catch((error: unknown) => logger.warn({ err: error }, `${what} failed`))
          .finally(() => (running = false));
      }, intervalMs);
      timer.unref();
    },
    stop: () => {
      clearInterval(timer);
      timer = undefined;
    },
  };
}

/**
 * A service around a manager the leader runs (decommission, rebalance): on a node that is not the
 * leader, its state file is reread every limits.leaderFollowIntervalMs; `close` stops that, then the manager.
 */
export function leaderRunService<Manager extends { reload(): Promise<unknown>; close(): Promise<void> }, Parts extends object>(
  links: PeerLinks,
  manager: Manager,
  stateFile: string,
  logger: Logger,
  parts: Parts,
): Parts & { manager: Manager; close(): Promise<void> } {
  const follower = followTimer(limits.leaderFollowIntervalMs, `following the leader's ${stateFile}`, () => manager.reload(), logger);
  if (!links.isLeader) follower.start();
  return {
    ...parts,
    manager,
    close: async () => {
      follower.stop();
      await manager.close();
    },
  };
}
