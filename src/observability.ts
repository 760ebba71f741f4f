/**
 * Logs, metrics and the start-up banner, wired for the composition root (main.ts).
 *
 * Logs: pino; JSON lines when stdout is not a terminal or SVC_OBS_LOG_FORMAT=json, pino's pretty
 * printer on a terminal (or with SVC_OBS_LOG_FORMAT=pretty); a log directory always gets JSON.
 * Metrics: one NodeMetrics per process, fed by instrumented drives and the S3 listener's hook,
 * served by the metrics plugin; the cluster view asks every peer for its own view over RPC.
 */
import { mkdirSync } from 'node:fs';
import { hostname, networkInterfaces } from 'node:os';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { Drive } from './drive/index.js';
import type { ServerConfig } from './cluster/server-config.js';
import type { StartedStorage } from './cluster/startup.js';
import type { OwnEndpointTest } from './cluster/own-endpoints.js';
import { describeLayout } from './cluster/layout.js';
import type { PeerCallObserver } from './cluster/peer-client.js';
import { hostOfEndpoint, peersOf } from './services/peer-links.js';
import type { AdminServices } from './services/admin-services.js';
import { NodeMetrics } from './api/metrics/node-metrics.js';
import { latencyBucketsSeconds } from './api/metrics/families.js';
import { MetricsHistoryRecorder, mergeHistories } from './api/metrics/history.js';
import type { MetricsHistory } from './contracts/metrics-history.js';
import type { SlotView } from './api/metrics/state.js';
import type { MetricsPluginOptions } from './api/metrics/metrics-plugin.js';
import { askPeer, type ObservabilityOperation, type PeerHandlerTable } from './ops/peer-protocol.js';
import { metricsKeyFor } from './util/metrics-token.js';
import { holdsAction } from './iam/index.js';
import { SvcError } from './errors/index.js';
import type { IamStore } from './ops/iam-store.js';
import type { MetricsAuth } from './api/metrics/metrics-plugin.js';
import { limits } from './util/limits.js';
import { packageVersion } from './util/version.js';

/** Pretty lines for people, JSON for machines: the format the configuration and the terminal call for. */
export function logsArePretty(config: Pick<ServerConfig, 'logFormat'>, stdoutIsTerminal: boolean): boolean {
  return config.logFormat === 'pretty' || (config.logFormat === 'auto' && stdoutIsTerminal);
}

