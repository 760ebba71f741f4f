/**
 * Heal on a running node: its heal manager (ops/heal.ts), and heal sequences by client token. A
 * token names the node that runs its sequence (`<id>@<node index>` in a deployment of several
 * nodes): asked elsewhere, the call goes to that node.
 */
import type { Logger } from 'pino';
import type { ServerConfig } from '../cluster/server-config.js';
import type { StartedStorage } from '../cluster/startup.js';
import { HealManager, type HealPath, type HealSequenceStatus } from '../ops/heal.js';
import { askPeer, type PeerHandlerTable } from '../ops/peer-protocol.js';
import { SvcError } from '../errors/index.js';
import type { StateFileQuarantine } from '../cluster/state-quarantine.js';
import type { PeerLinks } from './peer-links.js';

export interface HealService {
  manager: HealManager;
  /** A heal by client token: here, or on the node its token names. */
  sequence(clientToken: string, path: HealPath, stop: boolean): Promise<HealSequenceStatus>;
  peerHandlers: Pick<PeerHandlerTable, 'heal-sequence'>;
  close(): Promise<void>;
}

export async function createHealService(options: { config: ServerConfig; storage: StartedStorage; links: PeerLinks; logger: Logger; quarantine: StateFileQuarantine }): Promise<HealService> {
  const { config, storage, links, logger } = options;
  const { nodes, ownNode } = links;
  const manager = new HealManager({ storage, nodeName: `${config.address.host}-${config.address.port}`, ...(nodes.length > 1 && ownNode >= 0 ? { tokenSuffix: `@${ownNode}` } : {}), nowMs: () => Date.now(), logger, quarantine: options.quarantine, ...(config.driveDeadlineMs > 0 ? { uploadSettleMs: config.driveDeadlineMs } : {}), readRepair: config.readRepair });
  await manager.start();
  const sequence = async (clientToken: string, path: HealPath, stop: boolean): Promise<HealSequenceStatus> => {
    const owner = /@(\d+)$/.exec(clientToken);
    if (!owner || Number(owner[1]) === ownNode) return manager.sequenceFor(clientToken, path, stop);
    const node = nodes[Number(owner[1])];
    if (!node) throw new SvcError('NoSuchHealSequence', undefined, { clientToken });
    return askPeer({ host: node.host, port: node.port }, 'heal-sequence', { clientToken, path, stop }, links.rpc);
  };
  return {
    manager,
    sequence,
    peerHandlers: { 'heal-sequence': async ({ clientToken, path, stop }) => manager.sequenceFor(clientToken, path, stop) },
    close: () => manager.close(),
  };
}
