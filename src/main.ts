/**
 * The composition root: reads configuration, opens drives, reaches format quorum, builds the
 * object layer and the HTTP listeners, and owns the process lifecycle. Startup order (SPEC):
 * storage-class validation, local disks, lock clients, format quorum.
 */
import { mkdirSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { isAbsolute, join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import type { Drive } from './drive/index.js';
import { LocalNamespaceLocker } from './object/index.js';
import { readServerConfig, type ServerConfig } from './cluster/server-config.js';
import { startStorage, type StartedStorage } from './cluster/startup.js';
import { describeLayout, hostFailureWarning } from './cluster/layout.js';
import type { Endpoint } from './cluster/endpoints.js';
import { staticCredentials } from './api/s3/auth/sigv4.js';
import { s3Plugin } from './api/s3/s3-plugin.js';
import { consoleHealthPlugin, healthPlugin, type HealthState } from './api/health.js';
import { systemClock } from './util/clock.js';
import { createFsDrive } from '../backends/fs/fs-drive.js';
import { createMemfsDrive } from '../backends/memfs/memfs-drive.js';
import { acquireOwnershipLock, type OwnershipLock } from '../backends/fs/ownership-lock.js';
import { createFaultyDrive } from '../fault-injection/faulty-drive.js';

export interface RunningServer {
  config: ServerConfig;
  storage: StartedStorage;
  s3: FastifyInstance;
  console?: FastifyInstance;
  logger: Logger;
  stop(): Promise<void>;
}

export function createLogger(config: Pick<ServerConfig, 'logLevel' | 'logDirectory'>): Logger {
  if (!config.logDirectory) return pino({ level: config.logLevel, base: { service: 'svc' } });
  mkdirSync(config.logDirectory, { recursive: true });
  return pino({ level: config.logLevel, base: { service: 'svc' } }, pino.destination({ dest: join(config.logDirectory, 'svc.log'), sync: false }));
}

export async function startServer(args: string[], env: Record<string, string | undefined>, logger?: Logger): Promise<RunningServer> {
  const config = readServerConfig(args, env);
  const log = logger ?? createLogger(config);
  announce(config, log);
  const { drives, locks } = await openLocalDrives(config, log);
  let storage: StartedStorage;
  try {
    storage = await startStorage(config, drives, { locker: new LocalNamespaceLocker(), clock: systemClock, logger: log });
  } catch (error) {
    await Promise.all(locks.map((lock) => lock.release()));
    throw error;
  }
  log.info({ deploymentId: storage.deploymentId, layout: describeLayout(config.layout, config.layout.pools.map((pool) => ({ standard: storage.storageClass.standardParity(pool.index), rrs: storage.storageClass.rrsParity(pool.index) }))) }, 'storage ready');
  let stopping = false;
  const state: HealthState = { ready: () => true, stopping: () => stopping };
  const s3 = await listen(config.address, async (app) => {
    await app.register(healthPlugin, { state });
    await app.register(s3Plugin, { context: { objects: storage.objects, region: 'us-east-1', nowMs: () => Date.now() }, credentials: staticCredentials(config.accessKey, config.secretKey), reservedPrefixes: ['/health', '/svc/'], virtualHostSuffixes: config.domains, logger: log });
  });
  const consoleApp = config.consoleEnabled ? await listen(config.consoleAddress, async (app) => { await app.register(consoleHealthPlugin, { state }); }) : undefined;
  log.info({ s3: config.address, console: config.consoleEnabled ? config.consoleAddress : 'disabled' }, 'listening');
  return {
    config,
    storage,
    s3,
    ...(consoleApp ? { console: consoleApp } : {}),
    logger: log,
    stop: async () => {
      stopping = true;
      await Promise.all([s3.close(), consoleApp?.close()]);
      await storage.markShutdownClean();
      await Promise.all(drives.flat().map((drive) => drive?.close()));
      await Promise.all(locks.map((lock) => lock.release()));
      log.info({}, 'stopped cleanly');
    },
  };
}

function announce(config: ServerConfig, log: Logger): void {
  for (const notice of config.notices) log.warn({ conflict: notice }, 'both a SVC_ and a legacy variable are set; the SVC_ value is used');
  for (const warning of config.storageClass.warnings) log.warn({}, warning);
  if (config.credentialsFromDefault) log.warn({ accessKey: config.accessKey, secretKey: config.secretKey }, `SVC_ACCESS_KEY/SVC_SECRET_KEY are not set: using the development credentials ${config.accessKey} / ${config.secretKey}; set your own before storing real data`);
  for (const pool of config.layout.pools) {
    if (hostFailureWarning(pool)) log.warn({ pool: pool.index, warning: 'host_failure_data_unavailable' }, `host_failure_data_unavailable: every drive of pool ${pool.index} is on one host; losing that host makes the pool's data unavailable`);
  }
  log.info({ layout: describeLayout(config.layout, []) }, 'layout');
}

/** Opens every local endpoint (remote endpoints stay disconnected until the cluster layer connects them). */
async function openLocalDrives(config: ServerConfig, log: Logger): Promise<{ drives: (Drive | undefined)[][]; locks: OwnershipLock[] }> {
  const locks: OwnershipLock[] = [];
  try {
    const drives = await Promise.all(config.layout.pools.map((pool) => Promise.all(pool.endpoints.map((endpoint) => openDrive(config, endpoint, locks, log)))));
    return { drives, locks };
  } catch (error) {
    await Promise.all(locks.map((lock) => lock.release()));
    throw error;
  }
}

async function openDrive(config: ServerConfig, endpoint: Endpoint, locks: OwnershipLock[], log: Logger): Promise<Drive | undefined> {
  if (endpoint.kind !== 'local' && !isOwnEndpoint(config, endpoint)) {
    log.warn({ endpoint: endpoint.raw }, 'remote endpoints are not connected by this build; the drive counts as offline');
    return undefined;
  }
  let drive: Drive;
  if (config.driveBackend === 'memfs') {
    drive = createMemfsDrive({ endpoint: endpoint.raw });
  } else {
    const path = config.driveRoot && isAbsolute(endpoint.path) ? join(config.driveRoot, endpoint.path) : config.driveRoot ? join(config.driveRoot, endpoint.path) : endpoint.path;
    locks.push(await acquireOwnershipLock(path));
    drive = await createFsDrive(path, { endpoint: endpoint.raw });
  }
  return config.faultInjection ? createFaultyDrive(drive, {}) : drive;
}

/** A URL endpoint is this node's own when its host is one of our addresses and its port is ours. */
function isOwnEndpoint(config: ServerConfig, endpoint: Endpoint): boolean {
  if (endpoint.kind !== 'url' || endpoint.port !== config.address.port) return false;
  const own = new Set(['localhost', ...Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((item) => item.address))]);
  const listening = config.address.host;
  return listening === '0.0.0.0' || listening === '::' ? own.has(endpoint.host) : endpoint.host === listening || (endpoint.host === 'localhost' && listening === '127.0.0.1');
}

async function listen(address: { host: string; port: number }, register: (app: FastifyInstance) => Promise<unknown>): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, exposeHeadRoutes: false, bodyLimit: 1024 * 1024, routerOptions: { maxParamLength: 4096 }, forceCloseConnections: false, return503OnClosing: true });
  await register(app);
  await app.listen({ host: address.host, port: address.port });
  return app;
}
