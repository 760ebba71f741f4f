/**
 * The lifecycle scanner: walks the buckets that have rules, at most `objectsPerSecond` keys a
 * second, and carries out what the rules say is due (lifecycle-rules.ts): expires current
 * versions, removes noncurrent versions and expired delete markers, moves versions to remote
 * tiers, aborts incomplete multipart uploads. Only the keys under the rules' prefixes are walked
 * (every key when a rule has none); a bucket without rules is not listed at all.
 *
 * It also ends restored copies (RestoreObject) whose days are up, in every bucket whether or not it
 * has rules, from the restored-copy index (tier/restore-index.ts) rather than a walk: each cycle
 * reads the sets' indexes and ends the copies due. Being scheduled and durable, this outlives
 * restarts. When a set's index is marked for repair (a copy of it was refused), the cycle walks
 * every key of every bucket instead, notes the restored copies it finds, and clears the mark.
 *
 * - A key whose listing shows something due is locked (the object's write lock, as PUT and DELETE
 *   take it), read again and planned again before anything is deleted, so a version written in
 *   between is judged on what is stored now. Deletes go through the object layer.
 * - In a cluster every node runs the scanner; a scheduled cycle scans only the buckets this node
 *   owns (bucket name hashed over the nodes) and ends only their restored copies, a cycle started
 *   by hand (or one that repairs an index) scans every bucket. Either way a bucket is scanned under
 *   a cluster-wide lock, so never by two nodes at once.
 * - Its clock (`now`) is injected: the rules are judged at `now()`, which tests move forward.
 */
import { removalEvent, type ObjectEvent } from './events/types.js';
import { isSvcError, SvcError, type ErrorCode } from '../errors/index.js';
import { limits } from '../util/limits.js';
import type { BucketRecord, LifecycleRule, ObjectInfo, ObjectLayer } from '../object/index.js';
import { activeRules, planKey, uploadAbortRule, type LifecycleAction, type LifecycleActionKind, type TransitionAction } from './lifecycle-rules.js';
import type { DueCopy, RestoreIndex, SettledCopy } from './tier/restore-index.js';

export type { LifecycleCycle, LifecycleStatus } from '../contracts/operations.js';
import type { LifecycleCycle, LifecycleStatus } from '../contracts/operations.js';

export interface LifecycleScannerOptions {
  objects: ObjectLayer;
  /** The lifecycle clock (milliseconds since the epoch). */
  now: () => number;
  objectsPerSecond: number;
  /** Scheduled cycles start this long after the previous one ended. */
  intervalMs: number;
  /** Is this node the one that scans the bucket on schedule? */
  ownsBucket: (bucket: string) => boolean;
  /** The bucket's cluster-wide scan lock; undefined when another node holds it. */
  lockBucket: (bucket: string) => Promise<(() => void) | undefined>;
  logger: { info(fields: Record<string, unknown>, message: string): void; warn(fields: Record<string, unknown>, message: string): void };
  /** Told of every expiry (bucket notifications: s3:LifecycleExpiration:*); resolves once it is queued. */
  onExpired?: (event: ObjectEvent) => Promise<void>;
  /**
   * Moves one version's data to a tier (src/ops/tier/transition.ts); the scanner holds the
   * object's write lock. Without it, transition rules wait (nothing is moved).
   */
  transition?: (bucket: string, key: string, version: ObjectInfo, tier: string) => Promise<void>;
  /**
   * The restored-copy index: restored copies end from it, without a walk. Without it only the
   * copies on keys walked for the rules are ended.
   */
  restores?: Pick<RestoreIndex, 'due' | 'settle' | 'needingRepair' | 'repaired'>;
}

/** One cycle's walk: whether it repairs the restored-copy index (every key of every bucket), and whether it missed anything. */
interface Walk {
  repairSets: { poolIndex: number; setIndex: number }[];
  complete: boolean;
}

/** What ending a restored copy may meet when its version, or its bucket, is gone since it was indexed. */
const goneCodes: ErrorCode[] = ['NoSuchBucket', 'NoSuchKey', 'NoSuchVersion', 'MethodNotAllowed'];

const kindCounter: Record<LifecycleActionKind, keyof LifecycleCycle['expired']> = { current: 'currentVersions', noncurrent: 'noncurrentVersions', deleteMarker: 'deleteMarkers' };

export class LifecycleScanner {
  private current: LifecycleCycle | undefined;
  private last: LifecycleCycle | undefined;
  private running: Promise<LifecycleCycle> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private nextCycleMs: number | undefined;
  private closed = false;

