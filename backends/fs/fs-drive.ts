/**
 * The local file-system backend: node:fs/promises under a root directory, durable writes (file data
 * fsynced or written O_DSYNC, directories fsynced after a rename or delete), shard
 * files written with O_DIRECT where the file system allows, whole small files read on the
 * process's file-read threads.
 */
import * as fs from 'node:fs/promises';
import { resolve } from 'node:path';
import { hostname } from 'node:os';
import type { Drive } from '../../src/drive/index.js';
import { PosixDrive, type FileSystemApi } from '../shared/posix-drive.js';
import { directReadMinBytes, openDirectReader, openDirectWriter } from './direct-io.js';
import { openDescriptor, readWholeFile, syncDirectory, writeDurableFile } from './fd-files.js';
import { fileReadThreads } from './read-threads.js';

/** `directIo: false` reads and writes shard files through the page cache even where O_DIRECT works. */
export async function createFsDrive(rootPath: string, options: { endpoint?: string; directIo?: boolean } = {}): Promise<Drive> {
  const root = resolve(rootPath);
  await fs.mkdir(root, { recursive: true });
  return new PosixDrive({
    fs: { ...(fs as unknown as FileSystemApi), open: openDescriptor, readFile: (path: string) => fileReadThreads().read(path, readWholeFile), writeDurable: writeDurableFile, syncDir: syncDirectory },
    root,
    endpoint: options.endpoint ?? rootPath,
    ...(options.directIo === false ? {} : { openDirectWriter, directReads: { minBytes: directReadMinBytes, open: openDirectReader } }),
    statfs: async () => {
      const [stats, { dev }] = await Promise.all([fs.statfs(root), fs.stat(root)]);
      return { totalBytes: stats.blocks * stats.bsize, freeBytes: stats.bavail * stats.bsize, filesystemId: `${hostname()}:${dev}` };
    },
  });
}
