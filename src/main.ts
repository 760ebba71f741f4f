/**
 * The composition root: reads configuration, opens drives, reaches format quorum, builds the
 * object layer and the HTTP listeners, and owns the process lifecycle. Startup order (SPEC):
 * storage-class validation, local disks, lock clients, format quorum.
 */
import { join } from 'node:path';
import { createHash, randomUUID } from 'node:crypto';
import { withDeadlines } from './drive/deadline-drive.js';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { Drive } from './drive/index.js';
import { LocalNamespaceLocker, mainThreadCoding, WorkerCoding, type BlockCoding, type NamespaceLocker } from './object/index.js';
import { LockTable } from './cluster/lock-table.js';
import { DistributedNamespaceLocker, type LockServer } from './cluster/distributed-locker.js';
import { remoteLockServer, type RemoteLockServerOptions } from './cluster/remote-lock-server.js';
import { lockRpcPlugin } from './api/rpc/lock-rpc-plugin.js';
import { rpcStreamPlugin } from './api/rpc/rpc-stream-plugin.js';
import { readServerConfig, type RequestTimeouts, type ServerConfig } from './cluster/server-config.js';
import { createServer, type RequestListener, type Server } from 'node:http';
import { limits } from './util/limits.js';
import { startStorage, type StartedStorage } from './cluster/startup.js';
import { describeLayout } from './cluster/layout.js';
import { configWarnings, redundancyWarnings } from './cluster/launch-plan.js';
import type { Endpoint } from './cluster/endpoints.js';
import type { ResolvedStorageClass } from './cluster/storage-class-config.js';
import { ownEndpointTest, type OwnEndpointTest } from './cluster/own-endpoints.js';
import { staticCredentials } from './api/s3/auth/sigv4.js';
import type { S3Context } from './api/s3/context.js';
import type { Kms } from './ops/kms/kms.js';
import { createKms } from './services/kms-service.js';
import { createTierService, type TierService } from './services/tier-service.js';
import { driveRpcPlugin } from './api/rpc/drive-rpc-plugin.js';
import { rpcKeyFor } from './transport/rpc-token.js';
import { Transport } from './transport/transport.js';
import { askPeer, type ConsoleOperation, type ObservabilityOperation, type PeerHandlerTable } from './ops/peer-protocol.js';
import { peersOf } from './services/peer-links.js';
import { RevokedSessions } from './console/request-state.js';
import { SvcError } from './errors/index.js';
import { createRemoteDrive } from '../backends/remote/remote-drive.js';
import { answerS3FrameworkError, s3ClientErrorHandler, s3Plugin } from './api/s3/s3-plugin.js';
import { adminPlugin, adminPrefix, answerAdminFrameworkError } from './api/admin/admin-plugin.js';
import { clientErrorHandler, frameworkErrorOf } from './api/listener-errors.js';
import { schemaValidatorOptions } from './api/admin/route-schema.js';
import { peerRpcPlugin } from './api/rpc/peer-rpc-plugin.js';
import { createAdminServices, type AdminServices } from './services/admin-services.js';
import type { AdminContext } from './api/admin/context.js';
import { consoleHealthPlugin, healthPlugin, type HealthState } from './api/health.js';
import { OffsetClock, systemClock, systemTimers } from './util/clock.js';
import { AuditLog } from './ops/audit.js';
import { installAudit } from './api/audit-facts.js';
import { accessLoggingSettings, startAccessLogging } from './access-logging.js';
import type { AccessLogDelivery } from './ops/access-log/delivery.js';
import { WebIdentityVerifier } from './ops/web-identity.js';
import type { IamStore } from './ops/iam-store.js';
import type { StsService } from './api/sts/sts.js';
import { answerConsoleFrameworkError, consoleClientErrorBody, consolePlugin } from './console/console-plugin.js';
import { loadConsoleAssets } from './console/assets.js';
import { SessionSealer } from './console/session.js';
import type { ConsoleContext } from './console/context.js';
import { OpenIdSignIn } from './console/openid.js';
import { createFsDrive } from '../backends/fs/fs-drive.js';
import { acquireOwnershipLock, type OwnershipLock } from '../backends/fs/ownership-lock.js';
import { createFaultyDrive, parseFaultOptions, type FaultyDrive } from '../fault-injection/faulty-drive.js';
import { createLogger, createObservability, logsArePretty, nodeName, startupBanner, type Observability } from './observability.js';
import { metricsPlugin } from './api/metrics/metrics-plugin.js';
import { installS3RequestMetrics } from './api/metrics/request-metrics.js';
import { openEvents } from './cli/events-wiring.js';
import { registerEventMetrics } from './api/metrics/event-metrics.js';
import type { EventNotifier } from './ops/events/notifier.js';
import { openReplication } from './cli/replication-wiring.js';
import { registerReplicationMetrics } from './api/metrics/replication-metrics.js';
import { registerTierMetrics } from './api/metrics/tier-metrics.js';
import { registerErasureMetrics } from './api/metrics/erasure-metrics.js';
import { ShardReadStats } from './object/shard-hedge.js';
import type { Replicator } from './ops/replication/replicator.js';

