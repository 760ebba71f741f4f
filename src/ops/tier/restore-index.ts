/**
 * The restored-copy index (docs/formats.md, "Restored copies: `restored.bin`"): every erasure set
 * keeps the list of restored copies (RestoreObject) it holds, with their expiry, in a small state
 * file on its own drives. The lifecycle scanner ends the copies whose time is up from this list,
 * so no bucket has to be walked for them.
 *
 * - A copy is noted before its bytes are written (and before an existing copy's expiry moves), so
 *   the index holds every restored copy and perhaps a few that were never made or are gone since
 *   (their version deleted, overwritten or moved on to another tier): those are dropped from the
 *   index when their expiry comes and the scanner finds no copy to end.
 * - Each set's file is changed under a cluster-wide lock (one per set) and saved like every
 *   cluster state file (state-store.ts): a whole copy on each of the set's drives, a majority to
 *   save, the highest generation wins at load, a refused copy quarantined.
 * - A refused copy may have held entries the others lack, so a refusal marks the set's index for
 *   repair (`repair: true`, saved): the scanner then walks every key of every bucket once, notes
 *   the restored copies it finds, and clears the mark. The walk is the rare repair path only.
 * - At most limits.maxRestoredCopiesPerSet copies per set: beyond, RestoreObject is refused with
 *   SlowDown until some expire.
 */
import type { Drive } from '../../drive/index.js';
import { SvcError } from '../../errors/index.js';
import type { StateFileQuarantine } from '../../cluster/state-quarantine.js';
import type { RestoredCopyRecorder } from '../../object/index.js';
import { limits } from '../../util/limits.js';
import { StateStore } from '../state-store.js';

export const restoreIndexFileName = 'restored.bin';
export const restoreIndexMagic = 'SVRC';
export const restoreIndexVersion = 1;

/** One restored copy: the version and when its copy ends. */
export interface RestoredCopy {
  bucket: string;
  key: string;
  versionId: string;
  expiryMs: number;
}

export interface RestoreIndexDocument {
  version: typeof restoreIndexVersion;
  generation: number;
  /** The index may lack copies (a copy of the file was refused): a walk of every key is due. */
  repair: boolean;
  copies: RestoredCopy[];
}

/** A copy due to end, with the set whose index names it. */
export interface DueCopy extends RestoredCopy {
  poolIndex: number;
  setIndex: number;
}

