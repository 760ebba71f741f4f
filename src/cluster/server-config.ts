/**
 * The server's configuration, read from arguments and environment in one place and validated
 * before anything touches a disk (SPEC "Startup configuration").
 */
import { availableParallelism } from 'node:os';
import { isIP } from 'node:net';
import { SvcError } from '../errors/index.js';
import { limits } from '../util/limits.js';
import { parseByteSize } from '../util/sizes.js';
import { planLayout, type DeploymentLayout } from './layout.js';
import { effectiveEnv, readStorageClassEnv, validateStorageClass, type ResolvedStorageClass, type StorageClassSettings } from './storage-class-config.js';
import type { ListQuorumMode } from '../object/index.js';
import { readOpenIdSettings, type OpenIdSettings } from './openid-config.js';
import { readKmsSettings, type KmsSettings } from './kms-config.js';
import { readCompressionSettings, type CompressionSettings } from './compression-config.js';

export interface ListenAddress {
  host: string;
  port: number;
}

export interface ServerConfig {
  layout: DeploymentLayout;
  storageClassSettings: StorageClassSettings;
  /** Validated against the layout alone (persisted values are applied after the format is read). */
  storageClass: ResolvedStorageClass;
  address: ListenAddress;
  consoleAddress: ListenAddress;
  consoleEnabled: boolean;
  /** Console sessions end after this long idle (SVC_CONSOLE_SESSION_IDLE) or this long after sign-in (SVC_CONSOLE_SESSION_MAX). */
  consoleSessionIdleMs: number;
  consoleSessionMaxMs: number;
  /** Peers whose X-Forwarded-For/-Proto/-Host the console believes (SVC_CONSOLE_TRUSTED_PROXIES; none by default: any local process could set them). */
  consoleTrustedProxies: string[];
  /** Console sign-in with OpenID Connect (SVC_IDENTITY_OPENID_*), when configured. */
  openId?: OpenIdSettings;
  /** The S3 API's public URL for console share links (SVC_SERVER_URL); unset, it is derived from the console request's host. */
  serverUrl?: string;
  accessKey: string;
  secretKey: string;
  credentialsFromDefault: boolean;
  logLevel: string;
  logDirectory?: string;
  /** Log lines: `auto` (pretty on a terminal, JSON otherwise), `json` or `pretty` (SVC_OBS_LOG_FORMAT). */
  logFormat: 'auto' | 'json' | 'pretty';
  /** Who may read /svc/metrics/*: a bearer token (`jwt`, the default) or anyone (`public`). */
  prometheusAuthType: 'jwt' | 'public';
  listQuorum: ListQuorumMode;
  driveBackend: 'fs' | 'memfs';
  driveRoot?: string;
  faultInjection: boolean;
  /** Accept AWS Signature Version 2 on the S3 API (SVC_API_SIGNATURE_V2, on by default). */
  signatureV2: boolean;
  /** Queue objects that reads and writes found damaged for repair in the background (SVC_HEAL_MRF, on by default). */
  readRepair: boolean;
  /** Domains for virtual-host-style addressing (`<bucket>.<domain>`), from SVC_DOMAIN. */
  domains: string[];
  /** Data movement knobs (SPEC "Startup configuration"), already capped. */
  decommissionBucketConcurrency: number;
  decommissionEntryConcurrency: number;
  rebalanceMaxAttempts: number;
  /** The lifecycle scanner: keys a second (SVC_LIFECYCLE_OBJECTS_PER_SECOND), time between cycles (SVC_LIFECYCLE_INTERVAL). */
  lifecycleObjectsPerSecond: number;
  lifecycleIntervalMs: number;
  /** Test harness only: the lifecycle scanner judges rules this far ahead of the wall clock (SVC_LIFECYCLE_CLOCK_OFFSET). */
  lifecycleClockOffsetMs: number;
  /** A version larger than this goes to its tier as a multipart upload (SVC_TIER_MULTIPART_THRESHOLD; at most 5 GiB, a single PUT's limit). */
  tierMultipartThresholdBytes: number;
  /** Threads that code erasure blocks and hash bodies (SVC_CODING_THREADS); 0 codes on the event loop. */
  codingThreads: number;
  /** S3 listener timeouts in milliseconds, 0 for none (SVC_API_*_TIMEOUT). */
  requestTimeouts: RequestTimeouts;
  /** A drive call's deadline in milliseconds, 0 for none (SVC_DRIVE_MAX_TIMEOUT; src/drive/deadline-drive.ts). */
  driveDeadlineMs: number;
  /** Lines to log at startup (legacy-name conflicts). */
  notices: string[];
  /** Where audit entries go besides the console's memory (SVC_AUDIT_*; docs/audit.md). */
  audit: AuditConfig;
  /** The built-in KMS and SSE-C settings (SVC_KMS_*; docs/encryption.md). */
  kms: KmsSettings;
  /** Transparent compression (SVC_COMPRESSION_*; docs/compression.md). */
  compression: CompressionSettings;
}

