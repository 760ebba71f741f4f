/**
 * The linearizability checker (conformance/checkers/linearizability.ts): known faults are caught
 * (a stale read after an acknowledged write, two winners of If-None-Match: *, a lost acknowledged
 * delete, a refused write that becomes readable, a deleted version read back), concurrent
 * histories that a register allows are accepted, every history made from a sequential run is
 * accepted and a read changed to a value no one wrote is caught (fast-check, seeded), and a live
 * two-node deployment driven by concurrent AWS SDK clients through both nodes is linearizable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CreateBucketCommand, PutBucketVersioningCommand } from '@aws-sdk/client-s3';
import {
  checkHistory,
  checkListings,
  describeViolation,
  registerModel,
  versionedRegisterModel,
  type HistoryOperation,
  type KeyInput,
  type KeyOutput,
  type Model,
} from '../conformance/checkers/linearizability.js';
import { recordWorkload } from '../conformance/checkers/history-recorder.js';
import { createPrng } from '../src/util/prng.js';
import { startProcessCluster, type ProcessCluster } from './helpers/process-cluster.js';
import { s3ClientFor } from './helpers/server-process.js';
import { withClusterLogs } from './helpers/cluster.js';

const op = (client: number, invokeMs: number, completeMs: number | undefined, input: KeyInput, output: KeyOutput | undefined, key = 'k'): HistoryOperation => ({ key, client, input, output, invokeMs, completeMs });
const put = (value: string, extra: Partial<Extract<KeyInput, { op: 'put' }>> = {}): KeyInput => ({ op: 'put', value, ...extra });
const ok = (value?: string, versionId?: string): KeyOutput => ({ kind: 'ok', value, versionId });

describe('known faults are caught', () => {
  it('a read after an acknowledged write that returns the older body', () => {
    const history = [op(0, 0, 1, put('a'), ok()), op(0, 2, 3, put('b'), ok()), op(1, 4, 5, { op: 'get' }, ok('a'))];
    const result = checkHistory(registerModel, history);
    expect(result.ok).toBe(false);
    expect(describeViolation(result.violations[0]!)).toContain('GET -> ok a');
  });

  it('two winners of If-None-Match: * on one key', () => {
    const history = [op(0, 0, 5, put('a', { ifNoneMatch: '*' }), ok()), op(1, 1, 6, put('b', { ifNoneMatch: '*' }), ok())];
    expect(checkHistory(registerModel, history).ok).toBe(false);
  });

  it('a deleted key that reads back after the delete was acknowledged', () => {
    const history = [op(0, 0, 1, put('a'), ok()), op(0, 2, 3, { op: 'delete' }, ok()), op(1, 4, 5, { op: 'get' }, ok('a'))];
    expect(checkHistory(registerModel, history).ok).toBe(false);
  });

  it('a write refused with ErasureWriteQuorum that becomes readable', () => {
    const history = [op(0, 0, 1, put('a'), { kind: 'noEffect', name: 'ErasureWriteQuorum' }), op(1, 2, 3, { op: 'get' }, ok('a'))];
    expect(checkHistory(registerModel, history).ok).toBe(false);
  });

  it('a version read back after it was deleted, and a latest read that skips a newer version', () => {
    const deleted = [op(0, 0, 1, put('a'), ok(undefined, 'v1')), op(0, 2, 3, { op: 'deleteVersion', versionId: 'v1' }, ok()), op(1, 4, 5, { op: 'getVersion', versionId: 'v1' }, ok('a', 'v1'))];
    expect(checkHistory(versionedRegisterModel, deleted).ok).toBe(false);
    const skipped = [op(0, 0, 1, put('a'), ok(undefined, 'v1')), op(0, 2, 3, put('b'), ok(undefined, 'v2')), op(1, 4, 5, { op: 'get' }, ok('a', 'v1'))];
    expect(checkHistory(versionedRegisterModel, skipped).ok).toBe(false);
  });

  it('shrinks a violation to the operations that show it', () => {
    const noise = Array.from({ length: 12 }, (_, i) => op(2, 10 + i * 2, 11 + i * 2, { op: 'get' }, ok('c'), 'k'));
    const history = [op(0, 0, 1, put('a'), ok()), op(0, 2, 3, put('b'), ok()), op(0, 4, 9, put('c'), ok()), ...noise, op(1, 40, 41, { op: 'get' }, ok('a'))];
    const result = checkHistory(registerModel, history);
    expect(result.ok).toBe(false);
    expect(result.violations[0]!.history.length).toBeLessThanOrEqual(3);
  });
});

describe('what a register allows is accepted', () => {
  it('overlapping writes seen in either order, an unknown outcome seen or not', () => {
    const history = [
      op(0, 0, 10, put('a'), ok()),
      op(1, 1, 11, put('b'), ok()),
      op(2, 2, 3, { op: 'get' }, ok('b')),
      op(3, 4, 5, { op: 'get' }, ok('a')),
      op(4, 12, undefined, put('c'), undefined),
      op(2, 13, 14, { op: 'get' }, ok('a')),
      op(3, 15, 16, { op: 'get' }, ok('c')),
    ];
    expect(checkHistory(registerModel, history).ok).toBe(true);
  });

  it('a conditional write refused with 412 while the key exists, and one winner among racers', () => {
    const history = [op(0, 0, 5, put('a', { ifNoneMatch: '*' }), ok()), op(1, 1, 6, put('b', { ifNoneMatch: '*' }), { kind: 'precondition' }), op(2, 7, 8, put('c', { ifMatch: 'a' }), ok()), op(3, 9, 10, put('d', { ifMatch: 'a' }), { kind: 'precondition' })];
    expect(checkHistory(registerModel, history).ok).toBe(true);
  });
});

/** A sequential run of a model turned into a concurrent-looking history: each operation's interval contains its instant. */
function historyFromSequentialRun<S>(model: Model<S>, inputs: KeyInput[], spreads: number[]): HistoryOperation[] {
  let state = model.init();
  return inputs.map((input, index) => {
    const output = answerOf(model, state, input, index);
    state = model.step(state, input, output)!;
    const instant = index * 10;
    const spread = spreads[index % spreads.length]!;
    return op(index % 3, instant - spread, instant + spread, input, output);
  });
}

