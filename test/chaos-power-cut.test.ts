import { describe, expect, it } from 'vitest';
import { PowerCutDisk, PowerSupply } from '../fault-injection/power-cut-drive.js';
import { createMemfsDrive } from '../backends/memfs/memfs-drive.js';
import { createPrng } from '../src/util/prng.js';
import { isSvcError } from '../src/errors/index.js';
import { powerCut } from '../conformance/chaos/power-cut.js';
import { runScenario } from '../conformance/chaos/scenarios.js';
import type { ChaosContext } from '../conformance/chaos/steps.js';
import { unsyncedCommits } from './helpers/unsynced-commit-drive.js';

const bytes = (text: string): Uint8Array => new Uint8Array(Buffer.from(text));

describe('power-cut drive', () => {
  it('a cut keeps what the contract calls durable and tears only what it does not', async () => {
    const disk = new PowerCutDisk(createMemfsDrive({ endpoint: 'mem' }));
    const supply = new PowerSupply();
    const drive = supply.power(disk);
    await drive.writeFileAtomic('a/atomic', bytes('atomic contents'));
    await drive.writeFile('a/synced', bytes('synced contents'), { sync: true });
    await drive.writeFile('a/unsynced', bytes('unsynced contents'));
    await drive.writeFile('tmp/renamed-early', bytes('renamed before its sync'));
    await drive.rename('tmp/renamed-early', 'a/published');
    const writer = await drive.openWriter('a/closed');
    await writer.write(bytes('closed writer'));
    await writer.close();
    const open = await drive.openWriter('a/open');
    await open.write(bytes('still open'));
    await drive.writeFile('gone', bytes('deleted'));
    await drive.deleteFile('gone');
    expect(disk.volatilePaths()).toEqual(['a/open', 'a/published', 'a/unsynced']);

    supply.trip();
    const refused = await drive.readFile('a/atomic').catch((error: unknown) => error);
    expect(isSvcError(refused, 'DriveOffline')).toBe(true);
    await open.abort(); // after the cut: the partial file stays on the disk
    await supply.settle();
    const lost = await disk.loseVolatile(createPrng(5));
    expect(lost.map((write) => write.path)).toEqual(['a/open', 'a/published', 'a/unsynced']);
    const after = new PowerSupply().power(disk);
    for (const [path, text] of [['a/atomic', 'atomic contents'], ['a/synced', 'synced contents'], ['a/closed', 'closed writer']]) {
      expect(Buffer.from(await after.readFile(path!)).toString()).toBe(text);
    }
    for (const write of lost) {
      const survived = await after.readFile(write.path);
      expect(survived.length).toBe(write.fate === 'truncated' ? write.keptBytes : write.sizeBytes);
      if (write.fate === 'zero-filled') expect([...survived.subarray(write.keptBytes)].every((byte) => byte === 0)).toBe(true);
    }
    expect(disk.volatilePaths()).toEqual([]);
  });

  it('trips at the chosen write: that write and every later call fail', async () => {
    const supply = new PowerSupply();
    const drive = supply.power(new PowerCutDisk(createMemfsDrive({ endpoint: 'mem' })));
    supply.tripAt(3);
    await drive.writeFile('one', bytes('1'), { sync: true });
    await drive.makeDir('two');
    await expect(drive.writeFile('three', bytes('3'), { sync: true })).rejects.toThrow(/power cut/);
    expect(supply.tripped).toBe(true);
    expect((await drive.diskInfo()).online).toBe(false);
  });
});

function contextFor(seed: number, size: number): ChaosContext {
  const timeline: string[] = [];
  return { seed, prng: createPrng(seed), size, timeline, round: 0, note: (event) => timeline.push(event) };
}

describe('power-cut scenario', () => {
  it('passes on the real object layer: every acknowledged change survives every cut, nothing is half-visible', async () => {
    // The seed the broken ordering below fails on.
    const result = await runScenario('power-cut', 1, 1);
    expect(result.problems, `seed ${result.seed}\n${result.timeline.join('\n')}`).toEqual([]);
    expect(result.acknowledged).toBeGreaterThan(50);
    expect(result.timeline.filter((event) => event.includes('power cut at drive write'))).toHaveLength(3);
  }, 120_000);

  it('passes with every write SSE-S3: sealed objects and their keys survive every cut', async () => {
    const result = await runScenario('power-cut-sse', 1, 1);
    expect(result.problems, `seed ${result.seed}\n${result.timeline.join('\n')}`).toEqual([]);
    expect(result.acknowledged).toBeGreaterThan(50);
  }, 120_000);

  it('a seed replays its cut points and victims', async () => {
    const schedule = async () => {
      const context = contextFor(31, 1);
      await powerCut()(context);
      const cuts = context.timeline.filter((event) => event.includes('power cut at'));
      return cuts.map((event) => `${/armed (before the rebalance start|at operation \d+) \+ \d+ writes/.exec(event)?.[0]}; ${/acknowledged\); (.+?) lost /.exec(event)?.[1]}`);
    };
    const first = await schedule();
    expect(first).toHaveLength(3);
    expect(first.join('\n')).not.toContain('undefined');
    expect(await schedule()).toEqual(first);
  }, 120_000);

  it('catches a write ordering that acknowledges an object before its xl.meta is synced (the same seed)', async () => {
    const context = contextFor(1, 1);
    const { problems, checker } = await powerCut({ serverDrive: unsyncedCommits })(context);
    expect(checker.acknowledged).toBeGreaterThan(0);
    expect(problems.length, context.timeline.join('\n')).toBeGreaterThan(0);
    for (const problem of problems) expect(problem).toMatch(/^after cut \d+: \S+: (unreadable \(\w+\) after acknowledged changes|acknowledged write lost|acknowledged delete undone|older body|torn or foreign bytes)/);
  }, 120_000);
});