export { createLogger } from './observability.js';

export interface RunningServer {
  config: ServerConfig;
  storage: StartedStorage;
  s3: FastifyInstance;
  console?: FastifyInstance;
  logger: Logger;
  /** Every audited request of this node (SIGHUP reopens its file). */
  audit: AuditLog;
  /** Bucket notifications: this node's event targets, their queues and live listeners. */
  events: EventNotifier;
  stop(): Promise<void>;
}

/** What a process embedding the server (a test, the chaos harness) may supply in place of the defaults. */
export interface ServerHooks {
  /** Opens a local endpoint's drive in place of the configured backend (the power-cut scenario's drives). */
  localDrive?: (endpoint: Endpoint) => Drive;
  /** Ids for a new deployment, versions and data dirs (seeded by the chaos harness, so a seed replays them). */
  newId?: () => string;
  /** Wraps each peer's drive as this node reaches it over RPC (the power-cut cluster scenario silences a node that lost power). */
  peerDrive?: (drive: Drive) => Drive;
}

export async function startServer(args: string[], env: Record<string, string | undefined>, logger?: Logger, hooks: ServerHooks = {}): Promise<RunningServer> {
  const config = readServerConfig(args, env);
  const log = logger ?? createLogger(config);
  announce(config, log);
  const rpcKey = rpcKeyFor(config.accessKey, config.secretKey);
  const launchHash = launchHashOf(config);
  // The node's internode streams, tokens, keep-alive connections and buffers: one per server.
  const transport = new Transport();
  const isOwn = await ownEndpointTest(config.address, config.layout.pools.flatMap((pool) => pool.endpoints));
  let storage: StartedStorage | undefined;
  let admin: AdminServices | undefined;
  let kms: Kms | undefined;
  let replicator: Replicator | undefined;
  let tiers: TierService | undefined;
  // Judges session, web identity and service account expiry; tests move it (fault-injection mode only).
  const identityClock = new OffsetClock();
  const observability = createObservability({ config, isOwn, rpcKey, launchHash, storage: () => storage, admin: () => admin });
  const { drives, locks, localByPath, localDrives, holdsFirstEndpoint } = await openDrives(config, isOwn, { rpcKey, launchHash, transport }, log, observability, hooks);
  const audit = await openAudit(config, isOwn, log).catch(async (error: unknown) => {
    await Promise.all(locks.map((lock) => lock.release()));
    throw error;
  });
  const events = await openEvents(config, env, isOwn, log, () => storage).catch(async (error: unknown) => {
    await audit.close();
    await Promise.all(locks.map((lock) => lock.release()));
    throw error;
  });
  registerEventMetrics(observability.metrics.registry, () => events.status(), () => Date.now());
  registerReplicationMetrics(observability.metrics.registry, () => replicator?.queueStats() ?? []);
  registerTierMetrics(observability.metrics.registry, () => tiers?.tiers.allDeletionStats() ?? []);
  const shardReads = new ShardReadStats();
  registerErasureMetrics(observability.metrics.registry, () => shardReads);
  const lockTable = new LockTable(systemClock);
  // Console sessions signed out here or on another node: the console refuses them, the peer protocol takes the others' announcements.
  const consoleRevoked = new RevokedSessions(() => Date.now());
  const consolePeerHandlers: Pick<PeerHandlerTable, ConsoleOperation> = {
    'console-session-ended': async ({ sessionId, untilMs }) => {
      consoleRevoked.revokeId(sessionId, untilMs);
      return { revoked: true };
    },
  };
  const locker = makeLocker(config, isOwn, lockTable, { rpcKey, launchHash, transport, onCall: (peer, seconds, failed) => observability.metrics.observeInternodeCall(peer, seconds, failed) }, log);
  const coding: BlockCoding = config.codingThreads > 0 ? new WorkerCoding(config.codingThreads, log) : mainThreadCoding;
  let stopping = false;
  const state: HealthState = { ready: () => storage !== undefined, stopping: () => stopping };
  const context: S3Context = {
    get objects() {
      if (!storage) throw new SvcError('SlowDown', 'the server is still starting (waiting for format quorum)');
      return storage.objects;
    },
    region: 'us-east-1',
    nowMs: () => Date.now(),
    events,
    encryption: { kms: () => kms, allowInsecureSsec: config.kms.allowInsecureSsec },
    compression: config.compression,
    tiers: () => tiers?.tiers,
    ownerId: config.accessKey,
  };
  // The listener starts before format quorum: peers read this node's drives over RPC meanwhile.
  const reservedPrefixes = ['/health', '/svc/'];
  let accessLog: AccessLogDelivery | undefined;
  const s3 = await listen(config.address, config.requestTimeouts, s3ListenerAnswers(config.requestTimeouts), async (app) => {
    installAudit(app, audit, 's3');
    accessLog = startAccessLogging(app, {
      settings: accessLoggingSettings(env, firstLocalDrivePath(config, isOwn)),
      node: nodeName(config),
      region: context.region,
      ownerId: config.accessKey,
      virtualHostSuffixes: config.domains,
      objects: () => context.objects,
      logger: log,
    });
    installS3RequestMetrics(app, { metrics: observability.metrics, reservedPrefixes, virtualHostSuffixes: config.domains, logger: log });
    await app.register(healthPlugin, { state });
    await app.register(metricsPlugin, observability.pluginOptions);
    await app.register(driveRpcPlugin, { rpcKey, launchHash, driveFor: (path) => localByPath.get(path), nowMs: () => Date.now() });
    await app.register(lockRpcPlugin, { rpcKey, launchHash, table: lockTable, nowMs: () => Date.now() });
    await app.register(rpcStreamPlugin, { rpcKey, launchHash, table: lockTable, driveFor: (path) => localByPath.get(path), buffers: transport.buffers, nowMs: () => Date.now(), observe: (service) => observability.metrics.observeInternodeRequest(service) });
    await app.register(peerRpcPlugin, { rpcKey, launchHash, nowMs: () => Date.now(), handlers: () => ({ ...(admin?.peerHandlers ?? startingPeerHandlers), ...observability.peerHandlers, ...consolePeerHandlers }) });
    // Root keys, then the users of iam.bin (known once storage is up); every request is authorised against their policies.
    const credentials = { secretFor: (id: string, token?: string) => (id === config.accessKey && token === undefined ? config.secretKey : admin?.iam.secretFor(id, token)) };
    const access = { rootAccessKey: config.accessKey, principalOf: (id: string, token?: string) => admin?.iam.resolve(id, token)?.principal };
    await app.register(adminPlugin, {
      context: () => {
        if (!admin) throw new SvcError('SlowDown', 'the server is still starting (waiting for format quorum)');
        return admin.context;
      },
      credentials,
      access,
      objects: context,
      logger: log,
    });
    const sts = stsService(config, identityClock, () => {
      if (!admin) throw new SvcError('SlowDown', 'the server is still starting (waiting for format quorum)');
      return admin.iam;
    });
    await app.register(s3Plugin, { context, credentials, access, sts, reservedPrefixes, virtualHostSuffixes: config.domains, logger: log, bodyIdleTimeoutMs: config.requestTimeouts.bodyIdleMs, signatureV2: config.signatureV2 });
  });
  try {
    const ready = await startStorage(config, drives, { locker, clock: systemClock, logger: log, mayFormat: holdsFirstEndpoint, isLocal: (drive) => localDrives.has(drive), coding, shardReads, ...(hooks.newId ? { newId: hooks.newId } : {}) });
    kms = await createKms({ config, storage: ready, locker });
    replicator = await openReplication({ config, env, storage: ready, localDrivePath: firstLocalDrivePath(config, isOwn), locker, logger: log, events, kms: () => kms });
    context.replication = replicator;
    tiers = await createTierService({ config, storage: ready, localDrivePath: firstLocalDrivePath(config, isOwn), locker, logger: log });
    admin = await createAdminServices({
      config,
      ...(kms ? { kms } : {}),
      storage: ready,
      identityClock,
      isOwn,
      leader: holdsFirstEndpoint,
      rpcKey,
      launchHash,
      logger: log,
      onPeerCall: observability.observePeerCall,
      metricsHistory: observability.metricsHistory,
      locker,
      ...(config.faultInjection ? { faults: faultControl(localByPath, identityClock) } : {}),
      events,
      replication: replicator,
      tiers,
    });
    storage = ready;
  } catch (error) {
    await s3.close();
    await tiers?.close();
    await replicator?.close();
    await events.close();
    await accessLog?.close();
    await audit.close();
    await coding.close();
    transport.close();
    await Promise.all(locks.map((lock) => lock.release()));
    throw error;
  }
  const started = storage;
  warnAboutRedundancy(config, started.storageClass, log);
  log.info({ deploymentId: started.deploymentId, coding: coding.name, layout: describeLayout(config.layout, config.layout.pools.map((pool) => ({ standard: started.storageClass.standardParity(pool.index), rrs: started.storageClass.rrsParity(pool.index) }))) }, 'storage ready');
  const consoleApp = config.consoleEnabled
    ? await listen(config.consoleAddress, config.requestTimeouts, consoleListenerAnswers, async (app) => {
        installAudit(app, audit, 'console');
        await app.register(consoleHealthPlugin, { state });
        await app.register(consolePlugin, consoleOptions(config, env, { storage: started, admin: () => admin!, audit, s3: context, revoked: consoleRevoked, announceSessionEnded: sessionEndAnnouncer(config, isOwn, { rpcKey, launchHash }, log) }, log));
      })
    : undefined;
  log.info({ s3: config.address, console: config.consoleEnabled ? config.consoleAddress : 'disabled' }, 'listening');
  if (process.stdout.isTTY === true && logsArePretty(config, true)) process.stdout.write(`\n${startupBanner(config, started)}\n`);
  return {
    config,
    storage: started,
    s3,
    ...(consoleApp ? { console: consoleApp } : {}),
    logger: log,
    audit,
    events,
    stop: async () => {
      stopping = true;
      started.stop();
      await admin?.close();
      await tiers?.close();
      await Promise.all([s3.close(), consoleApp?.close()]);
      await replicator?.close();
      await events.close();
      await accessLog?.close();
      await audit.close();
      await started.markShutdownClean();
      await coding.close();
      await Promise.all(drives.flat().map((drive) => drive?.close()));
      observability.close();
      transport.close();
      await Promise.all(locks.map((lock) => lock.release()));
      log.info({}, 'stopped cleanly');
    },
  };
}

