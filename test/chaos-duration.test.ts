import { describe, expect, it } from 'vitest';
import { durationSummary, main, parseDurationMs, type ScenarioTally } from '../conformance/chaos/cli.js';

function collector() {
  const lines = { log: [] as string[], error: [] as string[] };
  return { lines, out: { log: (line: string) => lines.log.push(line), error: (line: string) => lines.error.push(line) } };
}

describe('npm run chaos -- --duration', () => {
  it('runs the scenario with fresh seeds until the time is up, then prints its summary', async () => {
    const { lines, out } = collector();
    const started = Date.now();
    const code = await main(['--duration', '12s', '--size', '1', '--scenario', 'power-cut', '--seed', '5'], out);
    const elapsedMs = Date.now() - started;
    expect(code, lines.error.join('\n')).toBe(0);
    expect(elapsedMs).toBeGreaterThanOrEqual(12_000);
    const [title, header, row, ...rest] = lines.log;
    expect(header).toMatch(/^scenario\s+runs\s+acknowledged\s+refused \(by cause\)\s+problems\s+failed seeds\s+time$/);
    const runs = Number(/^chaos summary: (\d+) runs in \d+ s at size 1$/.exec(title!)?.[1]);
    expect(runs).toBeGreaterThanOrEqual(2);
    const cells = row!.split(/\s{2,}/);
    expect(cells[0]).toBe('power-cut');
    expect(Number(cells[1])).toBe(runs);
    expect(Number(cells[2])).toBeGreaterThan(20 * runs);
    expect(cells[3]).toMatch(/^\d+( \(\d+ \w+(, \d+ \w+)*\))?$/);
    expect(cells[4]).toBe('0');
    expect(cells[5]).toBe('-');
    expect(rest).toEqual([]);
    // Each run's fresh seed is reported as it finishes; seeds drawn from --seed differ run to run.
    const seeds = lines.error.map((line) => /power-cut seed (\d+): pass/.exec(line)?.[1]).filter(Boolean);
    expect(seeds).toHaveLength(runs);
    expect(new Set(seeds).size).toBe(runs);
  }, 120_000);

  it('lists the seeds to replay for failed runs', () => {
    const tally: ScenarioTally = { runs: 3, acknowledged: 300, refused: 4, refusals: { ErasureWriteQuorum: 3, SlowDown: 1 }, problems: 2, failedSeeds: [11, 42], elapsedMs: 61_000 };
    const lines = durationSummary(new Map([['power-cut', tally]]), 10, 62_000);
    expect(lines[0]).toBe('chaos summary: 3 runs in 62 s at size 10');
    expect(lines[2]!.split(/\s{2,}/)).toEqual(['power-cut', '3', '300', '4 (3 ErasureWriteQuorum, 1 SlowDown)', '2', '11 42', '61 s']);
    expect(lines.slice(3)).toEqual(['replay: npm run chaos -- --scenario power-cut --seed 11 --size 10', 'replay: npm run chaos -- --scenario power-cut --seed 42 --size 10']);
  });

  it('refuses a duration without a unit, naming the form', async () => {
    expect([parseDurationMs('10m'), parseDurationMs('20s'), parseDurationMs('1h'), parseDurationMs('500ms')]).toEqual([600_000, 20_000, 3_600_000, 500]);
    for (const bad of ['10', '0s', '1.5m', 'm']) expect(parseDurationMs(bad)).toBeNull();
    const { lines, out } = collector();
    expect(await main(['--duration', '10'], out)).toBe(2);
    expect(lines.error[0]).toMatch(/^chaos: --duration is a whole number with a unit: ms, s, m or h \(for example 10m\), not '10'/);
  });
});