export function createLogger(config: Pick<ServerConfig, 'logLevel' | 'logDirectory' | 'logFormat'>, stdoutIsTerminal = process.stdout.isTTY === true): Logger {
  const options = { level: config.logLevel, base: { service: 'svc' } };
  if (config.logDirectory) {
    mkdirSync(config.logDirectory, { recursive: true });
    return pino(options, pino.destination({ dest: join(config.logDirectory, 'svc.log'), sync: false }));
  }
  if (!logsArePretty(config, stdoutIsTerminal)) return pino(options);
  return pino(options, pretty({ colorize: stdoutIsTerminal, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service', singleLine: true, sync: true }));
}

/** This node's name in the cluster view: its listen address, with the host name for a wildcard. */
export function nodeName(config: Pick<ServerConfig, 'address'>): string {
  const host = ['0.0.0.0', '::'].includes(config.address.host) ? hostname() : config.address.host;
  return `${host.includes(':') ? `[${host}]` : host}:${config.address.port}`;
}

export interface Observability {
  metrics: NodeMetrics;
  /** Wraps a drive as it is opened: local drives feed the drive families, remote ones the RPC families. */
  instrument(drive: Drive, local: boolean): Drive;
  pluginOptions: MetricsPluginOptions;
  /** Peer RPC calls (admin forwarding, notices, the cluster view) feed the internode families. */
  observePeerCall: PeerCallObserver;
  /** This node's part of the peer handler table: its metrics and their recent history. */
  peerHandlers: Pick<PeerHandlerTable, ObservabilityOperation>;
  /** The last hour of this node's metrics, or the cluster's (every peer's added up). */
  metricsHistory(scope: 'node' | 'cluster'): Promise<MetricsHistory>;
  close(): void;
}

export function createObservability(options: {
  config: ServerConfig;
  isOwn: OwnEndpointTest;
  rpcKey: Buffer;
  launchHash: string;
  storage: () => StartedStorage | undefined;
  admin: () => AdminServices | undefined;
}): Observability {
  const { config } = options;
  const startedAtMs = Date.now();
  const metrics = new NodeMetrics({
    slots: () => slotViews(config, options.isOwn, options.storage()),
    setDriveCount: (pool) => config.layout.pools[pool]!.setDriveCount,
    standardParity: (pool) => options.storage()?.storageClass.standardParity(pool) ?? config.storageClass.standardParity(pool),
    heal: () => options.admin()?.heal,
    rebalance: () => options.admin()?.rebalance.status(),
    decommission: () => options.admin()?.decommission.status(),
    usage: () => options.admin()?.usage,
    startedAtMs,
    version: packageVersion(),
  });
  const peers = peersOf(config, options.isOwn);
  const historyShape = { intervalMs: limits.metricsHistoryIntervalMs, latencyBoundsSeconds: latencyBucketsSeconds, capacity: limits.metricsHistorySamples };
  const history = new MetricsHistoryRecorder({ ...historyShape, families: metrics.families, heal: () => options.admin()?.heal, nowMs: () => Date.now(), node: nodeName(config) });
  history.start();
  const observePeerCall: PeerCallObserver = (peer, durationSeconds, failed) => metrics.observeInternodeCall(peer, durationSeconds, failed);
  const rpc = { rpcKey: options.rpcKey, launchHash: options.launchHash, timeoutMs: limits.metricsPeerTimeoutMs, onCall: observePeerCall };
  return {
    metrics,
    observePeerCall,
    instrument: (drive, local) => (local ? metrics.instrumentLocalDrive(drive) : metrics.instrumentRemoteDrive(drive, hostOfEndpoint(drive.endpoint))),
    pluginOptions: {
      metrics,
      auth: config.prometheusAuthType === 'public' ? { type: 'public' } : metricsTokenAuth(config, () => options.admin()?.iam),
      server: nodeName(config),
      nowMs: () => Date.now(),
      peerExpositions: () =>
        Promise.all(
          peers.map(async (peer) => {
            // a failed call is counted by observePeerCall (svc_internode_*), and the scrape shows the peer without text
            const answer = await askPeer(peer, 'metrics', {}, rpc).catch(() => undefined);
            return { server: `${peer.host}:${peer.port}`, text: answer?.text };
          }),
        ),
    },
    peerHandlers: { metrics: async () => ({ text: await metrics.render() }), 'metrics-history': async () => history.history() },
    metricsHistory: async (scope) => {
      if (scope === 'node' || peers.length === 0) return history.history();
      const answers = await Promise.all(peers.map(async (peer) => ({ node: `${peer.host}:${peer.port}`, history: await askPeer(peer, 'metrics-history', {}, rpc).catch(() => undefined) })));
      return mergeHistories([{ node: nodeName(config), history: history.history() }, ...answers], historyShape);
    },
    close: () => history.close(),
  };
}

/** Every slot of every pool, with the drive its set uses now. */
function slotViews(config: ServerConfig, isOwn: OwnEndpointTest, storage: StartedStorage | undefined): SlotView[] {
  if (!storage) return [];
  return config.layout.pools.flatMap((pool) =>
    pool.endpoints.map((endpoint, index) => {
      const set = Math.floor(index / pool.setDriveCount);
      const slot = index % pool.setDriveCount;
      const inSet = storage.setDrives[pool.index]?.[set]?.[slot];
      return {
        pool: pool.index,
        set,
        slot,
        endpoint: endpoint.raw,
        local: endpoint.kind === 'local' || isOwn(endpoint),
        // A drive still waiting to join its set (drive monitor) is not online yet.
        drive: inSet,
      };
    }),
  );
}

/** URLs a client on this machine (and, for a wildcard address, on the network) can use. */
export function listenUrls(address: { host: string; port: number }): string[] {
  if (!['0.0.0.0', '::'].includes(address.host)) return [`http://${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}`];
  const external = Object.values(networkInterfaces())
    .flat()
    .filter((entry) => entry !== undefined && entry.family === 'IPv4' && !entry.internal)
    .map((entry) => `http://${entry!.address}:${address.port}`);
  return [`http://127.0.0.1:${address.port}`, ...external.slice(0, 3)];
}

/** The start-up banner: where to point clients, with which credentials, on which layout, and what to try. */
export function startupBanner(config: ServerConfig, storage: StartedStorage): string {
  const [s3Url, ...otherUrls] = listenUrls(config.address);
  const secret = config.credentialsFromDefault ? config.secretKey : '<your SVC_SECRET_KEY>';
  const parities = config.layout.pools.map((pool) => ({ standard: storage.storageClass.standardParity(pool.index), rrs: storage.storageClass.rrsParity(pool.index) }));
  const lines = [
    `svc ${packageVersion()} is ready`,
    '',
    `  S3 API      ${s3Url}${otherUrls.length > 0 ? `  (also ${otherUrls.join(', ')})` : ''}`,
    `  Console     ${config.consoleEnabled ? `${listenUrls(config.consoleAddress)[0]}/svc/console/` : 'disabled (SVC_CONSOLE_ENABLE=false)'}`,
    `  Access key  ${config.accessKey}`,
    config.credentialsFromDefault ? `  Secret key  ${config.secretKey}   (the development default: set SVC_ACCESS_KEY and SVC_SECRET_KEY before storing real data)` : '  Secret key  (from SVC_SECRET_KEY, not shown)',
    `  Metrics     ${s3Url}/svc/metrics/cluster`,
    '',
    ...describeLayout(config.layout, parities).split('\n').map((line) => `  ${line}`),
    '',
    '  Next:',
    `    rc alias set local ${s3Url} ${config.accessKey} ${secret}`,
    '    rc admin info cluster local',
    `    AWS_ACCESS_KEY_ID=${config.accessKey} AWS_SECRET_ACCESS_KEY=${secret} aws --endpoint-url ${s3Url} s3 ls`,
    '    rc admin prometheus generate local   (a token and scrape configuration for Prometheus)',
  ];
  return `${lines.join('\n')}\n`;
}

/** Metrics tokens of root, or of a user (its own secret signs them) whose policies hold the metrics action. */
function metricsTokenAuth(config: ServerConfig, iam: () => IamStore | undefined): MetricsAuth {
  const rootKey = metricsKeyFor(config.accessKey, config.secretKey);
  return {
    type: 'jwt',
    keyFor: (accessKey) => {
      if (accessKey === config.accessKey) return rootKey;
      const secret = iam()?.userInfo(accessKey) ? iam()?.secretFor(accessKey) : undefined;
      return secret === undefined ? undefined : metricsKeyFor(accessKey, secret);
    },
    requireAction: (accessKey, action) => {
      if (accessKey === config.accessKey) return;
      const principal = iam()?.resolve(accessKey)?.principal;
      if (!principal || !holdsAction(principal, action)) throw new SvcError('AccessDenied', `Access Denied: no policy allows user ${accessKey} ${action}.`, { action });
    },
  };
}
