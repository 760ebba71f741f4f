/**
 * Heal orchestration (SPEC "Heal and drive replacement", "Endpoint rules" 3-6, "Restart rules"):
 *
 * - Heal sequences started by the admin API, identified by a client token: one object, a prefix,
 *   a bucket, every set (root, recursive), or one erasure set (root with pool and set, format of a
 *   replaced drive included). Every object is healed under its lock (ErasureSet.healObject).
 * - Background work, one task at a time: erasure-set heals for replaced drives found at startup
 *   (the recorded replacement intent) and for every local set after an unclean shutdown.
 * - The MRF queue: reads that met missing or corrupt shards and writes that missed drives report
 *   the object; a bounded queue heals them in the background and is saved on graceful shutdown
 *   (mrf-file.ts), read back strictly at the next start. With read-repair off (SVC_HEAL_MRF=off)
 *   reports are only counted, and a saved queue stays unread.
 * - A root heal still running at graceful shutdown is saved as `root-heal-<task-id>.json` and
 *   replayed with the same task id at startup.
 * - A saved queue or root-heal record that is invalid, oversized or of an unsupported version is
 *   quarantined (state-quarantine.ts: moved aside, logged by name, counted) and never read again.
 */
import { randomUUID } from 'node:crypto';
import { SvcError } from '../errors/index.js';
import { systemDir, type Drive } from '../drive/index.js';
import type { ErasureSet, HealObjectResult, ObjectLayer, RepairRequest, UploadLeftover } from '../object/index.js';
import type { StartedStorage } from '../cluster/startup.js';
import { limits } from '../util/limits.js';
import type { BackgroundHealStatus } from '../contracts/cluster.js';
import { rewriteWithCurrentParity } from './move-object.js';
import { decodeMrfFile, encodeMrfFile } from './mrf-file.js';
import { readStateFile, StateFileQuarantine } from '../cluster/state-quarantine.js';

export type { HealOptions, HealPath, HealItem, HealCounts, HealSequenceStatus } from '../contracts/operations.js';
import type { HealOptions, HealPath, HealItem, HealCounts, HealSequenceStatus } from '../contracts/operations.js';

export interface ReplacementRecord {
  pool: number;
  set: number;
  slot: number;
  endpoint: string;
  /** The failed drive's id, kept by the slot: the replacement is formatted with it. */
  driveId: string;
  detectedAt: string;
  startedAt?: string;
  finishedAt?: string;
  objectsHealed: number;
  objectsFailed: number;
  /** True only when the set heal finished with every object of that drive rebuilt. */
  completed: boolean;
}

interface Sequence {
  status: HealSequenceStatus;
  abort: AbortController;
  done: Promise<void>;
  /** Where a root heal is, for the record saved at shutdown. */
  cursor: { pool: number; set: number };
  background: boolean;
}

interface RootHealRecord {
  version: 1;
  clientToken: string;
  options: HealOptions;
  startedAt: string;
  cursor: { pool: number; set: number };
}

export interface HealLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

const recordPrefix = 'root-heal-';

class Stopped extends Error {}

