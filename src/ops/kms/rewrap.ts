/**
 * The background re-wrap after a KMS key rotation (docs/encryption.md): walks every bucket and
 * every object version in key order and seals each KMS-sealed data key still under an older key
 * version again under its key's newest one (ops/sse/rewrap-key.ts: only xl.meta changes, under the
 * object's lock and write quorum; data is never read or re-encrypted). Run by the leader; its
 * state is persisted in `kms-rewrap.bin` (every drive, strict decoder, quarantine) with the walk's
 * position, so a restart resumes it where it was. A rotation while a run walks adds its key to the
 * run, which walks once more from the start when its pass ends.
 *
 *   (none) --rotate--> running --walked, no rotation meanwhile--> finished
 *                      running --listing failed--> failed            finished|failed --rotate--> running (a new run)
 */
import { randomUUID } from 'node:crypto';
import { SvcError } from '../../errors/index.js';
import type { ObjectLayer } from '../../object/index.js';
import type { StateStore } from '../state-store.js';
import type { Kms } from './kms.js';
import { rewrapVersion } from '../sse/rewrap-key.js';
import { isKmsKeyName } from '../../cluster/kms-config.js';
import type { KmsRewrapStatus } from '../../contracts/kms.js';

export type { KmsRewrapStatus, KmsRewrapState } from '../../contracts/kms.js';

export interface RewrapDocument {
  version: 1;
  generation: number;
  id: string;
  state: 'running' | 'finished' | 'failed';
  keyIds: string[];
  startedMs: number;
  finishedMs?: number;
  /** The last bucket reached, and the last key done in it (null: the whole bucket is done). */
  cursor?: { bucket: string; afterKey: string | null };
  /** A key was rotated during this pass: walk again from the start when it ends. */
  again: boolean;
  versionsScanned: number;
  rewrapped: number;
  failed: number;
  bucketsDone: number;
  bucketsTotal: number;
  resumed: number;
  lastError?: string;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/** The strict decoder of kms-rewrap.bin's payload. */
export function validateRewrap(value: unknown): RewrapDocument {
  const bad = (what: string): never => {
    throw new SvcError('CorruptFormat', `kms-rewrap.bin: ${what}`);
  };
  if (!isObject(value)) return bad('not an object');
  const known = ['version', 'generation', 'id', 'state', 'keyIds', 'startedMs', 'finishedMs', 'cursor', 'again', 'versionsScanned', 'rewrapped', 'failed', 'bucketsDone', 'bucketsTotal', 'resumed', 'lastError'];
  for (const name of Object.keys(value)) if (!known.includes(name)) bad(`unknown field ${name}`);
  if (value.version !== 1) throw new SvcError('UnsupportedFormat', `kms-rewrap.bin: version ${String(value.version)} is not known to this build`);
  for (const name of ['generation', 'startedMs', 'versionsScanned', 'rewrapped', 'failed', 'bucketsDone', 'bucketsTotal', 'resumed']) if (!isCount(value[name])) bad(name);
  if (value.finishedMs !== undefined && !isCount(value.finishedMs)) bad('finishedMs');
  if (typeof value.id !== 'string' || value.id === '') bad('id');
  if (value.state !== 'running' && value.state !== 'finished' && value.state !== 'failed') bad('state');
  if (!Array.isArray(value.keyIds) || value.keyIds.some((key) => typeof key !== 'string' || !isKmsKeyName(key))) bad('keyIds');
  if (typeof value.again !== 'boolean') bad('again');
  if (value.lastError !== undefined && typeof value.lastError !== 'string') bad('lastError');
  const cursor = value.cursor;
  if (cursor !== undefined && (!isObject(cursor) || Object.keys(cursor).some((name) => name !== 'bucket' && name !== 'afterKey') || typeof cursor.bucket !== 'string' || (cursor.afterKey !== null && typeof cursor.afterKey !== 'string'))) bad('cursor');
  return value as unknown as RewrapDocument;
}

export interface RewrapOptions {
  objects: ObjectLayer;
  kms: Kms;
  store: StateStore<RewrapDocument>;
  /** Object keys walked per second at most (0: no limit). */
  objectsPerSecond: number;
  nowMs: () => number;
  logger: { info(fields: Record<string, unknown>, message: string): void; warn(fields: Record<string, unknown>, message: string): void };
}

/** The position is saved at most this often while walking (and at every bucket's end). */
const saveIntervalMs = 1000;

export class RewrapManager {
  private document: RewrapDocument | undefined;
  private worker: Promise<void> | undefined;
  private closed = false;
  private lastSaveMs = 0;
  private saving: Promise<void> = Promise.resolve();

  constructor(private readonly options: RewrapOptions) {}

  /** Reads kms-rewrap.bin; a run that was walking when the node stopped walks on from its position. */
  async load(): Promise<void> {
    this.document = await this.options.store.load();
    if (this.document?.state !== 'running') return;
    this.document.resumed += 1;
    this.options.logger.info({ id: this.document.id, cursor: this.document.cursor }, 'KMS re-wrap resumed after a restart');
    await this.save();
    this.spawn();
  }

  /** A key was rotated: start a run, or make the running one walk again for it. */
  async begin(keyId: string): Promise<KmsRewrapStatus> {
    const running = this.document?.state === 'running' ? this.document : undefined;
    if (running) {
      // Seen by the walk before it can finish: it checks `again` and finishes in one step.
      running.again = true;
      if (!running.keyIds.includes(keyId)) running.keyIds.push(keyId);
      await this.save();
    } else {
      this.document = { version: 1, generation: this.document?.generation ?? 0, id: randomUUID(), state: 'running', keyIds: [keyId], startedMs: this.options.nowMs(), again: false, versionsScanned: 0, rewrapped: 0, failed: 0, bucketsDone: 0, bucketsTotal: 0, resumed: 0 };
      await this.save();
      this.spawn();
    }
    return this.status();
  }

