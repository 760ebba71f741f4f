/**
 * A resync: a background walk over a bucket's keys that queues every version and delete marker a
 * rule sends to one destination (objects that existed before the rule, or a target that lost
 * data). Its progress (the last key done, keys walked, tasks queued) is saved (file and directory
 * fsynced) before `start` resolves and after every page in `resync/<id>.res` on this node's drive
 * (state-file format, magic `SVRS`), so a restart resumes it after the last saved key; a key
 * queued twice is only sent twice. A walk that fails (its listing or a queue write refused: too
 * many drives or nodes away) is saved as failed and tried again from its last key after a capped
 * backoff, also after a restart, until it completes or its bucket has no configuration left.
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { SvcError } from '../../errors/index.js';
import { decodeStateFile, encodeStateFile } from '../../format/state-file.js';
import type { ObjectLayer, ReplicationConfiguration } from '../../object/index.js';
import type { Timers } from '../../util/clock.js';
import { limits } from '../../util/limits.js';
import { syncDirectory } from '../events/queue.js';
import { destinationsOf } from './rules.js';
import type { ReplicationTask } from './types.js';

const resyncMagic = 'SVRS';

export interface ResyncState {
  id: string;
  bucket: string;
  bucketArn: string;
  status: 'running' | 'completed' | 'failed';
  startedMs: number;
  updatedMs: number;
  /** Every key up to this one (in key order) was queued. */
  afterKey?: string;
  keys: number;
  queued: number;
  error?: string;
}

export interface ResyncOptions {
  objects: ObjectLayer;
  directory: string;
  nowMs(): number;
  logger: { warn(fields: Record<string, unknown>, message: string): void; info(fields: Record<string, unknown>, message: string): void };
  enqueue(task: ReplicationTask): Promise<boolean>;
  configuration(bucket: string): Promise<ReplicationConfiguration | undefined>;
  /** The retries of failed walks wait on these. */
  timers: Timers;
}

export function decodeResyncState(bytes: Uint8Array): ResyncState {
  const state = decodeStateFile(resyncMagic, bytes) as Partial<ResyncState> | null;
  const valid = typeof state === 'object' && state !== null && typeof state.id === 'string' && typeof state.bucket === 'string' && typeof state.bucketArn === 'string' &&
    (state.status === 'running' || state.status === 'completed' || state.status === 'failed') && typeof state.startedMs === 'number' && typeof state.updatedMs === 'number' &&
    (state.afterKey === undefined || typeof state.afterKey === 'string') && Number.isInteger(state.keys) && Number.isInteger(state.queued) && (state.error === undefined || typeof state.error === 'string');
  if (!valid) throw new SvcError('CorruptFormat', `${resyncMagic}: not a resync state`);
  return state as ResyncState;
}

export class ResyncRunner {
  private readonly known = new Map<string, ResyncState>();
  private readonly running = new Map<string, Promise<void>>();
  /** Failed walks waiting to be tried again: their timer and how many times in a row they failed. */
  private readonly retries = new Map<string, { timer?: unknown; failures: number }>();
  private closed = false;

  constructor(private readonly options: ResyncOptions) {}

  /** Reads the saved resyncs and continues those that were running or had failed. */
  async resume(): Promise<void> {
    await mkdir(this.options.directory, { recursive: true });
    for (const name of (await readdir(this.options.directory)).filter((file) => file.endsWith('.res'))) {
      try {
        const state = decodeResyncState(await readFile(join(this.options.directory, name)));
        this.known.set(state.id, state);
        if (state.status !== 'completed') this.run(state);
      } catch (error) {
        this.options.logger.warn({ file: name, error: error instanceof Error ? error.message : String(error) }, 'a resync state file does not decode: it is ignored');
      }
    }
  }

  /** Starts a resync of a bucket for one destination; one already running is answered as it is. */
  async start(bucket: string, bucketArn: string): Promise<ResyncState> {
    const id = `${bucket}-${createHash('sha256').update(bucketArn).digest('hex').slice(0, 12)}`;
    const current = this.known.get(id);
    if (current?.status === 'running' && this.running.has(id)) return { ...current };
    this.options.timers.clearTimeout(this.retries.get(id)?.timer);
    this.retries.delete(id);
    const nowMs = this.options.nowMs();
    const state: ResyncState = { id, bucket, bucketArn, status: 'running', startedMs: nowMs, updatedMs: nowMs, keys: 0, queued: 0 };
    this.known.set(id, state);
    await this.save(state);
    this.run(state);
    return { ...state };
  }