/**
 * The HTTP server under a listener, with the header and whole-request timeouts (a client past
 * either gets 400 RequestTimeout from the listener's client error handler and the connection closes); the body
 * idle timeout is the S3 plugin's, which knows when it is waiting for the client.
 */
function createHttpServer(timeouts: RequestTimeouts, keepAliveTimeoutMs: number, handler: RequestListener): Server {
  const shortestMs = Math.min(limits.connectionCheckIntervalMs * 4, ...[timeouts.headersMs, timeouts.wholeMs].filter((ms) => ms > 0));
  const server = createServer(
    {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.wholeMs,
      // Timeouts are checked this often: a quarter of the shortest, so they fire within 25% late.
      connectionsCheckingInterval: Math.max(10, Math.ceil(shortestMs / 4)),
      keepAliveTimeout: keepAliveTimeoutMs,
    },
    handler,
  );
  // An Expect value other than 100-continue is served as if absent, as S3 does (Node would answer
  // 417 Expectation Failed on its own).
  server.on('checkExpectation', handler);
  return server;
}

/** STS on the S3 listener: AssumeRole through the IAM store; AssumeRoleWithWebIdentity verifies the token with the console's OpenID provider first. */
function stsService(config: ServerConfig, identityClock: OffsetClock, iam: () => IamStore): StsService {
  const webIdentity = config.openId ? new WebIdentityVerifier(config.openId, () => identityClock.nowMs()) : undefined;
  return {
    assumeRole: (caller, request) => iam().assumeRole(caller, request),
    assumeRoleWithWebIdentity: async (token, request) => {
      if (!webIdentity) throw new SvcError('IDPCommunicationError', 'web identities are not configured on this deployment (SVC_IDENTITY_OPENID_CONFIG_URL is not set)');
      const identity = await webIdentity.verify(token);
      return { ...iam().assumeRoleWithWebIdentity(identity, request), subject: identity.subject };
    },
  };
}

