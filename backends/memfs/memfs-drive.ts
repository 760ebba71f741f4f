/** The in-memory backend: one memfs volume per drive, with a fixed capacity (ENOSPC past it). */
import { Volume } from 'memfs';
import type { Drive } from '../../src/drive/index.js';
import { GiB } from '../../src/util/limits.js';
import { PosixDrive, type FileSystemApi } from '../shared/posix-drive.js';

export function createMemfsDrive(options: { endpoint?: string; capacityBytes?: number } = {}): Drive {
  const volume = new Volume();
  volume.mkdirSync('/', { recursive: true });
  let usedBytes = 0;
  return new PosixDrive({
    fs: volume.promises as unknown as FileSystemApi,
    root: '/',
    endpoint: options.endpoint ?? 'memfs',
    capacity: {
      totalBytes: options.capacityBytes ?? GiB,
      usedBytes: () => usedBytes,
      charge: (deltaBytes) => {
        usedBytes = Math.max(0, usedBytes + deltaBytes);
      },
    },
  });
}