export class HealManager {
  private readonly sequences = new Map<string, Sequence>();
  private readonly replacements: ReplacementRecord[] = [];
  private readonly mrf: MrfEntry[] = [];
  private readonly mrfKeys = new Set<string>();
  /** Entries whose heal found drives offline, each waiting for its next attempt. */
  private readonly mrfWaiting = new Map<string, { entry: MrfEntry; timer: NodeJS.Timeout }>();
  private mrfStats = { processed: 0, failed: 0, dropped: 0, retried: 0, gaveUp: 0, notQueued: 0 };
  private mrfRunning: Promise<void> | undefined;
  private background: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly options: {
      storage: StartedStorage;
      /** This node's name, for its MRF file. */
      nodeName: string;
      /**
       * Appended to the client tokens this node mints (`@<node index>` in a cluster of several
       * nodes), so that any node can tell which node runs a heal and forward to it.
       */
      tokenSuffix?: string;
      nowMs: () => number;
      logger: HealLogger;
      /** Where refused state files go (the node's one quarantine; a private one when unset). */
      quarantine?: StateFileQuarantine;
      /**
       * How long after finding an upload directory left behind a bucket heal looks again before
       * removing it: the drive deadline (SVC_DRIVE_MAX_TIMEOUT), by which any Create in flight at
       * the first look has ended.
       */
      uploadSettleMs?: number;
      /**
       * False (SVC_HEAL_MRF=off): reports of damaged objects are counted, not queued, and a queue
       * saved at a shutdown stays on disk unread; only heal sequences repair.
       */
      readRepair?: boolean;
    },
  ) {}

  private ownQuarantine: StateFileQuarantine | undefined;

  private get quarantine(): StateFileQuarantine {
    this.ownQuarantine ??= this.options.quarantine ?? new StateFileQuarantine(this.options.logger, this.options.nowMs);
    return this.ownQuarantine;
  }

  private get objects(): ObjectLayer {
    return this.options.storage.objects;
  }

  // --- startup -----------------------------------------------------------------------------

  /** Replacement intents, unclean-shutdown heals, saved MRF entries and root heals. */
  async start(): Promise<void> {
    const { storage } = this.options;
    const readRepair = this.options.readRepair ?? true;
    storage.onRepairNeeded((pool, set, request) => {
      if (readRepair) this.enqueue(pool, set, request);
      else this.mrfStats.notQueued += 1;
    });
    if (!readRepair) this.options.logger.warn({ variable: 'SVC_HEAL_MRF' }, 'read-repair is off: objects reads and writes find damaged are repaired only by a heal sequence');
    for (const pending of storage.driveMonitor.pendingSlots()) {
      if (pending.reason !== 'unformatted' || !storage.isLocal(pending.drive)) continue;
      this.replacements.push({ pool: pending.pool, set: pending.set, slot: pending.slot, endpoint: pending.drive.endpoint, driveId: pending.expectedDriveId, detectedAt: new Date(this.options.nowMs()).toISOString(), objectsHealed: 0, objectsFailed: 0, completed: false });
      this.options.logger.warn({ pool: pending.pool, set: pending.set, slot: pending.slot, endpoint: pending.drive.endpoint, driveId: pending.expectedDriveId }, 'replaced drive found: it stays offline until its erasure set is healed');
    }
    const replacedSets = new Set(this.replacements.map((record) => `${record.pool}/${record.set}`));
    for (const key of replacedSets) {
      const [pool, set] = key.split('/').map(Number) as [number, number];
      this.runInBackground(`replace-${pool}-${set}`, { pool, set });
    }
    if (storage.lastShutdownUnclean) {
      for (const [pool, sets] of storage.setDrives.entries()) {
        for (const [set, drives] of sets.entries()) {
          if (replacedSets.has(`${pool}/${set}`)) continue;
          if (drives.some((drive) => drive && storage.isLocal(drive))) this.runInBackground(`unclean-${pool}-${set}`, { pool, set });
        }
      }
    }
    if (readRepair) await this.loadMrf();
    await this.replayRootHeals();
  }

  // --- admin sequences ---------------------------------------------------------------------

  async startSequence(path: HealPath, options: HealOptions, control: { clientToken?: string; forceStart?: boolean } = {}): Promise<HealSequenceStatus> {
    if (path.bucket !== undefined) await this.objects.requireBucket(path.bucket);
    const running = [...this.sequences.values()].find((sequence) => !sequence.background && sequence.status.status === 'running' && samePath(sequence.status.path, path));
    if (running && !control.forceStart) {
      throw new SvcError('HealAlreadyRunning', `a heal of this path is running (client token ${running.status.clientToken}); pass forceStart to replace it`, { clientToken: running.status.clientToken });
    }
    if (running) running.abort.abort();
    return this.launch(control.clientToken ?? `${randomUUID()}${this.options.tokenSuffix ?? ''}`, path, options, false, { pool: 0, set: 0 }).status;
  }

  sequenceStatus(clientToken: string): HealSequenceStatus {
    const sequence = this.sequences.get(clientToken);
    if (!sequence) throw new SvcError('NoSuchHealSequence', undefined, { clientToken });
    return sequence.status;
  }

  /**
   * The heal with this client token, stopped first when `stop`. The root path finds any heal by
   * its token; any other path must be the heal's own.
   */
  async sequenceFor(clientToken: string, path: HealPath, stop: boolean): Promise<HealSequenceStatus> {
    const status = this.sequenceStatus(clientToken);
    if (path.bucket !== undefined && !samePath(status.path, path)) throw new SvcError('InvalidArgument', 'the clientToken belongs to a heal of another path');
    return stop ? this.stopSequence(clientToken) : status;
  }

  async stopSequence(clientToken: string): Promise<HealSequenceStatus> {
    const sequence = this.sequences.get(clientToken);
    if (!sequence) throw new SvcError('NoSuchHealSequence', undefined, { clientToken });
    sequence.abort.abort();
    await sequence.done;
    return sequence.status;
  }

  backgroundStatus(): BackgroundHealStatus {
    const background = [...this.sequences.values()].filter((sequence) => sequence.background).map((sequence) => ({ task: sequence.status.clientToken, status: sequence.status.status, pool: sequence.status.options.pool, set: sequence.status.options.set, counts: sequence.status.counts }));
    return {
      mrf: { queued: this.mrf.length, awaitingDrives: this.mrfWaiting.size, limit: limits.mrfQueueLimit, ...this.mrfStats },
      stateFilesQuarantined: this.quarantine.total(),
      background,
      healingDrives: this.replacements.map((record) => ({ endpoint: record.endpoint, pool: record.pool, set: record.set, slot: record.slot, state: record.completed ? 'healed' : record.startedAt ? 'healing' : 'waiting', objectsHealed: record.objectsHealed, objectsFailed: record.objectsFailed })),
    };
  }

  /** Every sequence still known (running, and the latest ended ones), for metrics. */
  sequenceList(): HealSequenceStatus[] {
    return [...this.sequences.values()].map((sequence) => sequence.status);
  }

  replacementRecovery(): { instances: ReplacementRecord[] } {
    return { instances: this.replacements.map((record) => ({ ...record })) };
  }

  /** Graceful shutdown: saves a running root heal and the MRF queue, stops every worker. */
  async close(): Promise<void> {
    this.closed = true;
    const rootHeals = [...this.sequences.values()].filter((sequence) => !sequence.background && sequence.status.status === 'running' && sequence.status.path.bucket === undefined);
    for (const sequence of rootHeals) await this.saveRootHeal(sequence).catch((error: unknown) => this.options.logger.warn({ error: String(error) }, 'could not save the running root heal'));
    for (const sequence of this.sequences.values()) sequence.abort.abort();
    await Promise.all([...this.sequences.values()].map((sequence) => sequence.done));
    await this.mrfRunning;
    await this.saveMrf().catch((error: unknown) => this.options.logger.warn({ error: String(error) }, 'could not save the MRF queue'));
  }

  // --- running a sequence ------------------------------------------------------------------

  private launch(clientToken: string, path: HealPath, options: HealOptions, background: boolean, cursor: { pool: number; set: number }): Sequence {
    const abort = new AbortController();
    const status: HealSequenceStatus = {
      clientToken,
      path,
      options,
      status: 'running',
      startedAt: new Date(this.options.nowMs()).toISOString(),
      counts: { objectsScanned: 0, objectsHealed: 0, objectsUnrecoverable: 0, shardsHealed: 0, failures: 0 },
      items: [],
    };
    const sequence: Sequence = { status, abort, done: Promise.resolve(), cursor: { ...cursor }, background };
    sequence.done = this.execute(sequence).then(
      () => {
        status.status = abort.signal.aborted ? 'stopped' : 'finished';
      },
      (error: unknown) => {
        if (error instanceof Stopped || abort.signal.aborted) {
          status.status = 'stopped';
          return;
        }
        status.status = 'failed';
        status.lastError = error instanceof Error ? error.message : String(error);
        this.options.logger.warn({ clientToken, error: status.lastError }, 'heal failed');
      },
    ).finally(() => {
      status.finishedAt = new Date(this.options.nowMs()).toISOString();
      this.options.logger.info({ clientToken, status: status.status, counts: status.counts }, 'heal ended');
    });
    this.sequences.set(clientToken, sequence);
    this.pruneSequences();
    return sequence;
  }

  private async execute(sequence: Sequence): Promise<void> {
    const { path, options } = sequence.status;
    if (path.bucket === undefined) {
      for (const [pool, sets] of this.objects.pools.map((entry) => entry.sets).entries()) {
        for (const [set] of sets.entries()) {
          if (options.pool !== undefined && (pool !== options.pool || set !== options.set)) continue;
          if (pool < sequence.cursor.pool || (pool === sequence.cursor.pool && set < sequence.cursor.set)) continue;
          sequence.cursor = { pool, set };
          await this.healSet(sequence, pool, set);
        }
      }
      return;
    }
    const bucket = path.bucket;
    await this.objects.requireBucket(bucket);
    const recursive = path.prefix === undefined || options.recursive;
    for (const [pool, entry] of this.objects.pools.entries()) {
      for (const [setIndex, set] of entry.sets.entries()) {
        const leftovers = path.prefix ? undefined : await this.lookForUploadLeftovers(set, bucket);
        if (!path.prefix) await this.healBucketOnSet(sequence, pool, setIndex, set, bucket);
        if (recursive) {
          for await (const key of set.listAnyKeys(bucket, { prefix: path.prefix ?? '' })) await this.healKey(sequence, pool, setIndex, set, bucket, key);
        } else {
          await this.healKey(sequence, pool, setIndex, set, bucket, path.prefix!);
        }
        if (leftovers) await this.healUploadLeftovers(sequence, pool, setIndex, set, bucket, leftovers);
      }
    }
  }

  /** The first look for upload directories left behind (ErasureSet.findUploadLeftovers), and when it was taken. */
  private async lookForUploadLeftovers(set: ErasureSet, bucket: string): Promise<{ found: UploadLeftover[]; atMs: number }> {
    const atMs = performance.now();
    const found = await set.findUploadLeftovers(bucket).catch(() => [] as UploadLeftover[]);
    return { found, atMs };
  }

  /**
   * Removes the upload directories still left behind a drive deadline after the first look (a
   * Create in flight then has ended: its record is on a quorum, or was rolled back), each an item.
   */
  private async healUploadLeftovers(sequence: Sequence, pool: number, setIndex: number, set: ErasureSet, bucket: string, first: { found: UploadLeftover[]; atMs: number }): Promise<void> {
    if (first.found.length === 0) return;
    const waitMs = first.atMs + (this.options.uploadSettleMs ?? limits.driveCallDeadlineMsDefault) - performance.now();
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
    if (sequence.abort.signal.aborted || this.closed) throw new Stopped();
    const dryRun = sequence.status.options.dryRun === true;
    let still: UploadLeftover[];
    try {
      still = await set.removeUploadLeftovers(bucket, first.found, dryRun);
    } catch (error) {
      sequence.status.counts.failures += 1;
      this.record(sequence, { type: 'upload', pool, set: setIndex, bucket, outcome: 'failed', reason: `upload directories left behind: ${error instanceof Error ? error.message : String(error)}` });
      return;
    }
    const endpoints = set.drives.map((drive, slot) => drive?.endpoint ?? `slot ${slot}`);
    for (const leftover of still) {
      this.record(sequence, {
        type: 'upload',
        pool,
        set: setIndex,
        bucket,
        ...(leftover.key !== undefined ? { object: leftover.key } : {}),
        outcome: dryRun ? 'would-heal' : 'healed',
        reason: `upload ${leftover.uploadId} ended (completed or aborted) while ${leftover.slots.map((slot) => endpoints[slot]!).join(', ')} kept its directory: ${dryRun ? 'would be removed' : 'removed'} there`,
      });
    }
  }

  /** One erasure set: the format of replaced drives, the buckets on every drive, every object. */
  private async healSet(sequence: Sequence, pool: number, setIndex: number): Promise<void> {
    const { storage } = this.options;
    const set = this.objects.pools[pool]!.sets[setIndex]!;
    const replaced = storage.driveMonitor.pendingSlots().filter((pending) => pending.pool === pool && pending.set === setIndex && pending.reason === 'unformatted');
    for (const pending of replaced) {
      const item: HealItem = { type: 'format', pool, set: setIndex, outcome: sequence.status.options.dryRun ? 'would-heal' : 'healed', reason: `slot ${pending.slot} (${pending.drive.endpoint}) gets drive id ${pending.expectedDriveId}` };
      if (!sequence.status.options.dryRun) {
        await storage.formatReplacedDrive(pool, setIndex, pending.slot);
        const record = this.replacementFor(pool, setIndex, pending.slot);
        if (record) record.startedAt = new Date(this.options.nowMs()).toISOString();
      }
      this.record(sequence, item);
    }
    for (const bucket of await this.objects.listBuckets()) {
      const leftovers = await this.lookForUploadLeftovers(set, bucket.name);
      await this.healBucketOnSet(sequence, pool, setIndex, set, bucket.name);
      for await (const key of set.listAnyKeys(bucket.name, { prefix: '' })) await this.healKey(sequence, pool, setIndex, set, bucket.name, key);
      await this.healUploadLeftovers(sequence, pool, setIndex, set, bucket.name, leftovers);
    }
    for (const record of this.replacements.filter((candidate) => candidate.pool === pool && candidate.set === setIndex)) {
      if (sequence.status.options.dryRun || !record.startedAt) continue;
      record.finishedAt = new Date(this.options.nowMs()).toISOString();
      record.completed = record.objectsFailed === 0 && storage.setDrives[pool]![setIndex]![record.slot] !== undefined;
      this.options.logger.info({ ...record }, record.completed ? 'replaced drive rebuilt' : 'replaced drive not fully rebuilt');
    }
  }

  private async healBucketOnSet(sequence: Sequence, pool: number, setIndex: number, set: ErasureSet, bucket: string): Promise<void> {
    if (sequence.status.options.dryRun) return;
    try {
      await set.makeBucketDir(bucket);
      const record = await this.objects.bucketRecord(bucket);
      if (record) await this.objects.rewriteBucketRecord(record, [set]);
    } catch (error) {
      this.record(sequence, { type: 'bucket', pool, set: setIndex, bucket, outcome: 'failed', reason: error instanceof Error ? error.message : String(error) });
      sequence.status.counts.failures += 1;
    }
  }

  private async healKey(sequence: Sequence, pool: number, setIndex: number, set: ErasureSet, bucket: string, key: string): Promise<void> {
    if (sequence.abort.signal.aborted || this.closed) throw new Stopped();
    const { options } = sequence.status;
    const counts = sequence.status.counts;
    counts.objectsScanned += 1;
    let result: HealObjectResult;
    try {
      result = await set.healObject(bucket, key, { dryRun: options.dryRun, remove: options.remove, recreate: options.recreate, scanMode: options.scanMode });
      if (options.updateParity && !options.dryRun && result.outcome !== 'unrecoverable' && result.outcome !== 'absent') {
        const release = await this.objects.lockObject(bucket, key);
        try {
          await rewriteWithCurrentParity(this.objects, pool, bucket, key);
        } finally {
          release();
        }
      }
    } catch (error) {
      counts.failures += 1;
      this.noteReplacement(pool, setIndex, false);
      this.record(sequence, { type: 'object', pool, set: setIndex, bucket, object: key, outcome: 'failed', reason: error instanceof Error ? error.message : String(error) });
      return;
    }
    if (result.outcome === 'absent') return;
    if (result.outcome === 'healed') counts.objectsHealed += 1;
    if (result.outcome === 'unrecoverable') counts.objectsUnrecoverable += 1;
    counts.shardsHealed += result.shardsHealed;
    this.noteReplacement(pool, setIndex, result.outcome !== 'unrecoverable');
    if (result.outcome === 'healthy' && !options.dryRun) return; // only what changed or needs attention is listed
    const endpoints = set.drives.map((drive, slot) => drive?.endpoint ?? `slot ${slot}`);
    this.record(sequence, {
      type: 'object',
      pool,
      set: setIndex,
      bucket,
      object: key,
      outcome: result.outcome,
      ...(result.reason ? { reason: result.reason } : {}),
      before: result.before.map((state, slot) => ({ endpoint: endpoints[slot]!, state })),
      after: result.after.map((state, slot) => ({ endpoint: endpoints[slot]!, state })),
      shardsHealed: result.shardsHealed,
    });
  }

  private noteReplacement(pool: number, set: number, healed: boolean): void {
    for (const record of this.replacements) {
      if (record.pool !== pool || record.set !== set || !record.startedAt || record.finishedAt) continue;
      if (healed) record.objectsHealed += 1;
      else record.objectsFailed += 1;
    }
  }

  private replacementFor(pool: number, set: number, slot: number): ReplacementRecord | undefined {
    return this.replacements.find((record) => record.pool === pool && record.set === set && record.slot === slot && !record.finishedAt);
  }

  private record(sequence: Sequence, item: HealItem): void {
    sequence.status.items.push(item);
    if (sequence.status.items.length > limits.healItemsKept) sequence.status.items.splice(0, sequence.status.items.length - limits.healItemsKept);
  }

  private pruneSequences(): void {
    const finished = [...this.sequences.entries()].filter(([, sequence]) => sequence.status.status !== 'running');
    for (const [token] of finished.slice(0, Math.max(0, finished.length - 32))) this.sequences.delete(token);
  }

  /** Background set heals run one after another. */
  private runInBackground(task: string, target: { pool: number; set: number }): void {
    this.background = this.background.then(async () => {
      if (this.closed) return;
      const options: HealOptions = { recursive: true, dryRun: false, remove: false, recreate: false, scanMode: 'normal', updateParity: false, pool: target.pool, set: target.set };
      this.options.logger.info({ task, ...target }, 'background erasure-set heal started');
      await this.launch(task, {}, options, true, target).done;
    });
  }

  // --- MRF ---------------------------------------------------------------------------------

  enqueue(pool: number, set: number, request: Pick<RepairRequest, 'bucket' | 'key'>, attempts = 0): void {
    const id = mrfId({ pool, set, ...request });
    const waiting = this.mrfWaiting.get(id);
    if (waiting) {
      // Asked again (another read or write found it damaged): try now rather than at its turn.
      clearTimeout(waiting.timer);
      this.mrfWaiting.delete(id);
    }
    if (this.mrfKeys.has(id)) return;
    if (this.mrf.length >= limits.mrfQueueLimit) {
      this.mrfStats.dropped += 1;
      return;
    }
    this.mrfKeys.add(id);
    this.mrf.push({ pool, set, bucket: request.bucket, key: request.key, ...(attempts > 0 ? { attempts } : {}) });
    this.mrfRunning ??= this.drainMrf().finally(() => {
      this.mrfRunning = undefined;
    });
  }

  private async drainMrf(): Promise<void> {
    while (this.mrf.length > 0 && !this.closed) {
      const next = this.mrf.shift()!;
      this.mrfKeys.delete(mrfId(next));
      try {
        // Deep: the report may be of a shard that fails its bitrot check but has the right size.
        const result = await this.objects.pools[next.pool]!.sets[next.set]!.healObject(next.bucket, next.key, { scanMode: 'deep' });
        if (result.outcome === 'unrecoverable') this.mrfStats.failed += 1;
        this.mrfStats.processed += 1;
        // Drives that were offline (a node down) missed what this object needs: try again later.
        if (result.outcome !== 'absent' && result.after.includes('offline')) this.retryLater(next);
      } catch {
        this.mrfStats.failed += 1;
        this.retryLater(next);
      }
    }
  }

  /** Tries an entry again after a delay that doubles with each attempt, up to the attempts allowed. */
  private retryLater(entry: MrfEntry): void {
    const attempts = (entry.attempts ?? 0) + 1;
    if (this.closed) return;
    if (attempts > limits.mrfRetryMaxAttempts) {
      this.mrfStats.gaveUp += 1;
      return;
    }
    const id = mrfId(entry);
    if (this.mrfWaiting.has(id) || this.mrfKeys.has(id)) return;
    const delayMs = Math.min(limits.mrfRetryMaxDelayMs, limits.mrfRetryFirstDelayMs * 2 ** (attempts - 1));
    const timer = setTimeout(() => {
      this.mrfWaiting.delete(id);
      this.mrfStats.retried += 1;
      this.enqueue(entry.pool, entry.set, entry, attempts);
    }, delayMs);
    timer.unref();
    this.mrfWaiting.set(id, { entry: { ...entry, attempts }, timer });
  }

  private mrfPath(): string {
    return `${systemDir}/mrf-${this.options.nodeName.replace(/[^A-Za-z0-9.-]/g, '_')}.json`;
  }

  private localDrives(): Drive[] {
    const { storage } = this.options;
    return storage.setDrives.flat(2).filter((drive): drive is Drive => drive !== undefined && storage.isLocal(drive));
  }

  private async saveMrf(): Promise<void> {
    const entries = [...this.mrf, ...[...this.mrfWaiting.values()].map((waiting) => waiting.entry)];
    for (const waiting of this.mrfWaiting.values()) clearTimeout(waiting.timer);
    this.mrfWaiting.clear();
    if (entries.length === 0) return;
    const { bytes, dropped } = encodeMrfFile(entries);
    if (dropped > 0) {
      this.mrfStats.dropped += dropped;
      this.options.logger.warn({ dropped, saved: entries.length - dropped }, 'the read-repair queue is larger than its file may be: the rest is dropped');
    }
    const drive = this.localDrives()[0];
    if (drive) await drive.writeFileAtomic(this.mrfPath(), bytes);
  }

  /** The queue saved at the last graceful shutdown, read strictly; a refused file is quarantined. */
  private async loadMrf(): Promise<void> {
    const path = this.mrfPath();
    for (const drive of this.localDrives()) {
      let entries;
      try {
        const bytes = await readStateFile(drive, path, limits.maxMrfFileBytes);
        if (bytes === undefined) continue;
        entries = decodeMrfFile(bytes);
      } catch (error) {
        await this.quarantine.moveAside(drive, path, 'mrf', error);
        continue;
      }
      await drive.deleteFile(path).catch((error: unknown) => this.options.logger.warn({ file: path, endpoint: drive.endpoint, error: String(error) }, 'could not delete the read-repair queue file once loaded'));
      const outside = entries.filter((entry) => !this.objects.pools[entry.pool]?.sets[entry.set]);
      if (outside.length > 0) {
        this.mrfStats.dropped += outside.length;
        this.options.logger.warn({ file: path, dropped: outside.length }, 'saved read-repair entries name erasure sets this deployment does not have: dropped');
      }
      for (const entry of entries) if (!outside.includes(entry)) this.enqueue(entry.pool, entry.set, entry);
    }
  }

  // --- root heal records -------------------------------------------------------------------

  private async saveRootHeal(sequence: Sequence): Promise<void> {
    const record: RootHealRecord = { version: 1, clientToken: sequence.status.clientToken, options: sequence.status.options, startedAt: sequence.status.startedAt, cursor: sequence.cursor };
    const bytes = Buffer.from(JSON.stringify(record));
    const drive = this.localDrives()[0];
    if (!drive) return;
    await drive.writeFileAtomic(`${systemDir}/${recordPrefix}${safeName(record.clientToken)}.json`, bytes);
    this.options.logger.info({ clientToken: record.clientToken, cursor: record.cursor }, 'saved the running root heal for the next start');
  }

  private async replayRootHeals(): Promise<void> {
    for (const drive of this.localDrives()) {
      const names = (await drive.listDir(systemDir).catch(() => [] as string[])).filter((name) => name.startsWith(recordPrefix) && name.endsWith('.json'));
      for (const name of names) {
        const path = `${systemDir}/${name}`;
        let record: RootHealRecord;
        try {
          const bytes = await readStateFile(drive, path, limits.maxHealRecordBytes);
          if (bytes === undefined) continue;
          record = parseRootHealRecord(bytes);
        } catch (error) {
          await this.quarantine.moveAside(drive, path, 'root-heal', error);
          continue;
        }
        await drive.deleteFile(path).catch((error: unknown) => this.options.logger.warn({ record: name, error: String(error) }, 'could not delete the root heal record once loaded'));
        if (this.sequences.has(record.clientToken)) continue;
        this.options.logger.info({ clientToken: record.clientToken, cursor: record.cursor }, 'resuming the root heal saved at the last shutdown');
        this.launch(record.clientToken, {}, record.options, false, record.cursor);
      }
    }
  }
}

