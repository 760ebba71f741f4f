import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMemfsDrive } from '../backends/memfs/memfs-drive.js';
import { startDriveMonitor } from '../src/cluster/drive-monitor.js';
import { formatPath } from '../src/cluster/format-bootstrap.js';
import { encodeFormatJson, newFormats } from '../src/format/format-json.js';
import type { Drive } from '../src/drive/index.js';

const quiet = { info: () => undefined, warn: () => undefined };

describe('drive monitor', () => {
  it('brings a slot online once its format.json names this deployment and the expected drive id, and never a foreign drive', async () => {
    const deploymentId = randomUUID();
    const formats = newFormats({ deploymentId, poolIndex: 0, setCount: 1, setDriveCount: 3, layout: 'erasure', newId: randomUUID });
    const late = createMemfsDrive({ endpoint: '/late' });
    const foreign = createMemfsDrive({ endpoint: '/foreign' });
    const slots: (Drive | undefined)[] = [createMemfsDrive({ endpoint: '/ok' }), undefined, undefined];
    const monitor = startDriveMonitor({
      pending: [
        { pool: 0, set: 0, slots, slot: 1, drive: late, expectedDriveId: formats[1]!.driveId, reason: 'unformatted' },
        { pool: 0, set: 0, slots, slot: 2, drive: foreign, expectedDriveId: formats[2]!.driveId, reason: 'offline' },
      ],
      deploymentId,
      intervalMs: 60_000,
      logger: quiet,
    });
    try {
      expect(await monitor.checkNow()).toEqual([]);
      expect(slots[1]).toBeUndefined();

      await late.writeFileAtomic(formatPath, encodeFormatJson(formats[1]!));
      await foreign.writeFileAtomic(formatPath, encodeFormatJson({ ...formats[2]!, deploymentId: randomUUID() }));
      expect(await monitor.checkNow()).toEqual(['/late']);
      expect(slots[1]).toBe(late);
      expect(slots[2]).toBeUndefined();
      expect(monitor.pendingCount()).toBe(1);
    } finally {
      monitor.stop();
    }
  });
});