export interface AuditConfig {
  file?: string;
  webhook?: {
    endpoint: string;
    authToken?: string;
    /** Unset: `.svc.sys/audit-queue` on this node's first local drive. */
    queueDirectory?: string;
    queueLimitEntries: number;
    batchSize: number;
  };
}

export interface RequestTimeouts {
  /** From a request's first byte to the end of its headers. */
  headersMs: number;
  /** The longest pause in a body while the server waits for it. */
  bodyIdleMs: number;
  /** From a request's first byte to the end of its body. */
  wholeMs: number;
}

export const developmentAccessKey = 'svcadmin';
export const developmentSecretKey = 'svcadmin-secret';

export function readServerConfig(args: string[], env: Record<string, string | undefined>): ServerConfig {
  const { values, conflicts } = effectiveEnv(env);
  const volumes = args.length > 0 ? args : (values.SVC_VOLUMES ?? '').split(/\s+/).filter((part) => part !== '');
  const pinned = values.SVC_ERASURE_SET_DRIVE_COUNT;
  const setDriveCount = pinned === undefined || pinned === '' ? undefined : parseInteger('SVC_ERASURE_SET_DRIVE_COUNT', pinned);
  // Storage-class syntax first: an invalid value stops startup before anything else.
  const storageClassSettings = readStorageClassEnv(values);
  const layout = planLayout(volumes, setDriveCount === undefined ? {} : { setDriveCount });
  const storageClass = validateStorageClass(storageClassSettings, layout.pools.map((pool) => pool.setDriveCount));
  const accessKey = values.SVC_ACCESS_KEY ?? values.MINIO_ROOT_USER;
  const secretKey = values.SVC_SECRET_KEY ?? values.MINIO_ROOT_PASSWORD;
  if ((accessKey === undefined) !== (secretKey === undefined)) {
    throw new SvcError('InvalidConfiguration', 'set both SVC_ACCESS_KEY and SVC_SECRET_KEY, or neither');
  }
  if (secretKey !== undefined && secretKey.length < 8) throw new SvcError('InvalidConfiguration', 'SVC_SECRET_KEY must be at least 8 characters');
  return {
    layout,
    storageClassSettings,
    storageClass,
    address: parseAddress('SVC_ADDRESS', values.SVC_ADDRESS ?? ':9000'),
    consoleAddress: parseAddress('SVC_CONSOLE_ADDRESS', values.SVC_CONSOLE_ADDRESS ?? ':9001'),
    consoleEnabled: (values.SVC_CONSOLE_ENABLE ?? 'true').toLowerCase() !== 'false',
    ...consoleSessionOf(values),
    consoleTrustedProxies: trustedProxiesOf(values.SVC_CONSOLE_TRUSTED_PROXIES ?? ''),
    ...openIdOf(values),
    ...(values.SVC_SERVER_URL ? { serverUrl: serverUrlOf(values.SVC_SERVER_URL) } : {}),
    accessKey: accessKey ?? developmentAccessKey,
    secretKey: secretKey ?? developmentSecretKey,
    credentialsFromDefault: accessKey === undefined,
    logLevel: values.SVC_OBS_LOGGER_LEVEL ?? 'info',
    ...(values.SVC_OBS_LOG_DIRECTORY ? { logDirectory: values.SVC_OBS_LOG_DIRECTORY } : {}),
    logFormat: oneOf(values, 'SVC_OBS_LOG_FORMAT', ['auto', 'json', 'pretty'] as const),
    prometheusAuthType: oneOf(values, 'SVC_PROMETHEUS_AUTH_TYPE', ['jwt', 'public'] as const),
    listQuorum: listQuorumOf(values.SVC_LIST_OBJECTS_QUORUM),
    driveBackend: backendOf(values.SVC_DRIVE_BACKEND),
    ...(values.SVC_DRIVE_ROOT ? { driveRoot: values.SVC_DRIVE_ROOT } : {}),
    faultInjection: values.SVC_FAULT_INJECTION === 'on',
    signatureV2: oneOf(values, 'SVC_API_SIGNATURE_V2', ['on', 'off'] as const) === 'on',
    readRepair: oneOf(values, 'SVC_HEAL_MRF', ['on', 'off'] as const) === 'on',
    domains: (values.SVC_DOMAIN ?? '').split(',').map((domain) => domain.trim().toLowerCase()).filter((domain) => domain !== ''),
    decommissionBucketConcurrency: boundedInteger(values, 'SVC_DECOMMISSION_BUCKET_CONCURRENCY', limits.decommissionBucketConcurrencyDefault, limits.decommissionBucketConcurrencyDefault),
    decommissionEntryConcurrency: boundedInteger(values, 'SVC_DECOMMISSION_ENTRY_CONCURRENCY', limits.decommissionEntryConcurrencyDefault, limits.decommissionEntryConcurrencyHardCap),
    rebalanceMaxAttempts: boundedInteger(values, 'SVC_REBALANCE_MAX_ATTEMPTS', limits.rebalanceMaxAttemptsDefault, 100),
    lifecycleObjectsPerSecond: boundedInteger(values, 'SVC_LIFECYCLE_OBJECTS_PER_SECOND', limits.lifecycleObjectsPerSecondDefault, limits.lifecycleObjectsPerSecondMax),
    lifecycleIntervalMs: durationMs(values, 'SVC_LIFECYCLE_INTERVAL', limits.lifecycleIntervalMsDefault, limits.lifecycleIntervalMsMin),
    lifecycleClockOffsetMs: durationMs(values, 'SVC_LIFECYCLE_CLOCK_OFFSET', 0),
    tierMultipartThresholdBytes: tierMultipartThresholdOf(values.SVC_TIER_MULTIPART_THRESHOLD),
    codingThreads: codingThreadsOf(values.SVC_CODING_THREADS),
    requestTimeouts: requestTimeoutsOf(values),
    driveDeadlineMs: durationMs(values, 'SVC_DRIVE_MAX_TIMEOUT', limits.driveCallDeadlineMsDefault),
    notices: conflicts,
    audit: auditOf(values),
    kms: readKmsSettings(values),
    compression: readCompressionSettings(values),
  };
}

