/**
 * The Drive interface: everything that touches storage goes through it.
 *
 * Paths are drive-relative, '/'-separated, with no leading slash (`bucket/key/xl.meta`).
 * A path that is absolute, contains `..` or a NUL, or otherwise escapes the drive root is refused
 * with PathEscapesDrive. Implementations: backends/fs, backends/memfs, backends/remote, and
 * fault-injection/faulty-drive (a wrapper). All of them pass conformance/drive-contract.ts.
 *
 * Failures are SvcErrors with these codes: FileNotFound, DriveOffline, DriveFull, DriveFaulty,
 * DriveAccessDenied, PathEscapesDrive, NotADirectory, IsADirectory, DirectoryNotEmpty.
 *
 * Durability (what survives a power cut; fault-injection/power-cut-drive.ts models it):
 * - A file's contents are durable once `writeFile` with `sync: true`, `writeFileAtomic` or
 *   `FileWriter.close` resolves. Contents written by `writeFile` without `sync`, by `appendFile`
 *   (beyond what was durable before) or by a FileWriter not yet closed are not: after a cut such a
 *   file may be whole, truncated, or zero-filled past its durable part.
 * - Namespace changes (a file or directory created, renamed, deleted) are durable once their call
 *   resolves, and never half-done: `writeFileAtomic` shows the old contents or the new, whole.
 *   A rename moves contents as they are: a file renamed before its contents were durable is still
 *   at risk under its new name.
 * - A call that fails or never answers may or may not have taken effect.
 * backends/fs keeps these promises with fsync (or O_DSYNC) on file data and an fsync of the
 * directory after a rename or delete; memfs keeps everything (it loses all at exit).
 */
export interface Drive {
  /** The endpoint this drive was configured with (a local path or http://host:port/path). */
  readonly endpoint: string;

  /** Reads a whole file. */
  readFile(path: string): Promise<Uint8Array>;
  /**
   * Reads `length` bytes at `offset`; a short file gives a short result, never an error. Given
   * `into` (room for at least `length` bytes), the bytes land there and the result is a view of it.
   */
  readRange(path: string, offset: number, length: number, into?: Uint8Array): Promise<Uint8Array>;
  /** Streams a file (or `length` bytes of it from `offset`). */
  readStream(path: string, options?: { offset?: number; length?: number }): AsyncIterable<Uint8Array>;
  /**
   * Opens a file for reading ranges, for a caller that reads one file piece by piece (a GET
   * reading a shard file): the file is opened once, not once per read. A missing file fails
   * with FileNotFound, at the open or at the first read.
   */
  openReader(path: string): Promise<FileReader>;

  /** Writes a whole file (creating parent directories), not atomically; fsynced when `sync`. */
  writeFile(path: string, data: Uint8Array, options?: { sync?: boolean }): Promise<void>;
  /** Writes a whole file atomically: a tmp file in the drive's tmp area, fsync, rename into place. */
  writeFileAtomic(path: string, data: Uint8Array): Promise<void>;
  /** Appends to a file, creating it (and parents) when missing. */
  appendFile(path: string, data: Uint8Array): Promise<void>;
  /**
   * Opens a file for streaming writes (creating parent directories, truncating an existing file).
   * Nothing is durable until `close()` resolves, which fsyncs; `abort()` closes and removes the file.
   */
  openWriter(path: string): Promise<FileWriter>;

  /** Creates a directory and its parents; an existing directory is not an error. */
  makeDir(path: string): Promise<void>;
  /** Renames a file or a directory, across directories, creating the target's parents; replaces a file target. */
  rename(source: string, target: string): Promise<void>;
  /** Deletes a file. */
  deleteFile(path: string): Promise<void>;
  /** Deletes an empty directory (DirectoryNotEmpty otherwise). */
  deleteDir(path: string): Promise<void>;
  /**
   * Deletes a file or directory tree: it is first renamed into the drive's trash (so it vanishes
   * from the namespace at once), then removed. Missing paths are not an error.
   */
  deleteRecursive(path: string): Promise<void>;

  /**
   * Lists a directory's entries, sorted by name; directories carry a trailing '/'.
   * A missing directory gives FileNotFound.
   */
  listDir(path: string): Promise<string[]>;
  /**
   * Walks the files below `prefix` (a directory path, '' for the root) in lexical order of their
   * full paths, yielding drive-relative file paths. Starts after `startAfter` when given.
   * The drive's internal tmp and trash areas are never yielded.
   */
  walk(prefix: string, options?: { startAfter?: string }): AsyncIterable<string>;
  /** Stats a file or directory. */
  stat(path: string): Promise<FileStat>;
  /** Capacity and identity. Never throws for an offline drive: it reports `online: false`. */
  diskInfo(): Promise<DiskInfo>;
  /** Releases resources (file handles, locks, connections). */
  close(): Promise<void>;
}

export interface FileWriter {
  /** Appends a chunk. Once the promise resolves the writer no longer needs the chunk's memory (the caller reuses it). */
  write(chunk: Uint8Array): Promise<void>;
  /** Flushes, fsyncs and closes. The file is complete only after this resolves. */
  close(): Promise<void>;
  /** Closes and removes the partial file. Never throws. */
  abort(): Promise<void>;
}

export interface FileReader {
  /** As Drive.readRange: `length` bytes at `offset`, short at the end of the file; given `into`, the bytes land at its start. */
  read(offset: number, length: number, into?: Uint8Array): Promise<Uint8Array>;
  /** Releases the file. Never throws. */
  close(): Promise<void>;
}

export interface FileStat {
  sizeBytes: number;
  modTimeMs: number;
  isDirectory: boolean;
}

export interface DiskInfo {
  endpoint: string;
  online: boolean;
  totalBytes: number;
  freeBytes: number;
  usedBytes: number;
  /**
   * The file system holding the drive (host and device), when the backend can tell: drives that
   * share one count its capacity once in totals.
   */
  filesystemId?: string;
  /** The drive id from its format.json when known (filled in by the layer that reads the format). */
  driveId?: string;
  /** A short reason when offline. */
  error?: string;
}

/** The drive's internal system area; tmp and trash live below it. */
export const systemDir = '.svc.sys';
export const tmpDir = `${systemDir}/tmp`;
export const trashDir = `${systemDir}/trash`;