/** The web console: the same object layer and admin services as the S3 and admin APIs. */
function consoleOptions(
  config: ServerConfig,
  env: Record<string, string | undefined>,
  services: { storage: StartedStorage; admin: () => AdminServices; audit: AuditLog; s3: S3Context; revoked: RevokedSessions; announceSessionEnded: ConsoleContext['announceSessionEnded'] },
  log: Logger,
): Parameters<typeof consolePlugin>[1] {
  const { storage, admin } = services;
  const credentials = { accessKey: config.accessKey, secretKey: config.secretKey };
  const assets = loadConsoleAssets();
  if (!assets.directory) log.warn({}, 'the console is not built (no dist/console-ui): run `npm run build`');
  return {
    context: {
      objects: () => storage.objects,
      admin: () => admin().context,
      iam: () => admin().iam,
      sealer: new SessionSealer(credentials, { idleMs: config.consoleSessionIdleMs, maxMs: config.consoleSessionMaxMs }),
      ...(config.openId ? { openId: startOpenId(config.openId, log) } : {}),
      ...(config.serverUrl ? { serverUrl: config.serverUrl } : {}),
      s3Port: config.address.port,
      credentials,
      launchEnv: env,
      audit: services.audit,
      nowMs: () => Date.now(),
      s3: () => services.s3,
      ...(services.announceSessionEnded ? { announceSessionEnded: services.announceSessionEnded } : {}),
      logger: log,
    },
    revoked: services.revoked,
    assets,
    trustedProxies: config.consoleTrustedProxies,
    bodyIdleTimeoutMs: config.requestTimeouts.bodyIdleMs,
  };
}

