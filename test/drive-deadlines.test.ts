/**
 * Drive calls bounded by a deadline (src/drive/deadline-drive.ts): a hung drive costs one deadline,
 * then fails at once until a probe finds it answering; a drive with one hung file stays online.
 */
import { describe, expect, it } from 'vitest';
import { createMemfsDrive } from '../backends/memfs/memfs-drive.js';
import { createFaultyDrive } from '../fault-injection/faulty-drive.js';
import { withDeadlines } from '../src/drive/deadline-drive.js';
import { isSvcError } from '../src/errors/index.js';

async function waitFor(condition: () => boolean, options: { what: string; timeoutMs?: number }): Promise<void> {
  const deadline = performance.now() + (options.timeoutMs ?? 5_000);
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${options.what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function refusal(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (error) {
    return error;
  }
  throw new Error('the call was expected to fail');
}

describe('drive deadlines', () => {
  it('fail a hung call at its deadline, take the drive offline, fail later calls at once, and bring it back when it answers', async () => {
    const faulty = createFaultyDrive(createMemfsDrive({ endpoint: 'mem' }));
    await faulty.writeFile('b/k', new Uint8Array([1, 2, 3]));
    const changes: string[] = [];
    const drive = withDeadlines(faulty, { deadlineMs: 150, probeIntervalMs: 50, onChange: (_, online) => changes.push(online ? 'online' : 'offline') });
    faulty.setFaults({ operations: { '*': { hang: true } } });
    const late = await refusal(drive.readFile('b/k'));
    expect(isSvcError(late, 'DriveOffline')).toBe(true);
    expect(String((late as Error).message)).toMatch(/readFile did not answer within 150 ms/);
    expect(drive.deadline).toMatchObject({ online: false, missed: 1, offlineCount: 1 });
    // Offline: a call fails without reaching the drive (reaching the hung drive, it would miss its own deadline instead).
    const fast = await refusal(drive.stat('b/k'));
    expect(isSvcError(fast, 'DriveOffline')).toBe(true);
    expect(String((fast as Error).message)).toMatch(/is offline: readFile did not answer/);
    expect(drive.deadline.missed).toBe(1);
    // Still hung: the probe keeps it offline; once the fault clears, the next probe brings it back.
    faulty.clearFaults();
    await waitFor(() => drive.deadline.online, { what: 'the drive back online' });
    expect(Buffer.from(await drive.readFile('b/k'))).toEqual(Buffer.from([1, 2, 3]));
    expect(changes).toEqual(['offline', 'online']);
    await drive.close();
  });

  it('keeps a drive online when only one file hangs and other calls answer meanwhile', async () => {
    const faulty = createFaultyDrive(createMemfsDrive({ endpoint: 'mem' }));
    await faulty.writeFile('b/hung', new Uint8Array([1]));
    await faulty.writeFile('b/fine', new Uint8Array([2]));
    const drive = withDeadlines(faulty, { deadlineMs: 200, probeIntervalMs: 50 });
    faulty.setFaults({ operations: { readFile: { hang: true, pathContains: 'hung' } } });
    const hung = refusal(drive.readFile('b/hung'));
    // Other calls answer while the hung one waits.
    for (let i = 0; i < 5; i += 1) expect(Buffer.from(await drive.readFile('b/fine'))).toEqual(Buffer.from([2]));
    expect(isSvcError(await hung, 'DriveOffline')).toBe(true);
    expect(drive.deadline).toMatchObject({ online: true, missed: 1, offlineCount: 0 });
    faulty.clearFaults();
    await drive.close();
  });

  it('bounds each step of a listing and of a writer', async () => {
    const faulty = createFaultyDrive(createMemfsDrive({ endpoint: 'mem' }));
    await faulty.writeFile('b/one', new Uint8Array([1]));
    const drive = withDeadlines(faulty, { deadlineMs: 150, probeIntervalMs: 50 });
    const names: string[] = [];
    for await (const name of drive.walk('b/')) names.push(name);
    expect(names.length).toBeGreaterThan(0);
    faulty.setFaults({ operations: { walk: { hang: true } } });
    const listing = (async () => {
      for await (const name of drive.walk('b/')) names.push(name);
    })();
    expect(isSvcError(await refusal(listing), 'DriveOffline')).toBe(true);
    faulty.clearFaults();
    await waitFor(() => drive.deadline.online, { what: 'the drive back online' });
    await drive.close();
  });
});
