/**
 * Persists a cluster state file (`pool.bin`, `rebalance.bin`) under `.svc.sys` on every drive of
 * every pool: a whole copy per drive, which tolerates more lost drives than parity N/2 would.
 * A save needs a majority of the drives; a load takes the copy with the highest generation among
 * those that decode, so a drive that missed a save is outvoted by newer copies.
 */
import { SvcError } from '../errors/index.js';
import { systemDir, type Drive } from '../drive/index.js';
import { decodeStateFile, encodeStateFile } from '../format/state-file.js';

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
    },
  ) {}

  get path(): string {
    return `${systemDir}/${this.options.name}`;
  }

  async load(): Promise<T | undefined> {
    const copies = await Promise.all(
      this.options.drives().map(async (drive) => {
        if (!drive) return undefined;
        try {
          return this.options.validate(decodeStateFile(this.options.magic, await drive.readFile(this.path)));
        } catch {
          return undefined; // absent, offline, or a damaged copy: the other drives decide
        }
      }),
    );
    let newest: T | undefined;
    for (const copy of copies) if (copy && (!newest || copy.generation > newest.generation)) newest = copy;
    return newest;
  }

  async save(document: T): Promise<void> {
    const bytes = encodeStateFile(this.options.magic, document);
    const drives = this.options.drives();
    const written = await Promise.all(drives.map((drive) => (drive ? drive.writeFileAtomic(this.path, bytes).then(() => true, () => false) : false)));
    const needed = Math.floor(drives.length / 2) + 1;
    const succeeded = written.filter(Boolean).length;
    if (succeeded < needed) throw new SvcError('ErasureWriteQuorum', `${this.options.name} reached ${succeeded} of ${needed} drives`, { file: this.options.name, succeeded, needed });
  }
}