/**
 * A console session signed out or ended on this node, told to every other node before the answer
 * (each refuses the cookie from then on); a node that does not answer within the change-notice
 * timeout is logged by name and refuses the session only at its expiry. Undefined on one node.
 */
function sessionEndAnnouncer(config: ServerConfig, isOwn: OwnEndpointTest, peers: { rpcKey: Buffer; launchHash: string }, log: Logger): ConsoleContext['announceSessionEnded'] {
  const others = peersOf(config, isOwn);
  if (others.length === 0) return undefined;
  return async (ended) => {
    await Promise.all(
      others.map((peer) =>
        askPeer(peer, 'console-session-ended', ended, { ...peers, timeoutMs: limits.changeNoticeTimeoutMs }).catch((error: unknown) => {
          log.warn({ peer: `${peer.host}:${peer.port}`, err: error }, 'console session ended: a peer was not told');
        }),
      ),
    );
  };
}

/**
 * The audit log: always the in-memory ring the console shows; the file and the webhook when
 * configured. The webhook's queue defaults to `.svc.sys/audit-queue` on this node's first local drive.
 */
async function openAudit(config: ServerConfig, isOwn: OwnEndpointTest, log: Logger): Promise<AuditLog> {
  const { file, webhook } = config.audit;
  const queueDirectory = webhook ? (webhook.queueDirectory ?? defaultAuditQueueDirectory(config, isOwn)) : undefined;
  const audit = await AuditLog.open({
    node: nodeName(config),
    clock: systemClock,
    timers: systemTimers,
    logger: log,
    targets: { ...(file ? { file } : {}), ...(webhook && queueDirectory ? { webhook: { ...webhook, queueDirectory } } : {}) },
  });
  if (file || webhook) log.info({ file, webhook: webhook ? { endpoint: webhook.endpoint, queueDirectory, queueLimit: webhook.queueLimitEntries, batchSize: webhook.batchSize } : undefined }, 'audit log');
  return audit;
}

