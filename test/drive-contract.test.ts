import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { driveContractSuite } from '../conformance/drive-contract.js';
import { withDeadlines } from '../src/drive/deadline-drive.js';
import { createFsDrive } from '../backends/fs/fs-drive.js';
import { createMemfsDrive } from '../backends/memfs/memfs-drive.js';
import { createFaultyDrive } from '../fault-injection/faulty-drive.js';
import { PowerCutDisk, PowerSupply } from '../fault-injection/power-cut-drive.js';

async function fsDrive(options: { directIo?: boolean } = {}) {
  const root = await mkdtemp(join(tmpdir(), 'svc-contract-'));
  const drive = await createFsDrive(join(root, 'drive'), options);
  return { drive, cleanup: () => rm(root, { recursive: true, force: true }) };
}

const noCleanup = async (): Promise<void> => undefined;

driveContractSuite('fs (shard files with O_DIRECT where the file system allows)', () => fsDrive());
driveContractSuite('fs (buffered writes)', () => fsDrive({ directIo: false }));
driveContractSuite('memfs', async () => ({ drive: createMemfsDrive({ endpoint: 'mem' }), cleanup: noCleanup }));
driveContractSuite('faulty (liveness) over fs', async () => {
  const inner = await fsDrive();
  return { drive: createFaultyDrive(inner.drive, { liveness: true, offline: true, operations: { '*': { error: 'EIO' } } }), cleanup: inner.cleanup };
});
driveContractSuite('faulty (liveness) over memfs', async () => ({
  drive: createFaultyDrive(createMemfsDrive({ endpoint: 'mem' }), { liveness: true, operations: { '*': { error: 'EIO' } } }),
  cleanup: noCleanup,
}));
driveContractSuite('faulty (no faults) over memfs', async () => ({ drive: createFaultyDrive(createMemfsDrive({ endpoint: 'mem' }), {}), cleanup: noCleanup }));
driveContractSuite('power-cut (no cut) over memfs', async () => ({ drive: new PowerSupply().power(new PowerCutDisk(createMemfsDrive({ endpoint: 'mem' }))), cleanup: noCleanup }));
driveContractSuite('deadlines over memfs', async () => ({ drive: withDeadlines(createMemfsDrive({ endpoint: 'mem' }), { deadlineMs: 5_000, probeIntervalMs: 1_000 }), cleanup: noCleanup }));