/** What the scanner found of a due copy: ended or gone (forget it), or still restored until later. */
export interface SettledCopy {
  copy: DueCopy;
  laterExpiryMs?: number;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const copyFields = ['bucket', 'key', 'versionId', 'expiryMs'];
const versionIdPattern = /^(null|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** The strict decoder of restored.bin's payload: anything else is refused, never guessed. */
export function validateRestoreIndex(value: unknown): RestoreIndexDocument {
  const bad = (what: string, code: 'CorruptFormat' | 'UnsupportedFormat' = 'CorruptFormat'): never => {
    throw new SvcError(code, `${restoreIndexFileName}: ${what}`);
  };
  if (!isObject(value)) return bad('not an object');
  if (value.version !== restoreIndexVersion) bad(`version ${JSON.stringify(value.version) ?? 'missing'} is not supported`, 'UnsupportedFormat');
  for (const name of Object.keys(value)) if (!['version', 'generation', 'repair', 'copies'].includes(name)) bad(`unknown field ${name.slice(0, 64)}`);
  if (!Number.isSafeInteger(value.generation) || (value.generation as number) < 0) bad('generation is not a whole number');
  if (typeof value.repair !== 'boolean') bad('repair is not true or false');
  if (!Array.isArray(value.copies)) return bad('copies is not a list');
  if (value.copies.length > limits.maxRestoredCopiesPerSet) bad(`${value.copies.length} copies, more than ${limits.maxRestoredCopiesPerSet}`);
  const seen = new Set<string>();
  const copies = value.copies.map((copy, index): RestoredCopy => {
    const at = `copies[${index}]`;
    if (!isObject(copy)) return bad(`${at} is not an object`);
    const unknown = Object.keys(copy).find((name) => !copyFields.includes(name));
    if (unknown !== undefined) bad(`${at} has an unknown field ${unknown.slice(0, 64)}`);
    const { bucket, key, versionId, expiryMs } = copy;
    if (typeof bucket !== 'string' || bucket.length < 3 || bucket.length > 63) bad(`${at}.bucket is not a bucket name`);
    if (typeof key !== 'string' || key === '' || Buffer.byteLength(key, 'utf8') > limits.maxObjectKeyBytes) bad(`${at}.key is not an object key`);
    if (typeof versionId !== 'string' || !versionIdPattern.test(versionId)) bad(`${at}.versionId is not a version id`);
    if (!Number.isSafeInteger(expiryMs) || (expiryMs as number) < 0) bad(`${at}.expiryMs is not a time`);
    const identity = copyIdentity(copy as unknown as RestoredCopy);
    if (seen.has(identity)) bad(`${at} names a version twice`);
    seen.add(identity);
    return { bucket: bucket as string, key: key as string, versionId: versionId as string, expiryMs: expiryMs as number };
  });
  return { version: restoreIndexVersion, generation: value.generation as number, repair: value.repair as boolean, copies };
}

const copyIdentity = (copy: { bucket: string; key: string; versionId: string }): string => JSON.stringify([copy.bucket, copy.key, copy.versionId]);

/** One erasure set whose restored copies are indexed. */
export interface IndexedSet {
  poolIndex: number;
  setIndex: number;
  /** The set's drives as currently connected. */
  drives: () => (Drive | undefined)[];
}

interface SetIndex {
  set: IndexedSet;
  store: StateStore<RestoreIndexDocument>;
  lock: () => Promise<() => void>;
  /** A copy was refused since the flag was last cleared (by a load that then saves the repair mark). */
  refused: boolean;
}

export class RestoreIndex {
  private readonly sets = new Map<string, SetIndex>();

  constructor(
    private readonly options: {
      sets: IndexedSet[];
      quarantine: StateFileQuarantine;
      /** The cluster-wide lock of a name (one per set). */
      lock: (resource: string) => Promise<() => void>;
      logger: { warn(fields: Record<string, unknown>, message: string): void };
    },
  ) {
    for (const set of options.sets) {
      const lock = (): Promise<() => void> => options.lock(`.svc.sys/${restoreIndexFileName}/${set.poolIndex}/${set.setIndex}`);
      const entry = { set, lock, refused: false } as SetIndex;
      entry.store = new StateStore<RestoreIndexDocument>({
        name: restoreIndexFileName,
        magic: restoreIndexMagic,
        drives: set.drives,
        validate: validateRestoreIndex,
        quarantine: options.quarantine,
        maxBytes: limits.maxRestoreIndexBytes,
        lock,
        onRefused: () => {
          entry.refused = true;
        },
      });
      this.sets.set(setName(set.poolIndex, set.setIndex), entry);
    }
  }

  /** The recorder of one set (the object layer notes its restores through it). */
  recorderFor(poolIndex: number, setIndex: number): RestoredCopyRecorder {
    return { record: (copy) => this.record(poolIndex, setIndex, copy) };
  }

  /** Notes a restored copy (its expiry the later of the one noted and this one); durable when it resolves. */
  async record(poolIndex: number, setIndex: number, copy: RestoredCopy): Promise<void> {
    await this.change(this.setIndexOf(poolIndex, setIndex), (document) => {
      const identity = copyIdentity(copy);
      const noted = document.copies.find((entry) => copyIdentity(entry) === identity);
      if (noted) {
        if (noted.expiryMs >= copy.expiryMs) return false;
        noted.expiryMs = copy.expiryMs;
        return true;
      }
      if (document.copies.length >= limits.maxRestoredCopiesPerSet) {
        throw new SvcError('SlowDown', `This erasure set holds ${limits.maxRestoredCopiesPerSet} restored copies, the most it keeps; try again once some have expired.`, { pool: poolIndex, set: setIndex });
      }
      document.copies.push({ bucket: copy.bucket, key: copy.key, versionId: copy.versionId, expiryMs: copy.expiryMs });
      return true;
    });
  }

  /** Every indexed copy whose expiry is at or before `nowMs`, set by set. */
  async due(nowMs: number): Promise<DueCopy[]> {
    const due: DueCopy[] = [];
    for (const entry of this.sets.values()) {
      const document = await this.read(entry);
      for (const copy of document.copies) if (copy.expiryMs <= nowMs) due.push({ ...copy, poolIndex: entry.set.poolIndex, setIndex: entry.set.setIndex });
    }
    return due;
  }

  /** Forgets the copies the scanner ended or found gone, and moves those restored again to their later expiry. */
  async settle(settled: readonly SettledCopy[]): Promise<void> {
    const bySet = new Map<string, SettledCopy[]>();
    for (const item of settled) {
      const name = setName(item.copy.poolIndex, item.copy.setIndex);
      bySet.set(name, [...(bySet.get(name) ?? []), item]);
    }
    for (const [name, items] of bySet) {
      const entry = this.sets.get(name);
      if (!entry) continue;
      await this.change(entry, (document) => {
        const byIdentity = new Map(document.copies.map((noted) => [copyIdentity(noted), noted]));
        const forgotten = new Set<RestoredCopy>();
        let changed = false;
        for (const { copy, laterExpiryMs } of items) {
          const noted = byIdentity.get(copyIdentity(copy));
          if (!noted) continue;
          if (laterExpiryMs !== undefined) {
            if (laterExpiryMs > noted.expiryMs) {
              noted.expiryMs = laterExpiryMs;
              changed = true;
            }
          } else if (noted.expiryMs <= copy.expiryMs) {
            // A copy restored again since it was read is noted with a later expiry: it stays.
            forgotten.add(noted);
            changed = true;
          }
        }
        if (forgotten.size > 0) document.copies = document.copies.filter((noted) => !forgotten.has(noted));
        return changed;
      });
    }
  }

  /** The sets whose index is marked for repair (a walk of every key is due). */
  async needingRepair(): Promise<{ poolIndex: number; setIndex: number }[]> {
    const marked: { poolIndex: number; setIndex: number }[] = [];
    for (const entry of this.sets.values()) if ((await this.read(entry)).repair) marked.push({ poolIndex: entry.set.poolIndex, setIndex: entry.set.setIndex });
    return marked;
  }

  /** After a walk of every key that noted every restored copy it found: these sets' repair marks are cleared. */
  async repaired(sets: readonly { poolIndex: number; setIndex: number }[]): Promise<void> {
    for (const { poolIndex, setIndex } of sets) {
      await this.change(this.setIndexOf(poolIndex, setIndex), (document) => {
        if (!document.repair) return false;
        document.repair = false;
        return true;
      });
    }
  }

  private setIndexOf(poolIndex: number, setIndex: number): SetIndex {
    const entry = this.sets.get(setName(poolIndex, setIndex));
    if (!entry) throw new SvcError('InternalError', `no restored-copy index for pool ${poolIndex} set ${setIndex}`);
    return entry;
  }

  /** The set's index as the drives hold it; a refused copy is first recorded as a repair mark. */
  private async read(entry: SetIndex): Promise<RestoreIndexDocument> {
    const document = await entry.store.load();
    if (entry.refused) return this.change(entry, () => false);
    return document ?? emptyIndex();
  }

  /**
   * Under the set's lock: the newest copy (or an empty index), changed by `step` (which says
   * whether it changed anything), saved with the next generation. A refusal seen by this or an
   * earlier load sets the repair mark first. Answers the index as it now stands.
   */
  private async change(entry: SetIndex, step: (document: RestoreIndexDocument) => boolean): Promise<RestoreIndexDocument> {
    const release = await entry.lock();
    try {
      let document = (await entry.store.load()) ?? emptyIndex();
      if (entry.refused) {
        entry.refused = false;
        if (!document.repair) {
          this.options.logger.warn({ pool: entry.set.poolIndex, set: entry.set.setIndex }, `a copy of ${restoreIndexFileName} was refused: the next lifecycle cycle walks every key to rebuild the restored-copy index`);
          document = { ...document, repair: true, generation: document.generation + 1 };
          await entry.store.save(document);
        }
      }
      if (!step(document)) return document;
      const next = { ...document, generation: document.generation + 1 };
      await entry.store.save(next);
      return next;
    } finally {
      release();
    }
  }
}

const setName = (poolIndex: number, setIndex: number): string => `${poolIndex}/${setIndex}`;

function emptyIndex(): RestoreIndexDocument {
  return { version: restoreIndexVersion, generation: 0, repair: false, copies: [] };
}
