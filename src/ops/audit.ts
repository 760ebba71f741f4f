/**
 * The audit log (docs/audit.md): one JSON line per request that changed state or was refused for
 * authorization, built by the listeners (src/api/audit-facts.ts) and written here to up to three
 * places: an in-memory ring of the newest entries (the console's Users page), an append-only
 * file (SVC_AUDIT_FILE), and a webhook fed from a bounded, persisted queue (audit-queue.ts).
 * `record` never throws and never waits; `close` writes and fsyncs what is pending.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { SvcError } from '../errors/index.js';
import type { Clock, Timers } from '../util/clock.js';
import { limits } from '../util/limits.js';
import { SerialChain, WebhookQueue, type QueueStats, type QueueTuning } from './audit-queue.js';

export const auditEntryVersion = '1';
export const auditSurfaces = ['s3', 'admin', 'console', 'sts'] as const;
export type AuditSurface = (typeof auditSurfaces)[number];
export const auditPrincipalKinds = ['root', 'user', 'serviceAccount', 'session', 'sso', 'anonymous'] as const;
export const auditOutcomes = ['allowed', 'denied', 'error'] as const;
export type AuditOutcome = (typeof auditOutcomes)[number];

export interface AuditPrincipal {
  kind: (typeof auditPrincipalKinds)[number];
  accessKey?: string;
  parentUser?: string;
}

export interface AuditEntry {
  version: typeof auditEntryVersion;
  time: string;
  node: string;
  requestId: string;
  surface: AuditSurface;
  api: string;
  principal: AuditPrincipal;
  actions: string[];
  resource: string;
  outcome: AuditOutcome;
  httpStatus: number;
  errorCode?: string;
  sourceIp: string;
  userAgent: string;
  durationMs: number;
}

export interface AuditWebhookSettings {
  endpoint: string;
  /** Sent as `Authorization: Bearer <token>`; never logged. */
  authToken?: string;
  queueDirectory: string;
  queueLimitEntries: number;
  batchSize: number;
}

export interface AuditTargets {
  file?: string;
  webhook?: AuditWebhookSettings;
}

export interface AuditStats extends QueueStats {
  /** Entries recorded since this process started (every target gets each of them). */
  recorded: number;
  /** Whether a webhook is configured (the queue's counts stay 0 without one). */
  webhook: boolean;
}

export interface AuditLogOptions {
  /** This node's address, as every entry names it. */
  node: string;
  clock: Clock;
  timers: Timers;
  targets: AuditTargets;
  logger: { warn(fields: Record<string, unknown>, message: string): void };
  /** Delivers one webhook batch (the default POSTs JSON lines with fetch). */
  send?: (lines: string[], signal: AbortSignal) => Promise<void>;
  tuning?: Partial<QueueTuning>;
}

export interface RecentFilter {
  limit?: number;
  /** An access key, or a principal kind such as `anonymous` or `root`. */
  principal?: string;
  outcome?: AuditOutcome;
}

export class AuditLog {
  private readonly recentEntries: AuditEntry[] = [];
  private recorded = 0;

  private constructor(
    readonly node: string,
    readonly clock: Clock,
    private readonly file: AuditFile | undefined,
    private readonly queue: WebhookQueue | undefined,
  ) {}

  /** Opens the targets: a file that cannot be opened, or a queue directory that cannot be made, stops startup. */
  static async open(options: AuditLogOptions): Promise<AuditLog> {
    const tuning: QueueTuning = {
      fsyncIntervalMs: limits.auditFsyncIntervalMs,
      retryBaseMs: limits.auditWebhookRetryBaseMs,
      retryMaxMs: limits.auditWebhookRetryMaxMs,
      dropWarningIntervalMs: limits.auditDropWarningIntervalMs,
      ...options.tuning,
    };
    const { file, webhook } = options.targets;
    const fileTarget = file === undefined ? undefined : await AuditFile.open(file, options, tuning.fsyncIntervalMs);
    const queue = webhook === undefined
      ? undefined
      : await WebhookQueue.open({ ...tuning, directory: webhook.queueDirectory, limitEntries: webhook.queueLimitEntries, batchSize: webhook.batchSize, send: options.send ?? webhookSender(webhook), timers: options.timers, logger: options.logger }).catch((error: unknown) => {
          throw new SvcError('InvalidConfiguration', `SVC_AUDIT_WEBHOOK_QUEUE_DIR: cannot use ${webhook.queueDirectory}: ${String(error)}`, { variable: 'SVC_AUDIT_WEBHOOK_QUEUE_DIR' });
        });
    return new AuditLog(options.node, options.clock, fileTarget, queue);
  }

  /** Writes one entry to every target. Only the fields of AuditEntry are kept, whatever else the object carries. */
  record(entry: AuditEntry): void {
    try {
      const kept = keptFields(entry);
      this.recorded += 1;
      this.recentEntries.push(kept);
      if (this.recentEntries.length > limits.auditRecentEntries) this.recentEntries.shift();
      const line = JSON.stringify(kept);
      this.file?.append(line);
      this.queue?.push(line);
    } catch {
      // An entry that cannot be serialised is a bug upstream; the request it describes goes on.
    }
  }