function defaultAuditQueueDirectory(config: ServerConfig, isOwn: OwnEndpointTest): string {
  const first = firstLocalDrivePath(config, isOwn);
  if (first === undefined) {
    throw new SvcError('InvalidConfiguration', 'SVC_AUDIT_WEBHOOK_QUEUE_DIR must be set: this node has no local drive on disk to keep the audit queue on', { variable: 'SVC_AUDIT_WEBHOOK_QUEUE_DIR' });
  }
  return join(first, '.svc.sys', 'audit-queue');
}

/** The directory of this node's first local drive on disk; undefined when it has none (memfs, or only remote drives). */
function firstLocalDrivePath(config: ServerConfig, isOwn: OwnEndpointTest): string | undefined {
  const first = config.layout.pools.flatMap((pool) => pool.endpoints).find((endpoint) => endpoint.kind === 'local' || isOwn(endpoint));
  if (!first || config.driveBackend === 'memfs') return undefined;
  return config.driveRoot ? join(config.driveRoot, first.path) : first.path;
}

/** SSO for the console: the provider is discovered in the background (unreachable, the button is disabled). */
function startOpenId(settings: NonNullable<ServerConfig['openId']>, log: Logger): OpenIdSignIn {
  const openId = new OpenIdSignIn(settings, log, () => Date.now());
  void openId.refresh();
  return openId;
}

function announce(config: ServerConfig, log: Logger): void {
  for (const warning of configWarnings(config)) log.warn(warning.fields, warning.message);
  log.info({ layout: describeLayout(config.layout, []) }, 'layout');
}

/**
 * Warnings that depend on the storage classes in force (the environment over the persisted
 * configuration): zero automatic parity, an inline block above 128 KiB, and for every multi-drive
 * pool how many hosts it may lose. `svc plan` reports the same list.
 */
function warnAboutRedundancy(config: ServerConfig, storageClass: ResolvedStorageClass, log: Logger): void {
  for (const warning of redundancyWarnings(config.layout, storageClass)) log.warn(warning.fields, warning.message);
}

/**
 * Fault control of this node's drives (the fault-injecting wrappers openDrive puts around them when
 * SVC_FAULT_INJECTION=on) and of the identity clock: wired here, in the composition root only.
 */
function faultControl(drives: Map<string, Drive>, identityClock: OffsetClock): NonNullable<AdminContext['faults']> {
  const faulty = (path: string): FaultyDrive => {
    const drive = drives.get(path);
    if (!drive || !('setFaults' in drive)) throw new SvcError('NoSuchDrive', `no drive of this node is at '${path}'`, { drive: path });
    return drive as FaultyDrive;
  };
  return {
    list: () => [...drives].map(([path, drive]) => ({ drive: path, endpoint: drive.endpoint, faults: (drive as Partial<FaultyDrive>).faults ?? {} })),
    set: (path, plan) => {
      const drive = faulty(path);
      drive.setFaults(parseFaultOptions(plan));
      return { drive: path, faults: drive.faults };
    },
    clock: () => ({ offsetMs: identityClock.offsetMs }),
    setClock: (offsetMs) => {
      identityClock.offsetMs = offsetMs;
      return { offsetMs: identityClock.offsetMs };
    },
  };
}

const stillStarting = async (): Promise<never> => {
  throw new SvcError('SlowDown', 'the server is still starting (waiting for format quorum)');
};

/** The admin services' peer operations until storage is up: each answers SlowDown. */
const startingPeerHandlers: Omit<PeerHandlerTable, ObservabilityOperation | ConsoleOperation> = {
  'heal-sequence': stillStarting,
  'rebalance-event': stillStarting,
  'rebalance-start': stillStarting,
  'rebalance-stop': stillStarting,
  'rebalance-status': stillStarting,
  'decommission-start': stillStarting,
  'decommission-cancel': stillStarting,
  'decommission-clear': stillStarting,
  'decommission-status': stillStarting,
  'iam-changed': stillStarting,
  'event-listen': stillStarting,
  'event-targets-changed': stillStarting,
  'buckets-changed': stillStarting,
  'pool-meta-changed': stillStarting,
  'kms-changed': stillStarting,
  'kms-rotate': stillStarting,
  'kms-rewrap-status': stillStarting,
  'replication-status': stillStarting,
  'replication-resync': stillStarting,
  'tier-deletions': stillStarting,
};

