import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { buildImages } from '../scripts/build-image.js';
import { missingTool } from './helpers/external-tools.js';
import { repoRoot } from './helpers/server-process.js';
import { dockerUnavailable, startContainerCluster, type ContainerCluster } from './helpers/container-cluster.js';
import { killNodesAndRejoin, writeThroughOneReadFromEvery } from './scenarios/node-failure.js';

const skipReason = await dockerUnavailable();
if (skipReason) console.warn(`container cluster tests skipped: ${skipReason}`);

let cluster: ContainerCluster | undefined;

describe.skipIf(skipReason !== undefined)('container cluster: 4 containers x 4 drives, one set of 16 (EC:4)', () => {
  beforeAll(async () => {
    await promisify(execFile)(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: repoRoot });
    const { project } = await buildImages({ log: () => undefined });
    cluster = await startContainerCluster({ image: project, nodes: 4, drivesPerNode: 4 });
  }, 300_000);
  afterAll(async () => {
    await cluster?.destroy();
  }, 60_000);

  it('writes through one node read identically from every other', () => writeThroughOneReadFromEvery(cluster!));
  it('with one node killed reads and writes succeed; with two, both fail closed; returning nodes rejoin', () => killNodesAndRejoin(cluster!), 240_000);

  it('the black-box conformance suites pass against the container cluster', async () => {
    const { runSuites } = await import('../conformance/runner/run.js');
    const { s3Checks } = await import('../conformance/suites/s3.js');
    const { adminChecks } = await import('../conformance/suites/admin.js');
    const report = await runSuites({ endpoint: cluster!.urls[2]!, accessKey: 'testadmin', secretKey: 'testadmin-secret', seed: 8, allowAdminMutations: true }, [
      { suite: 's3', checks: s3Checks },
      { suite: 'admin', checks: adminChecks },
    ]);
    const failed = report.results.filter((result) => result.outcome === 'failed');
    expect(failed.map((result) => `${result.id}: ${result.message}`)).toEqual([]);
  }, 300_000);

  it('a short round of the managed property suites passes on container deployments', async () => {
    const { runSuites } = await import('../conformance/runner/run.js');
    const { managedSuiteRuns } = await import('../conformance/managed/suites.js');
    const { containerLauncher } = await import('../conformance/managed/deployment.js');
    const { project } = await buildImages({ log: () => undefined });
    const suites = [
      ...managedSuiteRuns(containerLauncher(project), { names: ['quorum', 'inline', 'recovery'], runs: 1 }),
      ...managedSuiteRuns(containerLauncher(project), { names: ['layout'], runs: 2 }),
    ];
    const report = await runSuites({ endpoint: cluster!.urls[0]!, accessKey: 'testadmin', secretKey: 'testadmin-secret', seed: 12, allowAdminMutations: true, skipProbe: true }, suites);
    expect(report.results.filter((result) => result.outcome !== 'passed').map((result) => `${result.id}: ${result.message}`)).toEqual([]);
  }, 400_000);

  it('the image health check passes on a serving node', async () => {
    const container = cluster!.containers[0]!;
    const result = await container.exec(['node', '/app/dist/src/cli/svc.js', 'healthcheck']);
    expect(result.exitCode, result.output).toBe(0);
    expect(result.output).toContain('/health/ready: 200');
  });
});

const composeMissing = missingTool('docker-compose', 'docker-compose');

describe.skipIf(composeMissing !== undefined)('docker-compose.yml', () => {
  it('is a valid compose file: 4 nodes with the identical command, named volumes, the health checks, credentials from an env file', async () => {
    const { stdout } = await promisify(execFile)('docker-compose', ['config'], { cwd: repoRoot, env: { ...process.env, SVC_ENV_FILE: './svc.env.example' } });
    for (const node of ['node1', 'node2', 'node3', 'node4']) expect(stdout).toContain(`${node}:`);
    expect(stdout.match(/http:\/\/node\{1\.\.\.4\}:9000\/data\{1\.\.\.4\}/g)).toHaveLength(4);
    for (const setting of ['interval: 10s', 'timeout: 5s', 'retries: 5', 'start_period: 30s']) expect(stdout.split(setting)).toHaveLength(5);
    expect(stdout).toContain('SVC_SECRET_KEY: change-me-to-a-long-secret');
    for (let node = 1; node <= 4; node += 1) for (let drive = 1; drive <= 4; drive += 1) expect(stdout).toContain(`node${node}-data${drive}:/data${drive}`);
  });
});