  /** This node's newest entries first, filtered by principal (access key or kind) and outcome. */
  recent(filter: RecentFilter = {}): AuditEntry[] {
    const limit = Math.min(filter.limit ?? limits.auditRecentEntries, limits.auditRecentEntries);
    const matches: AuditEntry[] = [];
    for (let index = this.recentEntries.length - 1; index >= 0 && matches.length < limit; index -= 1) {
      const entry = this.recentEntries[index]!;
      if (filter.outcome !== undefined && entry.outcome !== filter.outcome) continue;
      if (filter.principal !== undefined && entry.principal.accessKey !== filter.principal && entry.principal.kind !== filter.principal) continue;
      matches.push(entry);
    }
    return matches;
  }

  stats(): AuditStats {
    return { recorded: this.recorded, webhook: this.queue !== undefined, ...(this.queue?.stats() ?? { queued: 0, delivered: 0, dropped: 0, quarantined: 0 }) };
  }

  /** Reopens the file target under its name (after logrotate moved it; SIGHUP). */
  async reopen(): Promise<void> {
    await this.file?.reopen();
  }

  async close(): Promise<void> {
    await Promise.all([this.file?.close(), this.queue?.close()]);
  }
}

/** A copy with exactly the entry's fields, strings cut to a bounded length. */
function keptFields(entry: AuditEntry): AuditEntry {
  const cut = (text: string): string => (text.length > limits.auditFieldCharsMax ? text.slice(0, limits.auditFieldCharsMax) : text);
  const principal: AuditPrincipal = { kind: entry.principal.kind };
  if (entry.principal.accessKey !== undefined) principal.accessKey = cut(entry.principal.accessKey);
  if (entry.principal.parentUser !== undefined) principal.parentUser = cut(entry.principal.parentUser);
  return {
    version: auditEntryVersion,
    time: entry.time,
    node: entry.node,
    requestId: entry.requestId,
    surface: entry.surface,
    api: cut(entry.api),
    principal,
    actions: entry.actions.map(cut),
    resource: cut(entry.resource),
    outcome: entry.outcome,
    httpStatus: entry.httpStatus,
    ...(entry.errorCode === undefined ? {} : { errorCode: cut(entry.errorCode) }),
    sourceIp: entry.sourceIp,
    userAgent: cut(entry.userAgent),
    durationMs: entry.durationMs,
  };
}

/** POSTs a batch as JSON lines (`application/x-ndjson`); anything but 2xx, or no answer in time, is a failure. */
function webhookSender(settings: AuditWebhookSettings): (lines: string[], signal: AbortSignal) => Promise<void> {
  const headers: Record<string, string> = { 'content-type': 'application/x-ndjson' };
  if (settings.authToken !== undefined) headers.authorization = `Bearer ${settings.authToken}`;
  return async (lines, signal) => {
    const response = await fetch(settings.endpoint, {
      method: 'POST',
      headers,
      body: `${lines.join('\n')}\n`,
      signal: AbortSignal.any([signal, AbortSignal.timeout(limits.auditWebhookTimeoutMs)]),
    });
    await response.body?.cancel();
    if (response.status < 200 || response.status > 299) throw new Error(`the webhook answered HTTP ${response.status}`);
  };
}

/** The file target: JSON lines appended in order, fsynced on the cadence, reopened on request. */
class AuditFile {
  private readonly writes = new SerialChain();
  private pending: string[] = [];
  private unsynced = false;
  private syncTimer: unknown;
  private lastWarningMs = -Infinity;

  private constructor(
    private readonly path: string,
    private handle: FileHandle,
    private readonly options: Pick<AuditLogOptions, 'timers' | 'logger' | 'clock'>,
    private readonly fsyncIntervalMs: number,
  ) {}

  static async open(path: string, options: Pick<AuditLogOptions, 'timers' | 'logger' | 'clock'>, fsyncIntervalMs: number): Promise<AuditFile> {
    const handle = await open(path, 'a').catch((error: unknown) => {
      throw new SvcError('InvalidConfiguration', `SVC_AUDIT_FILE: cannot open ${path} for appending: ${String(error)}`, { variable: 'SVC_AUDIT_FILE' });
    });
    return new AuditFile(path, handle, options, fsyncIntervalMs);
  }

  append(line: string): void {
    this.pending.push(line);
    if (this.pending.length === 1) void this.writes.run(() => this.flush());
  }

  reopen(): Promise<void> {
    return this.writes.run(async () => {
      await this.flush();
      await this.sync();
      await this.handle.close();
      this.handle = await open(this.path, 'a');
    });
  }

  async close(): Promise<void> {
    if (this.syncTimer !== undefined) this.options.timers.clearTimeout(this.syncTimer);
    await this.writes.run(async () => {
      await this.flush();
      await this.sync();
      await this.handle.close();
    });
  }

  private async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const lines = this.pending;
    this.pending = [];
    try {
      await this.handle.write(`${lines.join('\n')}\n`);
      this.unsynced = true;
      if (this.syncTimer === undefined) this.syncTimer = this.options.timers.setTimeout(() => void this.writes.run(() => this.sync()), this.fsyncIntervalMs);
    } catch (error) {
      this.warn(error, lines.length);
    }
  }

  private async sync(): Promise<void> {
    this.syncTimer = undefined;
    if (!this.unsynced) return;
    this.unsynced = false;
    await this.handle.datasync().catch((error: unknown) => this.warn(error, 0));
  }

  private warn(error: unknown, lostEntries: number): void {
    const nowMs = this.options.clock.nowMs();
    if (nowMs - this.lastWarningMs < limits.auditWriteWarningIntervalMs) return;
    this.lastWarningMs = nowMs;
    this.options.logger.warn({ error: String(error), file: this.path, lostEntries }, 'the audit file could not be written');
  }
}