const auditWebhookSettings = ['SVC_AUDIT_WEBHOOK_AUTH_TOKEN', 'SVC_AUDIT_WEBHOOK_QUEUE_DIR', 'SVC_AUDIT_WEBHOOK_QUEUE_LIMIT', 'SVC_AUDIT_WEBHOOK_BATCH_SIZE'];

function auditOf(values: Record<string, string | undefined>): AuditConfig {
  const file = values.SVC_AUDIT_FILE?.trim();
  const endpoint = values.SVC_AUDIT_WEBHOOK_ENDPOINT?.trim();
  const audit: AuditConfig = file ? { file } : {};
  if (!endpoint) {
    const stray = auditWebhookSettings.find((name) => (values[name] ?? '').trim() !== '');
    if (stray) throw new SvcError('InvalidConfiguration', `${stray}: SVC_AUDIT_WEBHOOK_ENDPOINT is not set, so ${stray} would have no effect`, { variable: stray });
    return audit;
  }
  const authToken = values.SVC_AUDIT_WEBHOOK_AUTH_TOKEN?.trim();
  // The token itself is never part of a message.
  if (authToken !== undefined && /[\x00-\x1f\x7f]/.test(authToken)) throw new SvcError('InvalidConfiguration', 'SVC_AUDIT_WEBHOOK_AUTH_TOKEN must not contain control characters', { variable: 'SVC_AUDIT_WEBHOOK_AUTH_TOKEN' });
  const queueDirectory = values.SVC_AUDIT_WEBHOOK_QUEUE_DIR?.trim();
  const queueLimitEntries = boundedInteger(values, 'SVC_AUDIT_WEBHOOK_QUEUE_LIMIT', limits.auditWebhookQueueLimitDefault, limits.auditWebhookQueueLimitMax);
  const batchSize = boundedInteger(values, 'SVC_AUDIT_WEBHOOK_BATCH_SIZE', limits.auditWebhookBatchSizeDefault, limits.auditWebhookBatchSizeMax);
  if (queueLimitEntries < batchSize) throw new SvcError('InvalidConfiguration', `SVC_AUDIT_WEBHOOK_QUEUE_LIMIT=${queueLimitEntries} must be at least SVC_AUDIT_WEBHOOK_BATCH_SIZE=${batchSize}`, { variable: 'SVC_AUDIT_WEBHOOK_QUEUE_LIMIT' });
  audit.webhook = {
    endpoint: webhookEndpointOf(endpoint),
    ...(authToken ? { authToken } : {}),
    ...(queueDirectory ? { queueDirectory } : {}),
    queueLimitEntries,
    batchSize,
  };
  return audit;
}