/**
 * Namespace locks: in-process for a single node; across several nodes, a majority of every
 * node's lock server (this node's own table directly, the others over RPC).
 */
function makeLocker(config: ServerConfig, isOwn: OwnEndpointTest, table: LockTable, peers: PeerAccess & Pick<RemoteLockServerOptions, 'onCall'>, log: Logger): NamespaceLocker {
  const nodes = new Map<string, Endpoint & { kind: 'url' }>();
  for (const endpoint of config.layout.pools.flatMap((pool) => pool.endpoints)) {
    if (endpoint.kind === 'url') nodes.set(`${endpoint.host}:${endpoint.port}`, endpoint);
  }
  if (nodes.size <= 1) return new LocalNamespaceLocker();
  const own = [...nodes.entries()].find(([, endpoint]) => isOwn(endpoint));
  const holder = own ? { node: own[0], startedAtMs: nextRunStart(), id: randomUUID() } : undefined;
  const servers: LockServer[] = [...nodes.values()].map((endpoint) =>
    isOwn(endpoint)
      ? {
          acquire: async (resource, mode, uid, ttlMs) => table.acquire(resource, mode, uid, ttlMs),
          refresh: async (resource, uid, ttlMs) => table.refresh(resource, uid, ttlMs),
          release: async (resource, uid) => table.release(resource, uid),
        }
      : remoteLockServer({ host: endpoint.host, port: endpoint.port, ...peers }),
  );
  return new DistributedNamespaceLocker({ servers, ...(holder ? { holder } : {}), onLost: (resource) => log.warn({ resource }, 'a held lock lost its majority while refreshing') });
}

let lastRunStartMs = 0;

/** When this run of a node started, for its locks' holder: later than any earlier run in this process too (tests restart nodes in one process). */
function nextRunStart(): number {
  lastRunStartMs = Math.max(Date.now(), lastRunStartMs + 1);
  return lastRunStartMs;
}

/** What must be identical on every node: pools and their order, set width, storage-class settings. */
function launchHashOf(config: ServerConfig): string {
  const identity = {
    pools: config.layout.pools.map((pool) => ({ pattern: pool.pattern, setDriveCount: pool.setDriveCount })),
    storageClass: config.storageClassSettings,
  };
  return createHash('sha256').update(JSON.stringify(identity)).digest('hex');
}

/** How this node reaches its peers: the internode key, the launch hash they must share, the transport. */
interface PeerAccess {
  rpcKey: Buffer;
  launchHash: string;
  transport: Transport;
}

interface OpenedDrives {
  drives: (Drive | undefined)[][];
  locks: OwnershipLock[];
  /** This node's drives by endpoint path, served to peers over RPC. */
  localByPath: Map<string, Drive>;
  /** This node's drives as its object layer holds them (bounded by their deadlines): how it tells its own drives from peers'. */
  localDrives: Set<Drive>;
  /** This node holds the deployment's first endpoint: it formats fresh drives. */
  holdsFirstEndpoint: boolean;
}

/** Opens every endpoint: local ones (with exclusive ownership) and, over RPC, the peers' drives. */
async function openDrives(config: ServerConfig, isOwn: OwnEndpointTest, peers: PeerAccess, log: Logger, observability: Observability, hooks: ServerHooks): Promise<OpenedDrives> {
  const locks: OwnershipLock[] = [];
  const localByPath = new Map<string, Drive>();
  const localDrives = new Set<Drive>();
  try {
    const drives = await Promise.all(
      config.layout.pools.map((pool) => Promise.all(pool.endpoints.map((endpoint) => openDrive(config, endpoint, { isOwn, locks, localByPath, localDrives, peers, log, observability, hooks })))),
    );
    const first = config.layout.pools[0]!.endpoints[0]!;
    return { drives, locks, localByPath, localDrives, holdsFirstEndpoint: first.kind === 'local' || isOwn(first) };
  } catch (error) {
    await Promise.all(locks.map((lock) => lock.release()));
    throw error;
  }
}

