/**
 * The in-process metrics history (src/api/metrics/history.ts) on a real node registry: each sample
 * holds what changed in its interval (requests by status class, latency buckets, bytes, drive
 * operations, heal counts that survive a forgotten sequence), the ring keeps at most its capacity,
 * samples of several nodes add up interval by interval, and the console's percentile reading of a
 * sample's buckets.
 */
import { describe, expect, it } from 'vitest';
import { createNodeRegistry, latencyBucketsSeconds } from '../src/api/metrics/families.js';
import { MetricsHistoryRecorder, mergeHistories } from '../src/api/metrics/history.js';
import type { HealView } from '../src/api/metrics/state.js';
import { latencyQuantileMs } from '../src/console/ui/latency.js';

const intervalMs = 10_000;
const t0 = 1_764_393_600_000;

function recorder(heal?: () => HealView | undefined, capacity = 360) {
  const { families } = createNodeRegistry();
  let nowMs = t0;
  const history = new MetricsHistoryRecorder({ families, latencyBoundsSeconds: latencyBucketsSeconds, heal: heal ?? (() => undefined), intervalMs, capacity, nowMs: () => nowMs, node: 'n1:9000' });
  return { families, history, at: (ms: number) => (nowMs = ms) };
}

describe('metrics history', () => {
  it('keeps what changed in each interval, not the running totals', async () => {
    const { families, history } = recorder();
    families.s3Requests.inc({ api: 'GetObject', status_class: '2xx' }, 5);
    await history.sample(t0);
    expect(history.history().samples).toEqual([]);
    families.s3Requests.inc({ api: 'GetObject', status_class: '2xx' }, 7);
    families.s3Requests.inc({ api: 'PutObject', status_class: '4xx' }, 2);
    families.s3Requests.inc({ api: 'PutObject', status_class: '5xx' }, 1);
    for (const seconds of [0.0007, 0.003, 0.003, 0.2, 40]) families.s3RequestDuration.observe({ api: 'GetObject' }, seconds);
    families.s3ReceivedBytes.inc({ api: 'PutObject' }, 1000);
    families.s3SentBytes.inc({ api: 'GetObject' }, 4000);
    families.driveOperationDuration.observe({ drive: '/d1', operation: 'readFile' }, 0.001);
    families.driveOperationDuration.observe({ drive: '/d2', operation: 'readFile' }, 0.001);
    families.driveOperationErrors.inc({ drive: '/d2', operation: 'readFile' });
    await history.sample(t0 + intervalMs);
    const [sample] = history.history().samples;
    expect(sample).toMatchObject({ atMs: t0, requests: 10, clientErrors: 2, serverErrors: 1, receivedBytes: 1000, sentBytes: 4000, driveOperations: 2, driveErrors: 1 });
    expect(sample!.latencyCounts).toHaveLength(latencyBucketsSeconds.length + 1);
    expect(sample!.latencyCounts[0]).toBe(1);
    expect(sample!.latencyCounts[latencyBucketsSeconds.indexOf(0.005)]).toBe(2);
    expect(sample!.latencyCounts[latencyBucketsSeconds.indexOf(0.25)]).toBe(1);
    expect(sample!.latencyCounts.at(-1)).toBe(1);
    expect(sample!.latencyCounts.reduce((sum, count) => sum + count, 0)).toBe(5);
    expect(latencyQuantileMs(sample!, latencyBucketsSeconds, 0.5)).toBe(5);
    expect(latencyQuantileMs(sample!, latencyBucketsSeconds, 0.99)).toBe(60_000);
    await history.sample(t0 + 2 * intervalMs);
    expect(history.history().samples[1]).toMatchObject({ atMs: t0 + intervalMs, requests: 0, driveOperations: 0 });
    expect(latencyQuantileMs(history.history().samples[1]!, latencyBucketsSeconds, 0.5)).toBeNull();
  });

  it('counts heal progress once, also after its sequence is forgotten, and keeps at most its capacity', async () => {
    let sequences = [{ clientToken: 'a', status: 'running', counts: { objectsScanned: 4, objectsHealed: 1 } }];
    let processed = 0;
    const heal = () => ({ sequenceList: () => sequences, backgroundStatus: () => ({ mrf: { processed } }) }) as unknown as HealView;
    const { history } = recorder(heal, 3);
    await history.sample(t0);
    sequences = [{ clientToken: 'a', status: 'finished', counts: { objectsScanned: 10, objectsHealed: 3 } }];
    processed = 2;
    await history.sample(t0 + intervalMs);
    sequences = [];
    await history.sample(t0 + 2 * intervalMs);
    expect(history.history().samples.map((sample) => [sample.healScannedObjects, sample.healedObjects, sample.readRepairs])).toEqual([[6, 2, 2], [0, 0, 0]]);
    for (let index = 3; index < 8; index += 1) await history.sample(t0 + index * intervalMs);
    expect(history.history().samples.map((sample) => sample.atMs)).toEqual([t0 + 4 * intervalMs, t0 + 5 * intervalMs, t0 + 6 * intervalMs]);
  });

  it('adds the samples of several nodes interval by interval, naming a peer that did not answer', () => {
    const sample = (atMs: number, requests: number) => ({ atMs, requests, clientErrors: 0, serverErrors: 0, latencyCounts: [requests, 0], receivedBytes: requests, sentBytes: 0, driveOperations: 0, driveErrors: 0, healScannedObjects: 0, healedObjects: 0, readRepairs: 0 });
    const shape = { intervalMs, latencyBoundsSeconds: [0.01], capacity: 360 };
    const of = (node: string, samples: ReturnType<typeof sample>[]) => ({ node, history: { ...shape, nodes: [node], unreachable: [], samples } });
    const merged = mergeHistories([of('a', [sample(t0, 1), sample(t0 + intervalMs, 2)]), of('b', [sample(t0 + intervalMs, 5), sample(t0 + 2 * intervalMs, 7)]), { node: 'c', history: undefined }], shape);
    expect(merged.nodes).toEqual(['a', 'b']);
    expect(merged.unreachable).toEqual(['c']);
    expect(merged.samples.map((entry) => [entry.atMs - t0, entry.requests, entry.latencyCounts[0], entry.receivedBytes])).toEqual([[0, 1, 1, 1], [intervalMs, 7, 7, 7], [2 * intervalMs, 7, 7, 7]]);
  });
});