function webhookEndpointOf(raw: string): string {
  const url = urlOf('SVC_AUDIT_WEBHOOK_ENDPOINT', raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new SvcError('InvalidConfiguration', 'SVC_AUDIT_WEBHOOK_ENDPOINT must be an http or https URL', { variable: 'SVC_AUDIT_WEBHOOK_ENDPOINT' });
  if (url.username !== '' || url.password !== '') throw new SvcError('InvalidConfiguration', 'SVC_AUDIT_WEBHOOK_ENDPOINT must not carry credentials: set SVC_AUDIT_WEBHOOK_AUTH_TOKEN', { variable: 'SVC_AUDIT_WEBHOOK_ENDPOINT' });
  return url.href;
}

/** One of the allowed words (the first is the default when unset or empty), else InvalidConfiguration. */
function oneOf<const T extends readonly string[]>(values: Record<string, string | undefined>, name: string, allowed: T): T[number] {
  const raw = values[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return allowed[0]!;
  if (!allowed.includes(raw)) throw new SvcError('InvalidConfiguration', `${name}=${JSON.stringify(values[name])} is not one of ${allowed.join(', ')}`, { variable: name });
  return raw as T[number];
}

function requestTimeoutsOf(values: Record<string, string | undefined>): RequestTimeouts {
  const timeouts = {
    headersMs: durationMs(values, 'SVC_API_HEADERS_TIMEOUT', limits.requestHeadersTimeoutMsDefault),
    bodyIdleMs: durationMs(values, 'SVC_API_BODY_IDLE_TIMEOUT', limits.requestBodyIdleTimeoutMsDefault),
    wholeMs: durationMs(values, 'SVC_API_REQUEST_TIMEOUT', limits.requestTimeoutMsDefault),
  };
  if (timeouts.wholeMs > 0 && timeouts.headersMs > timeouts.wholeMs) {
    throw new SvcError('InvalidConfiguration', 'SVC_API_HEADERS_TIMEOUT must not be longer than SVC_API_REQUEST_TIMEOUT', { variable: 'SVC_API_HEADERS_TIMEOUT' });
  }
  return timeouts;
}

/**
 * A duration such as `500ms`, `30s`, `5m`, `2h` or `1d` (a bare `0` for none); its default when
 * unset or empty; at least `minimumMs`.
 */
function durationMs(values: Record<string, string | undefined>, name: string, fallbackMs: number, minimumMs = 0): number {
  const raw = values[name]?.trim();
  if (raw === undefined || raw === '') return fallbackMs;
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(raw);
  if (!match || (match[2] === undefined && match[1] !== '0')) {
    throw new SvcError('InvalidConfiguration', `${name}=${JSON.stringify(raw)} is not a duration such as 500ms, 30s, 5m, 2h or 1d (0 for none)`, { variable: name });
  }
  const unitMs = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] ?? 'ms']!;
  const value = Number(match[1]) * unitMs;
  if (value < minimumMs) throw new SvcError('InvalidConfiguration', `${name}=${JSON.stringify(raw)} is shorter than ${minimumMs} ms`, { variable: name });
  return value;
}

function consoleSessionOf(values: Record<string, string | undefined>): { consoleSessionIdleMs: number; consoleSessionMaxMs: number } {
  const consoleSessionIdleMs = durationMs(values, 'SVC_CONSOLE_SESSION_IDLE', limits.consoleSessionIdleDefaultMs, 1_000);
  const consoleSessionMaxMs = durationMs(values, 'SVC_CONSOLE_SESSION_MAX', limits.consoleSessionMaxDefaultMs, 1_000);
  if (consoleSessionIdleMs > consoleSessionMaxMs) throw new SvcError('InvalidConfiguration', 'SVC_CONSOLE_SESSION_IDLE must not exceed SVC_CONSOLE_SESSION_MAX', { variable: 'SVC_CONSOLE_SESSION_IDLE' });
  return { consoleSessionIdleMs, consoleSessionMaxMs };
}