  constructor(private readonly options: LifecycleScannerOptions) {}

  /** Schedules cycles: the first one an interval from now, each next one an interval after the last ended. */
  start(): void {
    this.schedule();
  }

  /** Starts a cycle over every bucket now; LifecycleScanRunning while one runs. */
  runNow(): LifecycleCycle {
    if (this.running) throw new SvcError('LifecycleScanRunning', undefined, { startedAt: this.current?.startedAt });
    void this.runCycle('manual').catch(() => undefined);
    return this.current!;
  }

  /** Runs one cycle to its end (tests await it; the schedule and runNow start it). */
  runCycle(trigger: LifecycleCycle['trigger']): Promise<LifecycleCycle> {
    if (this.running) throw new SvcError('LifecycleScanRunning', undefined, { startedAt: this.current?.startedAt });
    const cycle = newCycle(trigger, this.options.now());
    this.current = cycle;
    this.running = this.scan(cycle).finally(() => {
      cycle.finishedAt = new Date().toISOString();
      cycle.currentBucket = null;
      this.last = cycle;
      this.current = undefined;
      this.running = undefined;
      this.options.logger.info({ ...cycle, recentErrors: undefined }, 'lifecycle cycle finished');
    }).then(() => cycle);
    return this.running;
  }

  status(): LifecycleStatus {
    return {
      running: this.running !== undefined,
      intervalMs: this.options.intervalMs,
      objectsPerSecond: this.options.objectsPerSecond,
      nextCycleAt: this.nextCycleMs === undefined || this.running ? null : new Date(this.nextCycleMs).toISOString(),
      current: this.current ? { ...this.current, expired: { ...this.current.expired } } : null,
      last: this.last ?? null,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  private schedule(): void {
    if (this.closed) return;
    this.nextCycleMs = Date.now() + this.options.intervalMs;
    this.timer = setTimeout(() => {
      const done = this.running ?? this.runCycle('schedule');
      void done.catch(() => undefined).finally(() => this.schedule());
    }, this.options.intervalMs);
    this.timer.unref();
  }

  private async scan(cycle: LifecycleCycle): Promise<void> {
    const pace = pacer(this.options.objectsPerSecond);
    const walk: Walk = { repairSets: await this.setsToRepair(cycle), complete: true };
    cycle.repairWalk = walk.repairSets.length > 0;
    const buckets = await this.options.objects.listBuckets().catch((error: unknown) => {
      noteError(cycle, `listing buckets: ${String(error)}`);
      walk.complete = false;
      return [] as BucketRecord[];
    });
    for (const bucket of buckets) {
      if (this.closed) return;
      if (cycle.trigger === 'schedule' && !cycle.repairWalk && !this.options.ownsBucket(bucket.name)) continue;
      const release = await this.options.lockBucket(bucket.name).catch(() => undefined);
      if (!release) {
        cycle.bucketsSkipped += 1;
        walk.complete = false;
        continue;
      }
      cycle.currentBucket = bucket.name;
      try {
        if (await this.scanBucket(cycle, bucket.name, pace, walk)) cycle.bucketsScanned += 1;
      } catch (error) {
        walk.complete = false;
        noteError(cycle, `${bucket.name}: ${String(error)}`);
      } finally {
        release();
      }
    }
    cycle.currentBucket = null;
    if (cycle.repairWalk && walk.complete && !this.closed) await this.options.restores!.repaired(walk.repairSets).catch((error: unknown) => noteError(cycle, `clearing the restored-copy index's repair mark: ${String(error)}`));
    await this.endRestoredCopies(cycle, pace);
  }

  /** The sets whose restored-copy index must be rebuilt by a walk of every key (none without an index). */
  private async setsToRepair(cycle: LifecycleCycle): Promise<Walk['repairSets']> {
    try {
      return (await this.options.restores?.needingRepair()) ?? [];
    } catch (error) {
      noteError(cycle, `reading the restored-copy index: ${String(error)}`);
      return [];
    }
  }

  /** Walks the bucket's keys the rules name (every key on a repair walk); false when there was nothing to walk. */
  private async scanBucket(cycle: LifecycleCycle, bucket: string, pace: () => Promise<void>, walk: Walk): Promise<boolean> {
    const objects = this.options.objects;
    const record = await objects.requireBucket(bucket);
    const rules = activeRules(record.lifecycle);
    const repair = walk.repairSets.length > 0;
    if (rules.length === 0 && !repair) return false;
    const nowMs = Date.parse(cycle.judgedAt);
    for (const prefix of repair ? [''] : walkedPrefixes(rules)) {
      for await (const entry of objects.list(bucket, { prefix })) {
        if (this.closed) return true;
        if (entry.kind !== 'object') continue;
        cycle.objectsScanned += 1;
        cycle.versionsScanned += entry.versions.length;
        const plan = planKey(rules, entry.key, entry.versions, record.versioning, nowMs);
        if (plan.actions.length > 0 || plan.restoresEnded.length > 0 || (plan.transitions.length > 0 && this.options.transition)) await this.applyToKey(cycle, record, rules, entry.key, nowMs);
        else cycle.lockedVersionsKept += plan.lockedKept;
        if (repair) await this.noteRestoredCopies(cycle, bucket, entry.key, entry.versions, nowMs, walk);
        await pace();
      }
    }
    if (rules.some((rule) => rule.abortIncompleteMultipartUploadDays !== undefined)) await this.abortUploads(cycle, bucket, rules, nowMs, pace);
    return true;
  }

  /** A repair walk notes every restored copy that lasts beyond now in its set's index. */
  private async noteRestoredCopies(cycle: LifecycleCycle, bucket: string, key: string, versions: ObjectInfo[], nowMs: number, walk: Walk): Promise<void> {
    for (const version of versions) {
      const expiryMs = version.transition?.restoreExpiryMs;
      if (expiryMs === undefined || expiryMs <= nowMs) continue;
      try {
        await this.options.objects.noteRestoredCopy(bucket, key, version.versionId, expiryMs);
      } catch (error) {
        walk.complete = false;
        noteError(cycle, `${bucket}/${key} version ${version.versionId}: noting its restored copy: ${String(error)}`);
      }
    }
  }

  /** Ends the restored copies the index says are due (a scheduled cycle: those of the buckets this node owns), then settles the index. */
  private async endRestoredCopies(cycle: LifecycleCycle, pace: () => Promise<void>): Promise<void> {
    const restores = this.options.restores;
    if (!restores || this.closed) return;
    const nowMs = Date.parse(cycle.judgedAt);
    let due: DueCopy[];
    try {
      due = await restores.due(nowMs);
    } catch (error) {
      noteError(cycle, `reading the restored-copy index: ${String(error)}`);
      return;
    }
    const settled: SettledCopy[] = [];
    for (const copy of due) {
      if (this.closed) break;
      if (cycle.trigger === 'schedule' && !this.options.ownsBucket(copy.bucket)) continue;
      const outcome = await this.endRestoredCopy(cycle, copy, nowMs);
      if (outcome) settled.push(outcome);
      await pace();
    }
    if (settled.length > 0) await restores.settle(settled).catch((error: unknown) => noteError(cycle, `settling the restored-copy index: ${String(error)}`));
  }

  /** Under the key's write lock: ends the copy if it is still due; undefined when it could not be judged (tried again next cycle). */
  private async endRestoredCopy(cycle: LifecycleCycle, copy: DueCopy, nowMs: number): Promise<SettledCopy | undefined> {
    let release: (() => void) | undefined;
    try {
      release = await this.options.objects.lockObject(copy.bucket, copy.key, 'write');
      const end = await this.options.objects.dropRestoredCopy(copy.bucket, copy.key, copy.versionId, nowMs);
      if (end.ended) cycle.restoredCopiesEnded += 1;
      return end.laterExpiryMs !== undefined ? { copy, laterExpiryMs: end.laterExpiryMs } : { copy };
    } catch (error) {
      // The version (or its bucket) is gone: nothing is left to end.
      if (isSvcError(error) && goneCodes.includes(error.code)) return { copy };
      noteError(cycle, `${copy.bucket}/${copy.key} version ${copy.versionId}: ending its restored copy: ${String(error)}`);
      return undefined;
    } finally {
      release?.();
    }
  }

  /** Under the key's write lock: read its versions again, plan again, carry the plan out. */
  private async applyToKey(cycle: LifecycleCycle, record: BucketRecord, rules: LifecycleRule[], key: string, nowMs: number): Promise<void> {
    const objects = this.options.objects;
    let release: (() => void) | undefined;
    try {
      release = await objects.lockObject(record.name, key, 'write');
      const versions = await versionsOf(objects, record.name, key);
      const plan = planKey(rules, key, versions, record.versioning, nowMs);
      cycle.lockedVersionsKept += plan.lockedKept;
      for (const action of plan.actions) await this.apply(cycle, record.name, key, action);
      await this.transitionVersions(cycle, record.name, key, versions, plan.transitions);
      for (const versionId of plan.restoresEnded) if ((await objects.dropRestoredCopy(record.name, key, versionId, nowMs)).ended) cycle.restoredCopiesEnded += 1;
    } catch (error) {
      noteError(cycle, `${record.name}/${key}: ${String(error)}`);
    } finally {
      release?.();
    }
  }

  private async apply(cycle: LifecycleCycle, bucket: string, key: string, action: LifecycleAction): Promise<void> {
    // Expiring the current version is an ordinary delete (a delete marker, or the removal of an
    // unversioned object); everything else removes one version by id.
    const versionId = action.kind === 'current' ? undefined : action.versionId;
    const result = await this.options.objects.deleteObject(bucket, key, versionId, { lockHeld: true });
    cycle.expired[kindCounter[action.kind]] += 1;
    await this.options.onExpired?.(removalEvent(bucket, key, result, versionId !== undefined, 'LifecycleExpiration'));
  }

  /** Each due transition in turn; one that fails (its tier down, say) is noted and tried again next cycle. */
  private async transitionVersions(cycle: LifecycleCycle, bucket: string, key: string, versions: ObjectInfo[], due: TransitionAction[]): Promise<void> {
    const transition = this.options.transition;
    if (!transition) return;
    for (const action of due) {
      const version = versions.find((candidate) => candidate.versionId === action.versionId)!;
      try {
        await transition(bucket, key, version, action.tier);
        cycle.transitioned += 1;
      } catch (error) {
        noteError(cycle, `${bucket}/${key} version ${action.versionId} to tier ${action.tier}: ${String(error)}`);
      }
    }
  }

  private async abortUploads(cycle: LifecycleCycle, bucket: string, rules: LifecycleRule[], nowMs: number, pace: () => Promise<void>): Promise<void> {
    for (const upload of await this.options.objects.listMultipartUploads(bucket)) {
      if (this.closed) return;
      if (!uploadAbortRule(rules, upload, nowMs)) continue;
      try {
        await this.options.objects.abortMultipartUpload(bucket, upload.key, upload.uploadId);
        cycle.expired.multipartUploads += 1;
      } catch (error) {
        if (!isSvcError(error, 'NoSuchUpload')) noteError(cycle, `${bucket}/${upload.key} upload ${upload.uploadId}: ${String(error)}`);
      }
      await pace();
    }
  }
}

/** Every version of one key across all pools, newest first (read under the caller's lock). */
async function versionsOf(objects: ObjectLayer, bucket: string, key: string): Promise<ObjectInfo[]> {
  for await (const entry of objects.list(bucket, { prefix: key })) {
    if (entry.kind === 'object' && entry.key === key) return entry.versions;
    if (entry.key > key) break;
  }
  return [];
}

/**
 * The prefixes a walk for these rules must list: every key when a rule has no prefix, otherwise
 * each rule's prefix, leaving out those another prefix listed covers (so no key is walked twice).
 */
export function walkedPrefixes(rules: readonly LifecycleRule[]): string[] {
  const prefixes = [...new Set(rules.map((rule) => rule.filter.prefix ?? ''))].sort();
  const kept: string[] = [];
  for (const prefix of prefixes) if (!kept.some((shorter) => prefix.startsWith(shorter))) kept.push(prefix);
  return kept;
}

/** Sleeps as needed so that calls come at most `perSecond` a second on average. */
export function pacer(perSecond: number): () => Promise<void> {
  const startedMs = performance.now();
  let count = 0;
  return async () => {
    count += 1;
    const aheadMs = (count * 1000) / perSecond - (performance.now() - startedMs);
    if (aheadMs >= 1) await new Promise((resolve) => setTimeout(resolve, aheadMs));
  };
}

function newCycle(trigger: LifecycleCycle['trigger'], judgedMs: number): LifecycleCycle {
  return {
    trigger,
    startedAt: new Date().toISOString(),
    finishedAt: null,
    judgedAt: new Date(judgedMs).toISOString(),
    currentBucket: null,
    bucketsScanned: 0,
    bucketsSkipped: 0,
    objectsScanned: 0,
    versionsScanned: 0,
    expired: { currentVersions: 0, noncurrentVersions: 0, deleteMarkers: 0, multipartUploads: 0 },
    transitioned: 0,
    restoredCopiesEnded: 0,
    repairWalk: false,
    lockedVersionsKept: 0,
    errors: 0,
    recentErrors: [],
  };
}

function noteError(cycle: LifecycleCycle, message: string): void {
  cycle.errors += 1;
  cycle.recentErrors.push(message);
  if (cycle.recentErrors.length > limits.lifecycleErrorsKept) cycle.recentErrors.shift();
}