function parseRootHealRecord(bytes: Uint8Array): RootHealRecord {
  if (bytes.length > limits.maxHealRecordBytes) throw new SvcError('CorruptFormat', `root heal record is ${bytes.length} bytes, more than ${limits.maxHealRecordBytes}`);
  let parsed: Partial<RootHealRecord>;
  try {
    parsed = JSON.parse(Buffer.from(bytes).toString('utf8')) as Partial<RootHealRecord>;
  } catch {
    throw new SvcError('CorruptFormat', 'root heal record is not JSON');
  }
  if (parsed.version !== 1) throw new SvcError('UnsupportedFormat', `root heal record version ${String(parsed.version)} is not supported`);
  const options = parsed.options as HealOptions | undefined;
  if (typeof parsed.clientToken !== 'string' || !options || typeof options.recursive !== 'boolean' || !['normal', 'deep'].includes(options.scanMode) || typeof parsed.cursor?.pool !== 'number' || typeof parsed.cursor?.set !== 'number') {
    throw new SvcError('CorruptFormat', 'root heal record has missing or malformed fields');
  }
  return parsed as RootHealRecord;
}

interface MrfEntry {
  pool: number;
  set: number;
  bucket: string;
  key: string;
  /** Attempts made so far, for entries tried again because drives were offline. */
  attempts?: number;
}

function mrfId(entry: Pick<MrfEntry, 'pool' | 'set' | 'bucket' | 'key'>): string {
  return `${entry.pool}/${entry.set}/${entry.bucket}/${entry.key}`;
}

function samePath(a: HealPath, b: HealPath): boolean {
  return a.bucket === b.bucket && (a.prefix ?? '') === (b.prefix ?? '');
}

function safeName(token: string): string {
  return token.replace(/[^A-Za-z0-9-]/g, '_');
}

