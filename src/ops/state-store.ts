/**
 * Persists a cluster state file (`pool.bin`, `rebalance.bin`, `iam.bin`, `kms.bin`, `tiers.bin`,
 * ...) under `.svc.sys` on every drive of every pool: a whole copy per drive, which tolerates more
 * lost drives than parity N/2 would. A save needs a majority of the drives; a load takes the copy
 * with the highest generation among those that decode, so a drive that missed a save is outvoted
 * by newer copies.
 *
 * The first load of a process that finds a copy also spreads it (in the background): the newest
 * copy is written again on every drive that lacks it or holds an older one. A pool added since
 * the last save so gets its copies at the next start, and the file outlives the decommission and
 * removal of the pools that held it. The spread takes the file's lock when its owner gives one;
 * without it, it reads the drives again after writing and repeats (a few rounds at most) when a
 * save from another node made a newer copy meanwhile.
 *
 * A copy that was read but does not decode (too large, another magic or version, truncated, a bad
 * checksum, a document its owner's validator refuses) is quarantined (state-quarantine.ts): moved
 * aside, logged by name and counted, never read again. An absent copy or an offline drive is
 * simply not counted.
 */
import { SvcError } from '../errors/index.js';
import { systemDir, type Drive } from '../drive/index.js';
import { decodeStateFile, encodeStateFile } from '../format/state-file.js';
import { limits } from '../util/limits.js';
import { readStateFile, type StateFileQuarantine } from '../cluster/state-quarantine.js';

export interface StateDocument {
  /** Increases with every save. */
  generation: number;
}

export class StateStore<T extends StateDocument> {
  constructor(
    private readonly options: {
      name: string;
      magic: string;
      /** Every drive of every pool, as currently connected. */
      drives: () => (Drive | undefined)[];
      validate: (payload: unknown) => T;
      /** Where refused copies go. */
      quarantine: StateFileQuarantine;
      /** Larger copies are refused (limits.maxStateFileBytes when unset). */
      maxBytes?: number;
      /** The cluster-wide lock the file's saves take, if any: the spread takes it too. */
      lock?: () => Promise<() => void>;
      /** Told when a copy was read and refused (after it was quarantined). */
      onRefused?: () => void;
    },
  ) {}

  private spreadStarted = false;

  get path(): string {
    return `${systemDir}/${this.options.name}`;
  }

  private get maxBytes(): number {
    return this.options.maxBytes ?? limits.maxStateFileBytes;
  }

  /** One drive's copy: undefined when absent or unreadable; a refused copy is quarantined. */
  private async loadCopy(drive: Drive): Promise<T | undefined> {
    try {
      const bytes = await readStateFile(drive, this.path, this.maxBytes);
      return bytes === undefined ? undefined : this.options.validate(decodeStateFile(this.options.magic, bytes));
    } catch (error) {
      await this.options.quarantine.moveAside(drive, this.path, this.options.name, error);
      this.options.onRefused?.();
      return undefined;
    }
  }

  async load(): Promise<T | undefined> {
    const newest = newestOf(await this.copies(this.options.drives()));
    if (newest && !this.spreadStarted) {
      this.spreadStarted = true;
      void this.spread().catch(() => undefined);
    }
    return newest;
  }

  /**
   * Writes the newest copy on every drive that lacks it or holds an older one; returns how many
   * copies were written. A drive that cannot be written now is left for the next start.
   */
  async spread(): Promise<number> {
    const release = (await this.options.lock?.()) ?? (() => undefined);
    try {
      let written = 0;
      for (let round = 0; round < limits.stateFileSpreadRounds; round += 1) {
        const drives = this.options.drives();
        const copies = await this.copies(drives);
        const newest = newestOf(copies);
        if (!newest) return written;
        const lagging = drives.filter((drive, index): drive is Drive => drive !== undefined && (copies[index] === undefined || copies[index]!.generation < newest.generation));
        if (lagging.length === 0) return written;
        const bytes = encodeStateFile(this.options.magic, newest);
        const results = await Promise.all(lagging.map((drive) => drive.writeFileAtomic(this.path, bytes).then(() => true, () => false)));
        written += results.filter(Boolean).length;
        if (!results.includes(true)) return written;
      }
      return written;
    } finally {
      release();
    }
  }

  private copies(drives: (Drive | undefined)[]): Promise<(T | undefined)[]> {
    return Promise.all(drives.map((drive) => (drive ? this.loadCopy(drive) : undefined)));
  }

  async save(document: T): Promise<void> {
    const bytes = encodeStateFile(this.options.magic, document);
    if (bytes.length > this.maxBytes) throw new SvcError('StateFileTooLarge', `${this.options.name} would be ${bytes.length} bytes, more than ${this.maxBytes}`, { file: this.options.name, sizeBytes: bytes.length, maxBytes: this.maxBytes });
    const drives = this.options.drives();
    const written = await Promise.all(drives.map((drive) => (drive ? drive.writeFileAtomic(this.path, bytes).then(() => true, () => false) : false)));
    const needed = Math.floor(drives.length / 2) + 1;
    const succeeded = written.filter(Boolean).length;
    if (succeeded < needed) throw new SvcError('ErasureWriteQuorum', `${this.options.name} reached ${succeeded} of ${needed} drives`, { file: this.options.name, succeeded, needed });
  }
}

function newestOf<T extends StateDocument>(copies: (T | undefined)[]): T | undefined {
  let newest: T | undefined;
  for (const copy of copies) if (copy && (!newest || copy.generation > newest.generation)) newest = copy;
  return newest;
}