/** Addresses or CIDR ranges (`10.0.0.0/8`, `::1`), checked here so a typo stops startup early. */
function trustedProxiesOf(raw: string): string[] {
  const entries = raw.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address!);
    const bitsOk = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (family === 0 || !bitsOk || extra !== undefined) throw new SvcError('InvalidConfiguration', `SVC_CONSOLE_TRUSTED_PROXIES: '${entry}' is not an IP address or CIDR range`, { variable: 'SVC_CONSOLE_TRUSTED_PROXIES' });
  }
  return entries;
}

/** A variable's value as a URL, else InvalidConfiguration naming it. */
function urlOf(name: string, raw: string): URL {
  try {
    return new URL(raw);
  } catch {
    throw new SvcError('InvalidConfiguration', `${name}=${JSON.stringify(raw)} is not a URL`, { variable: name });
  }
}

function serverUrlOf(raw: string): string {
  const url = urlOf('SVC_SERVER_URL', raw);
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.pathname !== '/' || url.search !== '') throw new SvcError('InvalidConfiguration', 'SVC_SERVER_URL must be an http(s) URL of a host root, such as https://s3.example.com', { variable: 'SVC_SERVER_URL' });
  return url.origin;
}

/** A positive whole number, its default when unset or empty, and at most `cap`. */
/** SVC_TIER_MULTIPART_THRESHOLD: a byte size from 1 MiB up to a single PUT's limit (its default). */
function tierMultipartThresholdOf(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return limits.maxPutObjectSizeBytes;
  const variable = 'SVC_TIER_MULTIPART_THRESHOLD';
  const bytes = (() => {
    try {
      return parseByteSize(raw);
    } catch (error) {
      throw new SvcError('InvalidConfiguration', `${variable}: ${error instanceof Error ? error.message : String(error)}`, { variable });
    }
  })();
  if (bytes < limits.tierMultipartThresholdMinBytes || bytes > limits.maxPutObjectSizeBytes) {
    throw new SvcError('InvalidConfiguration', `${variable}=${JSON.stringify(raw)} must be from ${limits.tierMultipartThresholdMinBytes} bytes to ${limits.maxPutObjectSizeBytes} (a single PUT's limit)`, { variable });
  }
  return bytes;
}

function boundedInteger(values: Record<string, string | undefined>, name: string, fallback: number, cap: number): number {
  const raw = values[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = parseInteger(name, raw);
  if (value < 1) throw new SvcError('InvalidConfiguration', `${name} must be at least 1`, { variable: name });
  return Math.min(value, cap);
}

function parseInteger(name: string, value: string): number {
  if (!/^\d+$/.test(value.trim())) throw new SvcError('InvalidConfiguration', `${name}=${JSON.stringify(value)} is not a whole number`, { variable: name });
  return Number(value);
}

/** `:9000`, `127.0.0.2:9000` or `[::1]:9000`. */
export function parseAddress(name: string, value: string): ListenAddress {
  const match = /^(\[[^\]]+\]|[^:]*):(\d{1,5})$/.exec(value.trim());
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65_535) throw new SvcError('InvalidConfiguration', `${name}=${JSON.stringify(value)} is not an address of the form :<port> or <host>:<port>`, { variable: name });
  const host = match[1] === '' ? '0.0.0.0' : match[1]!.replace(/^\[|\]$/g, '');
  return { host, port };
}

/** Default: one coding thread per core the process may use. */
function codingThreadsOf(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return Math.min(availableParallelism(), limits.maxCodingThreads);
  return Math.min(parseInteger('SVC_CODING_THREADS', value), limits.maxCodingThreads);
}

function listQuorumOf(value: string | undefined): ListQuorumMode {
  const mode = (value ?? 'optimal').toLowerCase();
  return mode === 'disk' || mode === 'reduced' || mode === 'optimal' || mode === 'auto' ? mode : 'strict';
}

function backendOf(value: string | undefined): 'fs' | 'memfs' {
  if (value === undefined || value === '' || value === 'fs') return 'fs';
  if (value === 'memfs') return 'memfs';
  throw new SvcError('InvalidConfiguration', `SVC_DRIVE_BACKEND=${JSON.stringify(value)} must be fs or memfs`, { variable: 'SVC_DRIVE_BACKEND' });
}

function openIdOf(values: Record<string, string | undefined>): { openId?: OpenIdSettings } {
  const openId = readOpenIdSettings(values);
  return openId ? { openId } : {};
}
