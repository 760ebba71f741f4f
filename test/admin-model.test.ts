/**
 * Model-based test of decommission and rebalance on a process cluster of two nodes and three
 * pools: the exclusion property suite (conformance/managed/exclusion.ts) draws random decommission
 * start/cancel/clear, rebalance start/stop, restarts of every node and PUT/DELETE traffic, and
 * checks every answer and reported state against a model of SPEC "States and transitions"; at the
 * end every acknowledged version is listed exactly once across the pools and reads back.
 */
import { describe, expect, it } from 'vitest';
import { runSuites } from '../conformance/runner/run.js';
import { managedSuiteRuns } from '../conformance/managed/suites.js';
import { processLauncher } from '../conformance/managed/deployment.js';
import { testCredentials } from './helpers/server-process.js';

describe('decommission and rebalance against a model of the state table', () => {
  it('random admin operations sent to random nodes, restarts and traffic on 2 nodes x 3 pools', async () => {
    const seed = Number(process.env.SVC_MODEL_SEED ?? 7);
    const report = await runSuites(
      { endpoint: 'http://127.0.0.1:0', accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey, seed, allowAdminMutations: true, skipProbe: true },
      managedSuiteRuns(processLauncher(), { names: ['exclusion'], runs: 3, ...(process.env.SVC_MODEL_TRACE ? { progress: (line: string) => console.log(line) } : {}) }),
    );
    const failures = report.results.filter((result) => result.outcome !== 'passed').map((result) => `${result.id}: ${result.message}`);
    expect(failures, `seed ${seed}`).toEqual([]);
  }, 600_000);
});