  states(bucket?: string): ResyncState[] {
    return [...this.known.values()].filter((state) => bucket === undefined || state.bucket === bucket).map((state) => ({ ...state }));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const retry of this.retries.values()) this.options.timers.clearTimeout(retry.timer);
    await Promise.all(this.running.values());
  }

  private run(state: ResyncState): void {
    state.status = 'running';
    delete state.error;
    const work = this.walk(state)
      .then(() => {
        if (this.closed) return;
        state.status = 'completed';
        this.retries.delete(state.id);
      })
      .catch((error: unknown) => {
        state.status = 'failed';
        state.error = error instanceof Error ? error.message : String(error);
        this.options.logger.warn({ bucket: state.bucket, destination: state.bucketArn, afterKey: state.afterKey, error: state.error }, 'a replication resync failed: it is tried again from its last key');
      })
      .then(async () => {
        state.updatedMs = this.options.nowMs();
        await this.save(state).catch(() => undefined);
        this.running.delete(state.id);
        if (state.status === 'failed') this.retryLater(state);
      });
    this.running.set(state.id, work);
  }

  /** Runs a failed walk again, from its last key, after a backoff doubling with each failure in a row. */
  private retryLater(state: ResyncState): void {
    if (this.closed) return;
    const retry = this.retries.get(state.id) ?? { failures: 0 };
    retry.failures += 1;
    const delayMs = Math.min(limits.replicationResyncRetryMaxMs, limits.replicationResyncRetryBaseMs * 2 ** Math.min(retry.failures - 1, 20));
    retry.timer = this.options.timers.setTimeout(() => {
      delete retry.timer;
      if (this.closed || this.known.get(state.id) !== state || this.running.has(state.id)) return;
      this.run(state);
    }, delayMs);
    this.retries.set(state.id, retry);
  }

  private async walk(state: ResyncState): Promise<void> {
    let configuration = await this.options.configuration(state.bucket);
    if (!configuration) return;
    let sinceSave = 0;
    const listing = this.options.objects.list(state.bucket, { prefix: '', ...(state.afterKey !== undefined ? { startAfter: state.afterKey } : {}) });
    for await (const entry of listing) {
      if (this.closed) return;
      if (entry.kind !== 'object') continue;
      if (!configuration) return;
      // Oldest first, so the target receives the versions in the order they were made.
      for (const version of [...entry.versions].reverse()) {
        const kind = version.deleteMarker ? 'delete-marker' : 'version';
        const tags = [...new URLSearchParams(version.systemMetadata['x-amz-tagging'] ?? '')];
        if (!destinationsOf(configuration, entry.key, tags, kind, version.encryption?.kind).some((destination) => destination.bucketArn === state.bucketArn)) continue;
        const storageClass = configuration.rules.find((rule) => rule.destination.bucketArn === state.bucketArn)?.destination.storageClass;
        if (await this.options.enqueue({ bucket: state.bucket, key: entry.key, versionId: version.versionId, kind, bucketArn: state.bucketArn, ...(storageClass !== undefined ? { storageClass } : {}) })) state.queued += 1;
      }
      state.keys += 1;
      state.afterKey = entry.key;
      sinceSave += 1;
      if (sinceSave >= limits.replicationResyncPageSize) {
        sinceSave = 0;
        state.updatedMs = this.options.nowMs();
        await this.save(state);
        configuration = await this.options.configuration(state.bucket);
      }
    }
  }

  private async save(state: ResyncState): Promise<void> {
    await mkdir(this.options.directory, { recursive: true });
    const path = join(this.options.directory, `${state.id}.res`);
    const temporary = `${path}.tmp`;
    const handle = await open(temporary, 'w');
    try {
      await handle.writeFile(encodeStateFile(resyncMagic, state));
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
    // The rename is durable too: a resync that was answered as started survives a power loss.
    await syncDirectory(this.options.directory);
  }
}