/** The answer a model gives: the first candidate it accepts. */
function answerOf<S>(model: Model<S>, state: S, input: KeyInput, index: number): KeyOutput {
  const values = ['a', 'b', 'c', 'd'].map((v) => ok(v));
  const candidates: KeyOutput[] = [ok(undefined, `v${index}`), ...values, { kind: 'absent' }, { kind: 'precondition' }];
  return candidates.find((candidate) => model.step(state, input, candidate) !== undefined)!;
}

const inputArbitrary = fc.oneof(
  fc.record({ op: fc.constant('put' as const), value: fc.constantFrom('a', 'b', 'c', 'd') }),
  fc.record({ op: fc.constant('put' as const), value: fc.constantFrom('a', 'b', 'c', 'd'), ifNoneMatch: fc.constant('*' as const) }),
  fc.constant({ op: 'get' as const }),
  fc.constant({ op: 'head' as const }),
  fc.constant({ op: 'delete' as const }),
);

describe('properties (fast-check; a failure prints its seed)', () => {
  it('every history made from a sequential run is linearizable, in both models', () => {
    fc.assert(
      fc.property(fc.array(inputArbitrary, { minLength: 1, maxLength: 14 }), fc.array(fc.integer({ min: 0, max: 25 }), { minLength: 1, maxLength: 5 }), (inputs, spreads) => {
        for (const model of [registerModel, versionedRegisterModel] as Model<unknown>[]) {
          const history = historyFromSequentialRun(model, inputs, spreads);
          const result = checkHistory(model, history, { minimise: false });
          if (!result.ok) throw new Error(`${model.name}: ${describeViolation(result.violations[0]!)}`);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('a read changed to a body no one wrote is always caught', () => {
    fc.assert(
      fc.property(fc.array(inputArbitrary, { minLength: 1, maxLength: 12 }), fc.nat(), fc.integer({ min: 0, max: 25 }), (inputs, at, spread) => {
        const history = historyFromSequentialRun(registerModel, [...inputs, { op: 'get' }], [spread]);
        const target = history.filter((o) => o.input.op === 'get')[at % history.filter((o) => o.input.op === 'get').length]!;
        target.output = ok('never-written');
        return !checkHistory(registerModel, history, { minimise: false }).ok;
      }),
      { numRuns: 150 },
    );
  });
});

describe('list after write', () => {
  it('a listing that misses a key acknowledged before it began, and one that names a phantom', () => {
    const history = [op(0, 0, 1, put('a'), ok(), 'p/one'), op(0, 0, 1, put('b'), ok(), 'p/two')];
    const problems = checkListings(history, [{ client: 1, prefix: 'p/', keys: ['p/one', 'p/ghost'], invokeMs: 5, completeMs: 6 }]);
    expect(problems.map((p) => `${p.problem} ${p.key}`).sort()).toEqual(['missing acknowledged key p/two', 'phantom key p/ghost']);
  });
});

describe('a live deployment through both nodes', () => {
  let cluster: ProcessCluster;
  beforeAll(async () => {
    cluster = await startProcessCluster({ nodes: 2, drivesPerNode: 2 });
  }, 120_000);
  afterAll(async () => {
    await cluster?.destroy();
  });

  for (const versioned of [false, true]) {
    it(`concurrent clients on shared keys are linearizable (${versioned ? 'versioned' : 'unversioned'} bucket)`, () =>
      withClusterLogs(cluster, async () => {
        const clients = [...cluster.urls, ...cluster.urls, ...cluster.urls].map((url) => s3ClientFor(url));
        const bucket = versioned ? 'lin-versioned' : 'lin-plain';
        await clients[0]!.send(new CreateBucketCommand({ Bucket: bucket }));
        if (versioned) await clients[0]!.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
        const seed = Number(process.env.SVC_TEST_SEED ?? Date.now() % 1_000_000);
        const run = await recordWorkload({ clients, bucket, versioned, keys: ['r/a', 'r/b', 'r/c'], prefix: 'r/', operationsPerClient: 40, prng: createPrng(seed), maxDurationMs: 60_000 });
        const model = (versioned ? versionedRegisterModel : registerModel) as Model<unknown>;
        const result = checkHistory(model, run.history);
        const report = result.violations.map(describeViolation).join('\n');
        expect(result.ok, `seed ${seed}\n${report}`).toBe(true);
        expect(result.unknown, `seed ${seed}`).toEqual([]);
        expect(checkListings(run.history, run.listings), `seed ${seed}`).toEqual([]);
        expect(run.history.filter((o) => o.output?.kind === 'ok').length).toBeGreaterThan(100);
        const kinds = new Set(run.history.map((o) => `${o.input.op} ${o.output?.kind ?? 'unknown'}`));
        for (const seen of ['put ok', 'get ok', 'head ok', 'delete ok', 'put precondition', ...(versioned ? ['getVersion ok'] : [])]) expect([...kinds], `seed ${seed}`).toContain(seen);
        // The same run with one successful read changed to an older body it could not have seen is caught.
        const reads = run.history.filter((o) => o.input.op === 'get' && o.output?.kind === 'ok');
        if (reads.length > 0) {
          reads[0]!.output = ok('0'.repeat(32));
          expect(checkHistory(model, run.history, { minimise: false }).ok, `seed ${seed}`).toBe(false);
        }
      }), 120_000);
  }
});