async function openDrive(
  config: ServerConfig,
  endpoint: Endpoint,
  context: { isOwn: OwnEndpointTest; locks: OwnershipLock[]; localByPath: Map<string, Drive>; localDrives: Set<Drive>; peers: PeerAccess; log: Logger; observability: Observability; hooks: ServerHooks },
): Promise<Drive | undefined> {
  const { localDrive, peerDrive } = context.hooks;
  if (endpoint.kind === 'url' && !context.isOwn(endpoint)) {
    const remote = createRemoteDrive({ endpoint: endpoint.raw, host: endpoint.host, port: endpoint.port, path: endpoint.path, ...context.peers });
    return boundedDrive(config, context.observability.instrument(peerDrive ? peerDrive(remote) : remote, false), context.log);
  }
  let drive: Drive;
  if (localDrive) {
    drive = localDrive(endpoint);
  } else if (config.driveBackend === 'memfs') {
    // Loaded only here: a server on real drives does not load memfs.
    const { createMemfsDrive } = await import('../backends/memfs/memfs-drive.js');
    drive = createMemfsDrive({ endpoint: endpoint.raw });
  } else {
    const path = config.driveRoot ? join(config.driveRoot, endpoint.path) : endpoint.path;
    context.locks.push(await acquireOwnershipLock(path));
    drive = await createFsDrive(path, { endpoint: endpoint.raw });
  }
  const wrapped = context.observability.instrument(config.faultInjection ? createFaultyDrive(drive, {}) : drive, true);
  context.localByPath.set(endpoint.path, wrapped);
  const bounded = boundedDrive(config, wrapped, context.log);
  context.localDrives.add(bounded);
  return bounded;
}

/** The drive as the object layer uses it: its calls bounded by SVC_DRIVE_MAX_TIMEOUT, offline while it answers none (peers' calls to a local drive are bounded by the peers). */
function boundedDrive(config: ServerConfig, drive: Drive, log: Logger): Drive {
  if (config.driveDeadlineMs <= 0) return drive;
  return withDeadlines(drive, {
    deadlineMs: config.driveDeadlineMs,
    probeIntervalMs: limits.driveProbeIntervalMs,
    onChange: (endpoint, online, reason) => (online ? log.info({ drive: endpoint }, `drive ${endpoint} answers again: back online`) : log.warn({ drive: endpoint, reason }, `drive ${endpoint} taken offline: ${reason}`)),
  });
}

/** How a listener answers what no route of it sees, in its API's error shape (src/api/listener-errors.ts). */
interface ListenerAnswers {
  clientError: (error: Error & { code?: string }, socket: Duplex) => void;
  frameworkError: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => Promise<void>;
}

/** The S3 listener: admin JSON under the admin prefix, S3 XML elsewhere. */
function s3ListenerAnswers(timeouts: RequestTimeouts): ListenerAnswers {
  return {
    clientError: s3ClientErrorHandler,
    frameworkError: (error, request, reply) =>
      (request.raw.url ?? '').startsWith(adminPrefix) ? answerAdminFrameworkError(frameworkErrorOf(error), request, reply) : answerS3FrameworkError(error, request, reply, timeouts.bodyIdleMs),
  };
}

const consoleListenerAnswers: ListenerAnswers = {
  clientError: clientErrorHandler(consoleClientErrorBody),
  frameworkError: (error, request, reply) => answerConsoleFrameworkError(frameworkErrorOf(error), request, reply),
};

async function listen(address: { host: string; port: number }, timeouts: RequestTimeouts, answers: ListenerAnswers, register: (app: FastifyInstance) => Promise<unknown>): Promise<FastifyInstance> {
  const app = Fastify({
    logger: false,
    exposeHeadRoutes: false,
    bodyLimit: 1024 * 1024,
    routerOptions: { maxParamLength: 4096 },
    // Route schemas refuse what they do not describe; they never strip or coerce (route-schema.ts).
    ajv: { customOptions: { ...schemaValidatorOptions } },
    forceCloseConnections: false,
    return503OnClosing: true,
    clientErrorHandler: answers.clientError,
    frameworkErrors: (error, request, reply) => void answers.frameworkError(error, request, reply),
    serverFactory: (handler, options) => createHttpServer(timeouts, Number(options.keepAliveTimeout), handler),
  });
  await register(app);
  await app.listen({ host: address.host, port: address.port });
  return app;
}
