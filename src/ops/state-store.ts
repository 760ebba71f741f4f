/**
 * Persists a cluster state file (`pool.bin`, `rebalance.bin`, `iam.bin`) under `.svc.sys` on every
 * drive of every pool: a whole copy per drive, which tolerates more lost drives than parity N/2 would.
 * A save needs a majority of the drives; a load takes the copy with the highest generation among
 * those that decode, so a drive that missed a save is outvoted by newer copies.
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
    },
  ) {}

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
      return undefined;
    }
  }

  async load(): Promise<T | undefined> {
    const copies = await Promise.all(this.options.drives().map((drive) => (drive ? this.loadCopy(drive) : undefined)));
    let newest: T | undefined;
    for (const copy of copies) if (copy && (!newest || copy.generation > newest.generation)) newest = copy;
    return newest;
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
