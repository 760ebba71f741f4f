/**
 * State files under `.svc.sys` (`pool.bin`, `rebalance.bin`, `iam.bin`, the read-repair queue,
 * root-heal records, the storage-class settings) are read by strict decoders: a file that is too
 * large, of an unknown magic or version, truncated, or with an entry that does not check out is
 * never guessed at. It is moved aside into `.svc.sys/quarantine/` (kept for a person to look at,
 * never read again), named in a warning with the reason, and counted per kind of file.
 *
 * Reading is split from judging: a file that cannot be read (absent, drive offline) is not
 * quarantined; a file that was read and refused is.
 */
import { isSvcError, SvcError } from '../errors/index.js';
import { systemDir, type Drive } from '../drive/index.js';

export const quarantineDir = `${systemDir}/quarantine`;

export interface QuarantineLogger {
  warn(fields: Record<string, unknown>, message: string): void;
}

/** Why a state file was refused: its error code and message. */
export function refusalOf(error: unknown): { code: string; reason: string } {
  if (isSvcError(error)) return { code: error.code, reason: error.message };
  return { code: 'CorruptFormat', reason: error instanceof Error ? error.message : String(error) };
}

export class StateFileQuarantine {
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly logger: QuarantineLogger,
    private readonly nowMs: () => number = () => Date.now(),
  ) {}

  /**
   * Moves `path` on `drive` aside into the quarantine directory, under its name and the time.
   * `kind` names the file in the count (`pool.bin`, `mrf`, `root-heal`). When the move fails the
   * file is left (never deleted: another node may have just replaced it with a good copy) and is
   * judged again at its next read.
   */
  async moveAside(drive: Drive, path: string, kind: string, error: unknown): Promise<void> {
    const name = path.slice(path.lastIndexOf('/') + 1);
    const target = `${quarantineDir}/${name}.${this.nowMs()}`;
    const { code, reason } = refusalOf(error);
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
    try {
      await drive.rename(path, target); // the rename makes the directory when missing
    } catch (failure) {
      this.logger.warn({ file: path, kind, endpoint: drive.endpoint, code, reason, error: String(failure) }, `state file ${name} refused (${code}: ${reason}); it could not be moved aside`);
      return;
    }
    this.logger.warn({ file: path, kind, endpoint: drive.endpoint, code, reason, quarantinedAs: target }, `state file ${name} refused (${code}: ${reason}) and quarantined`);
  }

  /** State files refused since start, by kind. */
  quarantined(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }

  /** State files refused since start, in all. */
  total(): number {
    let sum = 0;
    for (const count of this.counts.values()) sum += count;
    return sum;
  }
}

/**
 * Reads a state file for a strict decoder: undefined when it cannot be read (absent, the drive
 * offline); a file over `maxBytes` is refused with CorruptFormat, for the caller to quarantine.
 * One read, no stat first: the cluster state files are reread from every drive every few seconds.
 */
export async function readStateFile(drive: Drive, path: string, maxBytes: number): Promise<Uint8Array | undefined> {
  let bytes: Uint8Array;
  try {
    bytes = await drive.readFile(path);
  } catch {
    return undefined;
  }
  if (bytes.length > maxBytes) throw new SvcError('CorruptFormat', `${path} is ${bytes.length} bytes, more than the ${maxBytes} a state file may have`, { sizeBytes: bytes.length, maxBytes });
  return bytes;
}
