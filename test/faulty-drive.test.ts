import { describe, expect, it } from 'vitest';
import { createMemfsDrive } from '../backends/memfs/memfs-drive.js';
import { createFaultyDrive, parseFaultOptions } from '../fault-injection/faulty-drive.js';
import { isSvcError } from '../src/errors/index.js';

const data = new Uint8Array(4096).map((_, index) => index % 256);

async function codeOf(action: () => Promise<unknown>): Promise<string> {
  try {
    await action();
    return 'ok';
  } catch (error) {
    return isSvcError(error) ? error.code : String(error);
  }
}

describe('fault-injecting drive', () => {
  it('offline fails every operation with DriveOffline and reports online: false', async () => {
    const drive = createFaultyDrive(createMemfsDrive(), { offline: true });
    expect(await codeOf(() => drive.readFile('x'))).toBe('DriveOffline');
    expect(await codeOf(() => drive.writeFile('x', data))).toBe('DriveOffline');
    expect((await drive.diskInfo()).online).toBe(false);
    drive.clearFaults();
    expect(await codeOf(() => drive.writeFile('x', data))).toBe('ok');
  });

  it('injects each errno as its drive error, only on the chosen operation', async () => {
    for (const [errno, code] of [['EIO', 'DriveFaulty'], ['ENOSPC', 'DriveFull'], ['EACCES', 'DriveAccessDenied']] as const) {
      const drive = createFaultyDrive(createMemfsDrive(), { operations: { writeFile: { error: errno } } });
      expect(await codeOf(() => drive.writeFile('a', data))).toBe(code);
      expect(await codeOf(() => drive.writeFileAtomic('a', data))).toBe('ok');
    }
  });

  it('draws probabilistic faults from the seed: the same seed gives the same sequence', async () => {
    const outcomes = async (seed: number): Promise<string[]> => {
      const drive = createFaultyDrive(createMemfsDrive(), { seed, operations: { '*': { error: 'EIO', probability: 0.5 } } });
      const results: string[] = [];
      for (let index = 0; index < 40; index += 1) results.push(await codeOf(() => drive.makeDir(`d${index}`)));
      return results;
    };
    const first = await outcomes(7);
    expect(await outcomes(7)).toEqual(first);
    expect(first).toContain('ok');
    expect(first).toContain('DriveFaulty');
    const never = createFaultyDrive(createMemfsDrive(), { operations: { '*': { error: 'EIO', probability: 0 } } });
    expect(await codeOf(() => never.writeFile('a', data))).toBe('ok');
  });

  it('delays calls by the configured latency', async () => {
    const drive = createFaultyDrive(createMemfsDrive(), { operations: { stat: { latencyMs: 50 } } });
    await drive.writeFile('a', data);
    const started = performance.now();
    await drive.stat('a');
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
  });

  it('hangs calls while the plan is in force, on one path only when asked, and releases them when it changes', async () => {
    const drive = createFaultyDrive(createMemfsDrive());
    await drive.writeFile('bucket/a/xl.meta', data);
    await drive.writeFile('bucket/b/xl.meta', data);
    drive.setFaults({ operations: { readFile: { hang: true, pathContains: 'bucket/a/' } } });
    let settled = false;
    const hung = drive.readFile('bucket/a/xl.meta').then((bytes) => {
      settled = true;
      return bytes;
    });
    // The other object's file answers while the first call still waits.
    expect(Buffer.from(await drive.readFile('bucket/b/xl.meta')).equals(Buffer.from(data))).toBe(true);
    await Promise.resolve();
    expect(settled).toBe(false);
    drive.clearFaults();
    expect(Buffer.from(await hung).equals(Buffer.from(data))).toBe(true);
  });

  it('corrupts what it returns while the inner drive keeps clean bytes', async () => {
    const inner = createMemfsDrive();
    const drive = createFaultyDrive(inner, { seed: 3, operations: { readFile: { corruptReads: { bitFlips: 2 } }, readRange: { corruptReads: { bitFlips: 1 } } } });
    await drive.writeFile('a', data);
    expect(Buffer.from(await drive.readFile('a')).equals(Buffer.from(data))).toBe(false);
    expect(Buffer.from(await drive.readRange('a', 0, 100)).equals(Buffer.from(data.subarray(0, 100)))).toBe(false);
    expect(Buffer.from(await inner.readFile('a')).equals(Buffer.from(data))).toBe(true);
  });

  it('tears writes to a strict prefix and fails; drops writes silently', async () => {
    const inner = createMemfsDrive();
    const drive = createFaultyDrive(inner, { operations: { writeFile: { tornWrite: { fraction: 0.5 } }, appendFile: { silentDrop: true } } });
    expect(await codeOf(() => drive.writeFile('torn', data))).toBe('DriveFaulty');
    const stored = await inner.readFile('torn');
    expect(stored.length).toBe(2048);
    expect(Buffer.from(stored).equals(Buffer.from(data.subarray(0, 2048)))).toBe(true);
    expect(await codeOf(() => drive.appendFile('dropped', data))).toBe('ok');
    expect(await codeOf(() => inner.readFile('dropped'))).toBe('FileNotFound');
  });

  it('fails a stream writer when the drive goes offline mid-write', async () => {
    const drive = createFaultyDrive(createMemfsDrive());
    const writer = await drive.openWriter('w');
    await writer.write(data);
    drive.setFaults({ offline: true });
    expect(await codeOf(() => writer.write(data))).toBe('DriveOffline');
  });

  it('liveness ignores every configured fault', async () => {
    const drive = createFaultyDrive(createMemfsDrive(), { liveness: true, offline: true, operations: { '*': { error: 'EIO' } } });
    await drive.writeFile('a', data);
    expect(Buffer.from(await drive.readFile('a')).equals(Buffer.from(data))).toBe(true);
  });

  it('rejects malformed fault plans with InvalidArgument', () => {
    const bad: unknown[] = [
      null,
      [],
      { offlne: true },
      { offline: 'yes' },
      { operations: { readFiles: {} } },
      { operations: { readFile: { error: 'EBUSY' } } },
      { operations: { readFile: { probability: 2 } } },
      { operations: { readFile: { latencyMs: -1 } } },
      { operations: { readFile: { tornWrite: { fraction: 1 } } } },
      { operations: { readFile: { corruptReads: { bitFlips: 1.5 } } } },
      { operations: { readFile: { hang: 'yes' } } },
      { operations: { readFile: { pathContains: '' } } },
      { seed: 'x' },
    ];
    for (const plan of bad) {
      let thrown: unknown;
      try {
        parseFaultOptions(plan);
      } catch (error) {
        thrown = error;
      }
      expect(isSvcError(thrown, 'InvalidArgument'), JSON.stringify(plan)).toBe(true);
    }
    expect(parseFaultOptions({ offline: true, operations: { '*': { error: 'EIO', probability: 0.1 } } })).toEqual({ offline: true, operations: { '*': { error: 'EIO', probability: 0.1 } } });
  });
});