  status(): KmsRewrapStatus {
    const document = this.document;
    if (!document) return { id: null, state: 'none', keyIds: [], versionsScanned: 0, rewrapped: 0, failed: 0, bucketsDone: 0, bucketsTotal: 0, resumed: 0 };
    return {
      id: document.id,
      state: document.state,
      keyIds: [...document.keyIds],
      startedAt: new Date(document.startedMs).toISOString(),
      ...(document.finishedMs !== undefined ? { finishedAt: new Date(document.finishedMs).toISOString() } : {}),
      versionsScanned: document.versionsScanned,
      rewrapped: document.rewrapped,
      failed: document.failed,
      bucketsDone: document.bucketsDone,
      bucketsTotal: document.bucketsTotal,
      ...(document.cursor ? { currentBucket: document.cursor.bucket } : {}),
      resumed: document.resumed,
      ...(document.lastError !== undefined ? { lastError: document.lastError } : {}),
    };
  }

  isRunning(): boolean {
    return this.worker !== undefined;
  }

  /** Stops walking at the next key and saves the position (a restart resumes from it). */
  async close(): Promise<void> {
    this.closed = true;
    await this.worker;
  }

  /** Walks `this.document` in the background (a finished walk's last save may still run beside a new one: it saves the same state). */
  private spawn(): void {
    const document = this.document!;
    const worker: Promise<void> = this.walk(document)
      .catch((error: unknown) => {
        document.state = 'failed';
        document.finishedMs = this.options.nowMs();
        document.lastError = `the walk stopped: ${String(error)}`.slice(0, 1024);
        this.options.logger.warn({ id: document.id, err: error }, 'KMS re-wrap failed');
      })
      .then(() => this.save())
      .catch((error: unknown) => this.options.logger.warn({ err: error }, 'KMS re-wrap: its state was not saved'))
      .finally(() => {
        if (this.worker === worker) this.worker = undefined;
      });
    this.worker = worker;
  }

  /**
   * Walks passes until one ends with no rotation during it, then marks the run finished (the check
   * and the mark in one step, so a rotation is either seen here or starts a new run); returns
   * early when closed.
   */
  private async walk(document: RewrapDocument): Promise<void> {
    for (;;) {
      if (!(await this.pass(document))) return;
      if (!document.again) {
        document.state = 'finished';
        document.finishedMs = this.options.nowMs();
        delete document.cursor;
        this.options.logger.info({ ...this.status() }, 'KMS re-wrap finished');
        return;
      }
      document.again = false;
      delete document.cursor;
      document.bucketsDone = 0;
      await this.save();
    }
  }

  private async pass(document: RewrapDocument): Promise<boolean> {
    const buckets = (await this.options.objects.listBuckets()).map((record) => record.name).sort();
    document.bucketsTotal = buckets.length;
    const pace = this.pacer();
    for (const bucket of buckets) {
      const cursor = document.cursor;
      if (cursor && (bucket < cursor.bucket || (bucket === cursor.bucket && cursor.afterKey === null))) continue;
      const startAfter = cursor?.bucket === bucket ? cursor.afterKey : null;
      for await (const entry of this.options.objects.list(bucket, { prefix: '', ...(startAfter !== null ? { startAfter } : {}) })) {
        if (this.closed) return false;
        if (entry.kind !== 'object') continue;
        for (const info of entry.versions) await this.rewrapOne(document, info);
        document.cursor = { bucket, afterKey: entry.key };
        if (this.options.nowMs() - this.lastSaveMs >= saveIntervalMs) await this.save();
        await pace();
      }
      document.cursor = { bucket, afterKey: null };
      document.bucketsDone += 1;
      await this.save();
    }
    return !this.closed;
  }

  private async rewrapOne(document: RewrapDocument, info: Parameters<typeof rewrapVersion>[2]): Promise<void> {
    document.versionsScanned += 1;
    try {
      if ((await rewrapVersion(this.options.objects, this.options.kms, info)) === 'rewrapped') document.rewrapped += 1;
    } catch (error) {
      document.failed += 1;
      document.lastError = `${info.bucket}/${info.key} (${info.versionId}): ${String(error)}`.slice(0, 1024);
      this.options.logger.warn({ bucket: info.bucket, key: info.key, versionId: info.versionId, err: error }, 'KMS re-wrap: a data key was not sealed again');
    }
  }

  /** Waits as long as `objectsPerSecond` asks between keys. */
  private pacer(): () => Promise<void> {
    const rate = this.options.objectsPerSecond;
    const startMs = this.options.nowMs();
    let count = 0;
    return async () => {
      if (rate <= 0) return;
      count += 1;
      const dueMs = startMs + (count * 1000) / rate - this.options.nowMs();
      if (dueMs > 0) await new Promise((resolve) => setTimeout(resolve, dueMs));
    };
  }

  /** Saves a copy of the document, after every save asked before it (so the newest generation is written last). */
  private save(): Promise<void> {
    const document = this.document!;
    document.generation += 1;
    this.lastSaveMs = this.options.nowMs();
    const copy = structuredClone(document);
    const saved = this.saving.then(() => this.options.store.save(copy));
    this.saving = saved.catch(() => undefined);
    return saved;
  }
}
